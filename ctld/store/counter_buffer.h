#pragma once
// CounterBuffer: counter samples waiting for the next batched write, already downsampled. Each
// series keeps one bucket per bucket width (normally one or two between flushes), so memory is
// bounded by series x buckets, not by samples; a hard bound on buckets drops the oldest.
// Recording never touches SQLite and allocates only for a series or bucket not seen before.

#include "store/records.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lutra::params {
class Glob;
}

namespace lutra::ctld {

// What a bucket keeps. Times in ns since the epoch.
struct BucketValues {
    std::int64_t lastNs = 0; // time of the latest sample in the bucket
    std::int64_t last = 0;
    std::int64_t min = 0;
    std::int64_t max = 0;
};

// Folds `from` into `into` (same series, same bucket): the later sample's value is the last;
// min and max widen. The SQL upsert in store_counters.cpp does the same.
void mergeBucket(BucketValues &into, const BucketValues &from) noexcept;

// One bucket of one series as it goes to (or comes from) the database.
struct BucketRow {
    std::string instance;
    std::string counter;
    std::int64_t bucketNs = 0; // bucket start
    BucketValues values;
};

class CounterBuffer {
public:
    struct Stats {
        std::uint64_t samplesRecorded = 0;
        std::uint64_t bucketsDropped = 0; // lost to the bucket bound (the oldest go first)
        std::uint64_t bucketsExpired = 0; // older than the retention when flushed
        std::uint64_t bucketsBuffered = 0;
    };

    CounterBuffer(std::chrono::nanoseconds bucketWidth, std::size_t maxBuckets);

    void record(std::string_view instance, TimePoint time, std::span<const CounterValue> values);

    // Moves everything buffered into the in-flight batch, dropping buckets that start before
    // cutoffNs (past the retention), and returns it for one batched write. Series not recorded
    // since the previous batch are forgotten (instances come and go); the others keep their
    // storage. One batch at a time: the caller serialises beginFlush() .. endFlush().
    const std::vector<BucketRow> &beginFlush(std::int64_t cutoffNs);
    // The batch was committed (forget it) or not (merge it back for the next try).
    void endFlush(bool committed);
    // Copies of the buffered and in-flight buckets of matching series (null: any) that start
    // in [sinceNs, untilNs). A bucket may also be in the database already: merging is
    // idempotent, so readers merge both.
    std::vector<BucketRow> snapshot(const params::Glob *instanceGlob,
                                    const params::Glob *counterGlob, std::int64_t sinceNs,
                                    std::int64_t untilNs) const;

    Stats stats() const;
    std::int64_t bucketStart(std::int64_t timeNs) const noexcept;

private:
    struct Bucket {
        std::int64_t startNs = 0;
        BucketValues values;
    };
    struct Series {
        std::vector<Bucket> buckets; // ascending startNs
    };
    struct StringHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view text) const noexcept
        {
            return std::hash<std::string_view>{}(text);
        }
    };
    template <typename V>
    using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;
    struct Instance {
        StringMap<Series> series;
    };

    // Folds a bucket into its series, within the bound; the caller holds m_mutex.
    void addLocked(Series &series, const Bucket &bucket);
    Series &seriesLocked(std::string_view instance, std::string_view counter);

    const std::int64_t m_bucketNs;
    const std::size_t m_maxBuckets;
    mutable std::mutex m_mutex;
    StringMap<Instance> m_instances;
    std::size_t m_buckets = 0;         // in m_instances
    std::vector<BucketRow> m_inFlight; // written only by beginFlush/endFlush, under m_mutex
    Stats m_stats;
};

} // namespace lutra::ctld
