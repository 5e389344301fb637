#pragma once
// The cluster table as views show it: sorted by ClusterModel::SortRole (names naturally, numbers
// by value) and filtered by label.

#include <QSortFilterProxyModel>

namespace lutra::console {

class ClusterFilterModel : public QSortFilterProxyModel {
    Q_OBJECT
public:
    explicit ClusterFilterModel(QObject *parent = nullptr);

    // "key=value": that label with exactly that value. "key": that label present. Anything else
    // matches the node name, its address or any label value, case-insensitive. Empty: every node.
    void setLabelFilter(const QString &filter);
    QString labelFilter() const { return m_filter; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    QString m_filter;
};

} // namespace lutra::console
