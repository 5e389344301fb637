#pragma once
// The node × instance value matrix of the parameters selected in the schema tree: one row per
// (node, instance) that has any of them, one column per parameter. Cells that differ from their
// column's most common value are marked, so drift across the cluster shows at a glance.

#include "core/types.h"

#include <QAbstractTableModel>
#include <QHash>

#include <optional>

namespace lutra::console {

class ValueMatrixModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Roles {
        DiffersRole = Qt::UserRole + 1, // bool: not the column's most common value
        NodeRole,
        InstanceRole,
        ParamRole, // the column's full parameter name
    };

    static constexpr int NodeColumn = 0;
    static constexpr int InstanceColumn = 1;
    static constexpr int FirstParamColumn = 2;

    explicit ValueMatrixModel(QObject *parent = nullptr);

    // Changes the columns (a reset). Values already known for parameters that stay are kept.
    void setParameters(const QStringList &names);
    QStringList parameters() const { return m_params; }
    // Replaces the node's values; only rows and cells that change are signalled.
    void setValues(const QString &node, const QList<InstanceValue> &values);
    void removeNode(const QString &node);

    bool differs(int row, int column) const;
    // The column's most common value (ties: the first seen in row order); empty when none.
    QString commonValue(int column) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString node;
        QString instance;
        QHash<QString, QString> values; // parameter → value, selected parameters only
    };

    QList<Row> rowsOf(const QString &node, const QList<InstanceValue> &values) const;
    void rebuildHeaders();
    QList<std::optional<QString>> computeCommon() const;
    // After a change: columns whose common value moved are signalled top to bottom.
    void commonChanged(const QList<std::optional<QString>> &before);
    const QString *cell(int row, int column) const; // nullptr when the instance lacks it

    QStringList m_params;
    QStringList m_headers; // shortest unambiguous suffix of each parameter name
    QList<Row> m_rows;
    QList<std::optional<QString>> m_common;        // per parameter column; none when nobody has it
    QHash<QString, QList<InstanceValue>> m_values; // everything told, per node
};

} // namespace lutra::console
