#include "models/value_matrix_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QBrush>

#include <algorithm>

namespace lutra::console {

namespace {

// The last `count` dotted components of name.
QString suffix(const QString &name, int count)
{
    return name.section(u'.', -count);
}

bool rowLess(const QString &nodeA, const QString &instanceA, const QString &nodeB,
             const QString &instanceB)
{
    if (nodeA != nodeB) {
        return naturalLess(nodeA, nodeB);
    }
    return naturalLess(instanceA, instanceB);
}

} // namespace

ValueMatrixModel::ValueMatrixModel(QObject *parent) : QAbstractTableModel(parent) {}

void ValueMatrixModel::setParameters(const QStringList &names)
{
    QStringList params = names;
    params.removeDuplicates();
    beginResetModel();
    m_params = params;
    rebuildHeaders();
    m_rows.clear();
    QStringList nodes = m_values.keys();
    std::sort(nodes.begin(), nodes.end(), naturalLess);
    for (const QString &node : std::as_const(nodes)) {
        QList<InstanceValue> kept;
        for (const InstanceValue &value : std::as_const(m_values[node])) {
            if (m_params.contains(value.name)) {
                kept.append(value);
            }
        }
        m_values[node] = kept;
        m_rows.append(rowsOf(node, kept));
    }
    m_common = computeCommon();
    endResetModel();
}

void ValueMatrixModel::setValues(const QString &node, const QList<InstanceValue> &values)
{
    QList<InstanceValue> kept;
    for (const InstanceValue &value : values) {
        if (m_params.contains(value.name)) {
            kept.append(value);
        }
    }
    m_values.insert(node, kept);
    const QList<Row> wantedRows = rowsOf(node, kept);

    // The node's rows are one run in the sorted table; find where it is or would be.
    int start = 0;
    while (start < m_rows.size() && m_rows[start].node != node &&
           !naturalLess(node, m_rows[start].node)) {
        ++start;
    }
    QStringList current;
    for (int i = start; i < m_rows.size() && m_rows[i].node == node; ++i) {
        current.append(m_rows[i].instance);
    }
    QStringList wanted;
    for (const Row &row : wantedRows) {
        wanted.append(row.instance);
    }

    const auto before = m_common;
    syncRows(
        current, wanted,
        [this, start](int first, int last) {
            beginRemoveRows({}, start + first, start + last);
            m_rows.remove(start + first, last - first + 1);
            endRemoveRows();
        },
        [this, start](int from, int to) {
            beginMoveRows({}, start + from, start + from, {}, start + to);
            m_rows.move(start + from, start + to);
            endMoveRows();
        },
        [this, start, &wantedRows](int first, int last) {
            beginInsertRows({}, start + first, start + last);
            for (int i = first; i <= last; ++i) {
                m_rows.insert(start + i, wantedRows[i]);
            }
            endInsertRows();
        });
    // Inserted rows arrived with their values, but the common values may have moved: recompute
    // before signalling the rows that stayed, so a view reads the final state.
    QList<int> changedRows;
    for (int i = 0; i < wantedRows.size(); ++i) {
        Row &row = m_rows[start + i];
        if (row.values != wantedRows[i].values) {
            row.values = wantedRows[i].values;
            changedRows.append(start + i);
        }
    }
    m_common = computeCommon();
    const int lastColumn = columnCount() - 1;
    for (const int row : std::as_const(changedRows)) {
        emit dataChanged(index(row, FirstParamColumn), index(row, lastColumn));
    }
    commonChanged(before);
}

void ValueMatrixModel::removeNode(const QString &node)
{
    m_values.remove(node);
    int first = -1;
    int last = -1;
    for (int i = 0; i < m_rows.size(); ++i) {
        if (m_rows[i].node == node) {
            first = first < 0 ? i : first;
            last = i;
        }
    }
    if (first < 0) {
        return;
    }
    const auto before = m_common;
    beginRemoveRows({}, first, last);
    m_rows.remove(first, last - first + 1);
    m_common = computeCommon();
    endRemoveRows();
    commonChanged(before);
}

bool ValueMatrixModel::differs(int row, int column) const
{
    const QString *value = cell(row, column);
    if (!value) {
        return false;
    }
    const auto &common = m_common[column - FirstParamColumn];
    return common.has_value() && *value != *common;
}

QString ValueMatrixModel::commonValue(int column) const
{
    if (column < FirstParamColumn || column >= columnCount()) {
        return {};
    }
    return m_common[column - FirstParamColumn].value_or(QString());
}

int ValueMatrixModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ValueMatrixModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : FirstParamColumn + int(m_params.size());
}

QVariant ValueMatrixModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const int column = index.column();
    const bool isParam = column >= FirstParamColumn;
    const QString *value = cell(index.row(), column);
    switch (role) {
    case NodeRole: return row.node;
    case InstanceRole: return row.instance;
    case ParamRole: return isParam ? QVariant(m_params[column - FirstParamColumn]) : QVariant();
    case DiffersRole: return differs(index.row(), column);
    case Qt::DisplayRole:
        if (column == NodeColumn) {
            return row.node;
        }
        if (column == InstanceColumn) {
            return row.instance;
        }
        return value ? *value : unknownText();
    case Qt::ToolTipRole:
        if (!isParam) {
            return column == NodeColumn ? row.node : row.instance;
        }
        if (!value) {
            return tr("%1 has no %2").arg(row.instance, m_params[column - FirstParamColumn]);
        }
        if (differs(index.row(), column)) {
            return tr("%1 (most nodes: %2)").arg(*value, commonValue(column));
        }
        return *value;
    case Qt::BackgroundRole:
        return differs(index.row(), column) ? QVariant(QBrush(warningColor())) : QVariant();
    case Qt::ForegroundRole: return isParam && !value ? QVariant(QBrush(mutedColor())) : QVariant();
    default: return {};
    }
}

QVariant ValueMatrixModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= columnCount()) {
        return {};
    }
    if (section == NodeColumn) {
        return role == Qt::DisplayRole ? QVariant(tr("Node")) : QVariant();
    }
    if (section == InstanceColumn) {
        return role == Qt::DisplayRole ? QVariant(tr("Instance")) : QVariant();
    }
    const int param = section - FirstParamColumn;
    switch (role) {
    case Qt::DisplayRole: return m_headers[param];
    case Qt::ToolTipRole:
    case ParamRole: return m_params[param];
    default: return {};
    }
}

QList<ValueMatrixModel::Row> ValueMatrixModel::rowsOf(const QString &node,
                                                      const QList<InstanceValue> &values) const
{
    QList<Row> rows;
    for (const InstanceValue &value : values) {
        auto it = std::find_if(rows.begin(), rows.end(),
                               [&](const Row &row) { return row.instance == value.instance; });
        if (it == rows.end()) {
            rows.append(Row{node, value.instance, {}});
            it = rows.end() - 1;
        }
        it->values.insert(value.name, value.value);
    }
    std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
        return rowLess(a.node, a.instance, b.node, b.instance);
    });
    return rows;
}

void ValueMatrixModel::rebuildHeaders()
{
    // The shortest suffix no other column ends with: "max_pages_per_rpc" alone, "ost0.…" and
    // "ost1.…" when both are selected.
    m_headers.clear();
    for (const QString &name : std::as_const(m_params)) {
        const int components = int(name.count(u'.')) + 1;
        QString header = name;
        for (int count = 1; count < components; ++count) {
            const QString candidate = suffix(name, count);
            const bool ambiguous =
                std::any_of(m_params.cbegin(), m_params.cend(), [&](const QString &other) {
                    return other != name &&
                           (other == candidate || other.endsWith(u'.' + candidate));
                });
            if (!ambiguous) {
                header = candidate;
                break;
            }
        }
        m_headers.append(header);
    }
}

QList<std::optional<QString>> ValueMatrixModel::computeCommon() const
{
    QList<std::optional<QString>> common;
    for (const QString &param : std::as_const(m_params)) {
        QHash<QString, int> counts;
        QStringList order; // first seen first, for ties
        for (const Row &row : m_rows) {
            const auto it = row.values.constFind(param);
            if (it == row.values.cend()) {
                continue;
            }
            if (!counts.contains(*it)) {
                order.append(*it);
            }
            ++counts[*it];
        }
        std::optional<QString> best;
        int bestCount = 0;
        for (const QString &value : std::as_const(order)) {
            if (counts.value(value) > bestCount) {
                best = value;
                bestCount = counts.value(value);
            }
        }
        common.append(best);
    }
    return common;
}

void ValueMatrixModel::commonChanged(const QList<std::optional<QString>> &before)
{
    if (m_rows.isEmpty()) {
        return;
    }
    for (int i = 0; i < m_common.size(); ++i) {
        if (i < before.size() && before[i] == m_common[i]) {
            continue;
        }
        emit dataChanged(index(0, FirstParamColumn + i),
                         index(int(m_rows.size()) - 1, FirstParamColumn + i),
                         {Qt::BackgroundRole, Qt::ToolTipRole, DiffersRole});
    }
}

const QString *ValueMatrixModel::cell(int row, int column) const
{
    if (row < 0 || row >= m_rows.size() || column < FirstParamColumn || column >= columnCount()) {
        return nullptr;
    }
    const auto &values = m_rows[row].values;
    const auto it = values.constFind(m_params[column - FirstParamColumn]);
    return it == values.cend() ? nullptr : &*it;
}

} // namespace lutra::console
