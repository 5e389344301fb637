#include "app/node_view.h"

#include "app/cluster_controller.h"
#include "app/node_picker.h"
#include "app/view_setup.h"
#include "models/counter_blocks_model.h"
#include "models/instances_model.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace lutra::console {

namespace {

// The key of an instance or block row; empty for a counter row.
QString expansionKey(const QModelIndex &index)
{
    if (!index.data(CounterBlocksModel::CounterRole).toString().isEmpty()) {
        return {};
    }
    const QString block = index.data(CounterBlocksModel::BlockRole).toString();
    return block.isEmpty() ? QStringLiteral("instance:") +
                                 index.data(CounterBlocksModel::InstanceRole).toString()
                           : QStringLiteral("block:") + block;
}

// What an admin looks at first: the readahead and page cache counters (the hit ratio, cached
// pages against max_cached_mb). Lock namespaces and RPC histograms have views or many rows.
bool expandedByDefault(const QModelIndex &index)
{
    const QString block = index.data(CounterBlocksModel::BlockRole).toString();
    return block.isEmpty() || block.endsWith(QStringLiteral(".read_ahead_stats")) ||
           block.endsWith(QStringLiteral(".page_cache_stats"));
}

} // namespace

NodeView::NodeView(ClusterController &cluster, QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_picker(new NodePicker(cluster, this)),
      m_header(new QLabel(this)), m_instancesModel(new InstancesModel(this)),
      m_countersModel(new CounterBlocksModel(this)), m_instances(new QTableView(this)),
      m_counters(new QTreeView(this))
{
    m_picker->setObjectName("node.picker");
    m_header->setObjectName("node.header");
    m_header->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_instances->setObjectName("node.instances");
    m_instances->setModel(m_instancesModel);
    setupResultTable(m_instances);
    m_counters->setObjectName("node.counters");
    m_counters->setModel(m_countersModel);
    m_counters->setUniformRowHeights(true);
    m_counters->setAlternatingRowColors(true);
    connect(m_countersModel, &QAbstractItemModel::rowsInserted, this,
            [this](const QModelIndex &insertedUnder, int first, int last) {
                for (int row = first; row <= last; ++row) {
                    applyExpansion(m_countersModel->index(row, 0, insertedUnder));
                }
            });
    connect(m_counters, &QTreeView::expanded, this,
            [this](const QModelIndex &index) { rememberExpansion(index, true); });
    connect(m_counters, &QTreeView::collapsed, this,
            [this](const QModelIndex &index) { rememberExpansion(index, false); });

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Node:"), this));
    top->addWidget(m_picker);
    top->addWidget(m_header, 1);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(m_instances);
    split->addWidget(m_counters);
    split->setStretchFactor(1, 3);
    split->setSizes({160, 600});
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    connect(m_picker, &NodePicker::addressChanged, this, &NodeView::reloadNode);
    connect(&m_cluster, &ClusterController::nodeInstancesChanged, this,
            [this](const QString &address) {
                if (address == m_picker->currentAddress()) {
                    m_instancesModel->setInstances(m_cluster.connection(address)->instances());
                }
            });
    connect(&m_cluster, &ClusterController::nodeStateChanged, this, [this](const QString &address) {
        if (address == m_picker->currentAddress()) {
            updateHeader();
        }
    });
    reloadNode();
}

void NodeView::showNode(const QString &address)
{
    m_picker->setCurrentAddress(address);
}

void NodeView::reloadNode()
{
    m_rates.clear();
    m_lastUpdateNs = 0;
    m_countersModel->clear();
    const auto *connection = m_cluster.connection(m_picker->currentAddress());
    m_instancesModel->setInstances(connection ? connection->instances() : QList<InstanceInfo>{});
    updateHeader();
    refresh();
}

void NodeView::updateHeader()
{
    const auto *connection = m_cluster.connection(m_picker->currentAddress());
    if (connection == nullptr) {
        m_header->setText(tr("no node"));
        return;
    }
    const auto &info = connection->info();
    QString text = QStringLiteral("<b>%1</b> · %2 · ctld %3 · you: %4 (%5)")
                       .arg(info.node.isEmpty() ? connection->address() : info.node,
                            connectionStateName(connection->state()), info.version, info.principal,
                            roleName(info.role));
    if (connection->state() == ConnectionState::unreachable) {
        text += QStringLiteral(" · <span style='color:#b00020'>%1</span>")
                    .arg(connection->lastError().toHtmlEscaped());
    }
    m_header->setText(text);
}

void NodeView::refresh()
{
    const QString address = m_picker->currentAddress();
    m_instancesModel->setNowMs(QDateTime::currentMSecsSinceEpoch());
    const auto *latest = m_cluster.latestCounters(address);
    if (latest == nullptr || latest->timeNs == m_lastUpdateNs) {
        return;
    }
    m_lastUpdateNs = latest->timeNs;
    const bool first = m_countersModel->rowCount() == 0;
    m_countersModel->setCounters(*latest);
    m_countersModel->setRates(m_rates.add(*latest));
    if (first) {
        m_counters->resizeColumnToContents(0);
    }
}

void NodeView::applyExpansion(const QModelIndex &index)
{
    const QString key = expansionKey(index);
    if (key.isEmpty()) {
        return;
    }
    const bool expanded = m_expansion.value(key, expandedByDefault(index));
    m_applyingExpansion = true;
    m_counters->setExpanded(index, expanded);
    m_applyingExpansion = false;
    // An instance arrives with its blocks: they get their own state.
    for (int row = 0; row < m_countersModel->rowCount(index); ++row) {
        applyExpansion(m_countersModel->index(row, 0, index));
    }
}

void NodeView::rememberExpansion(const QModelIndex &index, bool expanded)
{
    const QString key = expansionKey(index);
    if (!m_applyingExpansion && !key.isEmpty()) {
        m_expansion.insert(key, expanded);
    }
}

} // namespace lutra::console
