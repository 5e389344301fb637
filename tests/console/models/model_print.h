#pragma once
// Flattens a model to "a | b | c" lines, children indented two spaces per level, so tests compare
// exact cell texts with one QCOMPARE.

#include <QAbstractItemModel>
#include <QStringList>

namespace lutra::console::test {

// `columns` picks and orders the columns printed; empty = all of them.
inline QStringList printModel(const QAbstractItemModel &model, const QList<int> &columns = {},
                              const QModelIndex &parent = {}, int depth = 0)
{
    QStringList lines;
    QList<int> printed = columns;
    if (printed.isEmpty()) {
        for (int column = 0; column < model.columnCount(parent); ++column) {
            printed.append(column);
        }
    }
    for (int row = 0; row < model.rowCount(parent); ++row) {
        QStringList cells;
        for (const int column : std::as_const(printed)) {
            cells.append(model.index(row, column, parent).data().toString());
        }
        lines.append(QString(depth * 2, u' ') + cells.join(QStringLiteral(" | ")));
        const QModelIndex child = model.index(row, 0, parent);
        if (model.hasChildren(child)) {
            lines += printModel(model, columns, child, depth + 1);
        }
    }
    return lines;
}

} // namespace lutra::console::test
