#pragma once
// The profiles the selected nodes know (ListProfiles merged across nodes): one row per profile
// name, with where it comes from, how many nodes it matches and which nodes lack it.

#include "core/types.h"
#include "models/row_sync.h"

#include <QAbstractTableModel>
#include <QMap>
#include <QPair>

namespace lutra::console {

class ProfilesModel : public KeyedTableModel {
    Q_OBJECT
public:
    enum Column { Name, Description, Extends, Source, Matches, Missing, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        SortRole = Qt::UserRole + 1, // counts for Matches and Missing, text otherwise
        ProfileRole,                 // the profile's name
        DiffersRole,                 // bool: the nodes disagree on where the profile comes from
    };

    explicit ProfilesModel(QObject *parent = nullptr);

    // Replaces what the node knows; only rows and cells that change are signalled.
    void setNodeProfiles(const QString &node, const ProfileList &list);
    void removeNode(const QString &node);

    QStringList nodes() const;                               // natural order
    QStringList nodesMatching(const QString &profile) const; // natural order
    QStringList nodesKnowing(const QString &profile) const;  // natural order
    // The profiles that failed to load, per node (natural order), in the order each node gave.
    QList<QPair<QString, ProfileError>> loadErrors() const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

signals:
    // loadErrors() is different now (feeds LoadErrorsModel).
    void loadErrorsChanged();

private:
    struct Row {
        QString name;
        QString description;
        QStringList extends;
        QString source;       // as the first knowing node reports it
        bool differs = false; // some knowing node reports another source
        QStringList sources;  // "node: source" per knowing node
        int matching = 0;
        int knowing = 0;
        QStringList matchingNodes;
        QStringList missing;

        bool operator==(const Row &other) const = default;
    };

    void rebuild();
    QList<Row> computeRows() const;
    QString text(const Row &row, int column) const;

    QMap<QString, ProfileList> m_lists; // node → what it reported
    QList<Row> m_rows;
};

} // namespace lutra::console
