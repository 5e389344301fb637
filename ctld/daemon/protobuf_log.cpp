#include "daemon/protobuf_log.h"

#include "core/log.h"

#include <google/protobuf/stubs/logging.h>

#include <mutex>
#include <string>

namespace lutra::ctld {

namespace {

std::mutex g_mutex;
std::chrono::steady_clock::duration g_interval;
std::chrono::steady_clock::time_point g_lastLine;
bool g_logged = false;
unsigned long long g_suppressed = 0;

void handle(google::protobuf::LogLevel level, const char *file, int line,
            const std::string &message)
{
    std::unique_lock lock(g_mutex);
    const auto now = std::chrono::steady_clock::now();
    if (g_logged && now - g_lastLine < g_interval && level < google::protobuf::LOGLEVEL_FATAL) {
        ++g_suppressed;
        return;
    }
    const unsigned long long suppressed = g_suppressed;
    g_suppressed = 0;
    g_lastLine = now;
    g_logged = true;
    lock.unlock();
    std::string text = message + " (" + file + ":" + std::to_string(line) + ")";
    if (suppressed > 0) {
        text += "; " + std::to_string(suppressed) + " more protobuf message(s) left out";
    }
    if (level >= google::protobuf::LOGLEVEL_ERROR) {
        log::error("protobuf", text);
    } else {
        log::warning("protobuf", text);
    }
}

} // namespace

void routeProtobufLog(std::chrono::seconds interval)
{
    {
        std::lock_guard lock(g_mutex);
        g_interval = interval;
    }
    google::protobuf::SetLogHandler(&handle);
}

} // namespace lutra::ctld
