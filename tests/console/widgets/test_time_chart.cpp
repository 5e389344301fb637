// TimeChart: decimation to the plot width, NaN gaps, bands, markers, no redundant replace(),
// and a chart an admin can read (screenshots).

#include "core/aggregate.h"
#include "screenshot.h"
#include "widgets/time_chart.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLineSeries>
#include <QRandomGenerator>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QValueAxis>

#include <cmath>
#include <limits>

using namespace lutra::console;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A fixed local time, so labels and screenshots do not depend on when the test runs.
qint64 baseMs()
{
    return QDateTime(QDate(2025, 3, 14), QTime(14, 0)).toMSecsSinceEpoch();
}

QLineSeries *lineNamed(const TimeChart &chart, const QString &name)
{
    for (QAbstractSeries *series : chart.chartView()->chart()->series()) {
        if (series->name() == name) {
            return qobject_cast<QLineSeries *>(series);
        }
    }
    return nullptr;
}

// Shows the chart and lets the layout settle: the plot width decides the decimation.
void settle(TimeChart &chart)
{
    chart.show();
    QVERIFY(QTest::qWaitForWindowExposed(&chart));
    for (int i = 0; i < 5; ++i) {
        chart.refresh();
        QCoreApplication::processEvents();
    }
}

int plotWidth(const TimeChart &chart)
{
    return static_cast<int>(chart.chartView()->chart()->plotArea().width());
}

// Labels one step apart, each a whole number of steps after midnight: 14:00, 14:10, 14:20.
bool roundSteps(const QStringList &labels)
{
    QList<int> seconds;
    for (const QString &label : labels) {
        QTime time = QTime::fromString(label, QStringLiteral("HH:mm:ss"));
        if (!time.isValid()) {
            time = QTime::fromString(label, QStringLiteral("HH:mm"));
        }
        if (!time.isValid()) {
            return false;
        }
        seconds.append(time.msecsSinceStartOfDay() / 1000);
    }
    if (seconds.size() < 2) {
        return false;
    }
    const int step = seconds[1] - seconds[0];
    for (qsizetype i = 0; i < seconds.size(); ++i) {
        if (step <= 0 || seconds[i] % step != 0 || (i > 0 && seconds[i] - seconds[i - 1] != step)) {
            return false;
        }
    }
    return true;
}

// Distinct colours in a picture: a blank or single-colour grab has one.
int distinctColors(const QImage &image)
{
    QSet<QRgb> colors;
    for (int y = 0; y < image.height(); y += 2) {
        for (int x = 0; x < image.width(); x += 2) {
            colors.insert(image.pixel(x, y));
        }
    }
    return static_cast<int>(colors.size());
}

// The y axis labels Qt Charts drew, bottom to top (text items left of the plot but its title).
QStringList yAxisLabels(const TimeChart &chart, const QString &title)
{
    QChart *qchart = chart.chartView()->chart();
    const QRectF plot = qchart->plotArea();
    QList<QPair<double, QString>> labels;
    for (QGraphicsItem *item : qchart->scene()->items()) {
        const auto *text = dynamic_cast<QGraphicsTextItem *>(item);
        if (text == nullptr || !text->isVisible() || text->toPlainText() == title) {
            continue;
        }
        const QRectF box = text->sceneBoundingRect();
        if (box.right() <= plot.left() + 1 && box.center().y() >= plot.top() - 1 &&
            box.center().y() <= plot.bottom() + 1) {
            labels.append({box.center().y(), text->toPlainText()});
        }
    }
    std::sort(labels.begin(), labels.end(),
              [](const auto &a, const auto &b) { return a.first > b.first; });
    QStringList texts;
    for (const auto &label : labels) {
        texts.append(label.second);
    }
    return texts;
}

// "94.6 %" → 94.6; NaN when the label is not a number with the unit.
double percentOf(const QString &label)
{
    if (!label.endsWith(QStringLiteral(" %"))) {
        return kNaN;
    }
    bool ok = false;
    const double value = label.chopped(2).toDouble(&ok);
    return ok ? value : kNaN;
}

// A readahead hit ratio in percent every 10 s for an hour: 96-99 % with noise and a dip to
// about 82 % after a workload change at 14:25, recovering after a clear at 14:38.
QList<QPointF> hitRatio(quint32 seed, double level, double dipDepth)
{
    QRandomGenerator random(seed);
    QList<QPointF> points;
    for (int i = 0; i < 360; ++i) {
        const double minute = i / 6.0;
        double value = level + (random.generateDouble() - 0.5) * 1.5;
        if (minute >= 25 && minute < 38) {
            value -= dipDepth * std::min(1.0, (minute - 25) / 3);
        } else if (minute >= 38 && minute < 41) {
            value -= dipDepth * (41 - minute) / 3;
        }
        points.append(QPointF(static_cast<double>(baseMs() + i * 10000LL), std::min(value, 100.0)));
    }
    return points;
}

} // namespace

class TestTimeChart : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void decimatesToPlotWidth()
    {
        TimeChart chart(QStringLiteral("Throughput"), QStringLiteral("MiB/s"));
        chart.setObjectName(QStringLiteral("throughput"));
        chart.resize(600, 300);
        QRandomGenerator random(7);
        QList<QPointF> points;
        double peak = 0;
        for (int i = 0; i < 10000; ++i) {
            const double value = 100 + random.bounded(50.0) + (i == 6789 ? 400 : 0);
            peak = std::max(peak, value);
            points.append(QPointF(static_cast<double>(baseMs() + i * 360LL), value));
        }
        chart.setSeries(QStringLiteral("ost0"), points);
        settle(chart);

        const int width = plotWidth(chart);
        QVERIFY2(width > 400 && width < 600, qPrintable(QString::number(width)));
        const int drawn = chart.drawnPointCount(QStringLiteral("ost0"));
        QVERIFY2(drawn <= 2 * width,
                 qPrintable(QStringLiteral("%1 > 2 x %2").arg(drawn).arg(width)));
        QVERIFY(drawn >= width); // decimated, not thinned to nothing
        QLineSeries *series = lineNamed(chart, QStringLiteral("ost0"));
        QVERIFY(series);
        QCOMPARE(series->count(), drawn);
        // Min/max decimation keeps the one-sample peak.
        double drawnPeak = 0;
        for (const QPointF &point : series->points()) {
            drawnPeak = std::max(drawnPeak, point.y());
        }
        QCOMPARE(drawnPeak, peak);
        QCOMPARE(chart.seriesNames(), QStringList{QStringLiteral("ost0")});
        // The window follows the data when none is set; the y axis starts at 0 (a rate).
        QCOMPARE(chart.windowFrom(), baseMs());
        QCOMPARE(chart.windowTo(), baseMs() + 9999 * 360LL);
        QCOMPARE(chart.yMin(), 0.0);
        QVERIFY(chart.yMax() >= peak);
    }

    void nanGapSurvives()
    {
        TimeChart chart(QStringLiteral("Hit ratio"), QStringLiteral("%"));
        chart.resize(600, 300);
        QList<QPointF> points;
        for (int i = 0; i < 5000; ++i) {
            const bool unreachable = i >= 2000 && i < 2600;
            points.append(
                QPointF(static_cast<double>(baseMs() + i * 1000LL), unreachable ? kNaN : 95.0));
        }
        chart.setSeries(QStringLiteral("node001"), points);
        settle(chart);

        QLineSeries *series = lineNamed(chart, QStringLiteral("node001"));
        QVERIFY(series);
        const QList<QPointF> drawn = series->points();
        const auto gaps = std::count_if(drawn.begin(), drawn.end(),
                                        [](const QPointF &point) { return std::isnan(point.y()); });
        QVERIFY(gaps >= 1);
        // The gap sits where the node was unreachable.
        for (const QPointF &point : drawn) {
            if (std::isnan(point.y())) {
                QVERIFY(point.x() >= static_cast<double>(baseMs() + 2000 * 1000LL));
                QVERIFY(point.x() < static_cast<double>(baseMs() + 2600 * 1000LL));
            }
        }
        QVERIFY(drawn.size() <= 2 * plotWidth(chart) + 3);
    }

    void bandAndMarkers()
    {
        TimeChart chart(QStringLiteral("Cluster hit ratio"), QStringLiteral("hit ratio"));
        chart.resize(800, 400);
        QList<BandPoint> band;
        for (int i = 0; i < 60; ++i) {
            BandPoint point;
            point.x = static_cast<double>(baseMs() + i * 60000LL);
            point.spread = {80.0 + i % 5, 92.0, 99.0 - i % 3, 16};
            band.append(point);
        }
        band[30].spread = {kNaN, kNaN, kNaN, 0}; // every node unreachable for a minute
        chart.setBand(QStringLiteral("cluster"), band);
        const qint64 clearAt = baseMs() + 23 * 60000LL;
        chart.setMarkers({{clearAt, QStringLiteral("clear")}});
        chart.setTimeWindow(baseMs(), baseMs() + 59 * 60000LL);
        chart.setYRange(0, 100);
        settle(chart);

        QChart *qchart = chart.chartView()->chart();
        QAreaSeries *area = nullptr;
        for (QAbstractSeries *series : qchart->series()) {
            if (series->name() == QStringLiteral("cluster min–max")) {
                area = qobject_cast<QAreaSeries *>(series);
            }
        }
        QVERIFY(area);
        QCOMPARE(area->upperSeries()->count(), 59); // the all-NaN minute left out of the area
        QCOMPARE(area->lowerSeries()->at(0).y(), 80.0);
        QLineSeries *median = lineNamed(chart, QStringLiteral("cluster median"));
        QVERIFY(median);
        QCOMPARE(median->count(), 60);
        QVERIFY(std::isnan(median->at(30).y())); // the median shows the gap
        QCOMPARE(chart.drawnPointCount(QStringLiteral("cluster")), 60);
        QCOMPARE(chart.bandNames(), QStringList{QStringLiteral("cluster")});
        QVERIFY(chart.seriesNames().isEmpty());

        // The marker: a vertical segment over the whole y range, and its label in the plot.
        QLineSeries *markers = lineNamed(chart, QStringLiteral("markers"));
        QVERIFY(markers);
        QCOMPARE(markers->count(), 3);
        QCOMPARE(markers->at(0), QPointF(static_cast<double>(clearAt), 0));
        QCOMPARE(markers->at(1), QPointF(static_cast<double>(clearAt), 100));
        QGraphicsSimpleTextItem *label = nullptr;
        for (QGraphicsItem *item : qchart->childItems()) {
            if (auto *text = dynamic_cast<QGraphicsSimpleTextItem *>(item);
                text && text->text() == QStringLiteral("clear")) {
                label = text;
            }
        }
        QVERIFY(label);
        QVERIFY(label->isVisible());
        QVERIFY(qchart->plotArea().contains(label->pos()));
        // Clock labels at round times, not where an even split of the window falls.
        const QStringList times = chart.timeLabels();
        QVERIFY2(times.size() >= 4, qPrintable(times.join(u' ')));
        QCOMPARE(times.first(), QStringLiteral("14:00"));
        QVERIFY(roundSteps(times));

        // The dashed line is in the picture: dark pixels in the marker's column, above the band.
        QVERIFY(test::saveScreenshot(&chart, QStringLiteral("time-chart-band")));
        const QImage image = chart.grab().toImage();
        const QPointF top =
            qchart->mapToPosition(QPointF(static_cast<double>(clearAt), 100.0), markers);
        const QPointF bottom =
            qchart->mapToPosition(QPointF(static_cast<double>(clearAt), 0.0), markers);
        int dark = 0;
        for (int y = static_cast<int>(top.y()) + 20; y < static_cast<int>(bottom.y()); ++y) {
            for (int dx = -1; dx <= 1; ++dx) {
                const QColor color = image.pixelColor(static_cast<int>(top.x()) + dx, y);
                if (color.lightness() < 0xc0 && std::abs(color.red() - color.blue()) < 16) {
                    ++dark;
                    break;
                }
            }
        }
        QVERIFY2(dark > 20,
                 qPrintable(QStringLiteral("%1 dark pixels at x %2").arg(dark).arg(top.x())));

        // Markers outside the window are not drawn.
        chart.setMarkers({{baseMs() - 3600000, QStringLiteral("earlier")}});
        chart.refresh();
        QCOMPARE(markers->count(), 0);
    }

    void refreshReplacesOnlyWhatChanged()
    {
        TimeChart chart(QStringLiteral("Locks"), QStringLiteral("locks"));
        chart.resize(600, 300);
        QList<QPointF> a;
        QList<QPointF> b;
        for (int i = 0; i < 500; ++i) {
            a.append(QPointF(static_cast<double>(baseMs() + i * 1000LL), i));
            b.append(QPointF(static_cast<double>(baseMs() + i * 1000LL), 500 - i));
        }
        chart.setSeries(QStringLiteral("a"), a);
        chart.setSeries(QStringLiteral("b"), b);
        settle(chart);

        QSignalSpy spyA(lineNamed(chart, QStringLiteral("a")), &QXYSeries::pointsReplaced);
        QSignalSpy spyB(lineNamed(chart, QStringLiteral("b")), &QXYSeries::pointsReplaced);
        chart.refresh();
        chart.refresh();
        QCOMPARE(spyA.count(), 0);
        QCOMPARE(spyB.count(), 0);

        a.append(QPointF(static_cast<double>(baseMs() + 499 * 1000LL), 1000));
        chart.setSeries(QStringLiteral("a"), a);
        chart.refresh();
        QCOMPARE(spyA.count(), 1);
        QCOMPARE(spyB.count(), 0);
        chart.refresh();
        QCOMPARE(spyA.count(), 1);

        // A new window re-decimates every series, once.
        chart.setTimeWindow(baseMs() + 100000, baseMs() + 300000);
        chart.refresh();
        QCOMPARE(spyA.count(), 2);
        QCOMPARE(spyB.count(), 1);
        QCOMPARE(chart.windowFrom(), baseMs() + 100000);
        QCOMPARE(chart.windowTo(), baseMs() + 300000);
        // Only the window's points (plus one beyond each edge), y fitted to them.
        QCOMPARE(chart.drawnPointCount(QStringLiteral("b")), 203);
        QCOMPARE(chart.yMin(), 0.0);
        QVERIFY(chart.yMax() >= 400 && chart.yMax() <= 600);
        // A window starting at 14:01:40 still gets labels at round times.
        QVERIFY2(roundSteps(chart.timeLabels()), qPrintable(chart.timeLabels().join(u' ')));
        QVERIFY(chart.timeLabels().first() > QStringLiteral("14:01"));
    }

    // A node reading at 94.3-95.4 %: a 1 % range labelled with whole percents read
    // "95 %, 95 %, 94 %". The ticks are distinct numbers, a nice step apart, with as many decimals
    // as the step needs; a wide range keeps whole percents.
    void narrowPercentRangeHasDistinctLabels()
    {
        const QString title = QStringLiteral("hit ratio");
        TimeChart chart(QStringLiteral("Readahead hit ratio · node001"), title);
        chart.resize(700, 350);
        QList<QPointF> points;
        for (int i = 0; i < 60; ++i) {
            points.append(
                QPointF(static_cast<double>(baseMs() + i * 1000LL), 94.3 + (i % 12) * 0.1));
        }
        chart.setSeries(QStringLiteral("client-lutra"), points);
        chart.setAutoY(true, false);
        chart.setYLabelFormat(QStringLiteral("%.0f %%"));
        settle(chart);

        QStringList labels = yAxisLabels(chart, title);
        QVERIFY2(labels.size() >= 3, qPrintable(labels.join(QStringLiteral(", "))));
        QList<double> values;
        for (const QString &label : std::as_const(labels)) {
            values.append(percentOf(label));
            QVERIFY2(!std::isnan(values.last()), qPrintable(label));
        }
        QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());
        const double step = values[1] - values[0];
        QVERIFY2(std::abs(step - 0.2) < 1e-9 || std::abs(step - 0.5) < 1e-9,
                 qPrintable(labels.join(QStringLiteral(", "))));
        for (qsizetype i = 1; i < values.size(); ++i) {
            QVERIFY(std::abs(values[i] - values[i - 1] - step) < 1e-9);
        }
        QVERIFY2(values.first() <= 94.3 && values.last() >= 95.4,
                 qPrintable(labels.join(QStringLiteral(", "))));
        QCOMPARE(labels.first().section(u'.', 1).size(), 3); // one decimal: "94.2 %"
        QVERIFY(test::saveScreenshot(&chart, QStringLiteral("time-chart-narrow-percent")));

        // 60-100 %: steps of 10, whole percents as asked.
        for (qsizetype i = 0; i < points.size(); ++i) {
            points[i].setY(i % 2 == 0 ? 62.0 : 99.0);
        }
        chart.setSeries(QStringLiteral("client-lutra"), points);
        chart.refresh();
        QCoreApplication::processEvents();
        labels = yAxisLabels(chart, title);
        QVERIFY2(labels.contains(QStringLiteral("80 %")), qPrintable(labels.join(u',')));
        QCOMPARE(QSet<QString>(labels.begin(), labels.end()).size(), labels.size());

        // Without a format a small rate range gets its decimals too: 0.02 .. 0.1 pages/s.
        TimeChart rates(QStringLiteral("Rates"), QStringLiteral("pages/s"));
        rates.resize(700, 350);
        QList<QPointF> small;
        for (int i = 0; i < 60; ++i) {
            small.append(QPointF(static_cast<double>(baseMs() + i * 1000LL), 0.02 + i * 0.0015));
        }
        rates.setSeries(QStringLiteral("hits"), small);
        settle(rates);
        const QStringList rateLabels = yAxisLabels(rates, QStringLiteral("pages/s"));
        QVERIFY2(rateLabels.size() >= 3, qPrintable(rateLabels.join(u',')));
        QCOMPARE(rateLabels.first(), QStringLiteral("0.00"));
        QCOMPARE(QSet<QString>(rateLabels.begin(), rateLabels.end()).size(), rateLabels.size());
    }

    // Lock counts of 0-2 were labelled "0.0, 0.5, 1.0, 1.5, 2.0 locks": counts tick at whole
    // numbers.
    void countsTickAtWholeNumbers()
    {
        const QString title = QStringLiteral("locks");
        TimeChart chart(QStringLiteral("bench-job1001 · lock namespace ost0"), title);
        chart.resize(700, 350);
        QList<QPointF> points;
        for (int i = 0; i < 60; ++i) {
            points.append(QPointF(static_cast<double>(baseMs() + i * 1000LL), (i / 7) % 3));
        }
        chart.setSeries(QStringLiteral("locks"), points);
        chart.setAutoY(true);
        chart.setYWholeNumbers(true);
        settle(chart);
        QCOMPARE(yAxisLabels(chart, title), QStringList({"0", "1", "2"}));

        // Nothing but zeros: 0 and 1, not 0.0 .. 1.0 in fifths.
        for (QPointF &point : points) {
            point.setY(0);
        }
        chart.setSeries(QStringLiteral("locks"), points);
        chart.refresh();
        QCoreApplication::processEvents();
        QCOMPARE(yAxisLabels(chart, title), QStringList({"0", "1"}));
        QVERIFY(test::saveScreenshot(&chart, QStringLiteral("time-chart-counts")));
    }

    void colorsStayWithNames()
    {
        TimeChart chart(QStringLiteral("t"), QStringLiteral("y"));
        chart.setSeries(QStringLiteral("a"), {});
        chart.setSeries(QStringLiteral("b"), {});
        const QColor a = chart.seriesColor(QStringLiteral("a"));
        const QColor b = chart.seriesColor(QStringLiteral("b"));
        QVERIFY(a != b);
        chart.removeSeries(QStringLiteral("a"));
        QVERIFY(!chart.seriesNames().contains(QStringLiteral("a")));
        QVERIFY(!lineNamed(chart, QStringLiteral("a")));
        chart.setSeries(QStringLiteral("c"), {});
        chart.setSeries(QStringLiteral("a"), {});
        QCOMPARE(chart.seriesColor(QStringLiteral("a")), a);
        QCOMPARE(chart.seriesColor(QStringLiteral("b")), b);
        QVERIFY(chart.seriesColor(QStringLiteral("c")) != a);
        QCOMPARE(lineNamed(chart, QStringLiteral("a"))->pen().color(), a);
    }

    void readaheadScreenshot()
    {
        TimeChart chart(QStringLiteral("Readahead hit ratio · node007"),
                        QStringLiteral("hit ratio"));
        chart.setObjectName(QStringLiteral("readaheadChart"));
        chart.resize(1000, 400);
        chart.setSeries(QStringLiteral("client-lutra"), hitRatio(1, 98.2, 15));
        chart.setSeries(QStringLiteral("bench-job1001"), hitRatio(2, 96.5, 9));
        chart.setMarkers({{baseMs() + 38 * 60000LL, QStringLiteral("clear")}});
        chart.setTimeWindow(baseMs(), baseMs() + 3600 * 1000LL);
        chart.setAutoY(true, false);
        chart.setYLabelFormat(QStringLiteral("%.0f %%"));
        chart.setLegendVisible(true);
        settle(chart);

        // The dip is inside the y range, and the range does not start at 0 (it would flatten it).
        QVERIFY(chart.yMin() > 50 && chart.yMin() <= 82);
        QVERIFY(chart.yMax() >= 99 && chart.yMax() <= 100);
        QVERIFY(chart.chartView()->renderHints().testFlag(QPainter::Antialiasing)); // few points
        const QImage image = chart.grab().toImage();
        QCOMPARE(image.size(), QSize(1000, 400));
        QVERIFY(distinctColors(image) > 10);
        QCOMPARE(chart.timeLabels().first(), QStringLiteral("14:00"));
        QCOMPARE(chart.timeLabels().last(), QStringLiteral("15:00"));
        QVERIFY(roundSteps(chart.timeLabels()));
        QVERIFY(test::saveScreenshot(&chart, QStringLiteral("time-chart-readahead")));
    }
};

QTEST_MAIN(TestTimeChart)
#include "test_time_chart.moc"
