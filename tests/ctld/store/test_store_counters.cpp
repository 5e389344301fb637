// Counter history: many samples -> one transaction, exact bucket values (last with its time,
// min, max), buckets merged across flushes, retention pruning, buffered samples visible to
// queries, a failed flush keeps its samples, the buffer bound keeps the newest.
#include "store_test_support.h"

#include <QTemporaryDir>
#include <QTest>

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;

namespace {

using std::chrono::seconds;

CounterPoint point(std::int64_t bucket, std::int64_t lastTime, std::int64_t last, std::int64_t min,
                   std::int64_t max)
{
    return {at(bucket), at(lastTime), last, min, max};
}

} // namespace

class TestStoreCounters : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    int m_files = 0;

    std::string nextPath()
    {
        return m_dir.filePath(QString("c%1.db").arg(++m_files)).toStdString();
    }

    static std::vector<CounterSeries> history(const Store &store, const CounterQuery &query)
    {
        auto result = store.counterHistory(query);
        if (!result.ok()) {
            qFatal("%s", result.status().toString().c_str());
        }
        return std::move(*result);
    }

    static void record(Store &store, std::string_view instance, std::int64_t second,
                       std::vector<CounterValue> values)
    {
        const Status status = store.recordSamples(instance, at(second), values);
        if (!status.ok()) {
            qFatal("%s", status.toString().c_str());
        }
    }

private slots:
    void manySamplesAreOneTransaction()
    {
        const std::string path = nextPath();
        auto store = Store::open(path);
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        // 3 instances x 40 counters, one sample a second for 25 s: 3000 samples, 3 buckets.
        std::vector<std::string> names;
        names.reserve(40);
        for (int c = 0; c < 40; ++c) {
            names.push_back("osc.ost0.stats.c" + std::to_string(c));
        }
        std::vector<CounterValue> values(names.size());
        for (int second = 0; second < 25; ++second) {
            for (int instance = 0; instance < 3; ++instance) {
                for (std::size_t c = 0; c < names.size(); ++c) {
                    values[c] = {names[c],
                                 std::int64_t{second} * 100 + static_cast<std::int64_t>(c)};
                }
                LUTRA_VERIFY_OK(
                    db.recordSamples("target-ost" + std::to_string(instance), at(second), values));
            }
        }
        const StoreStats before = db.stats();
        QCOMPARE(before.samplesRecorded, std::uint64_t(3000));
        QCOMPARE(before.bucketsBuffered, std::uint64_t(3 * 40 * 3));
        LUTRA_VERIFY_OK(db.flushSamples(at(25)));
        const StoreStats after = db.stats();
        QCOMPARE(after.commits - before.commits, std::uint64_t(1));
        QCOMPARE(after.sampleFlushes, std::uint64_t(1));
        QCOMPARE(after.bucketsWritten, std::uint64_t(360));
        QCOMPARE(after.bucketsBuffered, std::uint64_t(0));
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_buckets"), 360);
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_series"), 120);

        auto series = history(db, {.instanceGlob = "target-ost1", .counterGlob = "*.*.*.c7"});
        QCOMPARE(series.size(), std::size_t(1));
        QCOMPARE(series[0].instance, std::string("target-ost1"));
        QCOMPARE(series[0].counter, std::string("osc.ost0.stats.c7"));
        QCOMPARE(series[0].points, (std::vector<CounterPoint>{
                                       point(0, 9, 907, 7, 907),
                                       point(10, 19, 1907, 1007, 1907),
                                       point(20, 24, 2407, 2007, 2407),
                                   }));
        // Nothing buffered: a second flush writes nothing but is still one transaction.
        LUTRA_VERIFY_OK(db.flushSamples(at(26)));
        QCOMPARE(db.stats().commits - after.commits, std::uint64_t(1));
    }

    void bucketsKeepLastMinMaxAcrossFlushes()
    {
        auto store = Store::open(nextPath());
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        record(db, "bench-b0", 31, {{"g", 5}});
        record(db, "bench-b0", 33, {{"g", 9}});
        LUTRA_VERIFY_OK(db.flushSamples(at(34)));
        // The rest of the bucket arrives after the flush; one sample comes late (older time).
        record(db, "bench-b0", 36, {{"g", 2}});
        record(db, "bench-b0", 35, {{"g", 100}});
        // Visible before the flush, merged with what is stored.
        const std::vector<CounterPoint> expected{point(30, 36, 2, 2, 100)};
        auto series = history(db, {});
        QCOMPARE(series.size(), std::size_t(1));
        QCOMPARE(series[0].points, expected);
        LUTRA_VERIFY_OK(db.flushSamples(at(40)));
        series = history(db, {});
        QCOMPARE(series[0].points, expected);
        QCOMPARE(db.stats().bucketsBuffered, std::uint64_t(0));
        // since/until select whole buckets.
        record(db, "bench-b0", 45, {{"g", 7}});
        LUTRA_VERIFY_OK(db.flushSamples(at(46)));
        QCOMPARE(history(db, {.since = at(39), .until = at(40)})[0].points, expected);
        QCOMPARE(history(db, {.since = at(40)})[0].points,
                 std::vector<CounterPoint>{point(40, 45, 7, 7, 7)});
        QVERIFY(history(db, {.since = at(50)}).empty());
    }

    void retentionPrunesOldBucketsAndSeries()
    {
        const std::string path = nextPath();
        auto store = Store::open(path, {.bucketWidth = seconds(10), .retention = seconds(60)});
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        for (int second = 0; second < 60; second += 5) {
            record(db, "target-ost0", second, {{"hits", second}});
        }
        record(db, "gone-0", 0, {{"hits", 1}}); // an instance that goes away
        LUTRA_VERIFY_OK(db.flushSamples(at(60)));
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_buckets"), 6 + 1);

        for (int second = 70; second < 100; second += 5) {
            record(db, "target-ost0", second, {{"hits", second}});
        }
        record(db, "target-ost0", 135, {{"hits", 135}});
        // At 135 s the retention (60 s) keeps the bucket holding 75 s and later ones.
        LUTRA_VERIFY_OK(db.flushSamples(at(135)));
        QCOMPARE(db.stats().bucketsPruned, std::uint64_t(7)); // ost0's 0..50 and gone-0's
        QCOMPARE(rawInt(path, "SELECT min(bucket_ns) FROM counter_buckets"),
                 std::chrono::duration_cast<std::chrono::nanoseconds>(at(70).time_since_epoch())
                     .count());
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_series WHERE instance = 'gone-0'"), 0);
        auto series = history(db, {});
        QCOMPARE(series.size(), std::size_t(1));
        QCOMPARE(series[0].points.size(), std::size_t(4)); // 70, 80, 90, 130
        QCOMPARE(series[0].points.front(), point(70, 75, 75, 70, 75));
        QCOMPARE(series[0].points.back(), point(130, 135, 135, 135, 135));

        // A sample already past the retention when flushed is dropped, not written.
        record(db, "target-ost0", 60, {{"hits", 60}});
        LUTRA_VERIFY_OK(db.flushSamples(at(135)));
        QCOMPARE(db.stats().bucketsDropped, std::uint64_t(1));
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_buckets"), 4);
    }

    void failedFlushKeepsItsSamples()
    {
        const std::string path = nextPath();
        auto store = Store::open(path, {.busyTimeout = std::chrono::milliseconds(20)});
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        record(db, "target-ost0", 1, {{"hits", 1}});
        record(db, "target-ost0", 12, {{"hits", 12}});
        {
            // Another process holds the write lock.
            auto other = sqlite::Connection::open(path, SQLITE_OPEN_READWRITE);
            LUTRA_VERIFY_OK(other);
            LUTRA_VERIFY_OK(other->exec("BEGIN IMMEDIATE"));
            const Status failed = db.flushSamples(at(13));
            QCOMPARE(failed.code(), Errc::unavailable);
            QVERIFY2(failed.message().find(path + ": write counter history: ") == 0,
                     failed.message().c_str());
            QCOMPARE(db.stats().sampleFlushFailures, std::uint64_t(1));
            QCOMPARE(db.stats().bucketsBuffered, std::uint64_t(2));
            // Still visible, and more samples merge into the kept buckets.
            record(db, "target-ost0", 14, {{"hits", 14}});
            auto series = history(db, {});
            QCOMPARE(series[0].points,
                     (std::vector<CounterPoint>{point(0, 1, 1, 1, 1), point(10, 14, 14, 12, 14)}));
            LUTRA_VERIFY_OK(other->exec("ROLLBACK"));
        }
        LUTRA_VERIFY_OK(db.flushSamples(at(15)));
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_buckets"), 2);
        QCOMPARE(rawInt(path, "SELECT max_value FROM counter_buckets ORDER BY bucket_ns DESC"), 14);
    }

    void bufferBoundKeepsTheNewest()
    {
        auto store = Store::open(nextPath(), {.maxBufferedBuckets = 4});
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        for (int bucket = 0; bucket < 6; ++bucket) {
            record(db, "bench-b0", std::int64_t{bucket} * 10, {{"reads", bucket}});
        }
        record(db, "bench-b1", 0, {{"reads", 1}}); // a new series, and the buffer is full
        QCOMPARE(db.stats().bucketsBuffered, std::uint64_t(4));
        QCOMPARE(db.stats().bucketsDropped, std::uint64_t(3));
        auto series = history(db, {});
        QCOMPARE(series.size(), std::size_t(1));
        QCOMPARE(series[0].points.size(), std::size_t(4));
        QCOMPARE(series[0].points.front().bucketStart, at(20));
    }

    void queryGlobsAndLimits()
    {
        auto store = Store::open(nextPath());
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        for (const char *instance : {"target-ost0", "target-ost1", "bench-b0"}) {
            record(db, instance, 1,
                   {{"osc.ost0.rpc_stats.reads", 1}, {"llite.b0.read_ahead_stats.hits", 2}});
        }
        LUTRA_VERIFY_OK(db.flushSamples(at(2)));
        record(db, "target-ost2", 3, {{"osc.ost0.rpc_stats.reads", 1}}); // buffered only

        auto series = history(db, {.instanceGlob = "target-*", .counterGlob = "osc.*.rpc_stats.*"});
        QCOMPARE(series.size(), std::size_t(3));
        QCOMPARE(series[0].instance, std::string("target-ost0"));
        QCOMPARE(series[2].instance, std::string("target-ost2"));
        QCOMPARE(history(db, {}).size(), std::size_t(7));

        auto tooMany = db.counterHistory({.maxPoints = 6});
        QCOMPARE(tooMany.status().code(), Errc::resource_exhausted);
        QVERIFY2(tooMany.status().message().find("more than 6 points match") != std::string::npos,
                 tooMany.status().message().c_str());
        auto bad = db.counterHistory({.counterGlob = "osc.[x"});
        QCOMPARE(bad.status().code(), Errc::invalid_argument);
        QVERIFY2(bad.status().message().find("read counter history: counter glob 'osc.[x': ") !=
                     std::string::npos,
                 bad.status().message().c_str());

        const std::vector<CounterValue> unnamed{{"ok", 1}, {"", 2}};
        const Status refused = db.recordSamples("target-ost0", at(4), unnamed);
        QCOMPARE(refused.code(), Errc::invalid_argument);
        QVERIFY2(refused.message().find("target-ost0 sample 2: counter name: must not be empty") !=
                     std::string::npos,
                 refused.message().c_str());
        QCOMPARE(db.recordSamples("", at(4), {}).code(), Errc::invalid_argument);
        QCOMPARE(db.stats().samplesRecorded, std::uint64_t(7)); // the refused call kept nothing
    }
};

QTEST_GUILESS_MAIN(TestStoreCounters)
#include "test_store_counters.moc"
