#pragma once
// The live counter blocks of one node as a tree: instance → block → counter, with each counter's
// value and rate. Structure comes from the data (no counter name is known in advance).

#include "core/rates.h"
#include "core/types.h"
#include "models/tree_model.h"

#include <QtNumeric>

namespace lutra::console {

struct CounterRow {
    QString unit;
    quint64 samples = 0;
    bool withMinMaxSum = false;
    qint64 min = 0;
    qint64 max = 0;
    qint64 sum = 0;
    double rate = qQNaN(); // per second; NaN before a rate exists
    bool reset = false;    // the counters restarted within the last rate's interval
};

class CounterBlocksModel : public TreeModel<CounterRow> {
    Q_OBJECT
public:
    enum Column { Name, Value, Rate, Unit, ColumnCount };
    Q_ENUM(Column)

    enum Roles {
        InstanceRole = Qt::UserRole + 1, // the instance id, on every row
        BlockRole,                       // the block name, on block and counter rows
        CounterRole,                     // "<block>.<counter>", on counter rows
    };

    explicit CounterBlocksModel(QObject *parent = nullptr);

    // Values change in place; instances, blocks and counters that appear or vanish are inserted
    // or removed. Rows end in the update's order.
    void setCounters(const CounterUpdate &update);
    // Rates of blocks already in the tree; others are ignored.
    void setRates(const QList<BlockRates> &rates);
    void clear();

    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
};

} // namespace lutra::console
