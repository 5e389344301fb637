#include "models/ranking_model.h"

#include "models/format.h"

#include <QBrush>

#include <cmath>

namespace lutra::console {

namespace {

bool sameNumber(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

bool sameEntry(const RankingEntry &a, const RankingEntry &b)
{
    return a.node == b.node && sameNumber(a.hitRatio, b.hitRatio) &&
           sameNumber(a.missesPerSecond, b.missesPerSecond);
}

} // namespace

RankingModel::RankingModel(QObject *parent) : QAbstractTableModel(parent) {}

void RankingModel::setEntries(const QList<RankingEntry> &entries)
{
    const int old = int(m_entries.size());
    const int wanted = int(entries.size());
    if (wanted < old) {
        beginRemoveRows({}, wanted, old - 1);
        m_entries.resize(wanted);
        endRemoveRows();
    }
    int firstChanged = -1;
    int lastChanged = -1;
    for (int i = 0; i < std::min(old, wanted); ++i) {
        if (!sameEntry(m_entries[i], entries[i])) {
            m_entries[i] = entries[i];
            firstChanged = firstChanged < 0 ? i : firstChanged;
            lastChanged = i;
        }
    }
    if (firstChanged >= 0) {
        emit dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));
    }
    if (wanted > old) {
        beginInsertRows({}, old, wanted - 1);
        for (int i = old; i < wanted; ++i) {
            m_entries.append(entries[i]);
        }
        endInsertRows();
    }
}

int RankingModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_entries.size());
}

int RankingModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant RankingModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const RankingEntry &entry = m_entries[index.row()];
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case Node: return entry.node;
        case HitRatio: return formatPercent(entry.hitRatio);
        case MissesPerSecond: return formatRate(entry.missesPerSecond);
        case ColumnCount: break;
        }
        return {};
    case NodeRole: return entry.node;
    case Qt::TextAlignmentRole:
        return index.column() == Node ? QVariant()
                                      : QVariant(int(Qt::AlignRight | Qt::AlignVCenter));
    case Qt::BackgroundRole:
        // The same threshold as the cluster table's hit ratio.
        if (index.column() == HitRatio && !std::isnan(entry.hitRatio) &&
            entry.hitRatio < poorHitRatio) {
            return QBrush(warningColor());
        }
        return {};
    default: return {};
    }
}

QVariant RankingModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Node: return tr("Node");
    case HitRatio: return tr("Hit ratio");
    case MissesPerSecond: return tr("Misses/s");
    case ColumnCount: break;
    }
    return {};
}

} // namespace lutra::console
