#include "bench_loop.h"

#include "control/control_server.h"

#include <atomic>
#include <csignal>

namespace lutra::tools {

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void onStopSignal(int)
{
    g_stop.store(true, std::memory_order_relaxed);
}

} // namespace

bool stopRequested() noexcept
{
    return g_stop.load(std::memory_order_relaxed);
}

void installStopHandlers()
{
    struct sigaction action {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
}

Status repeatWorkload(BenchCluster &cluster, const std::function<Status()> &iteration)
{
    if (!cluster.loop().enabled) {
        return iteration();
    }
    control::FlushHandler flush =
        [&cluster](std::string_view job,
                   std::chrono::milliseconds timeout) -> Result<control::FlushReport> {
        auto done = cluster.flushJob(job, timeout);
        if (!done) {
            return done.status();
        }
        return control::FlushReport{done->jobId,        done->locksCancelled,
                                    done->pagesDropped, done->bytesWrittenBack,
                                    done->duration,     std::move(done->errors)};
    };
    auto server = control::ControlServer::start(
        {"bench", cluster.loop().name, control::runDirectory(), &cluster.registry(), flush});
    if (!server) {
        return server.status().withContext("control socket");
    }
    std::fprintf(stderr, "lutra-bench: job %s looping; control socket %s\n",
                 cluster.loop().jobId.c_str(), (*server)->socketPath().c_str());
    do {
        if (auto status = iteration(); !status) {
            // Ctrl-C reaches the spawned targets too: an iteration they cut short is a stop.
            return stopRequested() ? Status{} : status;
        }
    } while (!stopRequested());
    return {};
}

} // namespace lutra::tools
