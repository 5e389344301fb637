#include "models/cluster_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QBrush>

#include <cmath>

namespace lutra::console {

namespace {

bool sameLive(const NodeLive &a, const NodeLive &b)
{
    const bool ratioSame =
        (std::isnan(a.hitRatio) && std::isnan(b.hitRatio)) || a.hitRatio == b.hitRatio;
    return ratioSame && a.lockCount == b.lockCount && a.lockUnused == b.lockUnused &&
           a.lruSize == b.lruSize && a.cachedMb == b.cachedMb && a.maxCachedMb == b.maxCachedMb;
}

bool sameInfo(const NodeInfo &a, const NodeInfo &b)
{
    return a.node == b.node && a.labels == b.labels && a.version == b.version &&
           a.startTimeNs == b.startTimeNs && a.principal == b.principal && a.role == b.role &&
           a.instanceCount == b.instanceCount && a.lastProfile == b.lastProfile;
}

QString labelsText(const QMap<QString, QString> &labels, const QString &separator)
{
    QStringList parts;
    for (auto it = labels.cbegin(); it != labels.cend(); ++it) {
        parts.append(it.key() + u'=' + it.value());
    }
    return parts.join(separator);
}

QString numberOrUnknown(qint64 value)
{
    return value < 0 ? unknownText() : QString::number(value);
}

bool locksExhausted(const NodeLive &live)
{
    return live.lruSize > 0 && live.lockUnused >= live.lruSize;
}

} // namespace

ClusterModel::ClusterModel(QObject *parent) : QAbstractTableModel(parent) {}

void ClusterModel::setNodes(const QStringList &addresses)
{
    QStringList wanted = addresses;
    wanted.removeDuplicates();
    QStringList current;
    current.reserve(m_rows.size());
    for (const Row &row : std::as_const(m_rows)) {
        current.append(row.address);
    }
    syncRows(
        current, wanted,
        [this](int first, int last) {
            beginRemoveRows({}, first, last);
            m_rows.remove(first, last - first + 1);
            endRemoveRows();
        },
        [this](int from, int to) {
            beginMoveRows({}, from, from, {}, to);
            m_rows.move(from, to);
            endMoveRows();
        },
        [this, &wanted](int first, int last) {
            beginInsertRows({}, first, last);
            for (int i = first; i <= last; ++i) {
                Row row;
                row.address = wanted[i];
                m_rows.insert(i, row);
            }
            endInsertRows();
        });
}

void ClusterModel::setState(const QString &address, ConnectionState state, const QString &error)
{
    const int row = rowOf(address);
    if (row < 0) {
        return;
    }
    Row &node = m_rows[row];
    // A node that is reachable again has no current error to show.
    const QString newError = state == ConnectionState::unreachable ? error : QString();
    if (node.state == state && node.error == newError) {
        return;
    }
    node.state = state;
    node.error = newError;
    rowChanged(row, 0, ColumnCount - 1);
}

void ClusterModel::setInfo(const QString &address, const NodeInfo &info)
{
    const int row = rowOf(address);
    if (row < 0) {
        return;
    }
    // Periodic refreshes repeat what is known: only a change is signalled.
    if (m_rows[row].hasInfo && sameInfo(m_rows[row].info, info)) {
        return;
    }
    m_rows[row].hasInfo = true;
    m_rows[row].info = info;
    rowChanged(row, 0, ColumnCount - 1);
}

void ClusterModel::setInstances(const QString &address, const QList<InstanceInfo> &instances)
{
    const int row = rowOf(address);
    if (row < 0) {
        return;
    }
    Row &node = m_rows[row];
    const int countBefore = instanceCount(node);
    const int restartsBefore = restarts(node);
    node.hasInstances = true;
    node.instances = instances;
    // Only the count and the restarts show here.
    if (instanceCount(node) != countBefore || restarts(node) != restartsBefore) {
        rowChanged(row, Instances, Restarts);
    }
}

void ClusterModel::setLive(const QString &address, const NodeLive &live)
{
    const int row = rowOf(address);
    if (row < 0 || sameLive(m_rows[row].live, live)) {
        return;
    }
    m_rows[row].live = live;
    rowChanged(row, HitRatio, Cache);
}

void ClusterModel::setDrift(const QString &address, int drift, const QString &profile)
{
    const int row = rowOf(address);
    if (row < 0 || (m_rows[row].drift == drift && m_rows[row].driftProfile == profile)) {
        return;
    }
    m_rows[row].drift = drift;
    m_rows[row].driftProfile = profile;
    rowChanged(row, Drift, Drift);
}

void ClusterModel::setNowMs(qint64 nowMs)
{
    if (nowMs == m_nowMs) {
        return;
    }
    m_nowMs = nowMs;
    if (!m_rows.isEmpty()) {
        emit dataChanged(index(0, Uptime), index(int(m_rows.size()) - 1, Uptime),
                         {Qt::DisplayRole, Qt::ToolTipRole, SortRole});
    }
}

QString ClusterModel::addressAt(int row) const
{
    return row >= 0 && row < m_rows.size() ? m_rows[row].address : QString();
}

int ClusterModel::rowOf(const QString &address) const
{
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].address == address) {
            return i;
        }
    }
    return -1;
}

NodeInfo ClusterModel::info(const QString &address) const
{
    const int row = rowOf(address);
    return row < 0 ? NodeInfo{} : m_rows[row].info;
}

ConnectionState ClusterModel::state(const QString &address) const
{
    const int row = rowOf(address);
    return row < 0 ? ConnectionState::connecting : m_rows[row].state;
}

int ClusterModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ClusterModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ClusterModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: return displayText(row, column);
    case SortRole: return sortValue(row, column);
    case Qt::ToolTipRole: {
        const QString tip = toolTip(row, column);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case AddressRole: return row.address;
    case LabelsRole: {
        QVariantMap labels;
        for (auto it = row.info.labels.cbegin(); it != row.info.labels.cend(); ++it) {
            labels.insert(it.key(), it.value());
        }
        return labels;
    }
    case StateRole: return int(row.state);
    case Qt::ForegroundRole:
        if (column == State && row.state == ConnectionState::unreachable) {
            return QBrush(errorColor());
        }
        if (column == State && row.state == ConnectionState::connecting) {
            return QBrush(mutedColor());
        }
        if (column == Error && !row.error.isEmpty()) {
            return QBrush(errorColor());
        }
        return {};
    case Qt::BackgroundRole:
        if (column == HitRatio && !std::isnan(row.live.hitRatio) &&
            row.live.hitRatio < poorHitRatio) {
            return QBrush(warningColor());
        }
        if (column == Locks && locksExhausted(row.live)) {
            return QBrush(warningColor());
        }
        if (column == Drift && row.drift > 0) {
            return QBrush(warningColor());
        }
        return {};
    default: return {};
    }
}

QVariant ClusterModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (Column(section)) {
        case Node: return tr("Node");
        case State: return tr("State");
        case Version: return tr("Version");
        case Uptime: return tr("Uptime");
        case You: return tr("You");
        case Labels: return tr("Labels");
        case Instances: return tr("Instances");
        case Restarts: return tr("Restarts");
        case Profile: return tr("Profile");
        case HitRatio: return tr("Hit ratio");
        case Locks: return tr("Locks");
        case Cache: return tr("Cache");
        case Drift: return tr("Drift");
        case Error: return tr("Error");
        case ColumnCount: break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (Column(section)) {
        case You: return tr("Who this console is to the node, and the role it grants");
        case Restarts: return tr("Restarts of the node's instances, summed");
        case HitRatio: return tr("Readahead hit ratio (read_ahead_stats hits / (hits + misses))");
        case Locks: return tr("Unused locks / lock LRU size");
        case Cache: return tr("Cached / maximum cached MiB");
        case Error: return tr("The last error of an unreachable node");
        default: break;
        }
    }
    return {};
}

QString ClusterModel::displayText(const Row &row, int column) const
{
    switch (Column(column)) {
    case Node: return row.hasInfo && !row.info.node.isEmpty() ? row.info.node : row.address;
    case State: return connectionStateName(row.state);
    case Version: return row.info.version;
    case Uptime: {
        const qint64 seconds = uptimeSeconds(row);
        return seconds < 0 ? QString() : formatDuration(seconds);
    }
    case You:
        if (row.info.principal.isEmpty()) {
            return {};
        }
        return QStringLiteral("%1 (%2)").arg(row.info.principal, roleName(row.info.role));
    case Labels: return labelsText(row.info.labels, QStringLiteral(", "));
    case Instances: {
        const int count = instanceCount(row);
        return count < 0 ? QString() : QString::number(count);
    }
    case Restarts: {
        const int count = restarts(row);
        return count < 0 ? QString() : QString::number(count);
    }
    case Profile: return row.info.lastProfile;
    case HitRatio: return formatPercent(row.live.hitRatio);
    case Locks:
        if (row.live.lockUnused < 0 && row.live.lruSize < 0) {
            return unknownText();
        }
        return QStringLiteral("%1 / %2").arg(
            numberOrUnknown(row.live.lockUnused),
            row.live.lruSize == 0 ? QStringLiteral("dynamic") : numberOrUnknown(row.live.lruSize));
    case Cache:
        if (row.live.cachedMb < 0 && row.live.maxCachedMb < 0) {
            return unknownText();
        }
        return QStringLiteral("%1 / %2 MiB")
            .arg(numberOrUnknown(row.live.cachedMb), numberOrUnknown(row.live.maxCachedMb));
    case Drift:
        if (row.drift < 0) {
            return {};
        }
        return row.drift == 0 ? tr("none (%1)").arg(row.driftProfile)
                              : tr("%1 (%2)").arg(row.drift).arg(row.driftProfile);
    case Error: return row.error;
    case ColumnCount: break;
    }
    return {};
}

QVariant ClusterModel::sortValue(const Row &row, int column) const
{
    switch (Column(column)) {
    case Uptime: return uptimeSeconds(row);
    case Instances: return instanceCount(row);
    case Restarts: return restarts(row);
    // Unknown ratios sort below every known one.
    case HitRatio: return std::isnan(row.live.hitRatio) ? -1.0 : row.live.hitRatio;
    case Locks: return row.live.lockUnused;
    case Cache: return row.live.cachedMb;
    case Drift: return row.drift;
    default: return displayText(row, column);
    }
}

QString ClusterModel::toolTip(const Row &row, int column) const
{
    switch (Column(column)) {
    case Node:
        return row.hasInfo && !row.info.node.isEmpty() ? row.info.node + u'\n' + row.address
                                                       : row.address;
    case State: return row.error.isEmpty() ? QString() : row.error;
    case Labels: return labelsText(row.info.labels, QStringLiteral("\n"));
    case Locks:
        if (row.live.lockCount < 0 && row.live.lockUnused < 0 && row.live.lruSize < 0) {
            return {};
        }
        return tr("%1 locks, %2 unused, LRU size %3")
            .arg(numberOrUnknown(row.live.lockCount), numberOrUnknown(row.live.lockUnused),
                 row.live.lruSize == 0 ? tr("dynamic") : numberOrUnknown(row.live.lruSize));
    case Drift:
        return row.drift < 0 ? QString()
                             : tr("%1 parameter(s) differ from profile %2 at the last verify")
                                   .arg(row.drift)
                                   .arg(row.driftProfile);
    case Version:
    case You:
    case Profile:
    case Error: return displayText(row, column);
    default: return {};
    }
}

qint64 ClusterModel::uptimeSeconds(const Row &row) const
{
    if (!row.hasInfo || row.info.startTimeNs <= 0 || m_nowMs <= 0) {
        return -1;
    }
    return std::max<qint64>(0, (m_nowMs - row.info.startTimeNs / 1'000'000) / 1000);
}

int ClusterModel::instanceCount(const Row &row) const
{
    if (row.hasInstances) {
        return int(row.instances.size());
    }
    return row.hasInfo ? row.info.instanceCount : -1;
}

int ClusterModel::restarts(const Row &row) const
{
    if (!row.hasInstances) {
        return -1;
    }
    int sum = 0;
    for (const InstanceInfo &instance : row.instances) {
        sum += instance.restarts;
    }
    return sum;
}

void ClusterModel::rowChanged(int row, int firstColumn, int lastColumn)
{
    emit dataChanged(index(row, firstColumn), index(row, lastColumn));
}

} // namespace lutra::console
