#pragma once
// Tunables: the schema tree (from ListParams: type, unit, range, default, help) beside the node ×
// instance matrix of the chosen parameters, where values that differ between nodes stand out.
// Editing a parameter: an editor built from its spec → dry run on the target nodes → the
// per-instance old / requested / read-back / clamped / errors → apply. What is enabled follows
// the caller's role on the targets (a viewer sees why it cannot edit).

#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;
class QTableView;
class QTreeView;
class QVBoxLayout;

namespace lutra::console {

class ClusterController;
class FanOutOperation;
class ParamEditor;
class SetResultModel;
class ValueMatrixModel;
struct ParamSpec;

class TunablesView : public QWidget {
    Q_OBJECT
public:
    using TargetsProvider = std::function<QStringList()>; // empty: every node

    TunablesView(ClusterController &cluster, TargetsProvider targets, QWidget *parent = nullptr);

    QStringList targets() const;
    // Selects a parameter (or a subtree: "osc.ost0") in the schema tree.
    bool selectParameter(const QString &fullName);
    ParamEditor *editor() const { return m_editor; }
    ValueMatrixModel *matrix() const { return m_matrix; }
    SetResultModel *results() const { return m_results; }
    void dryRun();
    void apply();
    void refresh();
    // Reads the current values of the chosen parameters on every reachable node.
    void reloadValues();

signals:
    void dryRunFinished(bool ok);
    void applyFinished(bool ok);

private:
    void onSelection();
    void showEditor(const ParamSpec *spec);
    void updateControls();
    void runSet(bool dry);

    ClusterController &m_cluster;
    TargetsProvider m_targets;
    QTreeView *m_tree;
    QTableView *m_matrixView;
    ValueMatrixModel *m_matrix;
    QVBoxLayout *m_editorBox;
    QLabel *m_paramTitle;
    QLabel *m_paramHelp;
    ParamEditor *m_editor = nullptr;
    QLabel *m_targetsLabel;
    QLabel *m_roleNote;
    QPushButton *m_dryRun;
    QPushButton *m_apply;
    SetResultModel *m_results;
    QTableView *m_resultsView;
    QStringList m_matrixNames; // the parameters the matrix shows
    QString m_param;           // full name being edited
    QString m_dryRunText;      // the value the last successful dry run checked
    QStringList m_dryRunNodes; // ... on these nodes
    bool m_busy = false;
    bool m_editorSeeded = false;
};

} // namespace lutra::console
