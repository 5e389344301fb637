#include "app/operations_dock.h"

#include "app/cluster_controller.h"
#include "app/fan_out_operation.h"
#include "app/view_setup.h"

#include <QApplication>
#include <QClipboard>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QMessageBox>
#include <QPushButton>
#include <QTreeView>
#include <QVBoxLayout>

namespace lutra::console {

OperationsDock::OperationsDock(ClusterController &cluster, QWidget *parent)
    : QDockWidget(tr("Operations"), parent), m_cluster(cluster), m_tree(new QTreeView),
      m_cancel(new QPushButton(tr("Cancel"))), m_copy(new QPushButton(tr("Copy as lutractl"))),
      m_export(new QPushButton(tr("Export JSON…")))
{
    setObjectName("operations");
    m_tree->setObjectName("operations.tree");
    m_tree->setModel(&m_cluster.operationsModel());
    setupResultTree(m_tree);
    m_cancel->setObjectName("operations.cancel");
    m_cancel->setToolTip(tr("Stop contacting further nodes and cancel the calls in flight; "
                            "nodes that already answered keep their outcome"));
    m_copy->setObjectName("operations.copy");
    m_copy->setToolTip(tr("Copy the lutractl command line that does the same"));
    m_export->setObjectName("operations.export");
    m_export->setToolTip(tr("Save the result as lutractl --json prints it"));
    auto *body = new QWidget;
    auto *layout = new QVBoxLayout(body);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addWidget(m_tree);
    auto *buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_copy);
    buttons->addWidget(m_export);
    buttons->addWidget(m_cancel);
    layout->addLayout(buttons);
    setWidget(body);

    auto &model = m_cluster.operationsModel();
    // The newest operation is expanded and current, so its nodes are visible as they answer.
    connect(&model, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex &insertedUnder, int, int last) {
                if (!insertedUnder.isValid()) {
                    const auto index = m_tree->model()->index(last, 0);
                    m_tree->expand(index);
                    m_tree->setCurrentIndex(index);
                    m_tree->scrollTo(index);
                }
                updateButtons();
            });
    connect(&model, &QAbstractItemModel::dataChanged, this, &OperationsDock::updateButtons);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &OperationsDock::updateButtons);
    connect(m_cancel, &QPushButton::clicked, this, &OperationsDock::cancelSelected);
    connect(m_copy, &QPushButton::clicked, this, &OperationsDock::copySelectedAsLutractl);
    connect(m_export, &QPushButton::clicked, this, [this] { exportSelected(); });
    updateButtons();
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
    updateButtons();
}

QString OperationsDock::copySelectedAsLutractl()
{
    const auto *record = m_cluster.operationRecord(selectedOperation());
    if (record == nullptr) {
        return {};
    }
    QApplication::clipboard()->setText(record->script);
    return record->script;
}

bool OperationsDock::exportSelected(QString path)
{
    const int id = selectedOperation();
    if (m_cluster.operationRecord(id) == nullptr) {
        return false;
    }
    if (path.isEmpty()) {
        path = QFileDialog::getSaveFileName(this, tr("Export the result as JSON"),
                                            QStringLiteral("lutra-operation-%1.json").arg(id),
                                            tr("JSON (*.json)"));
        if (path.isEmpty()) {
            return false;
        }
    }
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) ||
        file.write(m_cluster.operationJson(id)) < 0) {
        QMessageBox::warning(this, tr("Export failed"),
                             tr("Cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

void OperationsDock::updateButtons()
{
    const int id = selectedOperation();
    auto *operation = m_cluster.operation(id);
    m_cancel->setEnabled(operation != nullptr && !operation->isFinished());
    const auto *record = m_cluster.operationRecord(id);
    m_copy->setEnabled(record != nullptr);
    m_export->setEnabled(record != nullptr && (operation == nullptr || operation->isFinished()));
    if (record != nullptr) {
        m_copy->setToolTip(record->script);
    }
}

} // namespace lutra::console
