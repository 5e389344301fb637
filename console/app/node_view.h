#pragma once
// Node: its datapath instances (id, kind, pid, version, connected, since, restarts) and, per
// instance, the live counter blocks with their rates.

#include "core/rates.h"

#include <QWidget>

class QTableView;
class QTreeView;
class QLabel;

namespace lutra::console {

class ClusterController;
class CounterBlocksModel;
class InstancesModel;
class NodePicker;

class NodeView : public QWidget {
    Q_OBJECT
public:
    explicit NodeView(ClusterController &cluster, QWidget *parent = nullptr);

    NodePicker *picker() const { return m_picker; }
    void showNode(const QString &address);
    void refresh();

private:
    void reloadNode();
    void updateHeader();

    ClusterController &m_cluster;
    NodePicker *m_picker;
    QLabel *m_header;
    InstancesModel *m_instancesModel;
    CounterBlocksModel *m_countersModel;
    QTableView *m_instances;
    QTreeView *m_counters;
    RateTracker m_rates;
    qint64 m_lastUpdateNs = 0;
};

} // namespace lutra::console
