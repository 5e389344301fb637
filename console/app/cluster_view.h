#pragma once
// Cluster: one row per node — connection state and last error, version, uptime, who you are on
// it, labels, instances and restarts, last profile, readahead hit ratio, locks, cache use.
// Sortable, filterable by label; the selection is what cluster-wide actions act on.

#include <QWidget>

class QLineEdit;
class QTableView;
class QLabel;

namespace lutra::console {

class ClusterController;
class ClusterFilterModel;

class ClusterView : public QWidget {
    Q_OBJECT
public:
    explicit ClusterView(ClusterController &cluster, QWidget *parent = nullptr);

    // Addresses of the selected rows, in table order; empty when nothing is selected.
    QStringList selectedAddresses() const;
    // Selects exactly these nodes' rows (what cluster-wide actions then act on).
    void selectAddresses(const QStringList &addresses);
    QTableView *table() const { return m_table; }
    void refresh();

signals:
    void nodeActivated(const QString &address);
    void selectionChanged();

private:
    ClusterController &m_cluster;
    ClusterFilterModel *m_filter;
    QLineEdit *m_filterEdit;
    QTableView *m_table;
    QLabel *m_summary;
    qint64 m_fittedShape = -1;
};

} // namespace lutra::console
