#pragma once
// The outcome of a set or a dry run: one row per node, instance and parameter, plus one row per
// error (an instance's batch, a node's own, or a call that failed).

#include "core/types.h"

#include <QAbstractTableModel>

namespace lutra::console {

class SetResultModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Node, Instance, Parameter, Old, Requested, ReadBack, Status, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        NodeRole = Qt::UserRole + 1,
        ErrorRole, // bool: the row is an error
    };

    explicit SetResultModel(QObject *parent = nullptr);

    // Replaces the node's rows (a new node's rows go after the others).
    void setOutcome(const QString &node, const SetOutcome &outcome);
    // The call itself failed (UNAVAILABLE, PERMISSION_DENIED…): the node's rows become one.
    void setNodeError(const QString &node, const QString &error);
    void clear();

    int errorCount() const;
    QStringList nodes() const { return m_nodes; } // in row order

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    enum class Kind { unchanged, wouldChange, ok, clamped, rolledBack, error, callFailed };
    struct Row {
        QString node;
        QString instance;
        QString parameter;
        QString oldValue;
        QString requested;
        QString readBack;
        Kind kind = Kind::ok;
        QString error;
    };

    void replaceRows(const QString &node, const QList<Row> &rows);
    static QString text(const Row &row, int column);
    static bool sameRow(const Row &a, const Row &b);

    QList<Row> m_rows;
    QStringList m_nodes;
};

} // namespace lutra::console
