#pragma once
// Brings a model's keyed rows to a new list of keys with the fewest structural signals, so views
// keep selections and scroll positions across periodic updates.

#include <QList>
#include <QSet>

namespace lutra::console {

// `current` are the model's keys now, `wanted` the keys it must end with (unique, in order).
// Vanished keys are removed in runs, keys out of place moved up one by one, new keys inserted in
// runs. The callbacks signal (begin…/end…) and change the model's storage:
//   removeRows(first, last), moveRow(from, to) with to < from, insertRows(first, last) where the
//   new rows are wanted[first..last] and land at exactly those positions.
template <typename Key, typename RemoveRows, typename MoveRow, typename InsertRows>
void syncRows(QList<Key> current, const QList<Key> &wanted, RemoveRows removeRows, MoveRow moveRow,
              InsertRows insertRows)
{
    const QSet<Key> wantedSet(wanted.cbegin(), wanted.cend());
    for (qsizetype last = current.size() - 1; last >= 0;) {
        if (wantedSet.contains(current[last])) {
            --last;
            continue;
        }
        qsizetype first = last;
        while (first > 0 && !wantedSet.contains(current[first - 1])) {
            --first;
        }
        removeRows(int(first), int(last));
        current.remove(first, last - first + 1);
        last = first - 1;
    }

    const QSet<Key> present(current.cbegin(), current.cend());
    for (qsizetype i = 0; i < wanted.size();) {
        if (i < current.size() && current[i] == wanted[i]) {
            ++i;
            continue;
        }
        if (present.contains(wanted[i])) {
            const qsizetype from = current.indexOf(wanted[i], i);
            moveRow(int(from), int(i));
            current.move(from, i);
            ++i;
            continue;
        }
        qsizetype end = i + 1;
        while (end < wanted.size() && !present.contains(wanted[end])) {
            ++end;
        }
        insertRows(int(i), int(end - 1));
        current.insert(i, end - i, Key{});
        for (qsizetype k = i; k < end; ++k) {
            current[k] = wanted[k];
        }
        i = end;
    }
}

} // namespace lutra::console

#include <QAbstractTableModel>

#include <type_traits>

namespace lutra::console {

// A table model whose rows live in one QList, each with a unique key. syncTo() brings the rows to
// a wanted list: structure with syncRows (views keep selections), then rows whose content changed
// in place, one dataChanged per run of them from `firstColumn` on.
class KeyedTableModel : public QAbstractTableModel {
public:
    using QAbstractTableModel::QAbstractTableModel;

protected:
    template <typename Row, typename KeyOf, typename Same>
    void syncTo(QList<Row> &rows, const QList<Row> &wanted, KeyOf keyOf, Same same,
                int firstColumn = 0)
    {
        using Key = std::decay_t<decltype(keyOf(std::declval<const Row &>()))>;
        QList<Key> current;
        current.reserve(rows.size());
        for (const Row &row : std::as_const(rows)) {
            current.append(keyOf(row));
        }
        QList<Key> wantedKeys;
        wantedKeys.reserve(wanted.size());
        for (const Row &row : wanted) {
            wantedKeys.append(keyOf(row));
        }
        syncRows(
            current, wantedKeys,
            [&](int first, int last) {
                beginRemoveRows({}, first, last);
                rows.remove(first, last - first + 1);
                endRemoveRows();
            },
            [&](int from, int to) {
                beginMoveRows({}, from, from, {}, to);
                rows.move(from, to);
                endMoveRows();
            },
            [&](int first, int last) {
                beginInsertRows({}, first, last);
                for (int i = first; i <= last; ++i) {
                    rows.insert(i, wanted[i]);
                }
                endInsertRows();
            });
        int runStart = -1;
        for (int i = 0; i <= rows.size(); ++i) {
            if (i < rows.size() && !same(rows[i], wanted[i])) {
                rows[i] = wanted[i];
                runStart = runStart < 0 ? i : runStart;
                continue;
            }
            if (runStart >= 0) {
                emit dataChanged(index(runStart, firstColumn), index(i - 1, columnCount() - 1));
                runStart = -1;
            }
        }
    }
};

} // namespace lutra::console
