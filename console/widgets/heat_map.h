#pragma once
// Nodes × time buckets as coloured cells: the readahead hit ratio of a whole cluster in one
// picture. Painted from a QImage with one pixel per cell, scaled without smoothing, so the cost
// does not depend on the widget's size.

#include <QColor>
#include <QImage>
#include <QList>
#include <QPoint>
#include <QRect>
#include <QString>
#include <QStringList>
#include <QWidget>

namespace lutra::console {

class HeatMap : public QWidget {
    Q_OBJECT

public:
    explicit HeatMap(QWidget *parent = nullptr);

    // values[row][bucket]; NaN = no data. The buckets split [fromMs, toMs) evenly.
    void setData(const QStringList &rowLabels, const QList<QList<double>> &values, qint64 fromMs,
                 qint64 toMs);
    // The values mapped onto the colour scale's ends (default 0..1, a hit ratio).
    void setRange(double min, double max);
    // Values shown as percent of 1 (default) or as plain numbers.
    void setPercent(bool percent);

    // Red (low) through amber to green (high): for a hit ratio, high is good.
    static QColor colorFor(double fraction);
    static QColor noDataColor();

    QColor colorAt(int row, int bucket) const;
    QString cellText(int row, int bucket) const; // "node007 · 14:32 · 93.1 %"
    int rowCount() const { return static_cast<int>(m_labels.size()); }
    int bucketCount() const { return m_buckets; }
    QPoint cellCenter(int row, int bucket) const; // widget coordinates
    qint64 bucketStart(int bucket) const;

    // Where the cells go across (widget x of the first and one past the last column), so a chart
    // above can put its plot area there and the two time axes line up; the row labels are elided
    // into what is left of `left`. An empty span (the default) lays the cells out alone.
    void setCellsSpan(int left, int right);
    // Width right of the cells that the colour scale needs: what a chart aligned with the cells
    // leaves free at its right.
    int legendSpace() const;
    // Where the cells, the row labels, the time axis and the legend go at the current size.
    QRect cellsRect() const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

Q_SIGNALS:
    void rowActivated(const QString &label);

protected:
    bool event(QEvent *event) override;
    void paintEvent(QPaintEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;

private:
    struct Cell {
        int row = -1;
        int bucket = -1;
    };

    double valueAt(int row, int bucket) const;
    QString formatValue(double value, bool brief = false) const;
    void rebuildImage();
    void measureLabels();
    QRect legendRect() const;
    int labelWidth() const;
    Cell cellAt(const QPoint &position) const;

    QStringList m_labels;
    int m_widestLabel = 0; // measured when the labels or the font change, not per paint
    int m_spanLeft = -1;   // setCellsSpan; -1: laid out alone
    int m_spanRight = -1;
    QList<QList<double>> m_values;
    int m_buckets = 0;
    qint64 m_from = 0;
    qint64 m_to = 0;
    double m_min = 0;
    double m_max = 1;
    bool m_percent = true;
    QImage m_image;
};

} // namespace lutra::console
