#pragma once
// Readahead: read_ahead_stats as rates and the hit ratio over time. For a node, charts per
// instance; for the cluster, the min/median/max band of the nodes' hit ratio, the worst nodes,
// and a node × time heat map. Charts start from the stored history (the last hour) and go on live.
// With a Prometheus in the cluster file, the cluster scope draws its 1-minute rates instead of
// the nodes' streams (only the node shown in node scope streams).

#include <QRectF>
#include <QWidget>

class QComboBox;
class QLabel;
class QListWidget;
class QStackedWidget;
class QTableView;

namespace lutra::console {

class ChartGrid;
class ClusterController;
class HeatMap;
class NodePicker;
class RankingModel;
class TimeChart;
class WindowPicker;

class ReadaheadView : public QWidget {
    Q_OBJECT
public:
    enum class Scope { node, cluster };

    explicit ReadaheadView(ClusterController &cluster, QWidget *parent = nullptr);

    void setScope(Scope scope);
    Scope scope() const;
    NodePicker *picker() const { return m_picker; }
    void setWindowMinutes(int minutes);
    qint64 windowMs() const;
    // Counter names (leaves of read_ahead_stats) drawn as rates in the node charts.
    QStringList chosenCounters() const;
    void refresh();

    ChartGrid *nodeCharts() const { return m_nodeCharts; }
    TimeChart *bandChart() const { return m_band; }
    HeatMap *heatMap() const { return m_heatMap; }
    RankingModel *ranking() const { return m_ranking; }
    QLabel *source() const { return m_source; } // where the cluster charts come from

    static constexpr int kWorstNodes = 10;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void refreshNode(qint64 fromMs, qint64 toMs);
    void refreshCluster(qint64 fromMs, qint64 toMs);
    void updateCounterChoices(const QStringList &names);
    // The heat map's cells under the band's plot area: their time axes line up.
    void alignTimeAxes();

    ClusterController &m_cluster;
    QComboBox *m_scope;
    WindowPicker *m_window;
    NodePicker *m_picker;
    QListWidget *m_counters;
    QStackedWidget *m_stack;
    ChartGrid *m_nodeCharts;
    TimeChart *m_band;
    HeatMap *m_heatMap;
    RankingModel *m_ranking;
    QTableView *m_worst;
    QLabel *m_source;
    QRectF m_plotAtMarginChange; // alignTimeAxes: the band's plot area when it last moved a margin
    static constexpr int kBandRightMargin = 12; // TimeChart's own, the least alignTimeAxes sets
};

} // namespace lutra::console
