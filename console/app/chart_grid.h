#pragma once
// A scrolling grid of TimeCharts keyed by name, created on first use and reused every frame
// (creating Qt Charts objects per frame would cost far more than drawing them).

#include <QHash>
#include <QWidget>

class QGridLayout;

namespace lutra::console {

class TimeChart;

class ChartGrid : public QWidget {
    Q_OBJECT
public:
    explicit ChartGrid(int columns, QWidget *parent = nullptr);

    // The chart named `key`, created with this title and y-axis title when new.
    TimeChart *chart(const QString &key, const QString &title, const QString &yTitle);
    // Removes every chart whose key is not in `keep`.
    void retain(const QStringList &keep);
    QList<TimeChart *> charts() const;

private:
    void relayout();

    int m_columns;
    QGridLayout *m_grid;
    QStringList m_order;
    QHash<QString, TimeChart *> m_charts;
};

} // namespace lutra::console
