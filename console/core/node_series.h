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

#include <memory>

namespace lutra::console {

class NodeSeries {
public:
    explicit NodeSeries(int capacity = 3600);

    // The past, from GetCounterHistory (10 s buckets): cumulative counters become rates between
    // buckets (resets as in RateTracker), gauges are taken as they are. Points at or after the
    // first live update are ignored; call once per incarnation, before or after live updates.
    void prefill(const QList<HistorySeries> &history);

    // One live update. Returns the rates it produced (for the live counter tables).
    QList<BlockRates> add(const CounterUpdate &update);

    // The node could not be reached at `timeMs`: every series gets a NaN there (a gap).
    void markGap(qint64 timeMs);

    QStringList instances() const;
    // Series of an instance, in data order: "<block>.<counter>" (rate/s),
    // "<block>.hit_ratio" (read_ahead_stats blocks), then gauge names ("ldlm.namespaces.x.lock_count").
    QStringList keys(const QString &instance) const;

    QList<QPointF> points(const QString &instance, const QString &key, qint64 sinceMs = 0) const;
    double latest(const QString &instance, const QString &key) const; // NaN when none

    // hits and misses summed over every read_ahead_stats block of every instance.
    QList<QPointF> nodeHitRatio(qint64 sinceMs = 0) const;
    double latestNodeHitRatio() const;
    double latestNodeMissesPerSecond() const;

    qint64 lastTimeMs() const; // 0 before any point
    qsizetype memoryBytes() const; // what the rings hold, for the bench

private:
    struct InstanceColumns;
    int m_capacity;
    RateTracker m_rates;
    QHash<QString, std::shared_ptr<InstanceColumns>> m_instances;
    QStringList m_instanceOrder;
    RingBuffer<qint64> m_nodeTimes;
    RingBuffer<float> m_nodeRatio;
    RingBuffer<float> m_nodeMisses;
    qint64 m_firstLiveMs = 0;
};

} // namespace lutra::console
