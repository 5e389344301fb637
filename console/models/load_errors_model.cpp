#include "models/load_errors_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QBrush>
#include <QHash>

namespace lutra::console {

LoadErrorsModel::LoadErrorsModel(QObject *parent) : KeyedTableModel(parent) {}

void LoadErrorsModel::setErrors(const QList<QPair<QString, ProfileError>> &errors)
{
    // The key is everything a row shows, so a row that stays never needs a dataChanged.
    QList<Row> wanted;
    QHash<QString, int> seen;
    for (const auto &[node, error] : errors) {
        const QString text = node + u'\n' + profileErrorText(error);
        const int repeat = seen[text]++;
        Row row{text + u'\n' + QString::number(repeat), node, error};
        wanted.append(row);
    }
    syncTo(
        m_rows, wanted, [](const Row &row) { return row.key; },
        [](const Row &, const Row &) { return true; });
}

int LoadErrorsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int LoadErrorsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LoadErrorsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    switch (role) {
    case Qt::DisplayRole:
    case Qt::ToolTipRole:
        switch (Column(index.column())) {
        case Node: return row.node;
        case Where: return where(row.error);
        case Message: return row.error.message;
        case ColumnCount: break;
        }
        return {};
    case NodeRole: return row.node;
    case Qt::ForegroundRole:
        return index.column() == Message ? QVariant(QBrush(errorColor())) : QVariant();
    default: return {};
    }
}

QVariant LoadErrorsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Node: return tr("Node");
    case Where: return tr("Where");
    case Message: return tr("Message");
    case ColumnCount: break;
    }
    return {};
}

QString LoadErrorsModel::where(const ProfileError &error)
{
    if (error.line <= 0) {
        return error.file;
    }
    return QStringLiteral("%1:%2:%3").arg(error.file).arg(error.line).arg(error.column);
}

} // namespace lutra::console
