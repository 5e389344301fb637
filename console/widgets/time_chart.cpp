#include "widgets/time_chart.h"

#include "core/decimate.h"

#include <QAreaSeries>
#include <QChart>
#include <QChartView>
#include <QDateTime>
#include <QDateTimeAxis>
#include <QGraphicsLayout>
#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace lutra::console {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Antialiasing costs more than the points do once there are many of them.
constexpr int kAntialiasMaxPoints = 4000;

// Clock steps people count in; the smallest that leaves room between labels is used.
constexpr std::array<qint64, 19> kTimeSteps{
    1000,     2000,     5000,     10000,    15000,          30000,   60000,
    120000,   300000,   600000,   900000,   1800000,        3600000, 7200000,
    10800000, 21600000, 43200000, 86400000, 7 * 86400000LL,
};

// Below Qt Charts' series (their z values start above the grid's).
constexpr double kGridZ = 2;

// matplotlib's tab10: distinct on white, and the order people already know.
const QList<QColor> &seriesPalette()
{
    static const QList<QColor> colors{
        QColor(0x1f77b4), QColor(0xff7f0e), QColor(0x2ca02c), QColor(0xd62728), QColor(0x9467bd),
        QColor(0x8c564b), QColor(0xe377c2), QColor(0x17becf), QColor(0x7f7f7f), QColor(0xbcbd22),
    };
    return colors;
}

bool lessX(const QPointF &point, double x)
{
    return point.x() < x;
}

// decimateMinMax drops what lies outside the window; the nearest point beyond each edge is put
// back so a line runs to the border instead of stopping one sample short of it.
QList<QPointF> decimateWindow(const QList<QPointF> &points, double from, double to, int width)
{
    QList<QPointF> out = decimateMinMax(points, from, to, std::max(1, width - 1));
    const auto first = std::lower_bound(points.begin(), points.end(), from, lessX);
    if (first != points.begin()) {
        out.prepend(*(first - 1));
    }
    const auto last =
        std::upper_bound(points.begin(), points.end(), to,
                         [](double x, const QPointF &point) { return x < point.x(); });
    if (last != points.end()) {
        out.append(*last);
    }
    return out;
}

struct Extent {
    double low = kNaN;
    double high = kNaN;
};

Extent extentOf(const QList<QPointF> &points, double from, double to)
{
    Extent extent;
    for (const QPointF &point : points) {
        if (point.x() < from || point.x() > to || std::isnan(point.y())) {
            continue;
        }
        extent.low = std::isnan(extent.low) ? point.y() : std::min(extent.low, point.y());
        extent.high = std::isnan(extent.high) ? point.y() : std::max(extent.high, point.y());
    }
    return extent;
}

// 1, 2 or 5 times a power of ten, at least `raw`: tick steps people read without effort.
double niceStep(double raw)
{
    if (!(raw > 0) || !std::isfinite(raw)) {
        return 1;
    }
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double factor : {1.0, 2.0, 5.0}) {
        if (factor * magnitude >= raw * (1 - 1e-9)) {
            return factor * magnitude;
        }
    }
    return 10 * magnitude;
}

// Decimals that tell ticks `step` apart: 0 for 5, 1 for 0.5 or 0.2, 2 for 0.05.
int decimalsFor(double step)
{
    return std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
}

// `format` (printf-style, as QValueAxis takes it) with at least `decimals` decimals in its %f
// conversions: "%.0f %%" with 1 gives "%.1f %%", so a narrow range does not label its ticks
// "95 %, 95 %, 94 %". A precision already larger is kept.
QString withDecimals(const QString &format, int decimals)
{
    QString out;
    out.reserve(format.size() + 2);
    for (qsizetype i = 0; i < format.size(); ++i) {
        out += format[i];
        if (format[i] != u'%') {
            continue;
        }
        if (i + 1 < format.size() && format[i + 1] == u'%') {
            out += format[++i];
            continue;
        }
        qsizetype end = i + 1; // flags and width, up to a precision or the conversion
        while (end < format.size() && QStringLiteral("-+ #0123456789").contains(format[end])) {
            ++end;
        }
        qsizetype precisionEnd = end;
        int precision = -1;
        if (precisionEnd < format.size() && format[precisionEnd] == u'.') {
            ++precisionEnd;
            while (precisionEnd < format.size() && format[precisionEnd].isDigit()) {
                ++precisionEnd;
            }
            precision = format.mid(end + 1, precisionEnd - end - 1).toInt();
        }
        if (precisionEnd < format.size() && format[precisionEnd] == u'f') {
            out += format.mid(i + 1, end - i - 1);
            // printf's %f without a precision has 6 decimals.
            const int wanted = std::max(precision < 0 ? 6 : precision, decimals);
            out += u'.' + QString::number(wanted) + u'f';
            i = precisionEnd;
        } else {
            out += format.mid(i + 1, precisionEnd - i - 1);
            i = precisionEnd - 1;
        }
    }
    return out;
}

QList<QPointF> column(const QList<BandPoint> &band, double Spread::*field, bool keepGaps)
{
    QList<QPointF> points;
    points.reserve(band.size());
    for (const BandPoint &point : band) {
        const double value = point.spread.*field;
        if (point.spread.count == 0 || std::isnan(value)) {
            if (keepGaps) {
                points.append(QPointF(point.x, kNaN));
            }
            continue;
        }
        points.append(QPointF(point.x, value));
    }
    return points;
}

} // namespace

TimeChart::TimeChart(const QString &title, const QString &yTitle, QWidget *parent) : QWidget(parent)
{
    m_chart = new QChart;
    m_chart->setTitle(title);
    m_chart->setAnimationOptions(QChart::NoAnimation);
    m_chart->setBackgroundRoundness(0);
    m_chart->setMargins(QMargins(4, 4, 12, 4));
    m_chart->layout()->setContentsMargins(0, 0, 0, 0);
    m_chart->legend()->setVisible(false);
    m_chart->legend()->setAlignment(Qt::AlignBottom);

    m_x = new QDateTimeAxis;
    m_x->setFormat(QStringLiteral("HH:mm:ss"));
    m_x->setTickCount(2);
    // Invisible labels still reserve the space placeTimeAxis() draws its own into.
    m_x->setLabelsBrush(Qt::transparent);
    m_x->setGridLineVisible(false);
    m_y = new QValueAxis;
    m_y->setTitleText(yTitle);
    m_y->setTickType(QValueAxis::TicksDynamic);
    m_y->setTickAnchor(0);
    m_chart->addAxis(m_x, Qt::AlignBottom);
    m_chart->addAxis(m_y, Qt::AlignLeft);

    // One series for every marker: vertical segments separated by NaN gaps.
    m_markerSeries = new QLineSeries;
    m_markerSeries->setName(QStringLiteral("markers"));
    QPen markerPen(QColor(0x555555));
    markerPen.setWidthF(1);
    markerPen.setStyle(Qt::DashLine);
    markerPen.setCosmetic(true);
    m_markerSeries->setPen(markerPen);
    attach(m_markerSeries);
    hideFromLegend(m_markerSeries);

    m_view = new QChartView(m_chart, this);
    m_view->setRenderHint(QPainter::Antialiasing, false);
    m_view->setFrameShape(QFrame::NoFrame);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(m_view);

    // A new plot width changes the decimation; labels follow the plot at once.
    connect(m_chart, &QChart::plotAreaChanged, this, [this](const QRectF &area) {
        placeMarkerLabels();
        placeTimeAxis();
        if (static_cast<int>(area.width()) != m_drawnWidth) {
            scheduleRefresh();
        }
    });
}

TimeChart::~TimeChart() = default;

void TimeChart::setSeries(const QString &name, const QList<QPointF> &points)
{
    Line &line = m_lines[name];
    line.points = points;
    line.dirty = true;
    if (!line.series) {
        line.series = new QLineSeries;
        line.series->setName(name);
        QPen pen(colorFor(name));
        pen.setWidthF(1.5);
        pen.setCosmetic(true);
        line.series->setPen(pen);
        attach(line.series);
    }
}

void TimeChart::removeSeries(const QString &name)
{
    const auto found = m_lines.find(name);
    if (found == m_lines.end()) {
        return;
    }
    m_chart->removeSeries(found->series);
    delete found->series;
    m_lines.erase(found);
}

void TimeChart::setBand(const QString &name, const QList<BandPoint> &band)
{
    Band &entry = m_bands[name];
    entry.points = band;
    entry.dirty = true;
    if (!entry.area) {
        const QColor color = colorFor(name);
        entry.upper = new QLineSeries(this);
        entry.lower = new QLineSeries(this);
        entry.area = new QAreaSeries(entry.upper, entry.lower);
        entry.area->setName(name + QStringLiteral(" min–max"));
        QColor fill = color;
        fill.setAlpha(60);
        entry.area->setBrush(fill);
        QPen edge(color.lighter(130));
        edge.setWidthF(0.5);
        edge.setCosmetic(true);
        entry.area->setPen(edge);
        attach(entry.area);

        entry.median = new QLineSeries;
        entry.median->setName(name + QStringLiteral(" median"));
        QPen pen(color);
        pen.setWidthF(1.5);
        pen.setCosmetic(true);
        entry.median->setPen(pen);
        attach(entry.median);
    }
}

void TimeChart::removeBand(const QString &name)
{
    const auto found = m_bands.find(name);
    if (found == m_bands.end()) {
        return;
    }
    m_chart->removeSeries(found->area);
    m_chart->removeSeries(found->median);
    delete found->area;
    delete found->median;
    delete found->upper;
    delete found->lower;
    m_bands.erase(found);
}

void TimeChart::setMarkers(const QList<Marker> &markers)
{
    m_markers = markers;
    m_markersDirty = true;
}

void TimeChart::setTimeWindow(qint64 fromMs, qint64 toMs)
{
    m_windowFrom = fromMs;
    m_windowTo = toMs;
}

void TimeChart::setYRange(double min, double max)
{
    m_autoY = false;
    m_fixedYMin = min;
    m_fixedYMax = max;
}

void TimeChart::setAutoY(bool on, bool fromZero)
{
    m_autoY = on;
    m_autoYFromZero = fromZero;
}

void TimeChart::setYWholeNumbers(bool on)
{
    m_yWhole = on;
    m_drawnYMax = kNaN; // the next refresh() sets the axis up again
}

void TimeChart::setYLabelFormat(const QString &format)
{
    m_yFormat = format;
    m_drawnYMax = kNaN; // the next refresh() sets the axis up again
}

double TimeChart::tickStep(double raw) const
{
    const double step = niceStep(raw);
    return m_yWhole ? std::max(1.0, step) : step;
}

void TimeChart::setLegendVisible(bool visible)
{
    m_chart->legend()->setVisible(visible);
}

void TimeChart::refresh()
{
    m_refreshQueued = false;
    // Before the first layout the plot has no width yet; plotAreaChanged refreshes again then.
    int width = static_cast<int>(m_chart->plotArea().width());
    if (width < 2) {
        width = std::max(100, m_view->width() - 100);
    }

    qint64 from = m_windowFrom;
    qint64 to = m_windowTo;
    if (from >= to) {
        double low = std::numeric_limits<double>::max();
        double high = std::numeric_limits<double>::lowest();
        for (const Line &line : std::as_const(m_lines)) {
            if (!line.points.isEmpty()) {
                low = std::min(low, line.points.first().x());
                high = std::max(high, line.points.last().x());
            }
        }
        for (const Band &band : std::as_const(m_bands)) {
            if (!band.points.isEmpty()) {
                low = std::min(low, band.points.first().x);
                high = std::max(high, band.points.last().x);
            }
        }
        if (low < high) {
            from = static_cast<qint64>(low);
            to = static_cast<qint64>(std::ceil(high));
        } else if (m_drawnFrom < m_drawnTo) {
            from = m_drawnFrom;
            to = m_drawnTo;
        } else {
            to = QDateTime::currentMSecsSinceEpoch();
            from = to - 60 * 1000;
        }
    }
    const bool windowChanged = from != m_drawnFrom || to != m_drawnTo;
    const bool redraw = windowChanged || width != m_drawnWidth;
    const double xFrom = static_cast<double>(from);
    const double xTo = static_cast<double>(to);

    int total = 0;
    for (Line &line : m_lines) {
        if (line.dirty || redraw) {
            const QList<QPointF> points = decimateWindow(line.points, xFrom, xTo, width);
            const Extent extent = extentOf(points, xFrom, xTo);
            line.low = extent.low;
            line.high = extent.high;
            line.series->replace(points);
            line.drawn = static_cast<int>(points.size());
            line.dirty = false;
        }
        total += line.drawn;
    }
    for (Band &band : m_bands) {
        if (band.dirty || redraw) {
            const QList<QPointF> upper =
                decimateWindow(column(band.points, &Spread::max, false), xFrom, xTo, width);
            const QList<QPointF> lower =
                decimateWindow(column(band.points, &Spread::min, false), xFrom, xTo, width);
            const QList<QPointF> median =
                decimateWindow(column(band.points, &Spread::median, true), xFrom, xTo, width);
            const Extent high = extentOf(upper, xFrom, xTo);
            const Extent low = extentOf(lower, xFrom, xTo);
            band.low = low.low;
            band.high = high.high;
            band.upper->replace(upper);
            band.lower->replace(lower);
            band.median->replace(median);
            band.drawn = static_cast<int>(median.size());
            band.dirty = false;
        }
        total += band.drawn;
    }

    double yMin = m_fixedYMin;
    double yMax = m_fixedYMax;
    if (m_autoY) {
        double low = kNaN;
        double high = kNaN;
        const auto widen = [&low, &high](double lo, double hi) {
            if (!std::isnan(lo)) {
                low = std::isnan(low) ? lo : std::min(low, lo);
            }
            if (!std::isnan(hi)) {
                high = std::isnan(high) ? hi : std::max(high, hi);
            }
        };
        for (const Line &line : std::as_const(m_lines)) {
            widen(line.low, line.high);
        }
        for (const Band &band : std::as_const(m_bands)) {
            widen(band.low, band.high);
        }
        if (std::isnan(low)) {
            low = 0;
            high = 1;
        }
        if (m_autoYFromZero) {
            low = std::min(low, 0.0);
            high = std::max(high, 0.0);
        }
        if (high - low < 1e-12) {
            const double pad = std::abs(high) > 0 ? std::abs(high) * 0.1 : 1;
            low -= m_autoYFromZero && low >= 0 ? 0 : pad;
            high += pad;
        }
        const double step = tickStep((high - low) / 5);
        yMin = std::floor(low / step) * step;
        yMax = std::ceil(high / step) * step;
        if (!m_autoYFromZero && low >= 0) {
            yMin = std::max(yMin, 0.0);
        }
    }
    const bool yChanged = yMin != m_drawnYMin || yMax != m_drawnYMax;

    // One update per axis, and only when something changed.
    if (windowChanged) {
        m_x->setRange(QDateTime::fromMSecsSinceEpoch(from), QDateTime::fromMSecsSinceEpoch(to));
    }
    if (yChanged) {
        const double step = tickStep((yMax - yMin) / 5);
        m_y->setTickInterval(step);
        const int decimals = decimalsFor(step);
        m_y->setLabelFormat(m_yFormat.isEmpty() ? QStringLiteral("%.") + QString::number(decimals) +
                                                      QStringLiteral("f")
                                                : withDecimals(m_yFormat, decimals));
        m_y->setRange(yMin, yMax);
    }

    if (m_markersDirty || yChanged || windowChanged) {
        QList<QPointF> points;
        for (const Marker &marker : std::as_const(m_markers)) {
            if (marker.timeMs < from || marker.timeMs > to) {
                continue;
            }
            const auto x = static_cast<double>(marker.timeMs);
            points.append(QPointF(x, yMin));
            points.append(QPointF(x, yMax));
            points.append(QPointF(x, kNaN));
        }
        m_markerSeries->replace(points);
        while (m_markerLabels.size() < m_markers.size()) {
            auto *label = new QGraphicsSimpleTextItem(m_chart);
            QFont font = label->font();
            font.setPointSizeF(font.pointSizeF() * 0.85);
            label->setFont(font);
            label->setBrush(QColor(0x333333));
            label->setZValue(10);
            m_markerLabels.append(label);
        }
        while (m_markerLabels.size() > m_markers.size()) {
            delete m_markerLabels.takeLast();
        }
        for (qsizetype i = 0; i < m_markers.size(); ++i) {
            m_markerLabels[i]->setText(m_markers[i].label);
        }
        m_markersDirty = false;
    }

    const bool antialiased = total <= kAntialiasMaxPoints;
    if (antialiased != m_antialiased) {
        m_view->setRenderHint(QPainter::Antialiasing, antialiased);
        m_antialiased = antialiased;
    }

    m_drawnWidth = width;
    m_drawnFrom = from;
    m_drawnTo = to;
    m_drawnYMin = yMin;
    m_drawnYMax = yMax;
    placeMarkerLabels();
    if (redraw) {
        placeTimeAxis();
    }
}

QStringList TimeChart::seriesNames() const
{
    return m_lines.keys();
}

QStringList TimeChart::bandNames() const
{
    return m_bands.keys();
}

int TimeChart::drawnPointCount(const QString &name) const
{
    if (const auto line = m_lines.find(name); line != m_lines.end()) {
        return line->drawn;
    }
    if (const auto band = m_bands.find(name); band != m_bands.end()) {
        return band->drawn;
    }
    return 0;
}

QColor TimeChart::seriesColor(const QString &name) const
{
    return m_colors.value(name);
}

QColor TimeChart::colorFor(const QString &name)
{
    const auto known = m_colors.find(name);
    if (known != m_colors.end()) {
        return *known;
    }
    const QList<QColor> &colors = seriesPalette();
    const QColor color = colors[m_nextColor % colors.size()];
    ++m_nextColor;
    m_colors.insert(name, color);
    return color;
}

void TimeChart::attach(QAbstractSeries *series)
{
    m_chart->addSeries(series);
    series->attachAxis(m_x);
    series->attachAxis(m_y);
}

void TimeChart::hideFromLegend(QAbstractSeries *series)
{
    for (QLegendMarker *marker : m_chart->legend()->markers(series)) {
        marker->setVisible(false);
    }
}

void TimeChart::placeMarkerLabels()
{
    const QRectF plot = m_chart->plotArea();
    for (qsizetype i = 0; i < m_markerLabels.size() && i < m_markers.size(); ++i) {
        QGraphicsSimpleTextItem *label = m_markerLabels[i];
        const qint64 time = m_markers[i].timeMs;
        if (time < m_drawnFrom || time > m_drawnTo || plot.width() < 2) {
            label->setVisible(false);
            continue;
        }
        const QPointF top =
            m_chart->mapToPosition(QPointF(static_cast<double>(time), m_drawnYMax), m_markerSeries);
        // Right of the line, inside the plot; flipped to the left near the right edge.
        const QRectF box = label->boundingRect();
        double x = top.x() + 3;
        if (x + box.width() > plot.right()) {
            x = top.x() - 3 - box.width();
        }
        label->setPos(x, plot.top() + 2);
        label->setVisible(true);
    }
}

void TimeChart::placeTimeAxis()
{
    const QRectF plot = m_chart->plotArea();
    const qint64 span = m_drawnTo - m_drawnFrom;
    qsizetype used = 0;
    if (plot.width() >= 2 && span > 0) {
        const QFontMetricsF metrics(m_x->labelsFont());
        const double pixelsPerMs = plot.width() / static_cast<double>(span);
        const bool withDate = span > 24LL * 3600 * 1000;
        const double room = metrics.horizontalAdvance(withDate ? QStringLiteral("00.00 00:00")
                                                               : QStringLiteral("00:00:00")) +
                            24;
        qint64 step = kTimeSteps.back();
        for (const qint64 candidate : kTimeSteps) {
            if (static_cast<double>(candidate) * pixelsPerMs >= room) {
                step = candidate;
                break;
            }
        }
        const QString format = withDate       ? QStringLiteral("dd.MM HH:mm")
                               : step < 60000 ? QStringLiteral("HH:mm:ss")
                                              : QStringLiteral("HH:mm");
        // Round local clock times, not multiples of the epoch in UTC.
        const qint64 offset = QDateTime::fromMSecsSinceEpoch(m_drawnFrom).offsetFromUtc() * 1000LL;
        QPen gridPen = m_y->gridLinePen();
        for (qint64 tick = ((m_drawnFrom + offset + step - 1) / step) * step - offset;
             tick <= m_drawnTo; tick += step) {
            if (used == m_timeLabels.size()) {
                auto *label = new QGraphicsSimpleTextItem(m_chart);
                label->setFont(m_x->labelsFont());
                label->setBrush(m_y->labelsBrush());
                m_timeLabels.append(label);
                auto *line = new QGraphicsLineItem(m_chart);
                line->setZValue(kGridZ);
                m_timeGrid.append(line);
            }
            const double x = plot.left() + static_cast<double>(tick - m_drawnFrom) * pixelsPerMs;
            QGraphicsSimpleTextItem *label = m_timeLabels[used];
            label->setText(QDateTime::fromMSecsSinceEpoch(tick).toString(format));
            const double half = label->boundingRect().width() / 2;
            label->setPos(std::clamp(x - half, 0.0, m_chart->size().width() - 2 * half),
                          plot.bottom() + 6);
            label->setVisible(true);
            QGraphicsLineItem *line = m_timeGrid[used];
            line->setPen(gridPen);
            line->setLine(x, plot.top(), x, plot.bottom());
            line->setVisible(true);
            ++used;
        }
    }
    for (qsizetype i = used; i < m_timeLabels.size(); ++i) {
        m_timeLabels[i]->setVisible(false);
        m_timeGrid[i]->setVisible(false);
    }
}

QStringList TimeChart::timeLabels() const
{
    QStringList labels;
    for (const QGraphicsSimpleTextItem *label : m_timeLabels) {
        if (label->isVisible()) {
            labels.append(label->text());
        }
    }
    return labels;
}

void TimeChart::scheduleRefresh()
{
    if (m_refreshQueued) {
        return;
    }
    m_refreshQueued = true;
    QMetaObject::invokeMethod(this, &TimeChart::refresh, Qt::QueuedConnection);
}

} // namespace lutra::console
