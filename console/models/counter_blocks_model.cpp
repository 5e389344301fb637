#include "models/counter_blocks_model.h"

#include "models/format.h"

#include <algorithm>
#include <cmath>

namespace lutra::console {

namespace {

enum Level { InstanceLevel, BlockLevel, CounterLevel };

bool sameValue(const CounterRow &row, const Counter &counter)
{
    return row.unit == counter.unit && row.samples == counter.samples &&
           row.withMinMaxSum == counter.withMinMaxSum && row.min == counter.min &&
           row.max == counter.max && row.sum == counter.sum;
}

bool sameRate(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// What an admin reads first comes first: the readahead counters (the hit ratio), then the page
// cache (cached pages against max_cached_mb); every other block after them in the data's order.
int displayRank(const QString &block)
{
    if (block.endsWith(QStringLiteral(".read_ahead_stats"))) {
        return 0;
    }
    if (block.endsWith(QStringLiteral(".page_cache_stats"))) {
        return 1;
    }
    return 2;
}

} // namespace

CounterBlocksModel::CounterBlocksModel(QObject *parent) : TreeModel<CounterRow>(parent) {}

void CounterBlocksModel::setCounters(const CounterUpdate &update)
{
    QStringList instanceIds;
    QList<const InstanceCounters *> instances;
    for (const InstanceCounters &instance : update.instances) {
        if (!instanceIds.contains(instance.instance)) {
            instanceIds.append(instance.instance);
            instances.append(&instance);
        }
    }
    syncChildren(&m_root, instanceIds, [](Item &) {});

    for (qsizetype i = 0; i < instances.size(); ++i) {
        Item *instanceItem = m_root.children[size_t(i)].get();
        QStringList blockNames;
        QList<const CounterBlock *> blocks;
        for (const CounterBlock &block : instances[i]->blocks) {
            if (!blockNames.contains(block.name)) {
                blockNames.append(block.name);
                blocks.append(&block);
            }
        }
        std::stable_sort(blocks.begin(), blocks.end(), [](const auto *a, const auto *b) {
            return displayRank(a->name) < displayRank(b->name);
        });
        blockNames.clear();
        for (const CounterBlock *block : blocks) {
            blockNames.append(block->name);
        }
        syncChildren(instanceItem, blockNames, [](Item &) {});

        for (qsizetype b = 0; b < blocks.size(); ++b) {
            Item *blockItem = instanceItem->children[size_t(b)].get();
            QStringList counterNames;
            QList<const Counter *> counters;
            for (const Counter &counter : blocks[b]->counters) {
                if (!counterNames.contains(counter.name)) {
                    counterNames.append(counter.name);
                    counters.append(&counter);
                }
            }
            syncChildren(blockItem, counterNames, [](Item &) {});

            // One dataChanged per block, over the counters that changed.
            int firstChanged = -1;
            int lastChanged = -1;
            for (qsizetype c = 0; c < counters.size(); ++c) {
                CounterRow &row = blockItem->children[size_t(c)]->payload;
                const Counter &counter = *counters[c];
                if (sameValue(row, counter)) {
                    continue;
                }
                row.unit = counter.unit;
                row.samples = counter.samples;
                row.withMinMaxSum = counter.withMinMaxSum;
                row.min = counter.min;
                row.max = counter.max;
                row.sum = counter.sum;
                if (firstChanged < 0) {
                    firstChanged = int(c);
                }
                lastChanged = int(c);
            }
            if (firstChanged >= 0) {
                emitChanged(blockItem->children[size_t(firstChanged)].get(),
                            blockItem->children[size_t(lastChanged)].get(), Value, Unit);
            }
        }
    }
}

void CounterBlocksModel::setRates(const QList<BlockRates> &rates)
{
    for (const BlockRates &block : rates) {
        const Item *instanceItem = m_root.child(block.instance);
        Item *blockItem = instanceItem ? instanceItem->child(block.block) : nullptr;
        if (!blockItem) {
            continue;
        }
        const bool blockResetChanged = blockItem->payload.reset != block.reset;
        blockItem->payload.reset = block.reset;
        if (blockResetChanged) {
            emitChanged(blockItem, blockItem, Rate, Rate, {Qt::ToolTipRole});
        }
        int firstChanged = -1;
        int lastChanged = -1;
        const qsizetype count = std::min(block.counters.size(), block.perSecond.size());
        for (qsizetype i = 0; i < count; ++i) {
            Item *counterItem = blockItem->child(block.counters[i]);
            if (!counterItem) {
                continue;
            }
            CounterRow &row = counterItem->payload;
            if (sameRate(row.rate, block.perSecond[i]) && row.reset == block.reset) {
                continue;
            }
            row.rate = block.perSecond[i];
            row.reset = block.reset;
            const int position = counterItem->row();
            firstChanged = firstChanged < 0 ? position : std::min(firstChanged, position);
            lastChanged = std::max(lastChanged, position);
        }
        if (firstChanged >= 0) {
            emitChanged(blockItem->children[size_t(firstChanged)].get(),
                        blockItem->children[size_t(lastChanged)].get(), Rate, Rate,
                        {Qt::DisplayRole, Qt::ToolTipRole});
        }
    }
}

void CounterBlocksModel::clear()
{
    resetTree();
}

int CounterBlocksModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant CounterBlocksModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const Item *item = itemAt(index);
    const int level = item->depth();
    const int column = index.column();
    const CounterRow &row = item->payload;

    const Item *instanceItem = item;
    while (instanceItem->parent != &m_root) {
        instanceItem = instanceItem->parent;
    }
    switch (role) {
    case InstanceRole: return instanceItem->key;
    case BlockRole:
        if (level == BlockLevel) {
            return item->key;
        }
        return level == CounterLevel ? QVariant(item->parent->key) : QVariant();
    case CounterRole:
        return level == CounterLevel ? QVariant(item->parent->key + u'.' + item->key) : QVariant();
    default: break;
    }

    if (role == Qt::DisplayRole) {
        if (column == Name) {
            return item->key;
        }
        if (level != CounterLevel) {
            return {};
        }
        switch (Column(column)) {
        case Value: return formatCount(row.samples);
        case Rate: return formatRate(row.rate);
        case Unit: return row.unit;
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (column == Name) {
            return level == CounterLevel ? item->parent->key + u'.' + item->key : item->key;
        }
        if (column == Rate && level != InstanceLevel && row.reset) {
            return tr("counters restarted in this interval");
        }
        if (column == Value && level == CounterLevel && row.withMinMaxSum) {
            return tr("min %1, max %2, sum %3")
                .arg(formatCount(row.min), formatCount(row.max), formatCount(row.sum));
        }
        return {};
    }
    if (role == Qt::TextAlignmentRole && (column == Value || column == Rate)) {
        return int(Qt::AlignRight | Qt::AlignVCenter);
    }
    return {};
}

QVariant CounterBlocksModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Name: return tr("Name");
    case Value: return tr("Value");
    case Rate: return tr("Rate");
    case Unit: return tr("Unit");
    case ColumnCount: break;
    }
    return {};
}

} // namespace lutra::console
