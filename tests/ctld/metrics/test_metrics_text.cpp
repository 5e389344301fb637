// Prometheus rendering: exact text of a small case, escaping of hostile label values, and a
// realistic node's output accepted by `promtool check metrics` (a real process) with no lint.
#include "ctld/metrics/exposition.h"
#include "ctld/metrics/text_format.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTest>

using namespace lutra::ctld::metrics;

namespace {

Counter counter(std::string name, std::string unit, std::uint64_t samples)
{
    Counter c;
    c.name = std::move(name);
    c.unit = std::move(unit);
    c.samples = samples;
    return c;
}

Counter summed(std::string name, std::string unit, std::uint64_t samples, std::int64_t sum)
{
    Counter c = counter(std::move(name), std::move(unit), samples);
    c.withMinMaxSum = true;
    c.min = 1;
    c.max = sum;
    c.sum = sum;
    return c;
}

CounterBlock readAheadStats(const std::string &fs)
{
    CounterBlock block;
    block.name = "llite." + fs + ".read_ahead_stats";
    block.help = "readahead decisions and their outcomes, in pages (write 'clear' to reset)";
    const char *names[] = {"hits",
                           "misses",
                           "readpage_not_consecutive",
                           "miss_inside_window",
                           "failed_grab_cache_page",
                           "failed_lock_match",
                           "read_but_discarded",
                           "zero_length_file",
                           "zero_size_window",
                           "readahead_to_eof",
                           "hit_max_readahead_issue",
                           "wrong_page_from_grab_cache_page",
                           "failed_to_reach_end",
                           "async_readahead",
                           "failed_to_fast_read",
                           "mmap_range_read",
                           "readahead_pages",
                           "forceread_pages"};
    std::uint64_t n = 1000;
    for (const char *name : names) {
        block.counters.push_back(counter(name, "pages", n));
        n = n * 7 % 100003;
    }
    return block;
}

CounterBlock rpcStats(const std::string &target)
{
    CounterBlock block;
    block.name = "osc." + target + ".rpc_stats";
    block.help = "pages-per-RPC and RPCs-in-flight histograms, read | write (write 'clear' to "
                 "reset)";
    block.counters = {
        counter("read_rpcs_in_flight", "reqs", 3),
        counter("pending_read_pages", "pages", 128),
        counter("read_pages_per_rpc_256", "rpcs", 10),
        counter("read_pages_per_rpc_1024", "rpcs", 990),
        counter("read_pages_per_rpc_-2147483648", "rpcs", 1), // Lustre's int overflow at row 31
        counter("read_rpcs_in_flight_1", "rpcs", 500),
        counter("read_rpcs_in_flight_8", "rpcs", 501),
        counter("write_rpcs_in_flight", "reqs", 0),
        counter("pending_write_pages", "pages", 0),
        counter("write_pages_per_rpc_4096", "rpcs", 77),
        counter("write_rpcs_in_flight_16", "rpcs", 77),
    };
    return block;
}

NumericParam param(std::string name, std::int64_t value, std::string unit, std::string help = {})
{
    return {std::move(name), value, std::move(unit), std::move(help)};
}

// A node running a target and a client engine, with label values chosen to break a careless
// renderer: quotes, backslashes, newlines, non-ASCII text and bytes that are not UTF-8.
Exposition realisticNode()
{
    Exposition e;
    e.node = "node\"07\"\\rack\n12 — nœud";
    DatapathInstance target;
    target.node = e.node;
    target.kind = "target";
    target.name = "ost0";
    target.version = "0.1.0";
    target.startTimeSeconds = 1700000000.25;
    CounterBlock locks;
    locks.name = "ldlm.namespaces.ost0.lock_stats";
    locks.help = "locks granted and cancelled, blocking callbacks sent, clients evicted (write "
                 "'clear' to reset)";
    locks.counters = {counter("granted", "locks", 5000), counter("cancelled", "locks", 4990),
                      counter("blocking_callbacks", "reqs", 12),
                      counter("evictions", "clients", 0)};
    CounterBlock commit;
    commit.name = "obdfilter.ost0.commit_stats";
    commit.help = "group commit batches, writes and syncs (write 'clear' to reset)";
    commit.counters = {counter("batches", "batches", 300),
                       counter("writes", "reqs", 9000),
                       counter("syncs", "syncs", 300),
                       summed("batch_writes", "reqs", 300, 9000),
                       summed("sync_latency", "usecs", 300, 1234567),
                       counter("failed_batches", "batches", 0)};
    target.blocks = {locks, commit};
    target.params = {param("ldlm.namespaces.ost0.lock_count", 10, ""),
                     param("ldlm.namespaces.ost0.blocking_timeout", 30000, "ms"),
                     param("obdfilter.ost0.commit_interval", 0, "ms"),
                     param("obdfilter.ost0.num_exports", 2, "")};

    DatapathInstance bench;
    bench.node = e.node;
    bench.kind = "bench";
    bench.name = "bench \"a\\b\"\nnext\xff\xfe ünï";
    CounterBlock pageCache;
    pageCache.name = "llite.lutra.page_cache_stats";
    pageCache.help = "page cache hits, misses, reclaim and release (write 'clear' to reset)";
    pageCache.counters = {counter("cache_hit", "pages", 100000), counter("cache_miss", "reqs", 10),
                          summed("release_batch", "pages", 40, 1240),
                          summed("reclaim_batch", "pages", 0, 0)};
    CounterBlock clientLocks;
    clientLocks.name = "ldlm.namespaces.ost0.lock_stats";
    clientLocks.counters = {counter("enqueues", "reqs", 40), counter("hits", "locks", 4000),
                            counter("cancel_lru", "locks", 35)};
    bench.blocks = {readAheadStats("lutra"), rpcStats("ost0"), rpcStats("ost1"), pageCache,
                    clientLocks};
    bench.params = {
        param("ldlm.namespaces.ost0.lock_count", 40, "", "locks held or cached"),
        param("ldlm.namespaces.ost0.lock_unused_count", 35, "",
              "cached locks no one is using (the LRU)"),
        param("ldlm.namespaces.ost0.lru_size", 0, "", "unused locks kept cached (0 = dynamic)"),
        param("ldlm.namespaces.ost0.lru_max_age", 3900, "s"),
        param("llite.lutra.max_cached_mb", 1024, "MiB", "page cache size; reclaim starts above it"),
        param("llite.lutra.cached_pages", 262144, "pages", "pages in the page cache"),
        param("llite.lutra.dirty_pages", 17, "pages", "dirty pages waiting for write-back"),
        param("osc.ost0.max_pages_per_rpc", 1024, "pages"),
    };
    e.instances = {target, bench};
    for (const double seconds : {0.0004, 0.003, 0.02, 0.02, 0.7, 3.5, 500.0}) {
        e.flushDuration.observe(seconds);
    }
    return e;
}

struct PromtoolResult {
    int exitCode = -1;
    QString output;
};

PromtoolResult promtoolCheck(const std::string &text)
{
    const QString promtool = QStandardPaths::findExecutable("promtool");
    if (promtool.isEmpty()) {
        return {-1, "promtool not found: install Debian's prometheus package "
                    "(packaging/install-deps.sh)"};
    }
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    process.start(promtool, {"check", "metrics"});
    if (!process.waitForStarted(10000)) {
        return {-1, "promtool did not start: " + process.errorString()};
    }
    process.write(text.data(), static_cast<qint64>(text.size()));
    process.closeWriteChannel();
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        return {-1, "promtool did not finish"};
    }
    const int code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    return {code, QString::fromUtf8(process.readAll())};
}

} // namespace

class TestMetricsText : public QObject {
    Q_OBJECT

private slots:
    void escapesLabelValues()
    {
        QCOMPARE(escapeLabelValue("plain"), "plain");
        QCOMPARE(escapeLabelValue("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
        QCOMPARE(escapeLabelValue("nœud ü 节点 🙂"),
                 "nœud ü 节点 🙂"); // valid UTF-8 stays
        // Invalid UTF-8 (a stray byte, a truncated sequence, an overlong '/', a surrogate)
        // becomes U+FFFD: Prometheus rejects the whole scrape otherwise.
        QCOMPARE(escapeLabelValue("a\xff"
                                  "b"),
                 "a\xEF\xBF\xBD"
                 "b");
        QCOMPARE(escapeLabelValue("\xC3"), "\xEF\xBF\xBD");
        QCOMPARE(escapeLabelValue("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");
        QCOMPARE(escapeLabelValue("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
        // # HELP escapes backslash and newline only.
        QCOMPARE(escapeHelp("a\\b\"c\nd"), "a\\\\b\"c\\nd");
        QCOMPARE(namePart("read-ahead.stats ü"), "read_ahead_stats___");
    }

    void formatsNumbers()
    {
        QCOMPARE(formatNumber(1073741824.0), "1073741824");
        QCOMPARE(formatNumber(0.25), "0.25");
        QCOMPARE(formatNumber(1.234567), "1.234567");
        QCOMPARE(formatNumber(1e-6), "1e-06");
        QCOMPARE(formatNumber(std::numeric_limits<double>::infinity()), "+Inf");
        QCOMPARE(formatNumber(std::uint64_t{18446744073709551615u}), "18446744073709551615");
        QCOMPARE(formatNumber(std::int64_t{-5}), "-5");
    }

    void familiesStayTogetherAndSeriesAppearOnce()
    {
        FamilySet families;
        QVERIFY(families.add("b_total", MetricType::counter, "b", "", {{"x", "1"}}, "1"));
        QVERIFY(families.add("a", MetricType::gauge, "a", "", {}, "2"));
        QVERIFY(families.add("b_total", MetricType::counter, "b", "", {{"x", "2"}}, "3"));
        QVERIFY(!families.add("b_total", MetricType::counter, "b", "", {{"x", "2"}}, "4"));
        QVERIFY(!families.add("a", MetricType::counter, "a", "", {{"y", "1"}}, "5"));
        QCOMPARE(families.render(), "# HELP a a\n"
                                    "# TYPE a gauge\n"
                                    "a 2\n"
                                    "# HELP b_total b\n"
                                    "# TYPE b_total counter\n"
                                    "b_total{x=\"1\"} 1\n"
                                    "b_total{x=\"2\"} 3\n");
    }

    void rendersASmallNodeExactly()
    {
        Exposition e;
        e.node = "n1";
        e.flushDuration.upperBounds = {0.1, 1};
        e.flushDuration.counts = {0, 0, 0};
        e.flushDuration.observe(0.05);
        e.flushDuration.observe(2.5);
        DatapathInstance bench;
        bench.node = "n1";
        bench.kind = "bench";
        bench.name = "b\"1";
        CounterBlock ra;
        ra.name = "llite.lutra.read_ahead_stats";
        ra.help = "readahead decisions and their outcomes, in pages (write 'clear' to reset)";
        ra.counters = {counter("hits", "pages", 42), counter("misses", "pages", 3)};
        bench.blocks = {ra};
        bench.params = {param("ldlm.namespaces.ost0.lock_unused_count", 7, "", "the LRU"),
                        param("llite.lutra.max_cached_mb", 2, "MiB", "page cache size")};
        e.instances = {bench};
        QCOMPARE(QString::fromStdString(renderPrometheus(e)),
                 "# HELP lutra_ctld_flush_duration_seconds time ctld took to flush a job (pages "
                 "and locks) on this node's datapath processes\n"
                 "# TYPE lutra_ctld_flush_duration_seconds histogram\n"
                 "lutra_ctld_flush_duration_seconds_bucket{node=\"n1\",le=\"0.1\"} 1\n"
                 "lutra_ctld_flush_duration_seconds_bucket{node=\"n1\",le=\"1\"} 1\n"
                 "lutra_ctld_flush_duration_seconds_bucket{node=\"n1\",le=\"+Inf\"} 2\n"
                 "lutra_ctld_flush_duration_seconds_sum{node=\"n1\"} 2.55\n"
                 "lutra_ctld_flush_duration_seconds_count{node=\"n1\"} 2\n"
                 "# HELP lutra_datapath_info datapath processes ctld manages on this node "
                 "(always 1)\n"
                 "# TYPE lutra_datapath_info gauge\n"
                 "lutra_datapath_info{node=\"n1\",kind=\"bench\",process=\"b\\\"1\",version=\"\"} "
                 "1\n"
                 "# HELP lutra_ldlm_unused_locks the LRU (ldlm.namespaces.*.lock_unused_count)\n"
                 "# TYPE lutra_ldlm_unused_locks gauge\n"
                 "lutra_ldlm_unused_locks{node=\"n1\",kind=\"bench\",process=\"b\\\"1\","
                 "namespace=\"ost0\"} 7\n"
                 "# HELP lutra_llite_max_cached_bytes page cache size (llite.*.max_cached_mb, "
                 "converted from MiB)\n"
                 "# TYPE lutra_llite_max_cached_bytes gauge\n"
                 "lutra_llite_max_cached_bytes{node=\"n1\",kind=\"bench\",process=\"b\\\"1\","
                 "fs=\"lutra\"} 2097152\n"
                 "# HELP lutra_llite_read_ahead_total readahead decisions and their outcomes, in "
                 "pages (llite.*.read_ahead_stats: samples per event)\n"
                 "# TYPE lutra_llite_read_ahead_total counter\n"
                 "lutra_llite_read_ahead_total{node=\"n1\",kind=\"bench\",process=\"b\\\"1\","
                 "fs=\"lutra\",event=\"hits\"} 42\n"
                 "lutra_llite_read_ahead_total{node=\"n1\",kind=\"bench\",process=\"b\\\"1\","
                 "fs=\"lutra\",event=\"misses\"} 3\n");
    }

    void rpcStatsBecomeHistograms()
    {
        Exposition e;
        DatapathInstance bench;
        bench.node = "n1";
        bench.kind = "bench";
        bench.name = "b1";
        bench.blocks = {rpcStats("ost0")};
        e.instances = {bench};
        const QString text = QString::fromStdString(renderPrometheus(e));
        const QString labels = "node=\"n1\",kind=\"bench\",process=\"b1\",target=\"ost0\"";
        const QStringList expected{
            "lutra_osc_pages_per_rpc_bucket{" + labels + ",direction=\"read\",le=\"256\"} 10",
            "lutra_osc_pages_per_rpc_bucket{" + labels + ",direction=\"read\",le=\"1024\"} 1000",
            "lutra_osc_pages_per_rpc_bucket{" + labels +
                ",direction=\"read\",le=\"2147483648\"} 1001",
            "lutra_osc_pages_per_rpc_bucket{" + labels + ",direction=\"read\",le=\"+Inf\"} 1001",
            "lutra_osc_pages_per_rpc_count{" + labels + ",direction=\"read\"} 1001",
            "lutra_osc_rpcs_in_flight_at_send_bucket{" + labels +
                ",direction=\"read\",le=\"8\"} 1001",
            "lutra_osc_rpcs_in_flight{" + labels + ",direction=\"read\"} 3",
            "lutra_osc_pending_pages{" + labels + ",direction=\"read\"} 128",
            "lutra_osc_pages_per_rpc_bucket{" + labels + ",direction=\"write\",le=\"4096\"} 77",
        };
        for (const auto &line : expected) {
            QVERIFY2(text.contains(line + "\n"), qPrintable(line + "\nnot in\n" + text));
        }
        QVERIFY(!text.contains("lutra_osc_rpc_total")); // every counter was understood
    }

    void promtoolAcceptsARealisticNode()
    {
        const std::string text = renderPrometheus(realisticNode());
        const PromtoolResult result = promtoolCheck(text);
        QVERIFY2(result.exitCode == 0 && result.output.isEmpty(),
                 qPrintable(QString("promtool exit %1: %2\n--- input ---\n%3")
                                .arg(result.exitCode)
                                .arg(result.output, QString::fromStdString(text))));
        // The hostile values arrive escaped, the invalid bytes replaced.
        QVERIFY(text.find("node=\"node\\\"07\\\"\\\\rack\\n12 — nœud\"") != std::string::npos);
        QVERIFY(text.find("process=\"bench \\\"a\\\\b\\\"\\nnext\xEF\xBF\xBD\xEF\xBF\xBD ünï\"") !=
                std::string::npos);
        for (const char *family :
             {"lutra_llite_read_ahead_total", "lutra_osc_pages_per_rpc",
              "lutra_osc_rpcs_in_flight_at_send", "lutra_ldlm_lock_total", "lutra_ldlm_locks",
              "lutra_ldlm_unused_locks", "lutra_ldlm_lru_size", "lutra_ldlm_lru_max_age_seconds",
              "lutra_ldlm_blocking_timeout_seconds", "lutra_llite_max_cached_bytes",
              "lutra_llite_cached_pages", "lutra_llite_page_cache_release_batch_pages",
              "lutra_obdfilter_commit_sync_latency_seconds", "lutra_obdfilter_commit_batch_writes",
              "lutra_obdfilter_commit_interval_seconds", "lutra_datapath_start_time_seconds",
              "lutra_ctld_flush_duration_seconds"}) {
            QVERIFY2(text.find(std::string("# TYPE ") + family + " ") != std::string::npos, family);
        }
        QVERIFY(text.find("lutra_obdfilter_commit_sync_latency_seconds_sum{") != std::string::npos);
        QVERIFY(text.find("} 1.234567\n") != std::string::npos); // usecs became seconds
    }

    void promtoolIsNotAPushover()
    {
        // The check above means something only if promtool rejects what is wrong.
        QCOMPARE(promtoolCheck("# HELP x_count c\n# TYPE x_count gauge\nx_count 1\n").exitCode, 3);
        QCOMPARE(promtoolCheck("# TYPE x gauge\nx{a=\"\xff\"} 1\n").exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestMetricsText)
#include "test_metrics_text.moc"
