#pragma once
// Audit: every change on the selected nodes (ListHistory), merged by time, newest first, paged
// as the admin scrolls. Filters by principal, action, parameter and instance glob and a time
// range; "Copy as lutractl" gives the same listing from a shell. "Roll back to here…" on a point
// shows what a rollback would restore (a dry run), asks, then restores that node's values to those
// right after the point; the rollback is itself a new point at the top.

#include "core/types.h"

#include <QHash>
#include <QWidget>

#include <functional>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTreeView;

namespace lutra::console {

class ClusterController;
class FanOutOperation;
class HistoryModel;
class PlanModel;
template <typename T> struct Reply;

class AuditView : public QWidget {
    Q_OBJECT
public:
    // Asks the admin; returns true to go on. Replaced by tests.
    using Confirm = std::function<bool(const QString &title, const QString &text)>;
    // Points asked of each node at a time.
    static constexpr int kPageSize = 50;

    // `selectedNodes`: the addresses chosen in the Cluster view (empty: every node).
    AuditView(ClusterController &cluster, std::function<QStringList()> selectedNodes,
              QWidget *parent = nullptr);

    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    HistoryModel *history() const { return m_history; }
    PlanModel *rollbackPlan() const { return m_plan; }
    QTreeView *tree() const { return m_tree; }

    // Called once a second while visible: lists again when the nodes to list changed (first
    // show, another selection, a node's name learnt), and keeps the controls current.
    void refresh();
    // A new listing with the filter's fields on the selected nodes (none selected: every node).
    void applyFilter();
    // The filter as its fields say now.
    HistoryQuery query() const;
    // `lutractl ... history --limit 50 ...` for the current filter (no time range: lutractl has
    // none).
    QString lutractlCommand() const;
    // Puts lutractlCommand() on the clipboard and returns it.
    QString copyAsLutractl();
    // Makes the loaded point `id` of `node` (its name) current; false when it is not loaded.
    bool selectPoint(const QString &node, quint64 id);
    // Dry run of a rollback to the current point, confirmation, rollback, a new listing.
    void rollbackToSelected();

signals:
    // A rollback ended: applied, or why not (nothing to do, refused, cancelled, failed).
    void rollbackFinished(bool applied);

private:
    QStringList targets() const;
    QStringList targetNames() const;
    void onRollbackDryRun(const QString &node, const QString &address, quint64 id,
                          const Reply<RollbackOutcome> &reply);
    void runRollback(const QString &node, const QString &address, quint64 id, int changes);
    void onCurrentChanged();
    void updateControls();
    void updateCopyTip();
    void updateNodesNote();
    void setStatus(const QString &text, bool error);

    ClusterController &m_cluster;
    std::function<QStringList()> m_selectedNodes;
    Confirm m_confirm;
    HistoryModel *m_history;
    PlanModel *m_plan;
    QLineEdit *m_principal;
    QComboBox *m_action;
    QLineEdit *m_param;
    QLineEdit *m_instance;
    QCheckBox *m_sinceAny;
    QDateTimeEdit *m_since;
    QCheckBox *m_untilAny;
    QDateTimeEdit *m_until;
    QPushButton *m_apply;
    QPushButton *m_copy;
    QLabel *m_nodesNote;
    QLabel *m_errors;
    QTreeView *m_tree;
    QLabel *m_detail;
    QPushButton *m_rollback;
    QLabel *m_status;
    QLabel *m_planTitle;
    QTableView *m_planView;
    QHash<QString, QString> m_addressOf; // node name → address, of the current listing
    QStringList m_listedNames;           // the nodes of the current listing
    bool m_listed = false;
    bool m_busy = false;
    quint64 m_newPoint = 0; // the point recording the last rollback
};

} // namespace lutra::console
