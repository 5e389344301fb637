// lutra-bench as a user runs it: each mode spawns its own lutra-target, measures lutra and its
// baseline in the same run, and prints {mode, params, results, ratios}. Only the shape and the
// sanity of the numbers are checked, never their size: machines here are shared and noisy.
#include "lutra/datapath/v1/control.grpc.pb.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <grpcpp/grpcpp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

namespace {

QJsonObject runBench(const QStringList &arguments, int *exitCode)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::SeparateChannels);
    process.start(QStringLiteral(LUTRA_BENCH_BIN), arguments);
    if (!process.waitForFinished(120000)) {
        process.kill();
        *exitCode = -1;
        return {};
    }
    *exitCode = process.exitCode();
    return QJsonDocument::fromJson(process.readAllStandardOutput()).object();
}

void verifyPositive(const QJsonObject &object, const QStringList &keys)
{
    for (const auto &key : keys) {
        QVERIFY2(object.contains(key), qPrintable("missing " + key));
        QVERIFY2(object[key].toDouble() > 0, qPrintable(key + " is not positive"));
    }
}

// A phase's cost (see PhaseStats::costJson): CPU was used, and the RPCs by size can carry the
// pages fetched per round (each histogram row holds RPCs of at most its label's pages).
void verifyCost(const QJsonObject &cost, double pagesFetchedPerRound)
{
    verifyPositive(cost, {"cores_busy", "cpu_us_per_page", "read_rpcs_per_round"});
    const auto byPages = cost["read_rpcs_per_round_by_pages"].toObject();
    double rpcs = 0;
    double capacity = 0;
    for (auto it = byPages.begin(); it != byPages.end(); ++it) {
        QVERIFY2(it.key().toInt() >= 1 && it.key().toInt() <= 1024, qPrintable(it.key()));
        rpcs += it.value().toDouble();
        capacity += it.value().toDouble() * it.key().toInt();
    }
    QVERIFY2(std::abs(rpcs - cost["read_rpcs_per_round"].toDouble()) <= 0.02 * rpcs + 0.01,
             qPrintable(QString::number(rpcs)));
    QVERIFY2(capacity >= 0.98 * pagesFetchedPerRound,
             qPrintable(QString("%1 < %2").arg(capacity).arg(pagesFetchedPerRound)));
    // Each RPC counts itself among those in flight as it leaves; rpc_stats' last row is 31.
    const double inFlight = cost["read_rpcs_in_flight_mean"].toDouble();
    QVERIFY2(inFlight >= 1.0 && inFlight <= 31.0, qPrintable(QString::number(inFlight)));
    // Every read RPC was timed (osc.*.stats): a mean of at least a microsecond.
    const double rpcTime = cost["read_rpc_us_mean"].toDouble();
    QVERIFY2(rpcTime >= 1.0, qPrintable(QString::number(rpcTime)));
}

// A client mode's report: its mode, the named ratios positive, read_ahead_stats deltas present.
void verifyClientReport(const QJsonObject &report, const QString &mode, const QStringList &ratios)
{
    QCOMPARE(report["mode"].toString(), mode);
    verifyPositive(report["ratios"].toObject(), ratios);
    // How much of the machine's CPU time its host took meanwhile (-1: not reported).
    const double steal = report["results"].toObject()["host_cpu_steal_pct"].toDouble(-1);
    QVERIFY2(steal >= 0 && steal <= 100, "host_cpu_steal_pct missing or out of range");
    const auto stats = report["results"].toObject()["read_ahead_stats"].toObject();
    QVERIFY2(stats.contains("hits") && stats.contains("misses") &&
                 stats.contains("readahead_pages") && stats.contains("read_but_discarded"),
             "read_ahead_stats deltas missing");
    for (const auto &value : stats) {
        QVERIFY(value.toDouble() >= 0);
    }
}

} // namespace

class TestLutraBench : public QObject {
    Q_OBJECT
private slots:
    void rpcMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.2", "rpc", "--object-mb", "8"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("rpc"));
        QCOMPARE(report["params"].toObject()["transport"].toString(), QString("tcp"));
        verifyPositive(report["results"].toObject(),
                       {"small_rpc_per_s", "raw_echo_per_s", "bulk_read_MBps", "raw_tcp_MBps",
                        "raw_tcp_memory_MBps", "bulk_read_async_MBps"});
        // One connection, as a mount opens to a target, with two read beside it; the client's
        // I/O threads are a mount's: one per CPU, 1 to 2.
        cpu_set_t allowed;
        QCOMPARE(sched_getaffinity(0, sizeof allowed, &allowed), 0);
        QCOMPARE(report["params"].toObject()["conns"].toInt(), 1);
        QCOMPARE(report["params"].toObject()["client_io_threads"].toInt(),
                 std::clamp(CPU_COUNT(&allowed), 1, 2));
        const char *other = "two_conns_vs_raw_tcp";
        verifyPositive(report["ratios"].toObject(),
                       {"vs_raw_tcp", "vs_raw_tcp_memory", "small_rpc_vs_raw_echo",
                        "async_vs_threads", "async_vs_raw_tcp", other, "conns_vs_two"});
        // Every round measures each side, the asynchronous reads too (their ratios are medians).
        const QJsonArray rounds = report["results"].toObject()["rounds"].toArray();
        QCOMPARE(rounds.size(), 3);
        for (const auto &round : rounds) {
            verifyPositive(round.toObject(), {"bulk_read_MBps", "bulk_read_async_MBps",
                                              "raw_tcp_MBps", "async_vs_raw_tcp", other});
        }
    }

    // --transport-io-threads sets the client's I/O threads (the connections stay one unless
    // --conns is given); out of range is refused before anything runs.
    void transportIoThreadsSetTheClientsThreads()
    {
        int exitCode = 0;
        auto report = runBench({"--json", "--duration", "0.1", "--transport-io-threads", "1", "rpc",
                                "--object-mb", "4", "--rounds", "1"},
                               &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["params"].toObject()["client_io_threads"].toInt(), 1);
        QCOMPARE(report["params"].toObject()["conns"].toInt(), 1);
        verifyPositive(report["ratios"].toObject(), {"conns_vs_two"});

        report = runBench({"--json", "--duration", "0.1", "--transport-io-threads", "2", "rpc",
                           "--object-mb", "4", "--rounds", "1", "--conns", "3"},
                          &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["params"].toObject()["conns"].toInt(), 3);

        QProcess refused;
        refused.start(QStringLiteral(LUTRA_BENCH_BIN), {"--transport-io-threads", "65", "rpc"});
        QVERIFY(refused.waitForFinished(30000));
        QVERIFY(refused.exitCode() != 0);
        QVERIFY2(refused.readAllStandardError().contains("--transport-io-threads"),
                 "the error names the option");
    }

    // --split-cpus: the spawned target on the first half of the CPUs, the bench on the rest,
    // as the kernel reports them for the target process (the CI machines have 2).
    void splitCpusPlacesTargetAndClientApart()
    {
        cpu_set_t allowed;
        QCOMPARE(sched_getaffinity(0, sizeof allowed, &allowed), 0);
        int exitCode = 0;
        const auto report = runBench({"--json", "--split-cpus", "--duration", "0.1", "rpc",
                                      "--object-mb", "8", "--rounds", "1"},
                                     &exitCode);
        if (CPU_COUNT(&allowed) < 2) {
            QCOMPARE(exitCode, 2); // said why, and measured nothing
            return;
        }
        QCOMPARE(exitCode, 0);
        const auto params = report["params"].toObject();
        const auto cpus = params["cpus"].toObject();
        const QString targets = cpus["targets"].toString();
        const QString client = cpus["client"].toString();
        QVERIFY2(!targets.isEmpty() && !client.isEmpty(), "both placements named");
        // The kernel's own list for the spawned target: "0" or "0-1", never the client's CPUs.
        const QString actual = params["target_cpus"].toString();
        QVERIFY2(!actual.isEmpty(), "the target's Cpus_allowed_list is reported");
        const auto expand = [](const QString &list) { // "0-2,5" -> {0, 1, 2, 5}
            QSet<int> set;
            for (const QString &part : list.split(',')) {
                const QStringList ends = part.split('-');
                for (int cpu = ends.first().toInt(); cpu <= ends.last().toInt(); ++cpu) {
                    set.insert(cpu);
                }
            }
            return set;
        };
        QCOMPARE(expand(actual), expand(targets));
        QVERIFY2(!expand(actual).intersects(expand(client)), qPrintable(actual + " / " + client));
        verifyPositive(report["ratios"].toObject(), {"vs_raw_tcp"});
    }

    void commitMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.3", "commit", "--writers", "8"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("commit"));
        const auto results = report["results"].toObject();
        verifyPositive(results, {"group_commit_writes_per_s", "per_write_sync_writes_per_s",
                                 "fdatasync_per_s", "group_commit_writes_per_batch"});
        verifyPositive(report["ratios"].toObject(), {"group_vs_per_write"});
        // Structural, not timing: per-write mode syncs the file and the log for every write.
        QCOMPARE(results["per_write_syncs_per_write"].toDouble(), 2.0);
        // Like with like: the fdatasync baseline runs as many writers as group commit.
        QCOMPARE(report["params"].toObject()["fdatasync_writers"].toInt(), 8);
        verifyPositive(report["ratios"].toObject(), {"group_commit_vs_fdatasync"});
    }

    void flushMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.2", "flush", "--pages", "8192", "--objects", "64"},
                     &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("flush"));
        const auto results = report["results"].toObject();
        verifyPositive(results, {"batched_pages_per_s", "unbatched_pages_per_s",
                                 "batched_lock_holds", "unbatched_lock_holds"});
        verifyPositive(report["ratios"].toObject(), {"batched_vs_unbatched"});
        QVERIFY(results["rounds"].toInt() >= 1);
        // Structural: one page per hold without batching, fewer holds with it.
        QCOMPARE(results["unbatched_lock_holds"].toDouble(), 8192.0);
        QVERIFY(results["batched_lock_holds"].toDouble() < 8192.0);
    }

    void flushJobMode()
    {
        int exitCode = 0;
        const auto report = runBench({"--json", "--duration", "0.1", "flush-job", "--rounds", "1",
                                      "--job-mb", "2", "--other-mb", "4"},
                                     &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("flush-job"));
        const auto results = report["results"].toObject();
        QCOMPARE(results["flush_ms_idle"].toArray().size(), 1);
        QCOMPARE(results["flush_ms_busy"].toArray().size(), 1);
        verifyPositive(report["ratios"].toObject(),
                       {"flush_busy_vs_idle", "others_with_vs_without_flush"});
        // Structural: the flush writes back what the job dirtied (1 MiB), not the other jobs'
        // dirty data, and drops the job's 512 pages (1 MiB read, 1 MiB written).
        QCOMPARE(results["bytes_written_back"].toDouble(), double(1 << 20));
        QCOMPARE(results["pages_dropped"].toDouble(), 512.0);
        QVERIFY(results["locks_cancelled"].toDouble() >= 2);
    }

    // The zero-copy read's checksum pass four ways; the mode fails if any way's page CRCs differ
    // from pread's.
    void crcReadMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "crc-read", "--file-mb", "8", "--rpc-kb", "1024", "--rounds", "1"},
                     &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("crc-read"));
        const auto results = report["results"].toObject();
        for (const char *way :
             {"pread", "mmap_per_read", "mmap_per_read_on_touch", "object_mapping"}) {
            QCOMPARE(results[QString(way) + "_cpu_ns_per_MB_rounds"].toArray().size(), 1);
        }
        verifyPositive(report["ratios"].toObject(),
                       {"mmap_per_read_cpu_vs_pread", "mmap_per_read_on_touch_cpu_vs_pread",
                        "object_mapping_cpu_vs_pread"});
        runBench({"crc-read", "--file-mb", "8", "--rpc-kb", "6"}, &exitCode); // not whole pages
        QCOMPARE(exitCode, 1);
    }

    // cold-read: both sides (filled first, and --no-cold-read-fill) ran their round, the drop
    // left nothing cached, the ratios are there (the other client may read nothing in so short
    // a cold phase, so they are not required positive); --target is refused.
    void coldReadMode()
    {
        int exitCode = 0;
        const auto report = runBench(
            {"--json", "cold-read", "--file-mb", "8", "--hot-mb", "1", "--rounds", "1"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("cold-read"));
        for (const char *side : {"fill", "no_fill"}) {
            const auto results = report["results"].toObject()[side].toObject();
            verifyPositive(results, {"cold_read_MBps"});
            const auto rounds = results["rounds"].toArray();
            QCOMPARE(rounds.size(), 1);
            QCOMPARE(rounds[0].toObject()["cached_after_drop"].toDouble(), 0.0);
        }
        const auto ratios = report["ratios"].toObject();
        for (const char *ratio : {"hot_with_cold_vs_alone", "hot_with_cold_vs_alone_no_fill",
                                  "fill_vs_no_fill", "cold_read_fill_vs_no_fill"}) {
            QVERIFY2(ratios[ratio].isDouble(), ratio);
        }
        runBench({"cold-read", "--target", "tcp://127.0.0.1:1"}, &exitCode);
        QCOMPARE(exitCode, 1);
    }

    void smallReadMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.05", "small-read", "--file-kb", "64"}, &exitCode);
        QCOMPARE(exitCode, 0);
        verifyClientReport(report, "small-read",
                           {"vs_kernel_pread", "vs_kernel_pread_1KiB", "vs_kernel_pread_4KiB",
                            "vs_fast_read_off", "vs_fast_read_off_1KiB", "vs_fast_read_off_4KiB"});
        verifyPositive(report["results"].toObject(),
                       {"lutra_1B_reads_per_s", "kernel_1B_reads_per_s", "lutra_4KiB_reads_per_s",
                        "kernel_4KiB_reads_per_s"});
    }

    void cachedReadMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.05", "cached-read", "--file-mb", "4"}, &exitCode);
        QCOMPARE(exitCode, 0);
        verifyClientReport(report, "cached-read", {"vs_memcpy"});
        verifyPositive(report["results"].toObject(), {"lutra_read_MBps", "memcpy_MBps", "passes"});
        // The memcpy source is as large as the file, the transfer the same on both sides.
        QCOMPARE(report["params"].toObject()["source_mb"].toInt(), 4);
        // Whole passes over the file (after the warming read): the read-ahead hits are the
        // file's 1024 pages (4 MiB) once per pass.
        const auto stats = report["results"].toObject()["read_ahead_stats"].toObject();
        QCOMPARE(stats["hits"].toInteger() % 1024, 0);
        QCOMPARE(stats["hits"].toInteger() / 1024,
                 report["results"].toObject()["passes"].toInteger());
    }

    void iorEasyMode()
    {
        int exitCode = 0;
        const auto report = runBench({"--json", "ior-easy", "--file-mb", "4"}, &exitCode);
        QCOMPARE(exitCode, 0);
        verifyClientReport(
            report, "ior-easy",
            {"vs_raw_tcp", "vs_raw_tcp_memory", "vs_raw_tcp_caching", "ra_hit_ratio"});
        verifyPositive(report["results"].toObject(),
                       {"write_MBps", "read_MBps", "raw_tcp_MBps", "raw_tcp_memory_MBps",
                        "raw_tcp_caching_MBps"});
        // Two connections a target are read beside the default one.
        QCOMPARE(report["params"].toObject()["conns"].toInt(), 1);
        verifyPositive(report["ratios"].toObject(), {"conns_vs_two"});
        verifyPositive(report["results"].toObject(), {"read_two_conns_MBps"});
        // Each side's CPU per MiB read and the cores it kept busy: no more than this host has.
        const auto costs = report["results"].toObject()["cost_by_side"].toObject();
        const double cpus = static_cast<double>(std::thread::hardware_concurrency());
        for (const QString side : {"read", "raw_tcp", "raw_tcp_memory", "raw_tcp_caching"}) {
            const auto cost = costs[side].toObject();
            verifyPositive(cost, {"cpu_us_per_mib", "cores_busy"});
            QVERIFY2(cost["cores_busy"].toDouble() <= cpus * 1.05 + 0.1,
                     qPrintable(side + " kept more cores busy than the host has"));
        }
    }

    // --set reaches the mounted client: with readahead off the read is all misses.
    void setAppliesTunables()
    {
        int exitCode = 0;
        const auto report = runBench({"--json", "--set", "llite.*.max_read_ahead_mb=0", "ior-easy",
                                      "--file-mb", "4", "--rounds", "1"},
                                     &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["params"].toObject()["set"].toArray().first().toString(),
                 QString("llite.*.max_read_ahead_mb=0"));
        const auto stats = report["results"].toObject()["read_ahead_stats"].toObject();
        QCOMPARE(stats["readahead_pages"].toInteger(), 0);
        QCOMPARE(stats["hits"].toInteger(), 0);
        QVERIFY(stats["misses"].toInteger() > 0);
        // Refused before any workload: not NAME=VALUE, a bad value, a mode without a client.
        for (const QStringList &arguments :
             {QStringList{"--set", "max_read_ahead_mb", "ior-easy", "--file-mb", "1"},
              QStringList{"--set", "llite.*.max_read_ahead_mb=lots", "ior-easy", "--file-mb", "1"},
              QStringList{"--set", "llite.*.no_such_tunable=1", "ior-easy", "--file-mb", "1"}}) {
            runBench(arguments, &exitCode);
            QVERIFY2(exitCode == 1, qPrintable(arguments.join(' ')));
        }
        runBench({"--set", "llite.*.max_read_ahead_mb=1", "rpc"}, &exitCode);
        QCOMPARE(exitCode, 2);
    }

    void iorHardMode()
    {
        int exitCode = 0;
        // Transfers one byte past a page, 3 ranks: pages two ranks' chunks share are fetched
        // once (readahead_pages counts only pages sent for).
        const auto report =
            runBench({"--json", "ior-hard", "--segments", "20", "--ranks", "3", "--transfer-bytes",
                      "4097", "--rounds", "2", "--duration", "0"},
                     &exitCode);
        QCOMPARE(exitCode, 0);
        verifyClientReport(report, "ior-hard", {"vs_sequential", "ra_hit_ratio"});
        const auto results = report["results"].toObject();
        verifyPositive(results, {"write_MBps", "read_MBps", "sequential_read_MBps", "file_pages"});
        QCOMPARE(results["rounds"].toArray().size(), 2);
        QCOMPARE(results["file_pages"].toInteger(), (3 * 20 * 4097 + 4095) / 4096);
        QVERIFY2(results["pages_fetched"].toInteger() <= 2 * results["file_pages"].toInteger(),
                 qPrintable(QString::number(results["pages_fetched"].toInteger())));
        verifyCost(results["cost"].toObject(), results["pages_fetched"].toDouble() / 2);
        verifyCost(results["sequential_cost"].toObject(), results["file_pages"].toDouble());
    }

    void pressureMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "pressure", "--segments", "40", "--duration", "0"}, &exitCode);
        QCOMPARE(exitCode, 0);
        verifyClientReport(report, "pressure", {"pressured_vs_unpressured"});
        const auto results = report["results"].toObject();
        verifyPositive(results, {"pressured_read_MBps", "unpressured_read_MBps"});
        QVERIFY(results.contains("read_but_discarded_ratio"));
        QCOMPARE(report["params"].toObject()["pressured_max_cached_mb"].toInt(), 1);
        const double rounds = results["rounds"].toArray().size();
        QVERIFY(rounds > 0);
        verifyCost(results["pressured_cost"].toObject(),
                   results["pages_fetched"].toDouble() / rounds);
        verifyCost(results["unpressured_cost"].toObject(),
                   results["unpressured_pages_fetched"].toDouble() / rounds);
        // How far apart the ranks ran, in file pages: within the file, the percentiles in
        // order, and the share wider than the pressured cache (1 MB: 256 pages) a fraction.
        QCOMPARE(results["pressured_cache_pages"].toDouble(), 256.0);
        const double filePages = results["file_pages"].toDouble();
        QVERIFY(filePages > 0);
        for (const char *side : {"pressured_rank_spread_pages", "unpressured_rank_spread_pages"}) {
            const auto spread = results[side].toObject();
            const auto quartiles = spread["quartiles"].toArray();
            QCOMPARE(quartiles.size(), 2);
            QVERIFY2(quartiles[0].toDouble() >= 0 &&
                         quartiles[0].toDouble() <= spread["median"].toDouble() &&
                         spread["median"].toDouble() <= quartiles[1].toDouble() &&
                         quartiles[1].toDouble() <= spread["p90"].toDouble() &&
                         spread["p90"].toDouble() <= filePages,
                     side);
            const double wider = spread["wider_than_pressured_cache"].toDouble(-1);
            QVERIFY2(wider >= 0 && wider <= 1, side);
        }
        for (const auto &round : results["rounds"].toArray()) {
            QVERIFY(round.toObject()["pressured_rank_spread_pages"].toObject().contains("p90"));
        }
        // A cold read's first reads miss: both sides spent time in slow reads.
        for (const char *what : {"slow_reads_per_round", "slow_read_ms_per_round"}) {
            verifyPositive(results[what].toObject(), {"pressured", "unpressured"});
        }
        // --cache-percent: the pressured limit follows it (7 MiB file: half is 3 MB).
        const auto half = runBench({"--json", "pressure", "--segments", "40", "--cache-percent",
                                    "50", "--rounds", "1", "--duration", "0"},
                                   &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(half["params"].toObject()["pressured_max_cached_mb"].toInt(), 3);
        QCOMPARE(half["params"].toObject()["pressured_cache_percent"].toInt(), 50);
        QCOMPARE(half["results"].toObject()["rounds"].toArray().size(), 1);
    }

    void mdtestMode()
    {
        int exitCode = 0;
        const auto report = runBench({"--json", "mdtest", "--items", "20"}, &exitCode);
        QCOMPARE(exitCode, 0);
        verifyClientReport(report, "mdtest",
                           {"file_create_vs_kernel", "file_stat_vs_kernel", "file_remove_vs_kernel",
                            "dir_create_vs_kernel", "dir_stat_vs_kernel", "dir_remove_vs_kernel"});
    }

    // --loop: a live datapath process serving its control socket until SIGTERM.
    void loopMode()
    {
        namespace v1 = lutra::datapath::v1;
        QTemporaryDir runDir;
        QVERIFY(runDir.isValid());
        QProcess process;
        auto environment = QProcessEnvironment::systemEnvironment();
        environment.insert("LUTRA_RUN_DIR", runDir.path());
        process.setProcessEnvironment(environment);
        process.start(
            QStringLiteral(LUTRA_BENCH_BIN),
            {"--json", "--loop", "--job", "test.1", "--name", "b1", "ior-easy", "--file-mb", "2"});
        QVERIFY(process.waitForStarted());
        const std::filesystem::path socket = runDir.path().toStdString() + "/bench-b1.sock";
        QTRY_VERIFY_WITH_TIMEOUT(std::filesystem::exists(socket), 30000);

        auto stub = v1::DatapathControl::NewStub(
            grpc::CreateChannel("unix:" + socket.native(), grpc::InsecureChannelCredentials()));
        const auto deadline = [] {
            return std::chrono::system_clock::now() + std::chrono::seconds(30);
        };
        {
            grpc::ClientContext context;
            context.set_deadline(deadline());
            v1::ReadCountersRequest request;
            request.set_pattern("llite.*.read_ahead_stats");
            v1::ReadCountersReply reply;
            QVERIFY(stub->ReadCounters(&context, request, &reply).ok());
            QVERIFY(!reply.has_error());
            QCOMPARE(reply.blocks_size(), 1);
        }
        {
            grpc::ClientContext context;
            context.set_deadline(deadline());
            v1::FlushJobRequest request;
            request.set_job_id("test.1");
            v1::FlushJobReply reply;
            QVERIFY(stub->FlushJob(&context, request, &reply).ok());
            QVERIFY2(!reply.has_error(), reply.error().message().c_str());
            QCOMPARE(reply.report().job_id(), std::string("test.1"));
        }
        stub.reset();

        process.terminate();
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 0);
        const auto report = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
        QCOMPARE(report["mode"].toString(), QString("ior-easy"));
        QVERIFY(!std::filesystem::exists(socket)); // removed on shutdown
    }

    // Global options are accepted after the mode too, as users type them.
    void globalOptionsAfterMode()
    {
        int exitCode = 0;
        auto report = runBench({"flush", "--pages", "256", "--objects", "8", "--json"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("flush"));
        report =
            runBench({"cached-read", "--json", "--file-mb", "1", "--duration", "0.05"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("cached-read"));
        QCOMPARE(report["params"].toObject()["duration_s"].toDouble(), 0.05);
        // An option neither the mode nor lutra-bench knows is still refused.
        runBench({"flush", "--no-such-option"}, &exitCode);
        QVERIFY(exitCode != 0);
    }

    void badArguments()
    {
        int exitCode = 0;
        runBench({"rpc", "--threads", "0"}, &exitCode);
        QVERIFY(exitCode != 0);
        runBench({"--raw-baseline", "tcp://127.0.0.1:1", "rpc"}, &exitCode);
        QCOMPARE(exitCode, 2);
        runBench({"--target", "tcp://127.0.0.1:1", "rpc"}, &exitCode);
        QCOMPARE(exitCode, 1);
        runBench({"--loop", "flush"}, &exitCode); // flush has no mount to serve
        QCOMPARE(exitCode, 2);
        for (const char *percent : {"0", "101", "half"}) {
            runBench({"pressure", "--cache-percent", percent}, &exitCode);
            QVERIFY2(exitCode != 0, percent);
        }
    }
};

QTEST_GUILESS_MAIN(TestLutraBench)
#include "test_lutra_bench.moc"
