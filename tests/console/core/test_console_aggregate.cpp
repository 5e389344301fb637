// Cross-node aggregation: spread (min/median/max), top-N, time buckets and the band over time.
#include "core/aggregate.h"

#include <QTest>

#include <cmath>

using namespace lutra::console;

namespace {

const double kNaN = std::nan("");

} // namespace

class TestConsoleAggregate : public QObject {
    Q_OBJECT

private slots:
    void spreadOdd()
    {
        const Spread s = spread({0.91, 0.42, 0.77});
        QCOMPARE(s.count, 3);
        QCOMPARE(s.min, 0.42);
        QCOMPARE(s.median, 0.77);
        QCOMPARE(s.max, 0.91);
    }

    void spreadEven()
    {
        const Spread s = spread({40, 10, 30, 20});
        QCOMPARE(s.count, 4);
        QCOMPARE(s.min, 10.0);
        QCOMPARE(s.median, 25.0);
        QCOMPARE(s.max, 40.0);
    }

    void spreadLeavesNaNOut()
    {
        // Two nodes without reads (no hit ratio) and one unreachable.
        const Spread s = spread({kNaN, 0.5, kNaN, 1.0, kNaN, 0.25});
        QCOMPARE(s.count, 3);
        QCOMPARE(s.min, 0.25);
        QCOMPARE(s.median, 0.5);
        QCOMPARE(s.max, 1.0);
    }

    void spreadOfNothing()
    {
        for (const auto &values : {QList<double>{}, QList<double>{kNaN, kNaN}}) {
            const Spread s = spread(values);
            QCOMPARE(s.count, 0);
            QVERIFY(std::isnan(s.min));
            QVERIFY(std::isnan(s.median));
            QVERIFY(std::isnan(s.max));
        }
    }

    void spreadOfOne()
    {
        const Spread s = spread({7});
        QCOMPARE(s.count, 1);
        QCOMPARE(s.min, 7.0);
        QCOMPARE(s.median, 7.0);
        QCOMPARE(s.max, 7.0);
    }

    void lowestAndHighest()
    {
        // Hit ratios of eight nodes; node 2 has no reads.
        const QList<double> ratios = {0.9, 0.3, kNaN, 0.3, 0.99, 0.1, 0.9, 0.5};
        QCOMPARE(lowestN(ratios, 3), (QList<int>{5, 1, 3}));
        QCOMPARE(highestN(ratios, 3), (QList<int>{4, 0, 6}));
        // Ties keep index order.
        QCOMPARE(lowestN(ratios, 2), (QList<int>{5, 1}));
        QCOMPARE(highestN(ratios, 2), (QList<int>{4, 0}));
        // More asked than there are values: every non-NaN one.
        QCOMPARE(lowestN(ratios, 100), (QList<int>{5, 1, 3, 7, 0, 6, 4}));
        QCOMPARE(highestN(ratios, 100), (QList<int>{4, 0, 6, 7, 1, 3, 5}));
        QVERIFY(lowestN(ratios, 0).isEmpty());
        QVERIFY(highestN({}, 3).isEmpty());
    }

    void bucketMeans()
    {
        // One point a second over [1000, 1010) in 5 buckets of 2 s; 1006 is a gap, 1007 NaN,
        // bucket [1006, 1008) therefore has no value, and 1010 is outside.
        const QList<QPointF> points = {{999, 100}, {1000, 1},    {1001, 3}, {1002, 5}, {1003, 5},
                                       {1004, 8},  {1007, kNaN}, {1008, 2}, {1009, 4}, {1010, 100}};
        const auto means = lutra::console::bucketMeans(points, 1000, 1010, 5);
        QCOMPARE(means.size(), 5);
        QCOMPARE(means[0], 2.0);
        QCOMPARE(means[1], 5.0);
        QCOMPARE(means[2], 8.0);
        QVERIFY(std::isnan(means[3]));
        QCOMPARE(means[4], 3.0);
        QVERIFY(lutra::console::bucketMeans(points, 1000, 1010, 0).isEmpty());
    }

    void spreadOverTime()
    {
        // Three nodes over [0, 40) in 2 buckets of 20 s. Node c is unreachable in the second.
        QList<QPointF> a;
        QList<QPointF> b;
        QList<QPointF> c;
        for (int t = 0; t < 40; ++t) {
            a.append(QPointF(t, t < 20 ? 0.2 : 0.4));
            b.append(QPointF(t, t < 20 ? 0.6 : 0.8));
            c.append(QPointF(t, t < 20 ? 1.0 : kNaN));
        }
        // b reports every other second only: its mean is unchanged.
        QList<QPointF> sparse;
        for (int i = 0; i < b.size(); i += 2) {
            sparse.append(b[i]);
        }
        const auto band = lutra::console::spreadOverTime({a, sparse, c}, 0, 40, 2);
        QCOMPARE(band.size(), 2);
        QCOMPARE(band[0].x, 10.0);
        QCOMPARE(band[0].spread.count, 3);
        QCOMPARE(band[0].spread.min, 0.2);
        QCOMPARE(band[0].spread.median, 0.6);
        QCOMPARE(band[0].spread.max, 1.0);
        QCOMPARE(band[1].x, 30.0);
        QCOMPARE(band[1].spread.count, 2);
        QCOMPARE(band[1].spread.min, 0.4);
        QCOMPARE(band[1].spread.median, 0.6);
        QCOMPARE(band[1].spread.max, 0.8);

        const auto empty = lutra::console::spreadOverTime({}, 0, 40, 2);
        QCOMPARE(empty.size(), 2);
        QCOMPARE(empty[0].spread.count, 0);
        QVERIFY(std::isnan(empty[1].spread.median));
    }
};

QTEST_GUILESS_MAIN(TestConsoleAggregate)
#include "test_console_aggregate.moc"
