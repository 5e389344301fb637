#pragma once
// A profile's plan across nodes (DiffProfile, ApplyProfile, VerifyProfile): one row per node,
// instance and parameter, plus a row per error and per node the profile does not match.

#include "core/types.h"
#include "models/row_sync.h"

#include <QAbstractTableModel>
#include <QMap>

namespace lutra::console {

class PlanModel : public KeyedTableModel {
    Q_OBJECT
public:
    enum Column { Node, Instance, Parameter, Live, Desired, Source, Status, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        NodeRole = Qt::UserRole + 1,
        ChangedRole, // bool: the entry's live value is not the desired one
        ErrorRole,   // bool: the row is an error (validation, refused, failed call)
    };

    // What the plan came from: decides the Status words.
    enum class Mode { diff, apply, verify };

    explicit PlanModel(QObject *parent = nullptr);

    // Replaces the node's rows; rows that stay are updated in place.
    void setPlan(const QString &node, const ProfilePlan &plan, Mode mode);
    // The call itself failed (UNAVAILABLE, FAILED_PRECONDITION…): the node's rows become one.
    void setNodeError(const QString &node, const QString &error);
    void removeNode(const QString &node);
    void clear();

    // Hides the rows that would not change (unchanged, ok) with row removals, not a reset.
    void setChangedOnly(bool changedOnly);
    bool changedOnly() const { return m_changedOnly; }

    int changedCount() const;  // entries that change (or drift), shown or not
    int errorCount() const;    // error rows, shown or not
    QStringList nodes() const; // natural order

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    enum class Kind {
        unchanged,
        willChange,
        applied,
        refused,
        drift,
        ok,
        error,      // validation or node-level error
        callFailed, // the call itself
        noMatch,
    };
    struct Row {
        QString key; // node, instance, parameter, and a number among equal ones
        QString node;
        QString instance;
        QString parameter;
        QString live;
        QString desired;
        QString source;
        Kind kind = Kind::unchanged;
        QString error;
        bool changed = false;

        bool operator==(const Row &other) const = default;
    };

    static QList<Row> rowsOf(const QString &node, const ProfilePlan &plan, Mode mode);
    static bool isError(const Row &row);
    static QString statusText(const Row &row);
    bool shown(const Row &row) const;
    void replaceNode(const QString &node, QList<Row> rows);
    // Brings the shown rows to what m_plans and the filter say, with fine-grained signals.
    void sync();

    QMap<QString, QList<Row>> m_plans; // node → all its rows, sorted
    QList<Row> m_rows;                 // the rows shown
    bool m_changedOnly = false;
};

} // namespace lutra::console
