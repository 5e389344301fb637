#pragma once
// Everything the console draws over time for one node, bounded: per instance, a shared time axis
// with one float column per series (rates of every counter, the hit ratio of every
// read_ahead_stats block, every numeric gauge), and the node's own readahead hit ratio. Times are
// ms since the epoch (QDateTimeAxis' unit).

#include "core/rates.h"
#include "core/ring_buffer.h"
#include "core/types.h"

#include <QHash>
#include <QPointF>

#include <vector>

namespace lutra::console {

class NodeSeries {
public:
    explicit NodeSeries(int capacity = 3600);

    // The past, from GetCounterHistory (10 s buckets): cumulative counters become rates between
    // buckets (resets as in RateTracker), gauges are taken as they are. Points at or after the
    // first live update are ignored; call once per incarnation, before or after live updates.
    // History rows are merged in by time under the rows already there; the rings keep the newest
    // `capacity` rows.
    void prefill(const QList<HistorySeries> &history);

    // One live update. Returns the rates it produced (for the live counter tables).
    QList<BlockRates> add(const CounterUpdate &update);

    // The node could not be reached at `timeMs`: every series gets a NaN there (a gap).
    void markGap(qint64 timeMs);

    QStringList instances() const;
    // Series of an instance, in data order: "<block>.<counter>" (rate/s),
    // "<block>.hit_ratio" (read_ahead_stats blocks), then gauge names
    // ("ldlm.namespaces.x.lock_count"). A series first seen later comes last, NaN before it.
    QStringList keys(const QString &instance) const;

    QList<QPointF> points(const QString &instance, const QString &key, qint64 sinceMs = 0) const;
    double latest(const QString &instance, const QString &key) const; // NaN when none

    // hits and misses summed over every read_ahead_stats block of every instance.
    QList<QPointF> nodeHitRatio(qint64 sinceMs = 0) const;
    // The node's newest known hit ratio and the misses/s of that same row, looking back at
    // most kLatestLookbackMs from the newest row: a poll whose snapshot did not advance, or a
    // second without reads, leaves the last rate standing instead of blanking the node (the
    // fleet's Prometheus rates span a minute too). NaN for both when no row in reach has one.
    struct NodeReadahead {
        double hitRatio;
        double missesPerSecond;
    };
    static constexpr qint64 kLatestLookbackMs = 60'000;
    NodeReadahead latestNodeReadahead() const;

    qint64 lastTimeMs() const;     // 0 before any point
    qsizetype memoryBytes() const; // what the rings hold, for the bench

private:
    // Rows over time: one time ring and equally long float columns (pushed together, so row i
    // of every column belongs to times[i]).
    struct Table {
        RingBuffer<qint64> times;
        std::vector<RingBuffer<float>> columns;
    };
    // Which columns one block's counters go to, cached so a steady stream builds no key strings.
    struct BlockKeys {
        QStringList counters; // the names the columns were resolved for
        std::vector<int> columns;
        int hitRatioColumn = -1; // read_ahead_stats blocks only
        qsizetype hits = -1;     // index in counters
        qsizetype misses = -1;
    };
    struct InstanceColumns {
        Table table;
        QStringList keys; // column order
        QHash<QString, int> columnOf;
        QHash<QString, BlockKeys> blocks;
    };

    InstanceColumns &instanceColumns(const QString &instance);
    int column(InstanceColumns &columns, const QString &key);
    const BlockKeys &blockKeys(InstanceColumns &columns, const CounterBlock &block);
    // Rows (sorted times; per column of `table` its values, or nullptr for NaN) merged into
    // `table` by time; a row already there wins over one at the same time.
    void mergeRows(Table &table, const std::vector<qint64> &times,
                   const std::vector<const std::vector<float> *> &columns) const;
    static QList<QPointF> tablePoints(const Table &table, std::size_t column, qint64 sinceMs);
    static double tableLatest(const Table &table, std::size_t column);

    int m_capacity;
    RateTracker m_rates;
    QHash<QString, InstanceColumns> m_instances;
    QStringList m_instanceOrder;
    Table m_node;             // column 0: hit ratio, 1: misses per second
    qint64 m_firstLiveMs;     // no live update yet: the largest qint64
    std::vector<float> m_row; // scratch row of add()
};

} // namespace lutra::console
