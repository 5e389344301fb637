#include "models/set_result_model.h"

#include "models/format.h"

#include <QBrush>

namespace lutra::console {

SetResultModel::SetResultModel(QObject *parent) : QAbstractTableModel(parent) {}

void SetResultModel::setOutcome(const QString &node, const SetOutcome &outcome)
{
    QList<Row> rows;
    for (const QString &error : outcome.errors) {
        rows.append(Row{node, {}, {}, {}, {}, {}, Kind::error, error});
    }
    // A dry run changes nothing, so no instance reports back: its plan says what would happen.
    if (outcome.dryRun && outcome.instances.isEmpty()) {
        for (const PlanEntry &entry : outcome.plan) {
            rows.append(Row{node,
                            entry.instance,
                            entry.name,
                            entry.live,
                            entry.desired,
                            {},
                            entry.changed ? Kind::wouldChange : Kind::unchanged,
                            {}});
        }
    }
    for (const InstanceSetOutcome &instance : outcome.instances) {
        for (const QString &error : instance.errors) {
            rows.append(Row{node, instance.instance, {}, {}, {}, {}, Kind::error, error});
        }
        for (const SetEntry &entry : instance.entries) {
            Row row{node,           instance.instance, entry.name, entry.oldValue, entry.requested,
                    entry.readBack, Kind::ok,          entry.error};
            if (!entry.error.isEmpty()) {
                row.kind = Kind::error;
            } else if (outcome.dryRun) {
                // A special word ("clear") is an action: it always does something.
                row.kind = entry.special || entry.oldValue != entry.requested ? Kind::wouldChange
                                                                              : Kind::unchanged;
            } else if (entry.rolledBack) {
                row.kind = Kind::rolledBack;
            } else if (entry.clamped) {
                row.kind = Kind::clamped;
            }
            rows.append(row);
        }
    }
    replaceRows(node, rows);
}

void SetResultModel::setNodeError(const QString &node, const QString &error)
{
    replaceRows(node, {Row{node, {}, {}, {}, {}, {}, Kind::callFailed, error}});
}

void SetResultModel::clear()
{
    if (m_rows.isEmpty() && m_nodes.isEmpty()) {
        return;
    }
    beginResetModel();
    m_rows.clear();
    m_nodes.clear();
    endResetModel();
}

int SetResultModel::errorCount() const
{
    return int(std::count_if(m_rows.cbegin(), m_rows.cend(), [](const Row &row) {
        return row.kind == Kind::error || row.kind == Kind::callFailed;
    }));
}

int SetResultModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int SetResultModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant SetResultModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: return text(row, column);
    case Qt::ToolTipRole: {
        // Values and errors can be long; the cell shows what fits.
        const QString tip = text(row, column);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case NodeRole: return row.node;
    case ErrorRole: return row.kind == Kind::error || row.kind == Kind::callFailed;
    case Qt::ForegroundRole:
        if (row.kind == Kind::callFailed || (row.kind == Kind::error && column == Status)) {
            return QBrush(errorColor());
        }
        if (row.kind == Kind::rolledBack && column == Status) {
            return QBrush(mutedColor());
        }
        return {};
    case Qt::BackgroundRole:
        if (row.kind == Kind::clamped && (column == Status || column == ReadBack)) {
            return QBrush(warningColor());
        }
        return {};
    default: return {};
    }
}

QVariant SetResultModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Node: return tr("Node");
    case Instance: return tr("Instance");
    case Parameter: return tr("Parameter");
    case Old: return tr("Old");
    case Requested: return tr("Requested");
    case ReadBack: return tr("Read back");
    case Status: return tr("Status");
    case ColumnCount: break;
    }
    return {};
}

void SetResultModel::replaceRows(const QString &node, const QList<Row> &rows)
{
    if (!m_nodes.contains(node)) {
        m_nodes.append(node);
    }
    // The node's rows are one run; a new node's run starts after the last row.
    int first = int(m_rows.size());
    int count = 0;
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].node == node) {
            first = count == 0 ? i : first;
            ++count;
        }
    }
    // Rows that stay are updated in place; the run grows or shrinks at its end.
    const int common = std::min(count, int(rows.size()));
    int firstChanged = -1;
    int lastChanged = -1;
    for (int i = 0; i < common; ++i) {
        if (!sameRow(m_rows[first + i], rows[i])) {
            m_rows[first + i] = rows[i];
            firstChanged = firstChanged < 0 ? first + i : firstChanged;
            lastChanged = first + i;
        }
    }
    if (firstChanged >= 0) {
        emit dataChanged(index(firstChanged, 0), index(lastChanged, ColumnCount - 1));
    }
    if (rows.size() > count) {
        beginInsertRows({}, first + count, first + int(rows.size()) - 1);
        for (int i = count; i < rows.size(); ++i) {
            m_rows.insert(first + i, rows[i]);
        }
        endInsertRows();
    } else if (rows.size() < count) {
        beginRemoveRows({}, first + int(rows.size()), first + count - 1);
        m_rows.remove(first + rows.size(), count - rows.size());
        endRemoveRows();
    }
}

QString SetResultModel::text(const Row &row, int column)
{
    switch (Column(column)) {
    case Node: return row.node;
    case Instance: return row.instance;
    case Parameter: return row.parameter;
    case Old: return row.oldValue;
    case Requested: return row.requested;
    case ReadBack: return row.readBack;
    case Status:
        switch (row.kind) {
        case Kind::unchanged: return tr("unchanged");
        case Kind::wouldChange: return tr("would change");
        case Kind::ok: return tr("ok");
        case Kind::clamped: return tr("clamped");
        case Kind::rolledBack: return tr("rolled back");
        case Kind::error:
        case Kind::callFailed: return tr("error: %1").arg(row.error);
        }
        return {};
    case ColumnCount: break;
    }
    return {};
}

bool SetResultModel::sameRow(const Row &a, const Row &b)
{
    return a.node == b.node && a.instance == b.instance && a.parameter == b.parameter &&
           a.oldValue == b.oldValue && a.requested == b.requested && a.readBack == b.readBack &&
           a.kind == b.kind && a.error == b.error;
}

} // namespace lutra::console
