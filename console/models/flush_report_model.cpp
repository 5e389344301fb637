#include "models/flush_report_model.h"

#include "models/format.h"

#include <QBrush>

namespace lutra::console {

namespace {

QString durationText(quint64 us)
{
    if (us < 1'000'000) {
        return QStringLiteral("%1 ms").arg(double(us) / 1e3, 0, 'f', 1);
    }
    return QStringLiteral("%1 s").arg(double(us) / 1e6, 0, 'f', 1);
}

bool isFailed(FlushState state)
{
    return state == FlushState::error || state == FlushState::unreachable;
}

} // namespace

FlushReportModel::FlushReportModel(QObject *parent) : TreeModel<FlushEntry>(parent) {}

void FlushReportModel::setNodes(const QStringList &nodes)
{
    QStringList unique = nodes;
    unique.removeDuplicates();
    syncChildren(&m_root, unique, [](Item &) {});
    // Nodes kept from an earlier report start over.
    for (const auto &item : m_root.children) {
        setNodeEntry(item.get(), FlushEntry{}, {}, {});
    }
}

void FlushReportModel::setNodeRunning(const QString &node)
{
    Item *item = nodeItem(node);
    FlushEntry entry;
    entry.state = FlushState::running;
    setNodeEntry(item, entry, {}, {});
}

void FlushReportModel::setNodeReport(const QString &node, const FlushOutcome &outcome)
{
    QList<InstanceFlushReport> reports = outcome.instances;
    std::sort(reports.begin(), reports.end(),
              [](const InstanceFlushReport &a, const InstanceFlushReport &b) {
                  return naturalLess(a.instance, b.instance);
              });
    FlushEntry total;
    total.reported = true;
    total.historyId = outcome.historyId;
    // The flush's own duration: instances flush in parallel, their durations do not add up.
    total.durationUs = outcome.durationUs;
    bool failed = !outcome.ok;
    QStringList ids;
    QList<FlushEntry> instances;
    for (const InstanceFlushReport &report : std::as_const(reports)) {
        if (ids.contains(report.instance)) {
            continue;
        }
        FlushEntry entry;
        entry.state = report.error.isEmpty() ? FlushState::ok : FlushState::error;
        entry.error = report.error;
        entry.locksCancelled = report.locksCancelled;
        entry.pagesDropped = report.pagesDropped;
        entry.bytesWrittenBack = report.bytesWrittenBack;
        entry.durationUs = report.durationUs;
        entry.reported = true;
        entry.problems = report.problems;
        total.locksCancelled += report.locksCancelled;
        total.pagesDropped += report.pagesDropped;
        total.bytesWrittenBack += report.bytesWrittenBack;
        total.problems += report.problems;
        failed = failed || !report.error.isEmpty();
        ids.append(report.instance);
        instances.append(entry);
    }
    total.state = failed ? FlushState::error : FlushState::ok;
    setNodeEntry(nodeItem(node), total, ids, instances);
}

void FlushReportModel::setNodeError(const QString &node, const QString &error, bool unreachable)
{
    FlushEntry entry;
    entry.state = unreachable ? FlushState::unreachable : FlushState::error;
    entry.error = error;
    setNodeEntry(nodeItem(node), entry, {}, {});
}

int FlushReportModel::okCount() const
{
    return countNodes(true);
}

int FlushReportModel::failedCount() const
{
    return countNodes(false);
}

FlushTotals FlushReportModel::totals() const
{
    FlushTotals totals;
    for (const auto &node : m_root.children) {
        totals.locks += node->payload.locksCancelled;
        totals.pages += node->payload.pagesDropped;
        totals.bytes += node->payload.bytesWrittenBack;
    }
    return totals;
}

int FlushReportModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant FlushReportModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const Item *item = itemAt(index);
    const FlushEntry &entry = item->payload;
    const bool isNode = item->parent == &m_root;
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: return text(item, column);
    case SortRole:
        switch (Column(column)) {
        case LocksCancelled: return entry.locksCancelled;
        case PagesDropped: return entry.pagesDropped;
        case WrittenBack: return entry.bytesWrittenBack;
        case Duration: return entry.durationUs;
        case Problems: return int(entry.problems.size());
        default: return text(item, column);
        }
    case NodeRole: return isNode ? item->key : item->parent->key;
    case StateRole: return int(entry.state);
    case Qt::ToolTipRole:
        switch (Column(column)) {
        case What:
            if (isNode && entry.historyId != 0) {
                return tr("history #%1").arg(entry.historyId);
            }
            return {};
        case Status:
            return entry.error.isEmpty() ? QVariant(text(item, column)) : QVariant(entry.error);
        case WrittenBack:
            return entry.reported
                       ? QVariant(tr("%1 bytes").arg(formatCount(entry.bytesWrittenBack)))
                       : QVariant();
        case Problems:
            return entry.problems.isEmpty() ? QVariant() : QVariant(entry.problems.join(u'\n'));
        default: return {};
        }
    case Qt::ForegroundRole:
        if (column == Status && isFailed(entry.state)) {
            return QBrush(errorColor());
        }
        if (column == Status && entry.state == FlushState::queued) {
            return QBrush(mutedColor());
        }
        return {};
    case Qt::BackgroundRole:
        return column == Problems && !entry.problems.isEmpty() ? QVariant(QBrush(warningColor()))
                                                               : QVariant();
    default: return {};
    }
}

QVariant FlushReportModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) {
        return {};
    }
    if (role == Qt::ToolTipRole && section == Problems) {
        return tr("Problems the flush met and worked around (retried write-backs)");
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case What: return tr("What");
    case Status: return tr("Status");
    case LocksCancelled: return tr("Locks cancelled");
    case PagesDropped: return tr("Pages dropped");
    case WrittenBack: return tr("Written back");
    case Duration: return tr("Duration");
    case Problems: return tr("Problems");
    case ColumnCount: break;
    }
    return {};
}

FlushReportModel::Item *FlushReportModel::nodeItem(const QString &node)
{
    if (Item *item = m_root.child(node)) {
        return item;
    }
    const int row = int(m_root.children.size());
    auto item = std::make_unique<Item>();
    item->parent = &m_root;
    item->key = node;
    Item *added = item.get();
    beginInsertRows({}, row, row);
    m_root.children.push_back(std::move(item));
    endInsertRows();
    return added;
}

void FlushReportModel::setNodeEntry(Item *item, const FlushEntry &entry,
                                    const QStringList &instanceIds,
                                    const QList<FlushEntry> &instances)
{
    syncChildren(item, instanceIds,
                 [&](Item &child) { child.payload = instances[instanceIds.indexOf(child.key)]; });
    for (int i = 0; i < instanceIds.size(); ++i) {
        Item *child = item->children[size_t(i)].get();
        if (!(child->payload == instances[i])) {
            child->payload = instances[i];
            emitChanged(child, child, 0, ColumnCount - 1);
        }
    }
    if (!(item->payload == entry)) {
        item->payload = entry;
        emitChanged(item, item, 0, ColumnCount - 1);
    }
}

QString FlushReportModel::text(const Item *item, int column) const
{
    const FlushEntry &entry = item->payload;
    switch (Column(column)) {
    case What: return item->key;
    case Status:
        switch (entry.state) {
        case FlushState::queued: return tr("queued");
        case FlushState::running: return tr("flushing…");
        case FlushState::ok: return tr("ok");
        case FlushState::error:
            return entry.error.isEmpty() ? tr("error") : tr("error: %1").arg(entry.error);
        case FlushState::unreachable: return tr("unreachable");
        }
        return {};
    case LocksCancelled: return entry.reported ? formatCount(entry.locksCancelled) : QString();
    case PagesDropped: return entry.reported ? formatCount(entry.pagesDropped) : QString();
    case WrittenBack: return entry.reported ? formatBytes(entry.bytesWrittenBack) : QString();
    case Duration: return entry.reported ? durationText(entry.durationUs) : QString();
    case Problems: return entry.problems.join(QStringLiteral("; "));
    case ColumnCount: break;
    }
    return {};
}

int FlushReportModel::countNodes(bool ok) const
{
    return int(
        std::count_if(m_root.children.cbegin(), m_root.children.cend(), [ok](const auto &node) {
            return ok ? node->payload.state == FlushState::ok : isFailed(node->payload.state);
        }));
}

} // namespace lutra::console
