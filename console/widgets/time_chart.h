#pragma once
// A time chart of named line series, a shaded min..max band with its median (a cluster's
// spread) and vertical event markers. Setters only store; refresh() is the one place that hands
// points to Qt Charts, decimated to the plot's width (shared/CONSOLE.md: replace() only, ≤ 2
// points per pixel, one axis update per frame).

#include "core/aggregate.h"

#include <QColor>
#include <QList>
#include <QMap>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QWidget>

class QAbstractSeries;
class QAreaSeries;
class QChart;
class QChartView;
class QDateTimeAxis;
class QGraphicsLineItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QValueAxis;

namespace lutra::console {

class TimeChart : public QWidget {
    Q_OBJECT

public:
    // An event drawn as a vertical line ("clear" sent to a namespace).
    struct Marker {
        qint64 timeMs = 0;
        QString label;
    };

    explicit TimeChart(const QString &title, const QString &yTitle, QWidget *parent = nullptr);
    ~TimeChart() override;

    // Points are (ms since epoch, value), sorted by x; a NaN value is a gap.
    void setSeries(const QString &name, const QList<QPointF> &points);
    void removeSeries(const QString &name);
    // The area leaves out buckets without data (it bridges them); the median line shows the gap.
    void setBand(const QString &name, const QList<BandPoint> &band);
    void removeBand(const QString &name);
    void setMarkers(const QList<Marker> &markers);

    // Without a window (or after setTimeWindow(0, 0)) the chart spans its data.
    void setTimeWindow(qint64 fromMs, qint64 toMs);
    void setYRange(double min, double max);
    // From the visible data. With fromZero (rates) the axis starts at 0 unless the data goes
    // below it; without (ratios near 100 %) it fits the data so a dip is visible.
    void setAutoY(bool on, bool fromZero = true);
    // Counts (locks, pages): ticks at whole numbers, never "0.5 locks".
    void setYWholeNumbers(bool on);
    // printf-style, as QValueAxis takes it: "%.0f %%" for ratios given in percent. Its %f
    // precision is a minimum: a tick step of 0.2 draws "94.8 %", not "95 %" twice.
    void setYLabelFormat(const QString &format);
    void setLegendVisible(bool visible);

    void refresh();

    QStringList seriesNames() const;
    QStringList bandNames() const;
    // Points handed to replace() by the last refresh that changed the series (a band's name
    // gives its median line).
    int drawnPointCount(const QString &name) const;
    QColor seriesColor(const QString &name) const;
    QChartView *chartView() const { return m_view; }
    qint64 windowFrom() const { return m_drawnFrom; }
    qint64 windowTo() const { return m_drawnTo; }
    double yMin() const { return m_drawnYMin; }
    double yMax() const { return m_drawnYMax; }
    // The clock labels under the plot, left to right ("14:10", "14:20", ...).
    QStringList timeLabels() const;

private:
    struct Line {
        QList<QPointF> points;
        QLineSeries *series = nullptr;
        bool dirty = true;
        int drawn = 0;
        double low = 0; // of the drawn points, for the automatic y range (NaN: none)
        double high = 0;
    };
    struct Band {
        QList<BandPoint> points;
        QLineSeries *upper = nullptr;
        QLineSeries *lower = nullptr;
        QAreaSeries *area = nullptr;
        QLineSeries *median = nullptr;
        bool dirty = true;
        int drawn = 0;
        double low = 0;
        double high = 0;
    };

    double tickStep(double raw) const; // a nice step of at least `raw` (1 for whole numbers)
    QColor colorFor(const QString &name);
    void attach(QAbstractSeries *series);
    void hideFromLegend(QAbstractSeries *series);
    void placeMarkerLabels();
    void placeTimeAxis();
    void scheduleRefresh();

    QChart *m_chart = nullptr;
    QChartView *m_view = nullptr;
    QDateTimeAxis *m_x = nullptr;
    QValueAxis *m_y = nullptr;

    QMap<QString, Line> m_lines;
    QMap<QString, Band> m_bands;
    QMap<QString, QColor> m_colors; // kept after removal, so a name keeps its colour
    int m_nextColor = 0;

    QList<Marker> m_markers;
    QLineSeries *m_markerSeries = nullptr;
    QList<QGraphicsSimpleTextItem *> m_markerLabels;
    bool m_markersDirty = false;

    // QDateTimeAxis divides the window evenly, so a sliding window would get labels such as
    // 14:11:48 that change every frame. The clock labels and their grid lines are drawn here
    // instead, at round times; the axis keeps the mapping and reserves the label space.
    QList<QGraphicsSimpleTextItem *> m_timeLabels;
    QList<QGraphicsLineItem *> m_timeGrid;

    qint64 m_windowFrom = 0;
    qint64 m_windowTo = 0;
    bool m_autoY = true;
    bool m_autoYFromZero = true;
    bool m_yWhole = false;
    QString m_yFormat; // empty: decimals follow the tick step
    double m_fixedYMin = 0;
    double m_fixedYMax = 1;

    // What the chart shows now: refresh() compares against these to touch only what changed.
    int m_drawnWidth = 0;
    qint64 m_drawnFrom = 0;
    qint64 m_drawnTo = 0;
    double m_drawnYMin = 0;
    double m_drawnYMax = 0;
    bool m_antialiased = false;
    bool m_refreshQueued = false;
};

} // namespace lutra::console
