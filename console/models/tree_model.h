#pragma once
// The tree plumbing the console's tree models share: items keyed by name under a root, indexes
// pointing at items, and children brought to a new key list with fine-grained signals.

#include "models/row_sync.h"

#include <QAbstractItemModel>
#include <QStringList>

#include <algorithm>
#include <memory>
#include <vector>

namespace lutra::console {

template <typename Payload> struct TreeItem {
    TreeItem *parent = nullptr;
    QString key;
    Payload payload{};
    std::vector<std::unique_ptr<TreeItem>> children;

    // Position among the parent's children (0 for the root).
    int row() const
    {
        if (!parent) {
            return 0;
        }
        const auto &siblings = parent->children;
        const auto it = std::find_if(siblings.cbegin(), siblings.cend(),
                                     [this](const auto &item) { return item.get() == this; });
        return int(it - siblings.cbegin());
    }

    // 0 for top-level items, -1 for the root.
    int depth() const
    {
        int depth = -1;
        for (const TreeItem *item = parent; item; item = item->parent) {
            ++depth;
        }
        return depth;
    }

    TreeItem *child(const QString &childKey) const
    {
        for (const auto &item : children) {
            if (item->key == childKey) {
                return item.get();
            }
        }
        return nullptr;
    }

    QStringList childKeys() const
    {
        QStringList keys;
        keys.reserve(qsizetype(children.size()));
        for (const auto &item : children) {
            keys.append(item->key);
        }
        return keys;
    }
};

// Not a Q_OBJECT (a template cannot be); the models deriving from it are.
template <typename Payload> class TreeModel : public QAbstractItemModel {
public:
    using Item = TreeItem<Payload>;

    using QAbstractItemModel::QAbstractItemModel;

    QModelIndex index(int row, int column, const QModelIndex &parent = {}) const override
    {
        if (!hasIndex(row, column, parent)) {
            return {};
        }
        return createIndex(row, column, itemAt(parent)->children[size_t(row)].get());
    }

    QModelIndex parent(const QModelIndex &child) const override
    {
        if (!child.isValid()) {
            return {};
        }
        return indexOf(itemAt(child)->parent);
    }

    int rowCount(const QModelIndex &parent = {}) const override
    {
        // Only the first column has children, as views expect.
        if (parent.isValid() && parent.column() != 0) {
            return 0;
        }
        return int(itemAt(parent)->children.size());
    }

protected:
    // The root for an invalid index.
    Item *itemAt(const QModelIndex &index) const
    {
        if (!index.isValid()) {
            return const_cast<Item *>(&m_root);
        }
        return static_cast<Item *>(index.internalPointer());
    }

    // Invalid for the root.
    QModelIndex indexOf(const Item *item, int column = 0) const
    {
        if (!item || item == &m_root) {
            return {};
        }
        return createIndex(item->row(), column, const_cast<Item *>(item));
    }

    // Brings parent's children to `wanted` (unique keys, in order): vanished items removed, new
    // ones inserted, each new item handed to init(item) before the insert is announced.
    template <typename Init> void syncChildren(Item *parent, const QStringList &wanted, Init init)
    {
        const QModelIndex parentIndex = indexOf(parent);
        auto &children = parent->children;
        syncRows(
            parent->childKeys(), wanted,
            [&](int first, int last) {
                beginRemoveRows(parentIndex, first, last);
                children.erase(children.begin() + first, children.begin() + last + 1);
                endRemoveRows();
            },
            [&](int from, int to) {
                beginMoveRows(parentIndex, from, from, parentIndex, to);
                std::rotate(children.begin() + to, children.begin() + from,
                            children.begin() + from + 1);
                endMoveRows();
            },
            [&](int first, int last) {
                beginInsertRows(parentIndex, first, last);
                for (int i = first; i <= last; ++i) {
                    auto item = std::make_unique<Item>();
                    item->parent = parent;
                    item->key = wanted[i];
                    init(*item);
                    children.insert(children.begin() + i, std::move(item));
                }
                endInsertRows();
            });
    }

    // One dataChanged over siblings first..last (rows of one parent) and the given columns.
    void emitChanged(const Item *first, const Item *last, int firstColumn, int lastColumn,
                     const QList<int> &roles = {})
    {
        emit this->dataChanged(indexOf(first, firstColumn), indexOf(last, lastColumn), roles);
    }

    void resetTree()
    {
        beginResetModel();
        m_root.children.clear();
        endResetModel();
    }

    Item m_root;
};

} // namespace lutra::console
