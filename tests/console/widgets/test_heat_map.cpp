// HeatMap: the colour scale, cell texts, tooltips, double-click to drill down, and a picture
// (screenshot) whose cells are the colours the accessors report.

#include "screenshot.h"
#include "widgets/heat_map.h"

#include <QDateTime>
#include <QHelpEvent>
#include <QSignalSpy>
#include <QTest>
#include <QToolTip>

#include <cmath>
#include <limits>

using namespace lutra::console;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

qint64 baseMs()
{
    return QDateTime(QDate(2025, 3, 14), QTime(14, 0)).toMSecsSinceEpoch();
}

// 12 nodes × 60 one-minute buckets of readahead hit ratio: most at 0.93-0.99, node003 collapses
// to ~0.4 from 14:30 to 14:45, node005 is unreachable from 14:10 to 14:20, node011 runs lower.
QStringList nodes()
{
    QStringList names;
    for (int i = 1; i <= 12; ++i) {
        names.append(QStringLiteral("node%1").arg(i, 3, 10, QLatin1Char('0')));
    }
    return names;
}

QList<QList<double>> ratios()
{
    QList<QList<double>> rows;
    for (int node = 0; node < 12; ++node) {
        QList<double> row;
        for (int minute = 0; minute < 60; ++minute) {
            double value = 0.93 + 0.06 * std::abs(std::sin(node * 1.7 + minute * 0.21));
            if (node == 2 && minute >= 30 && minute < 45) {
                value = 0.4;
            }
            if (node == 4 && minute >= 10 && minute < 20) {
                value = kNaN;
            }
            if (node == 10) {
                value -= 0.2;
            }
            row.append(value);
        }
        rows.append(row);
    }
    return rows;
}

} // namespace

class TestHeatMap : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void colorScale()
    {
        // Red at the bottom, amber in the middle, green at the top.
        const double low = HeatMap::colorFor(0).hueF() * 360;
        const double middle = HeatMap::colorFor(0.5).hueF() * 360;
        const double high = HeatMap::colorFor(1).hueF() * 360;
        QVERIFY2(low < 15 || low > 345, qPrintable(QString::number(low)));
        QVERIFY2(middle > 25 && middle < 60, qPrintable(QString::number(middle)));
        QVERIFY2(high > 90 && high < 150, qPrintable(QString::number(high)));
        // Monotone in hue: a higher ratio is never redder.
        double previous = -1;
        for (int i = 0; i <= 100; ++i) {
            const QColor color = HeatMap::colorFor(i / 100.0);
            double hue = color.hueF() * 360;
            if (hue > 300) {
                hue -= 360;
            }
            QVERIFY2(hue >= previous - 0.5, qPrintable(QStringLiteral("%1 at %2").arg(hue).arg(i)));
            previous = hue;
        }
        const QColor none = HeatMap::noDataColor();
        QCOMPARE(none.red(), none.green());
        QCOMPARE(none.green(), none.blue());
        QCOMPARE(HeatMap::colorFor(kNaN), none);
    }

    void cells()
    {
        HeatMap map;
        map.setData(nodes(), ratios(), baseMs(), baseMs() + 3600 * 1000LL);
        QCOMPARE(map.rowCount(), 12);
        QCOMPARE(map.bucketCount(), 60);

        const QColor collapsed = map.colorAt(2, 32);
        const QColor healthy = map.colorAt(2, 5);
        QVERIFY(collapsed.red() > healthy.red());
        QVERIFY(collapsed.green() < healthy.green() || collapsed.hueF() < healthy.hueF());
        QVERIFY(collapsed.hueF() * 360 < 45); // orange-red, not green
        QCOMPARE(map.colorAt(4, 15), HeatMap::noDataColor());
        QVERIFY(!map.colorAt(12, 0).isValid());

        QCOMPARE(map.cellText(2, 32), QStringLiteral("node003 · 14:32 · 40.0 %"));
        QCOMPARE(map.cellText(4, 15), QStringLiteral("node005 · 14:15 · no data"));
        QVERIFY(map.cellText(12, 0).isEmpty());

        // The range moves the colours: 0.4 is the top of a 0..0.4 scale.
        map.setRange(0, 0.4);
        QCOMPARE(map.colorAt(2, 32), HeatMap::colorFor(1));
        map.setPercent(false);
        QCOMPARE(map.cellText(2, 32), QStringLiteral("node003 · 14:32 · 0.4"));
    }

    void paintsWhatItReports()
    {
        HeatMap map;
        map.setObjectName(QStringLiteral("readaheadHeatMap"));
        map.setData(nodes(), ratios(), baseMs(), baseMs() + 3600 * 1000LL);
        map.resize(900, 320);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));

        const QImage image = map.grab().toImage();
        for (const auto &[row, bucket] : {std::pair{2, 32}, std::pair{4, 15}, std::pair{0, 0},
                                          std::pair{11, 59}, std::pair{10, 30}}) {
            QCOMPARE(image.pixelColor(map.cellCenter(row, bucket)), map.colorAt(row, bucket));
        }
        // Labels and legend are outside the cells: the left margin holds text pixels.
        const QPoint first = map.cellCenter(0, 0);
        bool text = false;
        for (int x = 0; x < first.x() - 10 && !text; ++x) {
            for (int y = 0; y < image.height() && !text; ++y) {
                text = image.pixelColor(x, y).lightness() < 100;
            }
        }
        QVERIFY(text);
        QVERIFY(test::saveScreenshot(&map, QStringLiteral("heat-map")));
    }

    // A chart above sets where the cells go across: they follow, the labels take what is left
    // of them, the legend keeps its room, and an empty span lays them out alone again.
    void cellsFollowASpan()
    {
        HeatMap map;
        map.setData(nodes(), ratios(), baseMs(), baseMs() + 3600 * 1000LL);
        map.resize(900, 320);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        const QRect alone = map.cellsRect();
        QVERIFY(map.legendSpace() > 0);
        QCOMPARE(alone.right() + 1 + map.legendSpace(), map.width());

        map.setCellsSpan(100, 700);
        QCOMPARE(map.cellsRect().left(), 100);
        QCOMPARE(map.cellsRect().right() + 1, 700);
        QCOMPARE(map.cellsRect().top(), alone.top());
        QCOMPARE(map.cellsRect().bottom(), alone.bottom());
        const QImage image = map.grab().toImage();
        QCOMPARE(image.pixelColor(map.cellCenter(2, 32)), map.colorAt(2, 32));
        QVERIFY(map.cellCenter(0, 0).x() >= 100 && map.cellCenter(0, 59).x() < 700);

        // Never under the legend, however far right the chart's plot reaches.
        map.setCellsSpan(100, map.width());
        QCOMPARE(map.cellsRect().right(), alone.right());
        map.setCellsSpan(-1, -1);
        QCOMPARE(map.cellsRect(), alone);
    }

    void tooltipAndDoubleClick()
    {
        HeatMap map;
        map.setData(nodes(), ratios(), baseMs(), baseMs() + 3600 * 1000LL);
        map.resize(900, 320);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));

        const QPoint cell = map.cellCenter(2, 32);
        QHelpEvent help(QEvent::ToolTip, cell, map.mapToGlobal(cell));
        QCoreApplication::sendEvent(&map, &help);
        QTRY_COMPARE(QToolTip::text(), QStringLiteral("node003 · 14:32 · 40.0 %"));

        QSignalSpy activated(&map, &HeatMap::rowActivated);
        QTest::mouseDClick(&map, Qt::LeftButton, Qt::NoModifier, map.cellCenter(6, 10));
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.at(0).at(0).toString(), QStringLiteral("node007"));

        // Outside the cells (the row labels) nothing is activated.
        QTest::mouseDClick(&map, Qt::LeftButton, Qt::NoModifier,
                           QPoint(2, map.cellCenter(6, 0).y()));
        QCOMPARE(activated.count(), 1);
    }

    void manyNodes()
    {
        // 256 nodes on 300 px: rows thinner than text; labels thin out, cells still map back.
        QStringList labels;
        QList<QList<double>> values;
        for (int i = 0; i < 256; ++i) {
            labels.append(QStringLiteral("node%1").arg(i, 3, 10, QLatin1Char('0')));
            QList<double> row;
            for (int b = 0; b < 120; ++b) {
                row.append(i == 200 && b > 60 ? 0.2 : 0.95 + 0.04 * std::sin(i + b * 0.1));
            }
            values.append(row);
        }
        HeatMap map;
        map.setData(labels, values, baseMs(), baseMs() + 7200 * 1000LL);
        map.resize(900, 300);
        map.show();
        QVERIFY(QTest::qWaitForWindowExposed(&map));
        QSignalSpy activated(&map, &HeatMap::rowActivated);
        QTest::mouseDClick(&map, Qt::LeftButton, Qt::NoModifier, map.cellCenter(200, 100));
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.at(0).at(0).toString(), QStringLiteral("node200"));
        QVERIFY(test::saveScreenshot(&map, QStringLiteral("heat-map-256-nodes")));
    }
};

QTEST_MAIN(TestHeatMap)
#include "test_heat_map.moc"
