// lutra-bench: lutra measured against a baseline in the same run, reported as ratios.
#include "bench_cold_read.h"
#include "bench_crc_read.h"
#include "bench_flush_job.h"
#include "bench_loop.h"
#include "bench_modes.h"
#include "bench_soak.h"
#include "cpu_split.h"
#include "host_steal.h"
#include "target_process.h"
#include "transport/loader.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <string>

int main(int argc, char **argv)
{
    using namespace lutra::tools;
    CLI::App app{"lutra-bench: measure lutra against a baseline in the same run. Every mode "
                 "prints its results and ratios (lutra / baseline); --json gives one object "
                 "{mode, params, results, ratios}."};
    app.require_subcommand(1);
    // Options a mode does not know go to lutra-bench itself: `MODE --json` works as typed.
    // Set before the modes are added: they inherit it.
    app.fallthrough();
    BenchOptions options;
    app.add_flag("--json", options.json, "print one JSON object");
    app.add_option("--target", options.target,
                   "URI of a running lutra-target; client modes take a comma-separated list "
                   "(default: spawn them on a temporary directory)");
    app.add_option("--raw-baseline", options.rawBaseline,
                   "with --target: its plain-TCP baseline endpoint (lutra-target --raw-baseline)");
    app.add_option("--target-bin", options.targetBinary, "lutra-target to spawn")
        ->check(CLI::ExistingFile);
    app.add_option("--duration", options.durationSeconds, "seconds per measurement")
        ->capture_default_str()
        ->check(CLI::Range(0.05, 3600.0));
    app.add_option("--set", options.settings,
                   "NAME=VALUE: set a tunable of the mounted client before the workload, as "
                   "lctl set_param (e.g. llite.*.max_read_ahead_mb=16); repeatable (client "
                   "modes; a mode's own settings still apply over it)")
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

    app.add_option("--transport-io-threads", options.transportIoThreads,
                   "the client's transport I/O threads (0: one per CPU it may use, 1 to 2)")
        ->capture_default_str()
        ->check(CLI::Range(0u, 64u));

    bool splitCpus = false;
    app.add_flag("--split-cpus", splitCpus,
                 "spawned targets on the first half of the CPUs this process may use, the bench "
                 "(the client) on the rest, as separate hosts would be (default: both share all)");

    LoopOptions loop;
    app.add_flag("--loop", loop.enabled,
                 "repeat the mode's workload until SIGTERM/SIGINT, serving the control socket "
                 "bench-<name>.sock (client modes)");
    app.add_option("--job", loop.jobId, "job id of every worker thread's I/O");
    app.add_option("--name", loop.name, "control socket name with --loop")->capture_default_str();

    constexpr auto kMaxConnsPerTarget = static_cast<unsigned>(
        lutra::params::catalog::maxOf(lutra::params::catalog::kOsc, "conns_per_target"));
    RpcBenchOptions rpc;
    auto *rpcMode = app.add_subcommand(
        "rpc", "small-RPC rate and bulk read bandwidth vs raw TCP between the same processes");
    rpcMode->add_option("--threads", rpc.threads, "client threads")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    rpcMode->add_option("--object-mb", rpc.objectMb, "size of the object read in bulk")
        ->capture_default_str()
        ->check(CLI::Range(1, 65536));
    // A mode's --conns: osc.*.conns_per_target of its reads.
    const auto addConns = [&](CLI::App *mode, unsigned &conns, const std::string &what) {
        mode->add_option("--conns", conns,
                         what + " (osc.*.conns_per_target; also read over one, or two when this "
                                "is one)")
            ->capture_default_str()
            ->check(CLI::Range(1u, kMaxConnsPerTarget));
    };
    addConns(rpcMode, rpc.conns, "connections of the bulk reads");
    rpcMode
        ->add_option("--rounds", rpc.rounds,
                     "bulk read rounds, lutra and raw TCP alternating (ratios: median)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    rpcMode
        ->add_option("--transport", rpc.transport, "transport of the spawned target (tcp, verbs)")
        ->capture_default_str();
    rpcMode
        ->add_option("--address", rpc.address,
                     "IPv4 address the spawned target listens on (verbs: one of an RDMA device)")
        ->capture_default_str();
    rpcMode->add_option(
        "--ib-device", rpc.ibDevice,
        "verbs: RDMA device for the baseline, ib_write_bw run by lutra-bench in the "
        "same run (ratio vs_ib_write_bw; default: its first device)");
    rpcMode->add_option("--ib-gid-index", rpc.ibGidIndex, "verbs: ib_write_bw's GID index (-x)")
        ->capture_default_str()
        ->check(CLI::Range(0, 255));

    CommitBenchOptions commit;
    auto *commitMode = app.add_subcommand(
        "commit", "concurrent durable writes: group commit vs one fdatasync per write");
    commitMode->add_option("--writers", commit.writers, "concurrent writers")
        ->capture_default_str()
        ->check(CLI::Range(1, 1024));
    commitMode->add_option("--write-bytes", commit.writeBytes, "bytes per write")
        ->capture_default_str()
        ->check(CLI::Range(1, 1 << 20));

    FlushBenchOptions flush;
    auto *flushMode = app.add_subcommand(
        "flush", "release a full page cache lock by lock: batched vs one page per lock hold");
    flushMode->add_option("--pages", flush.pages, "pages cached before each release")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 26));
    flushMode->add_option("--objects", flush.objects, "objects (one lock cookie each)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 20));
    flushMode->add_option("--threads", flush.threads, "releasing threads")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));

    FlushJobBenchOptions flushJob;
    auto *flushJobMode = app.add_subcommand(
        "flush-job", "one job's flush while other jobs read and write: latency vs the same flush "
                     "with them paused, and their throughput with vs without a flush");
    flushJobMode->add_option("--others", flushJob.others, "other jobs (one thread each)")
        ->capture_default_str()
        ->check(CLI::Range(0u, 64u));
    flushJobMode->add_option("--other-mb", flushJob.otherMb, "each other job's file")
        ->capture_default_str()
        ->check(CLI::Range(1u, 4096u));
    flushJobMode->add_option("--job-mb", flushJob.jobMb, "the flushed job's data per flush")
        ->capture_default_str()
        ->check(CLI::Range(1u, 4096u));
    flushJobMode->add_option("--rounds", flushJob.rounds, "flushes of each kind")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    CrcReadBenchOptions crcRead;
    auto *crcReadMode = app.add_subcommand(
        "crc-read", "the target's zero-copy read checksum pass: pread into a buffer vs mmap, "
                    "CPU per MB");
    crcReadMode->add_option("--file-mb", crcRead.fileMb, "size of the cached file")
        ->capture_default_str()
        ->check(CLI::Range(1u, 65536u));
    crcReadMode->add_option("--rpc-kb", crcRead.rpcKb, "bytes per read / 1024")
        ->capture_default_str()
        ->check(CLI::Range(4u, 16384u));
    crcReadMode->add_option("--threads", crcRead.threads, "threads summing at once")
        ->capture_default_str()
        ->check(CLI::Range(1u, 64u));
    crcReadMode->add_option("--rounds", crcRead.rounds, "passes per way")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    ColdReadBenchOptions coldRead;
    auto *coldReadMode = app.add_subcommand(
        "cold-read", "another client's reads of cached data beside reads the targets no longer "
                     "cache vs alone");
    coldReadMode->add_option("--threads", coldRead.threads, "cold readers, one file each")
        ->capture_default_str()
        ->check(CLI::Range(1u, 64u));
    coldReadMode->add_option("--file-mb", coldRead.fileMb, "size of each cold file")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 16));
    coldReadMode->add_option("--hot-mb", coldRead.hotMb, "size of the other client's file")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 16));
    coldReadMode->add_option("--rounds", coldRead.rounds, "rounds, the two sides alternating")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));
    coldReadMode
        ->add_option("--compare-no-fill", coldRead.compareNoFill,
                     "also on targets with --no-cold-read-fill, taking turns (fill_vs_no_fill)")
        ->capture_default_str();
    SmallReadBenchOptions smallRead;
    auto *smallReadMode = app.add_subcommand(
        "small-read", "1 B / 1 KiB / 4 KiB cached reads vs pread() from the kernel page cache");
    smallReadMode->add_option("--file-kb", smallRead.fileKb, "size of the file read")
        ->capture_default_str()
        ->check(CLI::Range(4u, 1u << 22));

    CachedReadBenchOptions cachedRead;
    auto *cachedReadMode =
        app.add_subcommand("cached-read", "large reads of cached data vs memcpy of the same size");
    cachedReadMode->add_option("--file-mb", cachedRead.fileMb, "size of the file read")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 16));
    cachedReadMode->add_option("--transfer-kb", cachedRead.transferKb, "bytes per read / 1024")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 16));

    IorEasyBenchOptions iorEasy;
    auto *iorEasyMode = app.add_subcommand(
        "ior-easy", "file per thread, sequential write then cold read, vs raw TCP streaming");
    iorEasyMode->add_option("--threads", iorEasy.threads, "threads, one file each")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    iorEasyMode->add_option("--file-mb", iorEasy.fileMb, "size of each file")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 16));
    iorEasyMode->add_option("--transfer-kb", iorEasy.transferKb, "bytes per transfer / 1024")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 16));
    addConns(iorEasyMode, iorEasy.conns, "connections of the cold reads");
    iorEasyMode
        ->add_option("--checksums", iorEasy.checksums,
                     "osc.*.checksums of the reads (0: unchecked, as the raw baseline)")
        ->capture_default_str();
    iorEasyMode
        ->add_option("--rounds", iorEasy.rounds,
                     "cold read rounds, lutra and raw TCP alternating (ratios: median)")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1000u));

    IorHardBenchOptions iorHard;
    const auto addHardOptions = [&iorHard](CLI::App *mode) {
        mode->add_option("--ranks", iorHard.ranks, "ranks (threads sharing one mount)")
            ->capture_default_str()
            ->check(CLI::Range(1, 256));
        mode->add_option("--segments", iorHard.segments, "transfers per rank")
            ->capture_default_str()
            ->check(CLI::Range(1u, 1u << 24));
        mode->add_option("--transfer-bytes", iorHard.transferBytes, "bytes per transfer")
            ->capture_default_str()
            ->check(CLI::Range(1u, 1u << 26));
        mode->add_option("--rounds", iorHard.rounds,
                         "cold read rounds, the two sides alternating (ratios: median)")
            ->capture_default_str()
            ->check(CLI::Range(1u, 1000u));
        mode->add_option("--duration", iorHard.durationSeconds,
                         "more rounds until this many seconds of rounds passed (0: --rounds)")
            ->capture_default_str()
            ->check(CLI::Range(0.0, 3600.0));
    };
    auto *iorHardMode = app.add_subcommand(
        "ior-hard", "47008-byte transfers interleaved in one shared file vs sequential reads");
    addHardOptions(iorHardMode);
    auto *pressureMode = app.add_subcommand(
        "pressure", "the ior-hard read with max_cached_mb at a quarter of the file vs enough");
    addHardOptions(pressureMode);
    pressureMode
        ->add_option("--cache-percent", iorHard.cachePercent,
                     "the pressured side's max_cached_mb, percent of the file")
        ->capture_default_str()
        ->check(CLI::Range(1u, 100u));

    MdtestBenchOptions mdtest;
    auto *mdtestMode = app.add_subcommand(
        "mdtest", "file and directory create/stat/remove rates vs the kernel on a local dir");
    mdtestMode->add_option("--threads", mdtest.threads, "threads, one directory each")
        ->capture_default_str()
        ->check(CLI::Range(1, 256));
    mdtestMode->add_option("--items", mdtest.items, "files and directories per thread")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 24));

    // The control plane's modes (ctl, fanout, history-year, its soak kinds) are
    // lutra-ctl-bench's (ctld/tools): the datapath builds without ctld.
    SoakOptions soak;
    const std::vector<SoakKind> soakKinds = {{"target-kill", soakTargetKill},
                                             {"job-flush", soakJobFlush}};
    auto *soakMode = addSoakMode(app, soak, soakKinds);

    CLI11_PARSE(app, argc, argv);
    if (!options.rawBaseline.empty() && options.target.empty()) {
        std::fprintf(stderr, "lutra-bench: --raw-baseline needs --target\n");
        return 2;
    }
    const bool clientMode = *smallReadMode || *cachedReadMode || *iorEasyMode || *iorHardMode ||
                            *pressureMode || *mdtestMode;
    if (!options.settings.empty() && !clientMode && !*flushJobMode) {
        std::fprintf(stderr, "lutra-bench: --set needs a mode that mounts a client (small-read, "
                             "cached-read, ior-easy, ior-hard, pressure, mdtest, flush-job)\n");
        return 2;
    }
    if (loop.enabled && !clientMode) {
        std::fprintf(stderr, "lutra-bench: --loop needs a mode that mounts a client "
                             "(small-read, cached-read, ior-easy, ior-hard, pressure, mdtest)\n");
        return 2;
    }
    if (loop.enabled) {
        installStopHandlers();
    }
    CpuSplit split;
    if (splitCpus) {
        auto cpus = splitAllowedCpus();
        if (!cpus) {
            std::fprintf(stderr, "lutra-bench: %s\n", cpus.status().toString().c_str());
            return 2;
        }
        split = std::move(cpus).value();
        // Before any thread starts: the threads the mode starts inherit the client's CPUs.
        if (auto pinned = pinThisThread(split.client); !pinned) {
            std::fprintf(stderr, "lutra-bench: %s\n", pinned.toString().c_str());
            return 2;
        }
        TargetProcess::runOnCpus(split.targets);
    }
    const auto run = [&]() -> lutra::Result<Report> {
        if (*rpcMode) {
            return runRpcBench(options, rpc);
        }
        if (*commitMode) {
            return runCommitBench(options, commit);
        }
        if (*soakMode) {
            return runSoakBench("lutra-bench", soak, soakKinds);
        }
        if (*flushMode) {
            return runFlushBench(options, flush);
        }
        if (*crcReadMode) {
            return runCrcReadBench(options, crcRead);
        }
        if (*coldReadMode) {
            return runColdReadBench(options, coldRead);
        }
        if (*flushJobMode) {
            return runFlushJobBench(options, flushJob);
        }
        if (*smallReadMode) {
            return runSmallReadBench(options, loop, smallRead);
        }
        if (*cachedReadMode) {
            return runCachedReadBench(options, loop, cachedRead);
        }
        if (*iorEasyMode) {
            return runIorEasyBench(options, loop, iorEasy);
        }
        if (*iorHardMode) {
            return runIorHardBench(options, loop, iorHard);
        }
        if (*pressureMode) {
            return runPressureBench(options, loop, iorHard);
        }
        return runMdtestBench(options, loop, mdtest);
    };
    const auto cpuBefore = readCpuTimes();
    auto report = run();
    if (const auto cpuAfter = readCpuTimes(); report && cpuBefore && cpuAfter) {
        const double steal = stealPercent(*cpuBefore, *cpuAfter);
        report->results["host_cpu_steal_pct"] = rounded(steal);
        if (steal > kDisturbingStealPercent) {
            report->notes.push_back("the host took " + std::to_string(std::lround(steal)) +
                                    " % of this machine's CPU time for others during the run "
                                    "(steal): its numbers are disturbed; run it again");
        }
    }
    if (report && !options.settings.empty()) {
        report->params["set"] = options.settings;
    }
    if (report && splitCpus) {
        report->params["cpus"] = {{"client", cpuList(split.client)},
                                  {"targets", options.target.empty() ? cpuList(split.targets)
                                                                     : "not spawned (--target)"}};
    }
    if (report && (clientMode || *rpcMode)) {
        // Resolved after --split-cpus pinned this thread, as the mount resolved it.
        report->params["client_io_threads"] = options.transportIoThreads != 0
                                                  ? options.transportIoThreads
                                                  : lutra::transport::automaticClientIoThreads();
    }
    return finishBench("lutra-bench", report, options.json);
}
