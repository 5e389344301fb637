#include "app/operations_dock.h"

#include "app/cluster_controller.h"
#include "app/fan_out_operation.h"
#include "app/view_setup.h"

#include <QHeaderView>
#include <QPushButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace lutra::console {

OperationsDock::OperationsDock(ClusterController &cluster, QWidget *parent)
    : QDockWidget(tr("Operations"), parent), m_cluster(cluster), m_tree(new QTreeView),
      m_cancel(new QPushButton(tr("Cancel")))
{
    setObjectName("operations");
    m_tree->setObjectName("operations.tree");
    m_tree->setModel(&m_cluster.operationsModel());
    setupResultTree(m_tree);
    m_cancel->setObjectName("operations.cancel");
    m_cancel->setToolTip(tr("Stop contacting further nodes and cancel the calls in flight; "
                            "nodes that already answered keep their outcome"));
    auto *body = new QWidget;
    auto *layout = new QVBoxLayout(body);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_tree);
    layout->addWidget(m_cancel, 0, Qt::AlignRight);
    setWidget(body);

    auto &model = m_cluster.operationsModel();
    // The newest operation is expanded and current, so its nodes are visible as they answer.
    connect(&model, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex &parent, int, int last) {
                if (!parent.isValid()) {
                    const auto index = m_tree->model()->index(last, 0);
                    m_tree->expand(index);
                    m_tree->setCurrentIndex(index);
                    m_tree->scrollTo(index);
                }
                updateCancel();
            });
    connect(&model, &QAbstractItemModel::dataChanged, this, &OperationsDock::updateCancel);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &OperationsDock::updateCancel);
    connect(m_cancel, &QPushButton::clicked, this, &OperationsDock::cancelSelected);
    updateCancel();
}

int OperationsDock::selectedOperation() const
{
    const auto index = m_tree->currentIndex();
    return index.isValid() ? index.data(OperationsModel::OperationIdRole).toInt() : -1;
}

void OperationsDock::cancelSelected()
{
    if (auto *operation = m_cluster.operation(selectedOperation())) {
        operation->cancel();
    }
    updateCancel();
}

void OperationsDock::updateCancel()
{
    auto *operation = m_cluster.operation(selectedOperation());
    m_cancel->setEnabled(operation != nullptr && !operation->isFinished());
}

} // namespace lutra::console
