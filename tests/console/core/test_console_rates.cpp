// Counter rates from successive snapshots: first sight, steady rates, and every kind of reset.
#include "core/rates.h"

#include <QTest>

using namespace lutra::console;

namespace {

constexpr qint64 kSecond = 1'000'000'000;
constexpr qint64 kT0 = 1'767'225'600 * kSecond; // 2026-01-01T00:00:00Z
const QString kRa = QStringLiteral("llite.lutra.read_ahead_stats");
const QString kRpc = QStringLiteral("osc.ost0.rpc_stats");

CounterBlock block(const QString &name, qint64 snapshotNs, qint64 startNs,
                   const QList<QPair<QString, quint64>> &counters)
{
    CounterBlock result;
    result.name = name;
    result.snapshotTimeNs = snapshotNs;
    result.startTimeNs = startNs;
    for (const auto &[counterName, samples] : counters) {
        Counter counter;
        counter.name = counterName;
        counter.unit = QStringLiteral("pages");
        counter.samples = samples;
        result.counters.append(counter);
    }
    return result;
}

// read_ahead_stats with the counters these tests look at, in Lustre's order.
CounterBlock readahead(qint64 snapshotNs, qint64 startNs, quint64 hits, quint64 misses,
                       quint64 notConsecutive)
{
    return block(kRa, snapshotNs, startNs,
                 {{QStringLiteral("hits"), hits},
                  {QStringLiteral("misses"), misses},
                  {QStringLiteral("readpage_not_consecutive"), notConsecutive}});
}

CounterUpdate update(qint64 timeNs, const QString &instance, const QList<CounterBlock> &blocks)
{
    CounterUpdate result;
    result.timeNs = timeNs;
    result.instances.append(InstanceCounters{instance, blocks, {}});
    return result;
}

const QString kJob = QStringLiteral("bench-job1001");

} // namespace

class TestConsoleRates : public QObject {
    Q_OBJECT

private slots:
    void firstSightHasNoRates()
    {
        RateTracker tracker;
        QVERIFY(tracker.add(update(kT0, kJob, {readahead(kT0, kT0 - 60 * kSecond, 100, 10, 1)}))
                    .isEmpty());
    }

    void steadyRates()
    {
        RateTracker tracker;
        const qint64 start = kT0 - 60 * kSecond;
        tracker.add(update(kT0, kJob, {readahead(kT0, start, 100, 10, 1)}));
        const auto rates = tracker.add(
            update(kT0 + 2 * kSecond, kJob, {readahead(kT0 + 2 * kSecond, start, 300, 30, 1)}));
        QCOMPARE(rates.size(), 1);
        const BlockRates &r = rates.first();
        QCOMPARE(r.instance, kJob);
        QCOMPARE(r.block, kRa);
        QCOMPARE(r.timeNs, kT0 + 2 * kSecond);
        QCOMPARE(r.intervalSeconds, 2.0);
        QVERIFY(!r.reset);
        QCOMPARE(r.counters, (QStringList{"hits", "misses", "readpage_not_consecutive"}));
        QCOMPARE(r.perSecond, (QList<double>{100.0, 10.0, 0.0}));

        const auto next = tracker.add(
            update(kT0 + 3 * kSecond, kJob, {readahead(kT0 + 3 * kSecond, start, 350, 30, 4)}));
        QCOMPARE(next.size(), 1);
        QCOMPARE(next.first().intervalSeconds, 1.0);
        QCOMPARE(next.first().perSecond, (QList<double>{50.0, 0.0, 3.0}));
    }

    void resetByStartTime()
    {
        RateTracker tracker;
        tracker.add(update(kT0, kJob, {readahead(kT0, kT0 - 60 * kSecond, 1000, 100, 7)}));
        // Cleared half a second before the next snapshot: counted from zero since the clear,
        // even though the new values are not lower than the old ones.
        const qint64 cleared = kT0 + 1500 * 1'000'000;
        const auto rates = tracker.add(
            update(kT0 + 2 * kSecond, kJob, {readahead(kT0 + 2 * kSecond, cleared, 2000, 5, 0)}));
        QCOMPARE(rates.size(), 1);
        QVERIFY(rates.first().reset);
        QCOMPARE(rates.first().intervalSeconds, 0.5);
        QCOMPARE(rates.first().perSecond, (QList<double>{4000.0, 10.0, 0.0}));

        // After the reset, rates are relative to the new baseline again.
        const auto next = tracker.add(
            update(kT0 + 3 * kSecond, kJob, {readahead(kT0 + 3 * kSecond, cleared, 2100, 5, 2)}));
        QCOMPARE(next.size(), 1);
        QVERIFY(!next.first().reset);
        QCOMPARE(next.first().perSecond, (QList<double>{100.0, 0.0, 2.0}));
    }

    void resetStartBeforePreviousSnapshot()
    {
        // A new start time not after the previous snapshot (clock skew on the node): the span
        // is the interval since the previous snapshot.
        RateTracker tracker;
        tracker.add(update(kT0, kJob, {readahead(kT0, kT0 - 60 * kSecond, 1000, 100, 7)}));
        const auto rates = tracker.add(update(
            kT0 + 4 * kSecond, kJob, {readahead(kT0 + 4 * kSecond, kT0 - 10 * kSecond, 40, 8, 0)}));
        QCOMPARE(rates.size(), 1);
        QVERIFY(rates.first().reset);
        QCOMPARE(rates.first().intervalSeconds, 4.0);
        QCOMPARE(rates.first().perSecond, (QList<double>{10.0, 2.0, 0.0}));
    }

    void resetByCounterGoingDown()
    {
        RateTracker tracker;
        const qint64 start = kT0 - 60 * kSecond;
        tracker.add(update(kT0, kJob, {readahead(kT0, start, 300, 30, 9)}));
        // Only hits went down; every counter of the block counts from zero.
        const auto rates = tracker.add(
            update(kT0 + 2 * kSecond, kJob, {readahead(kT0 + 2 * kSecond, start, 40, 36, 10)}));
        QCOMPARE(rates.size(), 1);
        QVERIFY(rates.first().reset);
        QCOMPARE(rates.first().intervalSeconds, 2.0);
        QCOMPARE(rates.first().perSecond, (QList<double>{20.0, 18.0, 5.0}));
    }

    void resetByCounterListChange()
    {
        RateTracker tracker;
        const qint64 start = kT0 - 60 * kSecond;
        tracker.add(update(kT0, kJob, {readahead(kT0, start, 300, 30, 9)}));
        const auto rates = tracker.add(
            update(kT0 + 2 * kSecond, kJob,
                   {block(kRa, kT0 + 2 * kSecond, start,
                          {{QStringLiteral("hits"), 310}, {QStringLiteral("misses"), 32}})}));
        QCOMPARE(rates.size(), 1);
        QVERIFY(rates.first().reset);
        QCOMPARE(rates.first().counters, (QStringList{"hits", "misses"}));
        QCOMPARE(rates.first().perSecond, (QList<double>{155.0, 16.0}));
    }

    void snapshotNotAdvancedIsSkipped()
    {
        RateTracker tracker;
        const qint64 start = kT0 - 60 * kSecond;
        tracker.add(update(kT0, kJob, {readahead(kT0, start, 100, 10, 0)}));
        // The node resent the same snapshot (and one from the past): nothing to rate.
        QVERIFY(tracker.add(update(kT0 + kSecond, kJob, {readahead(kT0, start, 100, 10, 0)}))
                    .isEmpty());
        QVERIFY(
            tracker.add(update(kT0 + kSecond, kJob, {readahead(kT0 - kSecond, start, 90, 10, 0)}))
                .isEmpty());
        // The next real snapshot is rated against the last one that advanced.
        const auto rates = tracker.add(
            update(kT0 + 4 * kSecond, kJob, {readahead(kT0 + 4 * kSecond, start, 500, 30, 0)}));
        QCOMPARE(rates.size(), 1);
        QVERIFY(!rates.first().reset);
        QCOMPARE(rates.first().intervalSeconds, 4.0);
        QCOMPARE(rates.first().perSecond, (QList<double>{100.0, 5.0, 0.0}));
    }

    void severalInstancesAndBlocks()
    {
        RateTracker tracker;
        const qint64 start = kT0 - 60 * kSecond;
        const QString other = QStringLiteral("bench-job1002");
        auto rpc = [&](qint64 snapshot, quint64 pages) {
            return block(kRpc, snapshot, start, {{QStringLiteral("read_rpcs_in_flight"), pages}});
        };
        CounterUpdate first;
        first.timeNs = kT0;
        first.instances = {
            InstanceCounters{kJob, {readahead(kT0, start, 100, 10, 0), rpc(kT0, 50)}, {}},
            InstanceCounters{other, {readahead(kT0, start, 1000, 0, 0)}, {}},
        };
        QVERIFY(tracker.add(first).isEmpty());

        const qint64 t1 = kT0 + kSecond;
        CounterUpdate second;
        second.timeNs = t1;
        second.instances = {
            InstanceCounters{kJob, {readahead(t1, start, 110, 12, 0), rpc(t1, 58)}, {}},
            // other's rpc_stats appears only now: no rates for it yet.
            InstanceCounters{other, {rpc(t1, 3), readahead(t1, start, 1400, 0, 1)}, {}},
        };
        const auto rates = tracker.add(second);
        QCOMPARE(rates.size(), 3);
        QCOMPARE(rates[0].instance, kJob);
        QCOMPARE(rates[0].block, kRa);
        QCOMPARE(rates[0].perSecond, (QList<double>{10.0, 2.0, 0.0}));
        QCOMPARE(rates[1].instance, kJob);
        QCOMPARE(rates[1].block, kRpc);
        QCOMPARE(rates[1].perSecond, (QList<double>{8.0}));
        QCOMPARE(rates[2].instance, other);
        QCOMPARE(rates[2].block, kRa);
        QCOMPARE(rates[2].perSecond, (QList<double>{400.0, 0.0, 1.0}));
    }

    void clearForgetsEverything()
    {
        RateTracker tracker;
        const qint64 start = kT0 - 60 * kSecond;
        tracker.add(update(kT0, kJob, {readahead(kT0, start, 100, 10, 0)}));
        tracker.clear();
        QVERIFY(
            tracker.add(update(kT0 + kSecond, kJob, {readahead(kT0 + kSecond, start, 200, 10, 0)}))
                .isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestConsoleRates)
#include "test_console_rates.moc"
