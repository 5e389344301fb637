#pragma once
// Counter rates from consecutive snapshots of one node, with reset detection.

#include "core/types.h"

#include <QHash>

namespace lutra::console {

struct BlockRates {
    QString instance;
    QString block;              // "llite.lutra.read_ahead_stats"
    qint64 timeNs = 0;          // snapshot time of the newer sample
    double intervalSeconds = 0; // the time the rates are over
    bool reset = false;         // the counters restarted within the interval
    QStringList counters;       // counter names, in the block's order
    QList<double> perSecond;    // one rate per counter
};

// Feeds on a node's successive CounterUpdates. A block seen for the first time yields no rates.
// A reset — a new start time (a clear, a restarted process) or any counter lower than before —
// yields rates counted from the reset: value / (snapshot − max(previous snapshot, start)), as
// Prometheus' rate() treats a counter that went down. Snapshots that did not advance are skipped.
class RateTracker {
public:
    QList<BlockRates> add(const CounterUpdate &update);
    void clear();

private:
    struct Previous {
        qint64 snapshotTimeNs = 0;
        qint64 startTimeNs = 0;
        QList<quint64> samples;
        QStringList names;
    };
    // instance → block → previous snapshot; two lookups instead of a concatenated key, so a
    // steady stream allocates nothing here.
    QHash<QString, QHash<QString, Previous>> m_previous;
};

} // namespace lutra::console
