// lutra-bench: lutra measured against a baseline in the same run, reported as ratios.
#include "bench_modes.h"

#include <CLI/CLI.hpp>
#include <cstdio>

int main(int argc, char **argv)
{
    using namespace lutra::tools;
    CLI::App app{"lutra-bench: measure lutra against a baseline in the same run. Every mode "
                 "prints its results and ratios (lutra / baseline); --json gives one object "
                 "{mode, params, results, ratios}."};
    app.require_subcommand(1);
    BenchOptions options;
    app.add_flag("--json", options.json, "print one JSON object");
    app.add_option("--target", options.target,
                   "URI of a running lutra-target (default: spawn one on a temporary directory)");
    app.add_option("--raw-baseline", options.rawBaseline,
                   "with --target: its plain-TCP baseline endpoint (lutra-target --raw-baseline)");
    app.add_option("--target-bin", options.targetBinary, "lutra-target to spawn")
        ->check(CLI::ExistingFile);
    app.add_option("--duration", options.durationSeconds, "seconds per measurement")
        ->capture_default_str()
        ->check(CLI::Range(0.05, 3600.0));

    RpcBenchOptions rpc;
    auto *rpcMode = app.add_subcommand(
        "rpc", "small-RPC rate and bulk read bandwidth vs raw TCP between the same processes");
    rpcMode->add_option("--threads", rpc.threads, "client threads")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    rpcMode->add_option("--object-mb", rpc.objectMb, "size of the object read in bulk")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));

    CommitBenchOptions commit;
    auto *commitMode = app.add_subcommand(
        "commit", "concurrent durable writes: group commit vs one fdatasync per write");
    commitMode->add_option("--writers", commit.writers, "concurrent writers")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    commitMode->add_option("--write-bytes", commit.writeBytes, "bytes per write")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));

    CLI11_PARSE(app, argc, argv);
    if (!options.rawBaseline.empty() && options.target.empty()) {
        std::fprintf(stderr, "lutra-bench: --raw-baseline needs --target\n");
        return 2;
    }
    auto report = *rpcMode ? runRpcBench(options, rpc) : runCommitBench(options, commit);
    if (!report) {
        std::fprintf(stderr, "lutra-bench: %s\n", report.status().message().c_str());
        return 1;
    }
    report->print(options.json);
    return 0;
}
