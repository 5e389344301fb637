#include "models/operations_model.h"

#include "models/format.h"

#include <QBrush>

namespace lutra::console {

QString stateName(OpState state)
{
    switch (state) {
    case OpState::queued: return QStringLiteral("queued");
    case OpState::running: return QStringLiteral("running");
    case OpState::ok: return QStringLiteral("ok");
    case OpState::failed: return QStringLiteral("failed");
    case OpState::unreachable: return QStringLiteral("unreachable");
    case OpState::cancelled: return QStringLiteral("cancelled");
    case OpState::skipped: return QStringLiteral("skipped");
    }
    return {};
}

bool isDone(OpState state)
{
    return state != OpState::queued && state != OpState::running;
}

OperationsModel::OperationsModel(QObject *parent) : TreeModel<OperationEntry>(parent) {}

int OperationsModel::addOperation(const QString &title, const QStringList &nodes)
{
    const int id = m_nextId++;
    QStringList unique = nodes;
    unique.removeDuplicates();

    const int row = int(m_root.children.size());
    auto operation = std::make_unique<Item>();
    operation->parent = &m_root;
    operation->key = QString::number(id);
    operation->payload.operation = id;
    operation->payload.title = title;
    operation->payload.state = OpState::running;
    for (const QString &node : std::as_const(unique)) {
        auto item = std::make_unique<Item>();
        item->parent = operation.get();
        item->key = node;
        item->payload.operation = id;
        operation->children.push_back(std::move(item));
    }
    // The operation arrives with its nodes: one insert.
    beginInsertRows({}, row, row);
    m_root.children.push_back(std::move(operation));
    endInsertRows();
    return id;
}

void OperationsModel::setNodeState(int op, const QString &node, OpState state,
                                   const QString &detail)
{
    Item *item = nodeItem(op, node);
    if (!item || (item->payload.state == state && item->payload.detail == detail)) {
        return;
    }
    item->payload.state = state;
    item->payload.detail = detail;
    emitChanged(item, item, 0, ColumnCount - 1);
    operationChanged(item->parent);
}

void OperationsModel::setInstanceResult(int op, const QString &node, const QString &instance,
                                        bool ok, const QString &detail)
{
    Item *nodeRow = nodeItem(op, node);
    if (!nodeRow) {
        return;
    }
    const OpState state = ok ? OpState::ok : OpState::failed;
    if (Item *item = nodeRow->child(instance)) {
        if (item->payload.state != state || item->payload.detail != detail) {
            item->payload.state = state;
            item->payload.detail = detail;
            emitChanged(item, item, 0, ColumnCount - 1);
        }
        return;
    }
    const int row = int(nodeRow->children.size());
    auto item = std::make_unique<Item>();
    item->parent = nodeRow;
    item->key = instance;
    item->payload.operation = op;
    item->payload.state = state;
    item->payload.detail = detail;
    beginInsertRows(TreeModel::indexOf(nodeRow), row, row);
    nodeRow->children.push_back(std::move(item));
    endInsertRows();
}

void OperationsModel::finish(int op)
{
    Item *operation = operationItem(op);
    if (!operation || operation->payload.finished) {
        return;
    }
    bool failed = false;
    bool cancelled = false;
    for (const auto &node : operation->children) {
        OperationEntry &entry = node->payload;
        if (!isDone(entry.state)) {
            // Finished while still waiting on this node: it did not run to its end.
            entry.state = OpState::cancelled;
            emitChanged(node.get(), node.get(), 0, ColumnCount - 1);
        }
        failed = failed || entry.state == OpState::failed || entry.state == OpState::unreachable;
        cancelled = cancelled || entry.state == OpState::cancelled;
    }
    operation->payload.finished = true;
    operation->payload.state =
        failed ? OpState::failed : (cancelled ? OpState::cancelled : OpState::ok);
    operationChanged(operation);
}

int OperationsModel::doneCount(int op) const
{
    const Item *operation = operationItem(op);
    if (!operation) {
        return 0;
    }
    return int(std::count_if(operation->children.cbegin(), operation->children.cend(),
                             [](const auto &node) { return isDone(node->payload.state); }));
}

int OperationsModel::nodeCount(int op) const
{
    const Item *operation = operationItem(op);
    return operation ? int(operation->children.size()) : 0;
}

OpState OperationsModel::operationState(int op) const
{
    const Item *operation = operationItem(op);
    return operation ? operation->payload.state : OpState::queued;
}

QModelIndex OperationsModel::operationIndex(int op) const
{
    return TreeModel::indexOf(operationItem(op));
}

int OperationsModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant OperationsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const Item *item = itemAt(index);
    const OperationEntry &entry = item->payload;
    const bool isOperation = item->parent == &m_root;
    const int column = index.column();
    switch (role) {
    case OperationIdRole: return entry.operation;
    case StateRole: return int(entry.state);
    case Qt::DisplayRole:
    case Qt::ToolTipRole: {
        QString text;
        switch (Column(column)) {
        case What: text = isOperation ? entry.title : item->key; break;
        case State:
            if (isOperation && !entry.finished) {
                text = QStringLiteral("%1 %2/%3")
                           .arg(stateName(OpState::running))
                           .arg(doneCount(entry.operation))
                           .arg(item->children.size());
            } else {
                text = stateName(entry.state);
            }
            break;
        case Detail: text = isOperation ? summary(item) : entry.detail; break;
        case ColumnCount: break;
        }
        if (role == Qt::ToolTipRole && (text.isEmpty() || column == State)) {
            return {};
        }
        return text;
    }
    case Qt::ForegroundRole:
        if (column == What) {
            return {};
        }
        switch (entry.state) {
        case OpState::failed:
        case OpState::unreachable: return QBrush(errorColor());
        case OpState::cancelled:
        case OpState::skipped: return QBrush(mutedColor());
        default: return {};
        }
    default: return {};
    }
}

QVariant OperationsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case What: return tr("What");
    case State: return tr("State");
    case Detail: return tr("Detail");
    case ColumnCount: break;
    }
    return {};
}

OperationsModel::Item *OperationsModel::operationItem(int op) const
{
    return m_root.child(QString::number(op));
}

OperationsModel::Item *OperationsModel::nodeItem(int op, const QString &node)
{
    Item *operation = operationItem(op);
    if (!operation) {
        return nullptr;
    }
    if (Item *item = operation->child(node)) {
        return item;
    }
    const int row = int(operation->children.size());
    auto item = std::make_unique<Item>();
    item->parent = operation;
    item->key = node;
    item->payload.operation = op;
    Item *added = item.get();
    beginInsertRows(TreeModel::indexOf(operation), row, row);
    operation->children.push_back(std::move(item));
    endInsertRows();
    operationChanged(operation);
    return added;
}

QString OperationsModel::summary(const Item *operation) const
{
    // Terminal states only, in a fixed order: "4 ok, 1 unreachable".
    static const OpState order[] = {OpState::ok, OpState::failed, OpState::unreachable,
                                    OpState::cancelled, OpState::skipped};
    QStringList parts;
    for (const OpState state : order) {
        const auto count =
            std::count_if(operation->children.cbegin(), operation->children.cend(),
                          [state](const auto &node) { return node->payload.state == state; });
        if (count > 0) {
            parts.append(QStringLiteral("%1 %2").arg(count).arg(stateName(state)));
        }
    }
    return parts.join(QStringLiteral(", "));
}

void OperationsModel::operationChanged(Item *operation)
{
    emitChanged(operation, operation, State, Detail);
}

} // namespace lutra::console
