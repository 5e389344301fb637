#include "core/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>

namespace lutra::log {

namespace {

// "2026-11-30T04:50:00.123Z warning [target.ost0] text\n", written with one write(2) so lines
// from different threads never interleave.
void writeToStderr(Level level, std::string_view category, std::string_view text)
{
    const auto now = std::chrono::system_clock::now();
    const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900,
                  utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                  static_cast<int>(millis));
    std::string line;
    line.reserve(64 + category.size() + text.size());
    line += stamp;
    line += ' ';
    line += levelName(level);
    line += " [";
    line += category;
    line += "] ";
    line += text;
    line += '\n';
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, line.data(), line.size());
}

std::atomic<Sink> g_sink{&writeToStderr};
std::atomic<int> g_minimum{static_cast<int>(Level::info)};

} // namespace

void setSink(Sink sink) noexcept
{
    g_sink.store(sink != nullptr ? sink : &writeToStderr);
}

void setMinimumLevel(Level level) noexcept
{
    g_minimum.store(static_cast<int>(level));
}

bool enabled(Level level) noexcept
{
    return static_cast<int>(level) >= g_minimum.load(std::memory_order_relaxed);
}

void write(Level level, std::string_view category, std::string_view text)
{
    if (enabled(level)) {
        g_sink.load()(level, category, text);
    }
}

std::string_view levelName(Level level) noexcept
{
    switch (level) {
    case Level::debug: return "debug";
    case Level::info: return "info";
    case Level::warning: return "warning";
    case Level::error: return "error";
    }
    return "info";
}

} // namespace lutra::log
