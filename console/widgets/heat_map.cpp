#include "widgets/heat_map.h"

#include <QDateTime>
#include <QHelpEvent>
#include <QLinearGradient>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <array>
#include <cmath>

namespace lutra::console {

namespace {

constexpr int kMargin = 4;
constexpr int kTick = 3;
constexpr int kLegendBar = 12;

struct Stop {
    double at;
    QRgb color;
};

// Red through orange and amber to green, like ColorBrewer's RdYlGn but without its pale yellow
// middle, which would read as "no data" next to the gray.
constexpr std::array<Stop, 5> kStops{{
    {0.00, 0xc62828},
    {0.35, 0xef6c00},
    {0.55, 0xf9a825},
    {0.75, 0xc0ca33},
    {1.00, 0x2e7d32},
}};

int mix(int a, int b, double t)
{
    return static_cast<int>(std::lround(a + (b - a) * t));
}

// Clock labels at steps people count in, the smallest that leaves room between labels.
constexpr std::array<qint64, 18> kTimeSteps{
    1000,   2000,   5000,    10000,   15000,   30000,    60000,    120000,   300000,
    600000, 900000, 1800000, 3600000, 7200000, 10800000, 21600000, 43200000, 86400000,
};

} // namespace

HeatMap::HeatMap(QWidget *parent) : QWidget(parent)
{
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void HeatMap::setData(const QStringList &rowLabels, const QList<QList<double>> &values,
                      qint64 fromMs, qint64 toMs)
{
    if (rowLabels != m_labels) {
        m_labels = rowLabels;
        measureLabels();
    }
    m_values = values;
    m_from = fromMs;
    m_to = std::max(toMs, fromMs + 1);
    m_buckets = 0;
    for (const QList<double> &row : std::as_const(m_values)) {
        m_buckets = std::max(m_buckets, static_cast<int>(row.size()));
    }
    rebuildImage();
}

void HeatMap::setRange(double min, double max)
{
    m_min = min;
    m_max = max;
    rebuildImage();
}

void HeatMap::setPercent(bool percent)
{
    m_percent = percent;
    update();
}

QColor HeatMap::colorFor(double fraction)
{
    if (std::isnan(fraction)) {
        return noDataColor();
    }
    fraction = std::clamp(fraction, 0.0, 1.0);
    for (std::size_t i = 1; i < kStops.size(); ++i) {
        if (fraction <= kStops[i].at) {
            const Stop &low = kStops[i - 1];
            const Stop &high = kStops[i];
            const double t = (fraction - low.at) / (high.at - low.at);
            return QColor(mix(qRed(low.color), qRed(high.color), t),
                          mix(qGreen(low.color), qGreen(high.color), t),
                          mix(qBlue(low.color), qBlue(high.color), t));
        }
    }
    return QColor(kStops.back().color);
}

QColor HeatMap::noDataColor()
{
    return QColor(0xd9, 0xd9, 0xd9);
}

QColor HeatMap::colorAt(int row, int bucket) const
{
    if (row < 0 || row >= m_image.height() || bucket < 0 || bucket >= m_image.width()) {
        return {};
    }
    return m_image.pixelColor(bucket, row);
}

QString HeatMap::cellText(int row, int bucket) const
{
    if (row < 0 || row >= rowCount() || bucket < 0 || bucket >= m_buckets) {
        return {};
    }
    // Buckets shorter than a minute need their seconds to be told apart.
    const bool seconds = (m_to - m_from) / std::max(1, m_buckets) < 60000;
    const QString time =
        QDateTime::fromMSecsSinceEpoch(bucketStart(bucket))
            .toString(seconds ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm"));
    const double value = valueAt(row, bucket);
    const QString shown = std::isnan(value) ? tr("no data") : formatValue(value);
    return m_labels[row] + QStringLiteral(" · ") + time + QStringLiteral(" · ") + shown;
}

QPoint HeatMap::cellCenter(int row, int bucket) const
{
    const QRect cells = cellsRect();
    if (m_buckets == 0 || m_labels.isEmpty()) {
        return cells.center();
    }
    // Cell i spans [edge(i), edge(i + 1)): the same integer edges cellAt() inverts.
    const auto edge = [](int index, int count, int length) {
        return static_cast<int>(static_cast<qint64>(index) * length / count);
    };
    const int x0 = edge(bucket, m_buckets, cells.width());
    const int x1 = edge(bucket + 1, m_buckets, cells.width());
    const int y0 = edge(row, rowCount(), cells.height());
    const int y1 = edge(row + 1, rowCount(), cells.height());
    return QPoint(cells.left() + (x0 + x1) / 2, cells.top() + (y0 + y1) / 2);
}

qint64 HeatMap::bucketStart(int bucket) const
{
    if (m_buckets == 0) {
        return m_from;
    }
    return m_from + (m_to - m_from) * bucket / m_buckets;
}

QSize HeatMap::sizeHint() const
{
    const int rowHeight = fontMetrics().height();
    return QSize(640, std::clamp(static_cast<int>(rowCount()) * rowHeight, 120, 600) + rowHeight +
                          3 * kMargin);
}

QSize HeatMap::minimumSizeHint() const
{
    return QSize(200, 80);
}

void HeatMap::measureLabels()
{
    const QFontMetrics metrics = fontMetrics();
    m_widestLabel = 0;
    for (const QString &label : std::as_const(m_labels)) {
        m_widestLabel = std::max(m_widestLabel, metrics.horizontalAdvance(label));
    }
}

bool HeatMap::event(QEvent *event)
{
    if (event->type() == QEvent::FontChange) {
        measureLabels();
    }
    if (event->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(event);
        const Cell cell = cellAt(help->pos());
        if (cell.row < 0) {
            QToolTip::hideText();
            event->ignore();
        } else {
            QToolTip::showText(help->globalPos(), cellText(cell.row, cell.bucket), this);
        }
        return true;
    }
    return QWidget::event(event);
}

void HeatMap::paintEvent(QPaintEvent *)
{
    QPainter painter(this);
    painter.fillRect(rect(), palette().base());
    const QRect cells = cellsRect();
    const QFontMetrics metrics = fontMetrics();
    painter.setPen(palette().text().color());

    if (m_image.isNull() || cells.width() < 1 || cells.height() < 1) {
        painter.drawText(rect(), Qt::AlignCenter, tr("no data"));
        return;
    }
    // One pixel per cell, scaled without smoothing: sharp cell edges at any size.
    painter.setRenderHint(QPainter::SmoothPixmapTransform, false);
    painter.drawImage(cells, m_image);

    // Row labels, thinned out when rows are shorter than a line of text.
    const double rowHeight = static_cast<double>(cells.height()) / rowCount();
    const int every = std::max(1, static_cast<int>(std::ceil((metrics.height() + 2) / rowHeight)));
    const int labelRight = cells.left() - kMargin;
    int previousBottom = -1;
    const int widthForLabels = labelWidth();
    for (int row = 0; row < rowCount(); row += every) {
        const int y = cells.top() + static_cast<int>((row + 0.5) * rowHeight);
        const QString text = metrics.elidedText(m_labels[row], Qt::ElideMiddle, widthForLabels);
        // Kept inside the cells' height, so the first and last labels are not cut off.
        const int top = std::clamp(y - metrics.height() / 2, 0,
                                   std::max(0, cells.bottom() + 1 - metrics.height()));
        if (top < previousBottom) {
            continue;
        }
        previousBottom = top + metrics.height();
        painter.drawText(QRect(kMargin, top, labelRight - kMargin, metrics.height()),
                         Qt::AlignRight | Qt::AlignVCenter, text);
    }

    // Clock times along the bottom, at a step that leaves room between labels.
    const double span = static_cast<double>(m_to - m_from);
    const double pixelsPerMs = cells.width() / span;
    const int labelSpace = metrics.horizontalAdvance(QStringLiteral("00:00:00")) + 12;
    qint64 step = kTimeSteps.back();
    for (const qint64 candidate : kTimeSteps) {
        if (candidate * pixelsPerMs >= labelSpace) {
            step = candidate;
            break;
        }
    }
    const QString format = step < 60000 ? QStringLiteral("HH:mm:ss") : QStringLiteral("HH:mm");
    // Ticks on round local clock times, not on multiples of the epoch in UTC.
    const qint64 offset = QDateTime::fromMSecsSinceEpoch(m_from).offsetFromUtc() * 1000LL;
    qint64 tick = ((m_from + offset + step - 1) / step) * step - offset;
    const int axisY = cells.bottom() + 1;
    for (; tick <= m_to; tick += step) {
        const int x = cells.left() + static_cast<int>(std::lround((tick - m_from) * pixelsPerMs));
        painter.drawLine(x, axisY, x, axisY + kTick);
        const QString text = QDateTime::fromMSecsSinceEpoch(tick).toString(format);
        const int textAdvance = metrics.horizontalAdvance(text);
        const int left = std::clamp(x - textAdvance / 2, 0, std::max(0, width() - textAdvance));
        painter.drawText(QRect(left, axisY + kTick, textAdvance, metrics.height()), Qt::AlignCenter,
                         text);
    }

    // The colour scale with its range, and the no-data colour under it.
    const QRect legend = legendRect();
    const QRect bar(legend.left(), legend.top(), kLegendBar,
                    legend.height() - metrics.height() - kMargin);
    QLinearGradient gradient(bar.topLeft(), bar.bottomLeft());
    for (const Stop &stop : kStops) {
        gradient.setColorAt(1 - stop.at, QColor(stop.color));
    }
    painter.fillRect(bar, gradient);
    painter.drawRect(bar.adjusted(0, 0, -1, -1));
    const int textLeft = bar.right() + kMargin;
    const int textWidth = legend.right() - textLeft;
    painter.drawText(QRect(textLeft, bar.top(), textWidth, metrics.height()),
                     Qt::AlignLeft | Qt::AlignTop, formatValue(m_max, true));
    painter.drawText(QRect(textLeft, bar.bottom() - metrics.height(), textWidth, metrics.height()),
                     Qt::AlignLeft | Qt::AlignBottom, formatValue(m_min, true));
    const QRect none(legend.left(), legend.bottom() - metrics.height() + 2, kLegendBar,
                     metrics.height() - 4);
    painter.fillRect(none, noDataColor());
    painter.drawText(
        QRect(textLeft, legend.bottom() - metrics.height(), textWidth, metrics.height()),
        Qt::AlignLeft | Qt::AlignVCenter, tr("n/a"));
}

void HeatMap::mouseDoubleClickEvent(QMouseEvent *event)
{
    const Cell cell = cellAt(event->position().toPoint());
    if (cell.row >= 0) {
        Q_EMIT rowActivated(m_labels[cell.row]);
        event->accept();
        return;
    }
    QWidget::mouseDoubleClickEvent(event);
}

double HeatMap::valueAt(int row, int bucket) const
{
    const QList<double> &values = m_values[row];
    return bucket < values.size() ? values[bucket] : std::nan("");
}

QString HeatMap::formatValue(double value, bool brief) const
{
    if (m_percent) {
        // The legend's ends are round numbers ("100 %"); cells keep one decimal ("93.1 %").
        const double percent = value * 100;
        const int decimals = brief && percent == std::round(percent) ? 0 : 1;
        return QString::number(percent, 'f', decimals) + QStringLiteral(" %");
    }
    return QString::number(value, 'g', brief ? 3 : 4);
}

void HeatMap::rebuildImage()
{
    if (m_buckets == 0 || m_labels.isEmpty()) {
        m_image = QImage();
        update();
        return;
    }
    m_image = QImage(m_buckets, rowCount(), QImage::Format_RGB32);
    const double span = m_max - m_min;
    for (int row = 0; row < rowCount(); ++row) {
        auto *line = reinterpret_cast<QRgb *>(m_image.scanLine(row));
        for (int bucket = 0; bucket < m_buckets; ++bucket) {
            const double value = row < m_values.size() ? valueAt(row, bucket) : std::nan("");
            const double fraction = span > 0 ? (value - m_min) / span : 1.0;
            line[bucket] = colorFor(fraction).rgb();
        }
    }
    update();
}

int HeatMap::labelWidth() const
{
    if (m_spanLeft >= 0) {
        return std::max(0, cellsRect().left() - 2 * kMargin);
    }
    return std::min(m_widestLabel, width() / 4);
}

void HeatMap::setCellsSpan(int left, int right)
{
    if (left == m_spanLeft && right == m_spanRight) {
        return;
    }
    m_spanLeft = left;
    m_spanRight = right;
    update();
}

int HeatMap::legendSpace() const
{
    return width() - legendRect().left() + 2 * kMargin;
}

QRect HeatMap::legendRect() const
{
    const QFontMetrics metrics = fontMetrics();
    const int textWidth = std::max({metrics.horizontalAdvance(formatValue(m_max, true)),
                                    metrics.horizontalAdvance(formatValue(m_min, true)),
                                    metrics.horizontalAdvance(tr("n/a"))});
    const int legendWidth = kLegendBar + kMargin + textWidth;
    const int legendHeight = std::min(height() - 2 * kMargin - metrics.height() - kTick, 180);
    return QRect(width() - kMargin - legendWidth, kMargin, legendWidth, std::max(legendHeight, 40));
}

QRect HeatMap::cellsRect() const
{
    const QFontMetrics metrics = fontMetrics();
    const int naturalRight = legendRect().left() - 2 * kMargin;
    int left = kMargin + std::min(m_widestLabel, width() / 4) + kMargin;
    int right = naturalRight;
    if (m_spanLeft >= 0 && m_spanRight > m_spanLeft) {
        // The aligned span, kept clear of the legend and of the widget's left edge.
        left = std::max(m_spanLeft, 2 * kMargin);
        right = std::min(m_spanRight, naturalRight);
    }
    const int bottom = height() - kMargin - metrics.height() - kTick;
    return QRect(QPoint(left, kMargin), QPoint(std::max(left, right) - 1, bottom - 1));
}

HeatMap::Cell HeatMap::cellAt(const QPoint &position) const
{
    const QRect cells = cellsRect();
    if (m_buckets == 0 || m_labels.isEmpty() || !cells.contains(position)) {
        return {};
    }
    // The last cell whose edge (see cellCenter) is at or before the offset.
    const auto index = [](int offset, int count, int length) {
        return static_cast<int>(((static_cast<qint64>(offset) + 1) * count - 1) / length);
    };
    const int bucket = index(position.x() - cells.left(), m_buckets, cells.width());
    const int row = index(position.y() - cells.top(), rowCount(), cells.height());
    return {std::clamp(row, 0, rowCount() - 1), std::clamp(bucket, 0, m_buckets - 1)};
}

} // namespace lutra::console
