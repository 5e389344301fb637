// The per-node time-series store: keys in data order, rates and hit ratios, gauges, bounded rings,
// gaps, and history prefilled before (or under) the live rows.
#include "core/node_series.h"

#include <QTest>

#include <cmath>

using namespace lutra::console;

namespace {

constexpr qint64 kMs = 1'000'000;
constexpr qint64 kSecond = 1'000 * kMs;
constexpr qint64 kT0 = 1'767'225'600 * kSecond; // 2026-01-01T00:00:00Z
constexpr qint64 kT0Ms = kT0 / kMs;
constexpr qint64 kStart = kT0 - 3600 * kSecond;

const QString kJob1 = QStringLiteral("bench-job1001");
const QString kJob2 = QStringLiteral("bench-job1002");
const QString kRa = QStringLiteral("llite.lutra.read_ahead_stats");
const QString kLocks = QStringLiteral("ldlm.namespaces.ost0.lock_stats");
const QString kLockCount = QStringLiteral("ldlm.namespaces.ost0.lock_count");
const QString kLruSize = QStringLiteral("ldlm.namespaces.ost0.lru_size");
const QString kCachedMb = QStringLiteral("llite.lutra.cached_mb");

QString key(const QString &block, const char *counter)
{
    return block + u'.' + QLatin1String(counter);
}

CounterBlock block(const QString &name, qint64 snapshotNs,
                   const QList<QPair<QString, quint64>> &counters, qint64 startNs = kStart)
{
    CounterBlock result;
    result.name = name;
    result.snapshotTimeNs = snapshotNs;
    result.startTimeNs = startNs;
    for (const auto &[counterName, samples] : counters) {
        result.counters.append(Counter{counterName, QStringLiteral("pages"), samples});
    }
    return result;
}

// The readahead block with four of Lustre's 18 counters, in Lustre's order.
CounterBlock readahead(qint64 snapshotNs, quint64 hits, quint64 misses, quint64 notConsecutive = 0,
                       quint64 zeroSizeWindow = 0)
{
    return block(kRa, snapshotNs,
                 {{QStringLiteral("hits"), hits},
                  {QStringLiteral("misses"), misses},
                  {QStringLiteral("readpage_not_consecutive"), notConsecutive},
                  {QStringLiteral("zero_size_window"), zeroSizeWindow}});
}

// lock_stats has a "hits" of its own: it must not count towards the readahead hit ratio.
CounterBlock lockStats(qint64 snapshotNs, quint64 enqueues, quint64 hits, quint64 cancelLru)
{
    return block(kLocks, snapshotNs,
                 {{QStringLiteral("enqueues"), enqueues},
                  {QStringLiteral("hits"), hits},
                  {QStringLiteral("cancel_lru"), cancelLru}});
}

QList<InstanceValue> gauges(const QString &instance, int lockCount, int lruSize, int cachedMb)
{
    return {
        {instance, kLockCount, QString::number(lockCount)},
        {instance, kLruSize, QString::number(lruSize)},
        {instance, kCachedMb, QString::number(cachedMb)},
        {instance, QStringLiteral("osc.ost0.import_state"), QStringLiteral("FULL")},
    };
}

// One second of job1: every counter grows by `step` times its rate.
CounterUpdate job1Update(int second)
{
    const qint64 t = kT0 + second * kSecond;
    const auto s = static_cast<quint64>(second);
    CounterUpdate update;
    update.timeNs = t;
    update.instances.append(InstanceCounters{
        kJob1,
        {readahead(t, 1000 + 300 * s, 200 + 100 * s, 5 + 2 * s), lockStats(t, 10 + s, 5000 * s, 0)},
        gauges(kJob1, 1500 + second, 0, 256 + second)});
    return update;
}

HistorySeries history(const QString &instance, const QString &counter, qint64 firstNs,
                      const QList<qint64> &values)
{
    HistorySeries series;
    series.instance = instance;
    series.counter = counter;
    for (qsizetype i = 0; i < values.size(); ++i) {
        series.timeNs.append(firstNs + i * 10 * kSecond);
        series.value.append(values[i]);
        series.min.append(values[i]);
        series.max.append(values[i]);
    }
    return series;
}

QList<double> ys(const QList<QPointF> &points)
{
    QList<double> result;
    for (const auto &point : points) {
        result.append(point.y());
    }
    return result;
}

QList<qint64> xs(const QList<QPointF> &points)
{
    QList<qint64> result;
    for (const auto &point : points) {
        result.append(static_cast<qint64>(point.x()));
    }
    return result;
}

// Values are stored as float: compare at float precision; NaN only with NaN.
bool same(double got, double expected)
{
    if (std::isnan(expected)) {
        return std::isnan(got);
    }
    return qFuzzyCompare(static_cast<float>(got), static_cast<float>(expected));
}

bool sameList(const QList<double> &got, const QList<double> &expected)
{
    if (got.size() != expected.size()) {
        qWarning() << "got" << got << "expected" << expected;
        return false;
    }
    for (qsizetype i = 0; i < got.size(); ++i) {
        if (!same(got[i], expected[i])) {
            qWarning() << "got" << got << "expected" << expected;
            return false;
        }
    }
    return true;
}

const double kNaN = std::nan("");

} // namespace

class TestConsoleNodeSeries : public QObject {
    Q_OBJECT

private slots:
    void keysInDataOrder()
    {
        NodeSeries series;
        QVERIFY(series.add(job1Update(0)).isEmpty());
        QCOMPARE(series.instances(), QStringList{kJob1});
        QCOMPARE(series.keys(kJob1), (QStringList{
                                         key(kRa, "hits"),
                                         key(kRa, "misses"),
                                         key(kRa, "readpage_not_consecutive"),
                                         key(kRa, "zero_size_window"),
                                         key(kRa, "hit_ratio"),
                                         key(kLocks, "enqueues"),
                                         key(kLocks, "hits"),
                                         key(kLocks, "cancel_lru"),
                                         kLockCount,
                                         kLruSize,
                                         kCachedMb,
                                     })); // the non-numeric import_state is not a series
        QVERIFY(series.keys(kJob2).isEmpty());
        QCOMPARE(series.lastTimeMs(), kT0Ms);
    }

    void ratesAndHitRatio()
    {
        NodeSeries series;
        series.add(job1Update(0));
        const auto rates = series.add(job1Update(1));
        QCOMPARE(rates.size(), 2);
        QCOMPARE(rates[0].block, kRa);
        QCOMPARE(rates[1].block, kLocks);

        QVERIFY(same(series.latest(kJob1, key(kRa, "hits")), 300));
        QVERIFY(same(series.latest(kJob1, key(kRa, "misses")), 100));
        QVERIFY(same(series.latest(kJob1, key(kRa, "readpage_not_consecutive")), 2));
        QVERIFY(same(series.latest(kJob1, key(kRa, "zero_size_window")), 0));
        QVERIFY(same(series.latest(kJob1, key(kRa, "hit_ratio")), 0.75));
        QVERIFY(same(series.latest(kJob1, key(kLocks, "hits")), 5000));
        // The first update had nothing to rate against: a NaN row, not a zero.
        const auto ratio = series.points(kJob1, key(kRa, "hit_ratio"));
        QCOMPARE(xs(ratio), (QList<qint64>{kT0Ms, kT0Ms + 1000}));
        QVERIFY(sameList(ys(ratio), {kNaN, 0.75}));

        // The node's ratio counts read_ahead_stats only, not lock_stats' hits.
        QVERIFY(same(series.latestNodeReadahead().hitRatio, 0.75));
        QVERIFY(same(series.latestNodeReadahead().missesPerSecond, 100));
        QVERIFY(sameList(ys(series.nodeHitRatio()), {kNaN, 0.75}));
        QCOMPARE(xs(series.nodeHitRatio(kT0Ms + 1)), (QList<qint64>{kT0Ms + 1000}));

        QVERIFY(std::isnan(series.latest(kJob1, QStringLiteral("no.such_stats.key"))));
        QVERIFY(std::isnan(series.latest(kJob2, key(kRa, "hits"))));
        QVERIFY(series.points(kJob2, key(kRa, "hits")).isEmpty());
    }

    void zeroReadsHaveNoRatio()
    {
        NodeSeries series;
        CounterUpdate idle;
        for (int second = 0; second < 2; ++second) {
            idle.timeNs = kT0 + second * kSecond;
            idle.instances = {InstanceCounters{kJob1, {readahead(idle.timeNs, 700, 70)}, {}}};
            series.add(idle);
        }
        QVERIFY(same(series.latest(kJob1, key(kRa, "hits")), 0));
        QVERIFY(std::isnan(series.latest(kJob1, key(kRa, "hit_ratio"))));
        QVERIFY(std::isnan(series.latestNodeReadahead().hitRatio));
        QVERIFY(std::isnan(series.latestNodeReadahead().missesPerSecond));
    }

    // The node's latest ratio survives polls that bring no rate (the snapshot did not advance,
    // or nothing was read) for a minute, then it is unknown: a ranking of nodes does not
    // flicker with the poll's timing, nor keep a node that stopped reading long ago.
    void latestRatioOutlivesPollsWithoutRatesForAMinute()
    {
        NodeSeries series;
        series.add(job1Update(0));
        series.add(job1Update(1));
        auto stale = job1Update(1); // the same snapshot, polled again a second later
        stale.timeNs = kT0 + 2 * kSecond;
        series.add(stale);
        QVERIFY(sameList(ys(series.nodeHitRatio()), {kNaN, 0.75, kNaN}));
        QVERIFY(same(series.latestNodeReadahead().hitRatio, 0.75));
        QVERIFY(same(series.latestNodeReadahead().missesPerSecond, 100));

        // Reads stop: the counters stand still, each snapshot newer than the last.
        const auto idleAt = [](int second) {
            CounterUpdate idle;
            idle.timeNs = kT0 + second * kSecond;
            idle.instances = {InstanceCounters{
                kJob1,
                {readahead(idle.timeNs, 1300, 300, 7), lockStats(idle.timeNs, 11, 5000, 0)},
                {}}};
            return idle;
        };
        series.add(idleAt(3));
        series.add(idleAt(61));
        QCOMPARE(series.lastTimeMs() - (kT0Ms + 1000), NodeSeries::kLatestLookbackMs);
        QVERIFY(same(series.latestNodeReadahead().hitRatio, 0.75)); // a minute on: in reach
        series.add(idleAt(62));
        QVERIFY(std::isnan(series.latestNodeReadahead().hitRatio));
        QVERIFY(std::isnan(series.latestNodeReadahead().missesPerSecond));
    }

    void gaugeValues()
    {
        NodeSeries series;
        for (int second = 0; second < 3; ++second) {
            series.add(job1Update(second));
        }
        QVERIFY(sameList(ys(series.points(kJob1, kLockCount)), {1500, 1501, 1502}));
        QVERIFY(sameList(ys(series.points(kJob1, kLruSize)), {0, 0, 0}));
        QVERIFY(sameList(ys(series.points(kJob1, kCachedMb, kT0Ms + 1000)), {257, 258}));
        QVERIFY(same(series.latest(kJob1, kCachedMb), 258));
    }

    void seriesAppearingAndVanishing()
    {
        NodeSeries series;
        series.add(job1Update(0));
        series.add(job1Update(1));
        auto update = job1Update(2);
        // A gauge shows up; lru_size is missing from this update; cached_mb is not a number.
        update.instances[0].gauges = {
            {kJob1, kLockCount, QStringLiteral("1502")},
            {kJob1, kCachedMb, QStringLiteral("n/a")},
            {kJob1, QStringLiteral("llite.lutra.max_read_ahead_mb"), QStringLiteral("64")},
        };
        series.add(update);
        QCOMPARE(series.keys(kJob1).last(), QStringLiteral("llite.lutra.max_read_ahead_mb"));
        QVERIFY(sameList(ys(series.points(kJob1, QStringLiteral("llite.lutra.max_read_ahead_mb"))),
                         {kNaN, kNaN, 64}));
        QVERIFY(sameList(ys(series.points(kJob1, kLruSize)), {0, 0, kNaN}));
        QVERIFY(sameList(ys(series.points(kJob1, kCachedMb)), {256, 257, kNaN}));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "hits"))), {kNaN, 300, 300}));
    }

    void capacityBoundsTheRings()
    {
        const int capacity = 5;
        NodeSeries series(capacity);
        for (int second = 0; second < 12; ++second) {
            series.add(job1Update(second));
        }
        const auto hits = series.points(kJob1, key(kRa, "hits"));
        QCOMPARE(xs(hits), (QList<qint64>{kT0Ms + 7000, kT0Ms + 8000, kT0Ms + 9000, kT0Ms + 10000,
                                          kT0Ms + 11000}));
        QVERIFY(sameList(ys(hits), {300, 300, 300, 300, 300}));
        QCOMPARE(series.nodeHitRatio().size(), capacity);
        QCOMPARE(series.lastTimeMs(), kT0Ms + 11000);
        // One instance: a time ring and 11 columns; the node: a time ring and two columns.
        const qsizetype instanceBytes = capacity * 8 + 11 * capacity * 4;
        const qsizetype nodeBytes = capacity * 8 + 2 * capacity * 4;
        QCOMPARE(series.memoryBytes(), instanceBytes + nodeBytes);
    }

    void markGap()
    {
        NodeSeries series;
        series.add(job1Update(0));
        series.add(job1Update(1));
        series.markGap(kT0Ms + 2000);
        for (const QString &k : series.keys(kJob1)) {
            QVERIFY2(std::isnan(series.latest(kJob1, k)), qPrintable(k));
            QCOMPARE(series.points(kJob1, k).size(), 3);
        }
        // The ratio before the gap stays in reach: whether the node is reachable is the
        // connection's to show, not the series'.
        QVERIFY(same(series.latestNodeReadahead().hitRatio, 0.75));
        QCOMPARE(series.lastTimeMs(), kT0Ms + 2000);
        // A gap in the past would break the time order: ignored.
        series.markGap(kT0Ms + 500);
        QCOMPARE(series.points(kJob1, kLockCount).size(), 3);

        // Back again: rated against the last snapshot seen, over the whole absence.
        series.add(job1Update(4));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "hits"))), {kNaN, 300, kNaN, 300}));
        QCOMPARE(xs(series.nodeHitRatio()),
                 (QList<qint64>{kT0Ms, kT0Ms + 1000, kT0Ms + 2000, kT0Ms + 4000}));
    }

    void nodeHitRatioAcrossInstances()
    {
        NodeSeries series;
        for (int second = 0; second < 2; ++second) {
            const qint64 t = kT0 + second * kSecond;
            const auto s = static_cast<quint64>(second);
            CounterUpdate update;
            update.timeNs = t;
            update.instances = {
                InstanceCounters{
                    kJob1, {readahead(t, 300 * s, 100 * s), lockStats(t, 0, 9000 * s, 0)}, {}},
                InstanceCounters{kJob2, {readahead(t, 50 + 100 * s, 0)}, {}},
            };
            series.add(update);
        }
        QCOMPARE(series.instances(), (QStringList{kJob1, kJob2}));
        QVERIFY(same(series.latest(kJob1, key(kRa, "hit_ratio")), 0.75));
        QVERIFY(same(series.latest(kJob2, key(kRa, "hit_ratio")), 1.0));
        QVERIFY(same(series.latestNodeReadahead().hitRatio, 0.8)); // 400 / (400 + 100)
        QVERIFY(same(series.latestNodeReadahead().missesPerSecond, 100));
    }

    void prefillFromHistory()
    {
        NodeSeries series;
        const qint64 first = kT0 - 50 * kSecond;
        // Five 10 s buckets; the counters were cleared between the third and the fourth.
        series.prefill({
            history(kJob1, key(kRa, "hits"), first, {1000, 1500, 2500, 300, 800}),
            history(kJob1, key(kRa, "misses"), first, {100, 150, 250, 50, 100}),
            history(kJob1, kLockCount, first, {1200, 1250, 1300, 40, 90}),
            history(kJob1, key(kLocks, "enqueues"), first, {0, 10, 20, 30, 40}),
            // A counter with min/max/sum: its sum is not a series of its own.
            history(kJob1, QStringLiteral("osc.ost0.rpc_stats.read_rpc_bytes"), first,
                    {0, 4096, 8192, 8192, 8192}),
            history(kJob1, QStringLiteral("osc.ost0.rpc_stats.read_rpc_bytes.sum"), first,
                    {0, 1 << 20, 2 << 20, 2 << 20, 2 << 20}),
        });
        QCOMPARE(series.instances(), QStringList{kJob1});
        QCOMPARE(series.keys(kJob1), (QStringList{
                                         key(kRa, "hits"),
                                         key(kRa, "misses"),
                                         key(kRa, "hit_ratio"),
                                         key(kLocks, "enqueues"),
                                         QStringLiteral("osc.ost0.rpc_stats.read_rpc_bytes"),
                                         kLockCount,
                                     }));
        const qint64 firstMs = first / kMs;
        QCOMPARE(xs(series.points(kJob1, key(kRa, "hits"))),
                 (QList<qint64>{firstMs, firstMs + 10000, firstMs + 20000, firstMs + 30000,
                                firstMs + 40000}));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "hits"))), {kNaN, 50, 100, 30, 50}));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "misses"))), {kNaN, 5, 10, 5, 5}));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "hit_ratio"))),
                         {kNaN, 50.0 / 55, 100.0 / 110, 30.0 / 35, 50.0 / 55}));
        QVERIFY(sameList(ys(series.points(kJob1, kLockCount)), {1200, 1250, 1300, 40, 90}));
        QVERIFY(
            sameList(ys(series.points(kJob1, QStringLiteral("osc.ost0.rpc_stats.read_rpc_bytes"))),
                     {kNaN, 409.6, 409.6, 0, 0}));
        QVERIFY(
            sameList(ys(series.nodeHitRatio()), {50.0 / 55, 100.0 / 110, 30.0 / 35, 50.0 / 55}));
        QVERIFY(same(series.latestNodeReadahead().missesPerSecond, 5));
        QCOMPARE(series.lastTimeMs(), firstMs + 40000);

        // Live updates follow the history; keys the history did not have come after its own.
        series.add(job1Update(0));
        series.add(job1Update(1));
        const auto hits = series.points(kJob1, key(kRa, "hits"));
        QCOMPARE(hits.size(), 7);
        QCOMPARE(xs(hits).mid(5), (QList<qint64>{kT0Ms, kT0Ms + 1000}));
        QVERIFY(sameList(ys(hits), {kNaN, 50, 100, 30, 50, kNaN, 300}));
        QCOMPARE(series.keys(kJob1).mid(6, 2),
                 (QStringList{key(kRa, "readpage_not_consecutive"), key(kRa, "zero_size_window")}));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "zero_size_window"))),
                         {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 0}));
    }

    void prefillAfterLiveKeepsOrder()
    {
        const int capacity = 6;
        NodeSeries series(capacity);
        for (int second = 0; second < 3; ++second) {
            series.add(job1Update(second));
        }
        // History reaching into the live period: only what is older than the first live
        // update is taken; job2 has history only.
        const qint64 first = kT0 - 40 * kSecond;
        series.prefill({
            history(kJob1, key(kRa, "hits"), first, {0, 1000, 2000, 2500, 9999, 99999}),
            history(kJob1, key(kRa, "misses"), first, {0, 0, 1000, 1500, 9999, 99999}),
            history(kJob1, kLockCount, first, {1, 2, 3, 4, 5, 6}),
            history(kJob2, key(kRa, "hits"), first, {0, 100, 200, 300, 400, 500}),
            history(kJob2, key(kRa, "misses"), first, {0, 100, 200, 300, 400, 500}),
        });
        const qint64 firstMs = first / kMs;
        // 4 history rows and 3 live ones, 6 kept: the oldest history row is dropped.
        const auto hits = series.points(kJob1, key(kRa, "hits"));
        QCOMPARE(xs(hits), (QList<qint64>{firstMs + 10000, firstMs + 20000, firstMs + 30000, kT0Ms,
                                          kT0Ms + 1000, kT0Ms + 2000}));
        QVERIFY(sameList(ys(hits), {100, 100, 50, kNaN, 300, 300}));
        QVERIFY(sameList(ys(series.points(kJob1, key(kRa, "hit_ratio"))),
                         {1.0, 0.5, 0.5, kNaN, 0.75, 0.75}));
        QVERIFY(sameList(ys(series.points(kJob1, kLockCount)), {2, 3, 4, 1500, 1501, 1502}));
        QVERIFY(same(series.latest(kJob1, kLockCount), 1502));

        QCOMPARE(series.instances(), (QStringList{kJob1, kJob2}));
        QVERIFY(sameList(ys(series.points(kJob2, key(kRa, "hit_ratio"))), {kNaN, 0.5, 0.5, 0.5}));

        // The node's ratio: history of both instances summed, then the live rows.
        const auto node = series.nodeHitRatio();
        QCOMPARE(xs(node), (QList<qint64>{firstMs + 10000, firstMs + 20000, firstMs + 30000, kT0Ms,
                                          kT0Ms + 1000, kT0Ms + 2000}));
        QVERIFY(sameList(ys(node), {110.0 / 120, 110.0 / 220, 60.0 / 120, kNaN, 0.75, 0.75}));
        QVERIFY(same(series.latestNodeReadahead().hitRatio, 0.75));
        QCOMPARE(series.lastTimeMs(), kT0Ms + 2000);
    }
};

QTEST_GUILESS_MAIN(TestConsoleNodeSeries)
#include "test_console_node_series.moc"
