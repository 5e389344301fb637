#include "models/profiles_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QBrush>

#include <algorithm>

namespace lutra::console {

namespace {

QStringList sortedNaturally(QStringList names)
{
    std::sort(names.begin(), names.end(), naturalLess);
    return names;
}

// ProfileError has no ==; its text says everything it holds.
QStringList errorTexts(const QList<ProfileError> &errors)
{
    QStringList texts;
    for (const ProfileError &error : errors) {
        texts.append(profileErrorText(error));
    }
    return texts;
}

} // namespace

ProfilesModel::ProfilesModel(QObject *parent) : KeyedTableModel(parent) {}

void ProfilesModel::setNodeProfiles(const QString &node, const ProfileList &list)
{
    const QStringList errorsBefore = errorTexts(m_lists.value(node).errors);
    m_lists.insert(node, list);
    rebuild();
    if (errorTexts(list.errors) != errorsBefore) {
        emit loadErrorsChanged();
    }
}

void ProfilesModel::removeNode(const QString &node)
{
    if (!m_lists.contains(node)) {
        return;
    }
    const bool hadErrors = !m_lists.value(node).errors.isEmpty();
    m_lists.remove(node);
    rebuild();
    if (hadErrors) {
        emit loadErrorsChanged();
    }
}

QStringList ProfilesModel::nodes() const
{
    return sortedNaturally(m_lists.keys());
}

QStringList ProfilesModel::nodesMatching(const QString &profile) const
{
    QStringList matching;
    for (auto it = m_lists.cbegin(); it != m_lists.cend(); ++it) {
        for (const ProfileSummary &summary : it->profiles) {
            if (summary.name == profile && summary.matchesNode) {
                matching.append(it.key());
                break;
            }
        }
    }
    return sortedNaturally(matching);
}

QStringList ProfilesModel::nodesKnowing(const QString &profile) const
{
    QStringList knowing;
    for (auto it = m_lists.cbegin(); it != m_lists.cend(); ++it) {
        for (const ProfileSummary &summary : it->profiles) {
            if (summary.name == profile) {
                knowing.append(it.key());
                break;
            }
        }
    }
    return sortedNaturally(knowing);
}

QList<QPair<QString, ProfileError>> ProfilesModel::loadErrors() const
{
    QList<QPair<QString, ProfileError>> errors;
    for (const QString &node : nodes()) {
        for (const ProfileError &error : m_lists[node].errors) {
            errors.append({node, error});
        }
    }
    return errors;
}

int ProfilesModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int ProfilesModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ProfilesModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const int column = index.column();
    const bool differs = row.differs;
    switch (role) {
    case Qt::DisplayRole: return text(row, column);
    case SortRole:
        switch (Column(column)) {
        case Matches: return row.matching;
        case Missing: return int(row.missing.size());
        default: return text(row, column);
        }
    case ProfileRole: return row.name;
    case DiffersRole: return differs;
    case Qt::ToolTipRole:
        switch (Column(column)) {
        case Source: return differs ? row.sources.join(u'\n') : row.source;
        case Matches:
            return row.matchingNodes.isEmpty() ? tr("matches none of the nodes that know it")
                                               : row.matchingNodes.join(QStringLiteral(", "));
        case Missing: return row.missing.isEmpty() ? QVariant() : QVariant(row.missing.join(u'\n'));
        default: {
            const QString tip = text(row, column);
            return tip.isEmpty() ? QVariant() : QVariant(tip);
        }
        }
    case Qt::BackgroundRole:
        return column == Source && differs ? QVariant(QBrush(warningColor())) : QVariant();
    default: return {};
    }
}

QVariant ProfilesModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) {
        return {};
    }
    if (role == Qt::DisplayRole) {
        switch (Column(section)) {
        case Name: return tr("Name");
        case Description: return tr("Description");
        case Extends: return tr("Extends");
        case Source: return tr("Source");
        case Matches: return tr("Matches");
        case Missing: return tr("Missing");
        case ColumnCount: break;
        }
    }
    if (role == Qt::ToolTipRole) {
        switch (Column(section)) {
        case Source: return tr("The profile's file, or \"stored\" when it was put through the API");
        case Matches:
            return tr("Nodes the profile's match: section selects, of those that know it");
        case Missing: return tr("Selected nodes that do not know the profile");
        default: break;
        }
    }
    return {};
}

void ProfilesModel::rebuild()
{
    // A node that comes or goes changes Missing and Matches of many rows: one signal per run.
    syncTo(
        m_rows, computeRows(), [](const Row &row) { return row.name; },
        [](const Row &a, const Row &b) { return a == b; });
}

QList<ProfilesModel::Row> ProfilesModel::computeRows() const
{
    const QStringList allNodes = nodes();
    QMap<QString, Row> rows;
    QMap<QString, QStringList> knownBy; // profile → nodes that list it
    for (const QString &node : allNodes) {
        for (const ProfileSummary &summary : m_lists[node].profiles) {
            QStringList &knowing = knownBy[summary.name];
            if (knowing.contains(node)) {
                continue; // listed twice by one node: count it once
            }
            knowing.append(node);
            auto it = rows.find(summary.name);
            if (it == rows.end()) {
                // Description and parents as the first node (in natural order) reports them.
                Row row;
                row.name = summary.name;
                row.description = summary.description;
                row.extends = summary.extends;
                row.source = summary.source;
                it = rows.insert(summary.name, row);
            }
            Row &row = *it;
            ++row.knowing;
            row.differs = row.differs || summary.source != row.source;
            row.sources.append(node + QStringLiteral(": ") + summary.source);
            if (summary.matchesNode) {
                ++row.matching;
                row.matchingNodes.append(node);
            }
        }
    }
    QList<Row> result;
    result.reserve(rows.size());
    for (auto it = rows.begin(); it != rows.end(); ++it) {
        Row &row = *it;
        const QStringList &knowing = knownBy[row.name];
        for (const QString &node : allNodes) {
            if (!knowing.contains(node)) {
                row.missing.append(node);
            }
        }
        result.append(row);
    }
    std::sort(result.begin(), result.end(),
              [](const Row &a, const Row &b) { return naturalLess(a.name, b.name); });
    return result;
}

QString ProfilesModel::text(const Row &row, int column) const
{
    switch (Column(column)) {
    case Name: return row.name;
    case Description: return row.description;
    case Extends: return row.extends.join(QStringLiteral(", "));
    case Source: return row.differs ? tr("differs") : row.source;
    case Matches:
        return row.knowing == 1 ? tr("%1 of 1 node").arg(row.matching)
                                : tr("%1 of %2 nodes").arg(row.matching).arg(row.knowing);
    case Missing:
        return row.missing.isEmpty() ? unknownText() : row.missing.join(QStringLiteral(", "));
    case ColumnCount: break;
    }
    return {};
}

} // namespace lutra::console
