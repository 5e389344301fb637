#pragma once
// Lock LRU: per namespace lock_count, lock_unused_count and lru_size over time (lru_size 0 is
// dynamic: no fixed line). "Clear unused locks" on the selected nodes runs lru_size=clear as a
// dry run first, says what will happen, asks, then applies and shows per-node, per-instance
// results; each clear becomes a marker on the charts so the drop is visible.

#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;
class QTableView;

namespace lutra::console {

class ChartGrid;
class ClusterController;
class NodePicker;
class SetResultModel;
class FanOutOperation;
class WindowPicker;

class LockLruView : public QWidget {
    Q_OBJECT
public:
    // Which nodes a clear acts on (the Cluster view's selection); empty: the node shown here.
    using TargetsProvider = std::function<QStringList()>;
    // Asks the admin; returns true to go on. Replaced by tests.
    using Confirm = std::function<bool(const QString &title, const QString &text)>;

    LockLruView(ClusterController &cluster, TargetsProvider targets, QWidget *parent = nullptr);

    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    NodePicker *picker() const { return m_picker; }
    WindowPicker *windowPicker() const { return m_window; }
    ChartGrid *charts() const { return m_charts; }
    SetResultModel *results() const { return m_results; }
    QStringList targets() const;
    void refresh();

    // Starts the dry run of a clear on targets(); the apply follows the confirmation.
    void clearUnusedLocks();

signals:
    void clearFinished(bool applied);

private:
    void onDryRunDone(const QStringList &targets, FanOutOperation *dryRun);

    ClusterController &m_cluster;
    TargetsProvider m_targets;
    Confirm m_confirm;
    NodePicker *m_picker;
    WindowPicker *m_window;
    QLabel *m_targetsLabel;
    QPushButton *m_clear;
    ChartGrid *m_charts;
    SetResultModel *m_results;
    QTableView *m_resultsView;
};

} // namespace lutra::console
