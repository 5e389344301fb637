#include "store/counter_buffer.h"

#include "core/params/glob.h"

#include <algorithm>

namespace lutra::ctld {

namespace {

std::int64_t toNs(TimePoint time) noexcept
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

} // namespace

void mergeBucket(BucketValues &into, const BucketValues &from) noexcept
{
    if (from.lastNs >= into.lastNs) {
        into.lastNs = from.lastNs;
        into.last = from.last;
    }
    into.min = std::min(into.min, from.min);
    into.max = std::max(into.max, from.max);
}

CounterBuffer::CounterBuffer(std::chrono::nanoseconds bucketWidth, std::size_t maxBuckets)
    : m_bucketNs(std::max<std::int64_t>(1, bucketWidth.count())),
      m_maxBuckets(std::max<std::size_t>(1, maxBuckets))
{
}

std::int64_t CounterBuffer::bucketStart(std::int64_t timeNs) const noexcept
{
    std::int64_t quotient = timeNs / m_bucketNs;
    if (timeNs % m_bucketNs != 0 && timeNs < 0) {
        --quotient; // floor, also before 1970
    }
    return quotient * m_bucketNs;
}

CounterBuffer::Series &CounterBuffer::seriesLocked(std::string_view instance,
                                                   std::string_view counter)
{
    auto instanceIt = m_instances.find(instance);
    if (instanceIt == m_instances.end()) {
        instanceIt = m_instances.emplace(std::string(instance), Instance{}).first;
    }
    auto &series = instanceIt->second.series;
    auto seriesIt = series.find(counter);
    if (seriesIt == series.end()) {
        seriesIt = series.emplace(std::string(counter), Series{}).first;
    }
    return seriesIt->second;
}

void CounterBuffer::addLocked(Series &series, const Bucket &bucket)
{
    auto &buckets = series.buckets;
    // Samples arrive in time order, so the match is almost always the last bucket.
    auto position = buckets.end();
    while (position != buckets.begin() && std::prev(position)->startNs >= bucket.startNs) {
        --position;
    }
    if (position != buckets.end() && position->startNs == bucket.startNs) {
        mergeBucket(position->values, bucket.values);
        return;
    }
    if (m_buckets >= m_maxBuckets) {
        // Full (the database has been failing for a while): keep the newest data.
        if (buckets.empty() || position == buckets.begin()) {
            ++m_stats.bucketsDropped;
            return;
        }
        buckets.erase(buckets.begin());
        --position;
        --m_buckets;
        ++m_stats.bucketsDropped;
    }
    buckets.insert(position, bucket);
    ++m_buckets;
}

void CounterBuffer::record(std::string_view instance, TimePoint time,
                           std::span<const CounterValue> values)
{
    const std::int64_t timeNs = toNs(time);
    const std::int64_t startNs = bucketStart(timeNs);
    std::lock_guard lock(m_mutex);
    for (const CounterValue &value : values) {
        addLocked(seriesLocked(instance, value.name),
                  Bucket{startNs, {timeNs, value.value, value.value, value.value}});
    }
    m_stats.samplesRecorded += values.size();
}

const std::vector<BucketRow> &CounterBuffer::beginFlush(std::int64_t cutoffNs)
{
    std::lock_guard lock(m_mutex);
    m_inFlight.clear();
    m_inFlight.reserve(m_buckets);
    for (auto instanceIt = m_instances.begin(); instanceIt != m_instances.end();) {
        auto &series = instanceIt->second.series;
        for (auto seriesIt = series.begin(); seriesIt != series.end();) {
            auto &buckets = seriesIt->second.buckets;
            if (buckets.empty()) {
                seriesIt = series.erase(seriesIt);
                continue;
            }
            for (const Bucket &bucket : buckets) {
                if (bucket.startNs < cutoffNs) {
                    ++m_stats.bucketsExpired;
                    continue;
                }
                m_inFlight.push_back(
                    {instanceIt->first, seriesIt->first, bucket.startNs, bucket.values});
            }
            buckets.clear();
            ++seriesIt;
        }
        instanceIt = series.empty() ? m_instances.erase(instanceIt) : std::next(instanceIt);
    }
    m_buckets = 0;
    return m_inFlight;
}

void CounterBuffer::endFlush(bool committed)
{
    std::lock_guard lock(m_mutex);
    if (!committed) {
        for (const BucketRow &row : m_inFlight) {
            addLocked(seriesLocked(row.instance, row.counter), Bucket{row.bucketNs, row.values});
        }
    }
    m_inFlight.clear();
}

std::vector<BucketRow> CounterBuffer::snapshot(const params::Glob *instanceGlob,
                                               const params::Glob *counterGlob,
                                               std::int64_t sinceNs, std::int64_t untilNs) const
{
    std::vector<BucketRow> rows;
    std::lock_guard lock(m_mutex);
    for (const auto &[instance, entry] : m_instances) {
        if (instanceGlob && !instanceGlob->matches(instance)) {
            continue;
        }
        for (const auto &[counter, series] : entry.series) {
            if (counterGlob && !counterGlob->matches(counter)) {
                continue;
            }
            for (const Bucket &bucket : series.buckets) {
                if (bucket.startNs >= sinceNs && bucket.startNs < untilNs) {
                    rows.push_back({instance, counter, bucket.startNs, bucket.values});
                }
            }
        }
    }
    for (const BucketRow &row : m_inFlight) {
        if ((!instanceGlob || instanceGlob->matches(row.instance)) &&
            (!counterGlob || counterGlob->matches(row.counter)) && row.bucketNs >= sinceNs &&
            row.bucketNs < untilNs) {
            rows.push_back(row);
        }
    }
    return rows;
}

CounterBuffer::Stats CounterBuffer::stats() const
{
    std::lock_guard lock(m_mutex);
    Stats stats = m_stats;
    stats.bucketsBuffered = m_buckets;
    return stats;
}

} // namespace lutra::ctld
