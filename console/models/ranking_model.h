#pragma once
// The top-N worst nodes by readahead hit ratio, as the aggregation computed them.

#include <QAbstractTableModel>

namespace lutra::console {

struct RankingEntry {
    QString node;
    double hitRatio = 0;
    double missesPerSecond = 0;
};

class RankingModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Node, HitRatio, MissesPerSecond, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        NodeRole = Qt::UserRole + 1,
    };

    explicit RankingModel(QObject *parent = nullptr);

    // Rows are updated in place; only a change of count inserts or removes, at the end.
    void setEntries(const QList<RankingEntry> &entries);
    QList<RankingEntry> entries() const { return m_entries; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    QList<RankingEntry> m_entries;
};

} // namespace lutra::console
