#include "app/cluster_view.h"

#include "app/cluster_controller.h"
#include "models/cluster_filter_model.h"

#include <QDateTime>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QTableView>
#include <QVBoxLayout>

namespace lutra::console {

ClusterView::ClusterView(ClusterController &cluster, QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_filter(new ClusterFilterModel(this)),
      m_filterEdit(new QLineEdit(this)), m_table(new QTableView(this)), m_summary(new QLabel(this))
{
    m_filter->setSourceModel(&m_cluster.clusterModel());
    m_filterEdit->setObjectName("cluster.filter");
    m_filterEdit->setPlaceholderText(
        tr("Filter: role=compute, rack, or any text of a node's name or labels"));
    m_filterEdit->setClearButtonEnabled(true);
    connect(m_filterEdit, &QLineEdit::textChanged, m_filter, &ClusterFilterModel::setLabelFilter);

    m_table->setObjectName("cluster.table");
    m_table->setModel(m_filter);
    m_table->setSortingEnabled(true);
    m_table->sortByColumn(ClusterModel::Node, Qt::AscendingOrder);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::ExtendedSelection);
    m_table->verticalHeader()->hide();
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->setAlternatingRowColors(true);
    m_table->setWordWrap(false);
    connect(m_table, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        emit nodeActivated(index.data(ClusterModel::AddressRole).toString());
    });
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ClusterView::selectionChanged);

    m_summary->setObjectName("cluster.summary");
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_filterEdit);
    layout->addWidget(m_table, 1);
    layout->addWidget(m_summary);
}

QStringList ClusterView::selectedAddresses() const
{
    QStringList addresses;
    const auto rows = m_table->selectionModel()->selectedRows();
    QList<int> order;
    for (const auto &row : rows) {
        order << row.row();
    }
    std::sort(order.begin(), order.end());
    for (const int row : order) {
        addresses << m_filter->index(row, 0).data(ClusterModel::AddressRole).toString();
    }
    return addresses;
}

void ClusterView::selectAddresses(const QStringList &addresses)
{
    QItemSelection selection;
    for (int row = 0; row < m_filter->rowCount(); ++row) {
        const auto index = m_filter->index(row, 0);
        if (addresses.contains(index.data(ClusterModel::AddressRole).toString())) {
            selection.select(index, m_filter->index(row, m_filter->columnCount() - 1));
        }
    }
    m_table->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
}

void ClusterView::refresh()
{
    m_cluster.clusterModel().setNowMs(QDateTime::currentMSecsSinceEpoch());
    int ready = 0;
    int unreachable = 0;
    int withLive = 0; // nodes whose hit ratio, locks and cache columns have values
    const auto addresses = m_cluster.addresses();
    const auto *fleet = m_cluster.fleet();
    for (const auto &address : addresses) {
        const auto *connection = m_cluster.connection(address);
        ready += connection->state() == ConnectionState::ready;
        unreachable += connection->state() == ConnectionState::unreachable;
        withLive += m_cluster.latestCounters(address) != nullptr ||
                    (fleet != nullptr && fleet->facts().contains(address));
    }
    m_summary->setText(tr("%1 nodes: %2 ready, %3 unreachable, %4 connecting · %5 shown")
                           .arg(addresses.size())
                           .arg(ready)
                           .arg(unreachable)
                           .arg(addresses.size() - ready - unreachable)
                           .arg(m_filter->rowCount()));
    // Fitting columns measures every cell: only when rows, states or the nodes with values
    // change, not every frame.
    const qint64 shape = (qint64(m_filter->rowCount()) << 48) | (qint64(ready) << 32) |
                         (qint64(unreachable) << 16) | qint64(withLive);
    if (m_fittedShape != shape) {
        m_fittedShape = shape;
        m_table->resizeColumnsToContents();
    }
}

} // namespace lutra::console
