#pragma once
// Operations: every fan-out (dry run, set, clear, apply, flush) as operation → node → instance
// with its progress, outcome and errors. For the selected operation: Cancel (while it runs),
// "Copy as lutractl" (the command line that does the same) and "Export JSON…" (its result in
// lutractl's --json shape).

#include <QDockWidget>

class QPushButton;
class QTreeView;

namespace lutra::console {

class ClusterController;

class OperationsDock : public QDockWidget {
    Q_OBJECT
public:
    explicit OperationsDock(ClusterController &cluster, QWidget *parent = nullptr);

    QTreeView *tree() const { return m_tree; }
    int selectedOperation() const;
    void cancelSelected();
    // Puts the selected operation's lutractl command line on the clipboard and returns it.
    QString copySelectedAsLutractl();
    // Asks where (unless `path` is given) and writes the selected operation's result as JSON.
    bool exportSelected(QString path = {});

private:
    void updateButtons();

    ClusterController &m_cluster;
    QTreeView *m_tree;
    QPushButton *m_cancel;
    QPushButton *m_copy;
    QPushButton *m_export;
};

} // namespace lutra::console
