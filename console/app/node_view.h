#pragma once
// Node: its datapath instances (id, kind, pid, version, connected, since, restarts) and, per
// instance, the live counter blocks with their rates. The blocks an admin reads first
// (read_ahead_stats, page_cache_stats) open expanded, the rest collapsed; what the user expands
// or collapses stays so across refreshes, restarts and other nodes.

#include "core/rates.h"

#include <QHash>
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
    // Expands or collapses a new row of the counter tree and its new children as the user last
    // chose for that instance or block, else as the default.
    void applyExpansion(const QModelIndex &index);
    void rememberExpansion(const QModelIndex &index, bool expanded);

    ClusterController &m_cluster;
    NodePicker *m_picker;
    QLabel *m_header;
    InstancesModel *m_instancesModel;
    CounterBlocksModel *m_countersModel;
    QTableView *m_instances;
    QTreeView *m_counters;
    RateTracker m_rates;
    qint64 m_lastUpdateNs = 0;
    QHash<QString, bool> m_expansion; // "instance:<id>" or "block:<name>" → expanded
    bool m_applyingExpansion = false;
};

} // namespace lutra::console
