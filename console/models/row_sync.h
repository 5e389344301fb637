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
