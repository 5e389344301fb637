#include "core/rates.h"

#include <algorithm>

namespace lutra::console {

namespace {

bool sameNames(const QStringList &names, const QList<Counter> &counters)
{
    if (names.size() != counters.size()) {
        return false;
    }
    for (qsizetype i = 0; i < names.size(); ++i) {
        if (names[i] != counters[i].name) {
            return false;
        }
    }
    return true;
}

QStringList namesOf(const QList<Counter> &counters)
{
    QStringList names;
    names.reserve(counters.size());
    for (const auto &counter : counters) {
        names.append(counter.name);
    }
    return names;
}

} // namespace

QList<BlockRates> RateTracker::add(const CounterUpdate &update)
{
    qsizetype blockCount = 0;
    for (const auto &instance : update.instances) {
        blockCount += instance.blocks.size();
    }
    QList<BlockRates> result;
    result.reserve(blockCount);

    for (const auto &instance : update.instances) {
        auto &blocks = m_previous[instance.instance];
        for (const auto &block : instance.blocks) {
            auto found = blocks.find(block.name);
            if (found == blocks.end()) {
                Previous first;
                first.snapshotTimeNs = block.snapshotTimeNs;
                first.startTimeNs = block.startTimeNs;
                first.names = namesOf(block.counters);
                first.samples.reserve(block.counters.size());
                for (const auto &counter : block.counters) {
                    first.samples.append(counter.samples);
                }
                blocks.insert(block.name, std::move(first));
                continue;
            }
            Previous &previous = *found;
            if (block.snapshotTimeNs <= previous.snapshotTimeNs) {
                continue;
            }

            const bool namesKept = sameNames(previous.names, block.counters);
            bool reset = !namesKept || block.startTimeNs != previous.startTimeNs;
            for (qsizetype i = 0; !reset && i < block.counters.size(); ++i) {
                reset = block.counters[i].samples < previous.samples[i];
            }

            qint64 spanNs = block.snapshotTimeNs - previous.snapshotTimeNs;
            if (reset) {
                // Counted from zero since the reset, or since the previous snapshot if the start
                // is not within the interval (a counter went down without a new start time).
                const qint64 from = std::max(previous.snapshotTimeNs, block.startTimeNs);
                if (block.snapshotTimeNs - from > 0) {
                    spanNs = block.snapshotTimeNs - from;
                }
            }
            const double seconds = static_cast<double>(spanNs) / 1e9;

            BlockRates rates;
            rates.instance = instance.instance;
            rates.block = block.name;
            rates.timeNs = block.snapshotTimeNs;
            rates.intervalSeconds = seconds;
            rates.reset = reset;
            rates.perSecond.reserve(block.counters.size());
            for (qsizetype i = 0; i < block.counters.size(); ++i) {
                const quint64 now = block.counters[i].samples;
                const quint64 delta = reset ? now : now - previous.samples[i];
                rates.perSecond.append(static_cast<double>(delta) / seconds);
            }

            if (!namesKept) {
                previous.names = namesOf(block.counters);
            }
            previous.samples.resize(block.counters.size());
            for (qsizetype i = 0; i < block.counters.size(); ++i) {
                previous.samples[i] = block.counters[i].samples;
            }
            previous.snapshotTimeNs = block.snapshotTimeNs;
            previous.startTimeNs = block.startTimeNs;

            rates.counters = previous.names; // shared, not copied
            result.append(std::move(rates));
        }
    }
    return result;
}

void RateTracker::clear()
{
    m_previous.clear();
}

} // namespace lutra::console
