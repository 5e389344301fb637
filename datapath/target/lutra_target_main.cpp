// lutra-target: serves the objects under a backing directory to lutra clients.
#include "control/control_server.h"
#include "core/log.h"
#include "core/params/catalog.h"
#include "target/raw_baseline.h"
#include "target/target_server.h"
#include "transport/loader.h"

#include <pthread.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>

namespace {

using namespace lutra;

int fail(const std::string &what)
{
    std::fprintf(stderr, "lutra-target: %s\n", what.c_str());
    return 1;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"lutra-target: serve the objects under a backing directory to lutra clients"};
    target::TargetOptions options;
    std::string commitMode = "batched";
    bool noControl = false;
    std::string rawBaselineUri;
    app.add_option("--name", options.name, "target name, e.g. ost0")->capture_default_str();
    app.add_option("--root", options.root, "backing directory holding the objects")
        ->required()
        ->check(CLI::ExistingDirectory);
    app.add_option("--listen", options.listen,
                   "endpoint URI, e.g. tcp://127.0.0.1:7380 (port 0 "
                   "picks a free port)")
        ->capture_default_str();
    app.add_option("--threads", options.serviceThreads, "service threads")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    app.add_option("--brw-size", options.brwSizeMb, "largest bulk RPC in MiB (brw_size)")
        ->capture_default_str()
        ->check(CLI::Range(params::catalog::minOf(params::catalog::kObdfilter, "brw_size"),
                           params::catalog::maxOf(params::catalog::kObdfilter, "brw_size")));
    app.add_option("--commit-mode", commitMode,
                   "batched (group commit) or per-write (one sync per write: a baseline)")
        ->capture_default_str()
        ->check(CLI::IsMember({"batched", "per-write"}));
    bool copyReads = false;
    app.add_flag("--no-zero-copy-read", copyReads,
                 "read into a buffer before sending, also without checksums (read_zero_copy=0)");
    bool noColdReadFill = false;
    app.add_flag("--no-cold-read-fill", noColdReadFill,
                 "let the transport read uncached pages of a zero-copy read (tcp: on its I/O "
                 "thread) instead of a service thread first; for comparisons");
    app.add_option("--max-protocol-version", options.maxProtocolVersion,
                   "newest wire protocol version to agree on at connect (an older target, in "
                   "rolling-upgrade tests)")
        ->capture_default_str()
        ->check(CLI::Range(protocol::kMinVersion, protocol::kMaxVersion));
    unsigned drainSeconds = 10;
    app.add_option("--drain-timeout", drainSeconds,
                   "seconds requests in service get to finish after SIGTERM; then every "
                   "connection is closed")
        ->capture_default_str()
        ->check(CLI::Range(1, 25));
    app.add_flag("--no-control", noControl, "do not serve the control socket in the run dir");
    app.add_option("--raw-baseline", rawBaselineUri,
                   "also serve a plain TCP endpoint (no lutra protocol) for lutra-bench's "
                   "baseline, e.g. tcp://127.0.0.1:0");
    CLI11_PARSE(app, argc, argv);
    options.zeroCopyRead = !copyReads;
    options.coldReadFill = !noColdReadFill;
    options.drainTimeout = std::chrono::seconds(drainSeconds);
    options.commitMode =
        commitMode == "per-write" ? target::CommitMode::perWrite : target::CommitMode::batched;

    // Every thread started from here on inherits the blocked signals; main waits for them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);

    const auto scheme = options.listen.find("://");
    if (scheme == std::string::npos || scheme == 0) {
        return fail("--listen '" + options.listen + "' is not a URI such as tcp://host:port");
    }
    const std::string pluginName = options.listen.substr(0, scheme);
    static const std::string transportCategory = "transport." + pluginName;
    const transport::LogSink sink = transport::processLogSink(transportCategory);
    transport::PluginLoader loader(sink);
    transport::TransportOptions transportOptions;
    transportOptions.log = sink;
    transportOptions.proposed.maxBulkSize = std::uint64_t{options.brwSizeMb} << 20;
    auto transport = loader.create(pluginName, transportOptions);
    if (!transport) {
        return fail(transport.status().message());
    }

    params::Registry registry;
    auto server = target::TargetServer::start(options, **transport, registry);
    if (!server) {
        return fail(server.status().message());
    }
    std::unique_ptr<control::ControlServer> control;
    if (!noControl) {
        auto started = control::ControlServer::start(
            {"target", options.name, control::runDirectory(), &registry, {}});
        if (!started) {
            return fail("control socket: " + started.status().message() +
                        " (set LUTRA_RUN_DIR, or --no-control)");
        }
        control = std::move(started).value();
    }
    std::unique_ptr<target::RawBaseline> rawBaseline;
    if (!rawBaselineUri.empty()) {
        auto started = target::RawBaseline::start(rawBaselineUri, options.root);
        if (!started) {
            return fail(started.status().message());
        }
        rawBaseline = std::move(started).value();
        std::printf("lutra-target %s raw baseline on %s\n", options.name.c_str(),
                    rawBaseline->uri().c_str());
    }
    std::printf("lutra-target %s listening on %s%s%s\n", options.name.c_str(),
                (*server)->listenUri().c_str(), control ? " control " : "",
                control ? control->socketPath().c_str() : "");
    std::fflush(stdout);

    int received = 0;
    sigwait(&signals, &received);
    log::info("target." + options.name, std::string("received ") +
                                            (received == SIGINT ? "SIGINT" : "SIGTERM") +
                                            ", finishing in-flight requests");
    control.reset();
    (*server)->shutdown();
    return 0;
}
