#pragma once
// Operations: every fan-out (dry run, set, clear) as operation → node → instance with its
// progress, outcome and errors; Cancel stops the selected running operation.

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
    void cancelSelected();

private:
    int selectedOperation() const;
    void updateCancel();

    ClusterController &m_cluster;
    QTreeView *m_tree;
    QPushButton *m_cancel;
};

} // namespace lutra::console
