#include "models/plan_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QBrush>
#include <QHash>

#include <algorithm>

namespace lutra::console {

namespace {

// Why an entry of an apply did not happen: its own error, else its instance's, else the batch.
QString refusal(const PlanEntry &entry, const InstanceSetOutcome *result, bool planApplied)
{
    if (result) {
        for (const SetEntry &set : result->entries) {
            if (set.name == entry.name && !set.error.isEmpty()) {
                return set.error;
            }
        }
        if (!result->errors.isEmpty()) {
            return result->errors.join(QStringLiteral("; "));
        }
    }
    // A set is applied everywhere or nowhere: this entry was undone because another failed.
    return planApplied ? PlanModel::tr("not applied") : PlanModel::tr("rolled back with the rest");
}

} // namespace

PlanModel::PlanModel(QObject *parent) : KeyedTableModel(parent) {}

void PlanModel::setPlan(const QString &node, const ProfilePlan &plan, Mode mode)
{
    replaceNode(node, rowsOf(node, plan, mode));
}

void PlanModel::setNodeError(const QString &node, const QString &error)
{
    Row row;
    row.node = node;
    row.kind = Kind::callFailed;
    row.error = error;
    row.key = node + u'\x1f' + u'\x1f' + u'\x1f' + QString::number(0); // unique per node
    replaceNode(node, {row});
}

void PlanModel::removeNode(const QString &node)
{
    if (m_plans.remove(node) > 0) {
        sync();
    }
}

void PlanModel::clear()
{
    if (m_plans.isEmpty()) {
        return;
    }
    beginResetModel();
    m_plans.clear();
    m_rows.clear();
    endResetModel();
}

void PlanModel::setChangedOnly(bool changedOnly)
{
    if (m_changedOnly == changedOnly) {
        return;
    }
    m_changedOnly = changedOnly;
    sync();
}

int PlanModel::changedCount() const
{
    int count = 0;
    for (const QList<Row> &rows : m_plans) {
        count += int(
            std::count_if(rows.cbegin(), rows.cend(), [](const Row &row) { return row.changed; }));
    }
    return count;
}

int PlanModel::errorCount() const
{
    int count = 0;
    for (const QList<Row> &rows : m_plans) {
        count += int(std::count_if(rows.cbegin(), rows.cend(), isError));
    }
    return count;
}

QStringList PlanModel::nodes() const
{
    QStringList nodes = m_plans.keys();
    std::sort(nodes.begin(), nodes.end(), naturalLess);
    return nodes;
}

int PlanModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int PlanModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant PlanModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole: {
        QString text;
        switch (Column(column)) {
        case Node: text = row.node; break;
        case Instance: text = row.instance; break;
        case Parameter: text = row.parameter; break;
        case Live: text = row.live; break;
        case Desired: text = row.desired; break;
        case Source: text = row.source; break;
        case Status: text = statusText(row); break;
        case ColumnCount: break;
        }
        if (role == Qt::ToolTipRole && text.isEmpty()) {
            return {};
        }
        return text;
    }
    case NodeRole: return row.node;
    case ChangedRole: return row.changed;
    case ErrorRole: return isError(row);
    case Qt::ForegroundRole:
        if (row.kind == Kind::error || row.kind == Kind::callFailed ||
            (row.kind == Kind::refused && column == Status)) {
            return QBrush(errorColor());
        }
        if (row.kind == Kind::noMatch) {
            return QBrush(mutedColor());
        }
        return {};
    case Qt::BackgroundRole:
        if (row.kind == Kind::drift && (column == Live || column == Status)) {
            return QBrush(warningColor());
        }
        return {};
    default: return {};
    }
}

QVariant PlanModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Node: return tr("Node");
    case Instance: return tr("Instance");
    case Parameter: return tr("Parameter");
    case Live: return tr("Live");
    case Desired: return tr("Desired");
    case Source: return tr("Source");
    case Status: return tr("Status");
    case ColumnCount: break;
    }
    return {};
}

QList<PlanModel::Row> PlanModel::rowsOf(const QString &node, const ProfilePlan &plan, Mode mode)
{
    QList<Row> rows;
    for (const ProfileError &error : plan.errors) {
        Row row;
        row.node = node;
        row.kind = Kind::error;
        row.error = profileErrorText(error);
        rows.append(row);
    }
    // Without entries a node would vanish from the table; say why it has none.
    if (plan.entries.isEmpty() && !plan.matchesNode) {
        Row row;
        row.node = node;
        row.kind = Kind::noMatch;
        rows.append(row);
    }
    for (const PlanEntry &entry : plan.entries) {
        Row row;
        row.node = node;
        row.instance = entry.instance;
        row.parameter = entry.name;
        row.live = entry.live;
        row.desired = entry.desired;
        row.source = entry.source;
        row.changed = entry.changed;
        switch (mode) {
        case Mode::diff: row.kind = entry.changed ? Kind::willChange : Kind::unchanged; break;
        case Mode::verify: row.kind = entry.changed ? Kind::drift : Kind::ok; break;
        case Mode::apply: {
            if (!entry.changed) {
                row.kind = Kind::unchanged;
                break;
            }
            const auto result = std::find_if(plan.results.cbegin(), plan.results.cend(),
                                             [&](const InstanceSetOutcome &outcome) {
                                                 return outcome.instance == entry.instance;
                                             });
            const InstanceSetOutcome *outcome = result == plan.results.cend() ? nullptr : &*result;
            if (outcome && outcome->applied) {
                row.kind = Kind::applied;
            } else {
                row.kind = Kind::refused;
                row.error = refusal(entry, outcome, plan.applied);
            }
            break;
        }
        }
        rows.append(row);
    }
    // Node-level rows have no instance, so they stay first; equal keys keep the node's order.
    std::stable_sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
        if (a.instance != b.instance) {
            return naturalLess(a.instance, b.instance);
        }
        return a.parameter != b.parameter && naturalLess(a.parameter, b.parameter);
    });
    QHash<QString, int> seen;
    for (Row &row : rows) {
        const QString base = row.node + u'\x1f' + row.instance + u'\x1f' + row.parameter;
        row.key = base + u'\x1f' + QString::number(seen[base]++);
    }
    return rows;
}

bool PlanModel::isError(const Row &row)
{
    return row.kind == Kind::error || row.kind == Kind::callFailed || row.kind == Kind::refused;
}

QString PlanModel::statusText(const Row &row)
{
    switch (row.kind) {
    case Kind::unchanged: return tr("unchanged");
    case Kind::willChange: return tr("will change");
    case Kind::applied: return tr("applied");
    case Kind::refused: return tr("refused: %1").arg(row.error);
    case Kind::drift: return tr("drift");
    case Kind::ok: return tr("ok");
    case Kind::error:
    case Kind::callFailed: return tr("error: %1").arg(row.error);
    case Kind::noMatch: return tr("profile does not match this node");
    }
    return {};
}

bool PlanModel::shown(const Row &row) const
{
    return !m_changedOnly || (row.kind != Kind::unchanged && row.kind != Kind::ok);
}

void PlanModel::replaceNode(const QString &node, QList<Row> rows)
{
    m_plans.insert(node, std::move(rows));
    sync();
}

void PlanModel::sync()
{
    QList<Row> wanted;
    for (const QString &node : nodes()) {
        for (const Row &row : std::as_const(m_plans[node])) {
            if (shown(row)) {
                wanted.append(row);
            }
        }
    }
    // Rows that stayed (a diff becoming an apply) change in place: one signal per run.
    syncTo(
        m_rows, wanted, [](const Row &row) { return row.key; },
        [](const Row &a, const Row &b) { return a == b; });
}

} // namespace lutra::console
