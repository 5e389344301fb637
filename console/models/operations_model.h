#pragma once
// The operations dock: every fan-out (set, clear, flush…) as operation → node → instance, with
// progress while it runs and a summary when it is done.

#include "models/tree_model.h"

#include <QStringList>

namespace lutra::console {

enum class OpState { queued, running, ok, failed, unreachable, cancelled, skipped };
QString stateName(OpState state); // "queued", "running", "ok", …

// A node in one of these states is done with.
bool isDone(OpState state);

struct OperationEntry {
    int operation = 0; // the id addOperation returned, on every item of the operation
    QString title;     // operations only
    OpState state = OpState::queued;
    bool finished = false; // operations only
    QString detail;
};

class OperationsModel : public TreeModel<OperationEntry> {
    Q_OBJECT
public:
    enum Column { What, State, Detail, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        OperationIdRole = Qt::UserRole + 1,
        StateRole, // int of OpState
    };

    explicit OperationsModel(QObject *parent = nullptr);

    // Appends an operation with its nodes queued; returns its id (never 0).
    int addOperation(const QString &title, const QStringList &nodes);
    // A node not given to addOperation is appended.
    void setNodeState(int op, const QString &node, OpState state, const QString &detail = {});
    // Adds or updates the instance's row under the node.
    void setInstanceResult(int op, const QString &node, const QString &instance, bool ok,
                           const QString &detail);
    // ok when every node is ok or skipped, failed when any failed or was unreachable, cancelled
    // when any was cancelled and none failed. Nodes still queued or running count as cancelled.
    void finish(int op);

    int doneCount(int op) const;
    int nodeCount(int op) const;
    // running until finish().
    OpState operationState(int op) const;
    QModelIndex operationIndex(int op) const;

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    Item *operationItem(int op) const;
    Item *nodeItem(int op, const QString &node);
    QString summary(const Item *operation) const;
    void operationChanged(Item *operation);

    int m_nextId = 1;
};

} // namespace lutra::console
