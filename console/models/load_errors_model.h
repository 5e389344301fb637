#pragma once
// The profiles that failed to load on the selected nodes (ListProfiles' errors), one row per
// error with the place in the document; fed from ProfilesModel::loadErrors().

#include "core/types.h"
#include "models/row_sync.h"

#include <QAbstractTableModel>
#include <QPair>

namespace lutra::console {

class LoadErrorsModel : public KeyedTableModel {
    Q_OBJECT
public:
    enum Column { Node, Where, Message, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        NodeRole = Qt::UserRole + 1,
    };

    explicit LoadErrorsModel(QObject *parent = nullptr);

    // Rows end in the order given; rows that stay are not signalled.
    void setErrors(const QList<QPair<QString, ProfileError>> &errors);

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString key; // node, place and message, numbered when one node repeats an error
        QString node;
        ProfileError error;
    };

    static QString where(const ProfileError &error); // "file:line:col", "file" without a line

    QList<Row> m_rows;
};

} // namespace lutra::console
