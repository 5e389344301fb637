#include "models/instances_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QBrush>

namespace lutra::console {

namespace {

bool sameInstance(const InstanceInfo &a, const InstanceInfo &b)
{
    return a.id == b.id && a.kind == b.kind && a.name == b.name && a.pid == b.pid &&
           a.version == b.version && a.startTimeNs == b.startTimeNs && a.connected == b.connected &&
           a.seenSinceNs == b.seenSinceNs && a.restarts == b.restarts;
}

} // namespace

InstancesModel::InstancesModel(QObject *parent) : KeyedTableModel(parent) {}

void InstancesModel::setInstances(const QList<InstanceInfo> &instances)
{
    QList<InstanceInfo> wantedInstances;
    QSet<QString> ids;
    for (const InstanceInfo &instance : instances) {
        if (!ids.contains(instance.id)) {
            ids.insert(instance.id);
            wantedInstances.append(instance);
        }
    }
    syncTo(
        m_instances, wantedInstances, [](const InstanceInfo &instance) { return instance.id; },
        &sameInstance);
}

void InstancesModel::setNowMs(qint64 nowMs)
{
    if (nowMs == m_nowMs) {
        return;
    }
    m_nowMs = nowMs;
    if (!m_instances.isEmpty()) {
        emit dataChanged(index(0, Since), index(int(m_instances.size()) - 1, Since),
                         {Qt::DisplayRole, SortRole});
    }
}

int InstancesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_instances.size());
}

int InstancesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant InstancesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const InstanceInfo &instance = m_instances[index.row()];
    const int column = index.column();
    if (role == Qt::DisplayRole || role == SortRole) {
        const bool sort = role == SortRole;
        switch (Column(column)) {
        case Id: return instance.id;
        case Kind: return instance.kind;
        case Pid:
            if (sort) {
                return instance.pid;
            }
            return instance.pid > 0 ? QString::number(instance.pid) : QString();
        case Version: return instance.version;
        case Connected: return instance.connected ? tr("yes") : tr("no");
        case Since: {
            const qint64 seconds = sinceSeconds(instance);
            if (sort) {
                return seconds;
            }
            return seconds < 0 ? QString() : formatDuration(seconds);
        }
        case Restarts:
            return sort ? QVariant(instance.restarts) : QString::number(instance.restarts);
        case ColumnCount: break;
        }
        return {};
    }
    if (role == IdRole) {
        return instance.id;
    }
    if (role == Qt::ToolTipRole) {
        if (column == Id) {
            return instance.name.isEmpty() ? instance.id
                                           : tr("%1 (name %2)").arg(instance.id, instance.name);
        }
        if (column == Connected) {
            return instance.connected ? tr("connected to lutra-ctld")
                                      : tr("not connected to lutra-ctld");
        }
        return {};
    }
    if (role == Qt::ForegroundRole && column == Connected && !instance.connected) {
        return QBrush(errorColor());
    }
    return {};
}

QVariant InstancesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Id: return tr("Id");
    case Kind: return tr("Kind");
    case Pid: return tr("PID");
    case Version: return tr("Version");
    case Connected: return tr("Connected");
    case Since: return tr("Since");
    case Restarts: return tr("Restarts");
    case ColumnCount: break;
    }
    return {};
}

qint64 InstancesModel::sinceSeconds(const InstanceInfo &instance) const
{
    if (instance.seenSinceNs <= 0 || m_nowMs <= 0) {
        return -1;
    }
    return std::max<qint64>(0, (m_nowMs - instance.seenSinceNs / 1'000'000) / 1000);
}

} // namespace lutra::console
