#include "models/cluster_filter_model.h"

#include "models/cluster_model.h"
#include "models/format.h"

namespace lutra::console {

ClusterFilterModel::ClusterFilterModel(QObject *parent) : QSortFilterProxyModel(parent)
{
    setSortRole(ClusterModel::SortRole);
}

void ClusterFilterModel::setLabelFilter(const QString &filter)
{
    const QString trimmed = filter.trimmed();
    if (trimmed == m_filter) {
        return;
    }
    // Qt 6.4 has no begin/endFilterChange; invalidateFilter() re-runs filterAcceptsRow.
    m_filter = trimmed;
    invalidateFilter();
}

bool ClusterFilterModel::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (m_filter.isEmpty()) {
        return true;
    }
    const QModelIndex nodeIndex = sourceModel()->index(sourceRow, ClusterModel::Node, sourceParent);
    const QVariantMap labels = nodeIndex.data(ClusterModel::LabelsRole).toMap();

    const qsizetype equals = m_filter.indexOf(u'=');
    if (equals >= 0) {
        const QString key = m_filter.left(equals).trimmed();
        const QString value = m_filter.mid(equals + 1).trimmed();
        const auto it = labels.constFind(key);
        return it != labels.cend() && it->toString() == value;
    }
    if (labels.contains(m_filter)) {
        return true;
    }
    const QString name = nodeIndex.data(Qt::DisplayRole).toString();
    const QString address = nodeIndex.data(ClusterModel::AddressRole).toString();
    if (name.contains(m_filter, Qt::CaseInsensitive) ||
        address.contains(m_filter, Qt::CaseInsensitive)) {
        return true;
    }
    for (auto it = labels.cbegin(); it != labels.cend(); ++it) {
        if (it->toString().contains(m_filter, Qt::CaseInsensitive)) {
            return true;
        }
    }
    return false;
}

bool ClusterFilterModel::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    const QVariant a = left.data(sortRole());
    const QVariant b = right.data(sortRole());
    if (a.typeId() == QMetaType::QString || b.typeId() == QMetaType::QString) {
        return naturalLess(a.toString(), b.toString());
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace lutra::console
