#include "app/chart_grid.h"

#include "widgets/time_chart.h"

#include <QGridLayout>

namespace lutra::console {

ChartGrid::ChartGrid(int columns, QWidget *parent)
    : QWidget(parent), m_columns(columns), m_grid(new QGridLayout(this))
{
    m_grid->setContentsMargins(0, 0, 0, 0);
}

TimeChart *ChartGrid::chart(const QString &key, const QString &title, const QString &yTitle)
{
    if (auto *existing = m_charts.value(key)) {
        return existing;
    }
    auto *chart = new TimeChart(title, yTitle, this);
    chart->setObjectName("chart:" + key);
    chart->setMinimumHeight(260);
    m_charts.insert(key, chart);
    m_order << key;
    relayout();
    return chart;
}

void ChartGrid::retain(const QStringList &keep)
{
    bool changed = false;
    for (const auto &key : QStringList(m_order)) {
        if (!keep.contains(key)) {
            delete m_charts.take(key);
            m_order.removeAll(key);
            changed = true;
        }
    }
    if (changed) {
        relayout();
    }
}

QList<TimeChart *> ChartGrid::charts() const
{
    QList<TimeChart *> charts;
    for (const auto &key : m_order) {
        charts << m_charts.value(key);
    }
    return charts;
}

void ChartGrid::relayout()
{
    for (int i = 0; i < m_order.size(); ++i) {
        m_grid->addWidget(m_charts.value(m_order.at(i)), i / m_columns, i % m_columns);
    }
}

} // namespace lutra::console
