// Min/max decimation: what a chart keeps of a long series (peaks, dips, gaps, x order).
#include "core/decimate.h"

#include <QTest>

#include <algorithm>
#include <cmath>

using namespace lutra::console;

namespace {

const double kNaN = std::nan("");

// A second-resolution series over [0, n): a slow ramp with one spike and one dip.
QList<QPointF> series(int n)
{
    QList<QPointF> points;
    for (int i = 0; i < n; ++i) {
        points.append(QPointF(i, (i % 10) * 0.1));
    }
    return points;
}

bool ascendingX(const QList<QPointF> &points)
{
    for (qsizetype i = 1; i < points.size(); ++i) {
        if (!(points[i - 1].x() < points[i].x())) {
            return false;
        }
    }
    return true;
}

qsizetype nanCount(const QList<QPointF> &points)
{
    qsizetype count = 0;
    for (const auto &point : points) {
        count += std::isnan(point.y()) ? 1 : 0;
    }
    return count;
}

} // namespace

class TestConsoleDecimate : public QObject {
    Q_OBJECT

private slots:
    void fewPointsUnchanged()
    {
        const QList<QPointF> points = {{0, 1}, {1, kNaN}, {2, 3}, {3, 0.5}};
        const auto result = decimateMinMax(points, 0, 3, 2);
        QCOMPARE(result.size(), 4);
        QCOMPARE(result[0], QPointF(0, 1));
        QVERIFY(std::isnan(result[1].y()));
        QCOMPARE(result[2], QPointF(2, 3));
        QCOMPARE(result[3], QPointF(3, 0.5));
    }

    void pointsOutsideRangeDropped()
    {
        const auto points = series(100);
        const auto few = decimateMinMax(points, 10, 14, 50);
        QCOMPARE(few, (QList<QPointF>{{10, 0}, {11, 0.1}, {12, 0.2}, {13, 0.3}, {14, 0.4}}));
        const auto many = decimateMinMax(points, 20.5, 79.5, 5);
        QVERIFY(!many.isEmpty());
        for (const auto &point : many) {
            QVERIFY(point.x() >= 20.5 && point.x() <= 79.5);
        }
        QVERIFY(decimateMinMax(points, 200, 300, 10).isEmpty());
        QVERIFY(decimateMinMax(points, 50, 40, 10).isEmpty());
    }

    void bucketsKeepMinAndMaxInXOrder()
    {
        // 4 buckets of 10 points over [0, 40).
        QList<QPointF> points;
        for (int i = 0; i < 40; ++i) {
            points.append(QPointF(i, 5));
        }
        points[3].setY(9); // bucket 0: max before min
        points[7].setY(1);
        points[12].setY(0); // bucket 1: min before max
        points[18].setY(7);
        points[25].setY(2); // bucket 2: only a dip; the first flat point is its max
        const auto result = decimateMinMax(points, 0, 39.999, 4);
        QCOMPARE(result, (QList<QPointF>{{3, 9},
                                         {7, 1},
                                         {12, 0},
                                         {18, 7},
                                         {20, 5},
                                         {25, 2},
                                         {30, 5}})); // a flat bucket keeps one point
    }

    void keepsEveryPeak()
    {
        // A second-resolution hour drawn on 300 pixels keeps its one-second spike.
        auto points = series(3600);
        points[1234].setY(1000);
        points[2345].setY(-1000);
        const auto result = decimateMinMax(points, 0, 3599, 300);
        QVERIFY(result.size() <= 600);
        QVERIFY(ascendingX(result));
        QVERIFY(result.contains(QPointF(1234, 1000)));
        QVERIFY(result.contains(QPointF(2345, -1000)));
    }

    void gapsKept()
    {
        auto points = series(1000);
        for (int i = 400; i < 430; ++i) {
            points[i].setY(kNaN); // the node was unreachable for 30 s
        }
        points[700].setY(kNaN); // and once for a second
        const int buckets = 20;
        const auto result = decimateMinMax(points, 0, 999, buckets);
        QVERIFY(ascendingX(result));
        QCOMPARE(nanCount(result), 2); // one NaN per run
        QVERIFY(result.size() <= 2 * buckets + 3 * 2);
        // The line breaks where the node was away: the NaN sits between the last point before
        // and the first after.
        qsizetype gap = -1;
        for (qsizetype i = 0; i < result.size(); ++i) {
            if (std::isnan(result[i].y())) {
                gap = i;
                break;
            }
        }
        QVERIFY(gap > 0 && gap + 1 < result.size());
        QCOMPARE(result[gap].x(), 400.0);
        QVERIFY(result[gap - 1].x() < 400);
        QVERIFY(result[gap + 1].x() >= 430);
    }

    void outputBounded_data()
    {
        QTest::addColumn<int>("points");
        QTest::addColumn<int>("buckets");
        QTest::newRow("hour on 1200 px") << 3600 << 1200;
        QTest::newRow("day on 1000 px") << 86400 << 1000;
        QTest::newRow("just over") << 21 << 10;
        QTest::newRow("one bucket") << 50 << 1;
        QTest::newRow("no width") << 50 << 0;
    }

    void outputBounded()
    {
        QFETCH(int, points);
        QFETCH(int, buckets);
        auto input = series(points);
        for (int i = 0; i < points; ++i) {
            input[i].setY(std::sin(i * 0.37) * 100 + i % 7);
        }
        const auto result = decimateMinMax(input, 0, points - 1, buckets);
        QVERIFY(result.size() <= 2 * std::max(buckets, 1));
        QVERIFY(ascendingX(result));
        // Every kept point is one of the input's.
        for (const auto &point : result) {
            QCOMPARE(point, input[static_cast<qsizetype>(point.x())]);
        }
        // Global extremes survive.
        const auto [low, high] = std::minmax_element(input.cbegin(), input.cend(),
                                                     [](auto a, auto b) { return a.y() < b.y(); });
        QVERIFY(result.contains(*low));
        QVERIFY(result.contains(*high));
    }
};

QTEST_GUILESS_MAIN(TestConsoleDecimate)
#include "test_console_decimate.moc"
