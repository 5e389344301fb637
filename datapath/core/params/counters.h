#pragma once
// Counter blocks: cheap to bump from many threads, summed on read, rendered as Lustre stats.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace lutra::params {

namespace detail {
std::size_t nextThreadIndex() noexcept;
// A small dense number per thread: threads started one after another get different shards.
inline thread_local const std::size_t t_threadIndex = nextThreadIndex();
} // namespace detail

struct CounterDef {
    std::string name;
    std::string unit;           // shown as "[unit]": "pages", "bytes", "usecs", "reqs"
    bool withMinMaxSum = false; // also keep min, max and sum of the sampled values
};

struct CounterReading {
    std::string name;
    std::string unit;
    std::uint64_t samples = 0;
    bool withMinMaxSum = false;
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::int64_t sum = 0;
};

using WallClock = std::chrono::system_clock;

struct CounterSnapshot {
    WallClock::time_point snapshotTime;
    WallClock::time_point startTime; // creation or last clear
    std::vector<CounterReading> counters;
};

// Any block that renders in Lustre's stats format and can be cleared: CounterBlock here,
// histograms such as rpc_stats later.
class StatsSource {
public:
    virtual ~StatsSource() = default;
    virtual CounterSnapshot snapshot() const = 0;
    virtual std::string render(WallClock::time_point now) const = 0;
    virtual void clear() = 0;
};

// A fixed set of counters. Each thread writes its own cache-line-aligned shard (picked once per
// thread), so the hot path is one relaxed atomic add on a line no other core normally touches;
// readers sum the shards. `clear` is not a barrier: increments racing with it may land on
// either side, as with Lustre's lprocfs counters.
class CounterBlock final : public StatsSource {
public:
    explicit CounterBlock(std::vector<CounterDef> defs, std::size_t shards = defaultShards());
    ~CounterBlock() override;
    CounterBlock(const CounterBlock &) = delete;
    CounterBlock &operator=(const CounterBlock &) = delete;

    // Adds `samples` to counter `index`.
    void add(std::size_t index, std::uint64_t samples = 1) noexcept
    {
        cell(index).samples.fetch_add(samples, std::memory_order_relaxed);
    }

    // Records one sample of `value` (for counters with min/max/sum).
    void sample(std::size_t index, std::int64_t value) noexcept;

    std::size_t size() const noexcept { return m_defs.size(); }
    const std::vector<CounterDef> &defs() const noexcept { return m_defs; }

    CounterSnapshot snapshot() const override;
    std::string render(WallClock::time_point now) const override;
    void clear() override;

    // Next power of two >= 2 x hardware threads, within [4, 64].
    static std::size_t defaultShards() noexcept;

private:
    struct alignas(32) Cell {
        std::atomic<std::uint64_t> samples{0};
        std::atomic<std::int64_t> sum{0};
        std::atomic<std::int64_t> min{std::numeric_limits<std::int64_t>::max()};
        std::atomic<std::int64_t> max{std::numeric_limits<std::int64_t>::min()};
    };
    static constexpr std::size_t kCacheLine = 64;
    static_assert(kCacheLine % sizeof(Cell) == 0, "cells must tile cache lines");
    struct CellsDeleter {
        void operator()(Cell *cells) const noexcept;
    };

    Cell &cell(std::size_t index) const noexcept
    {
        return m_cells[(detail::t_threadIndex & m_shardMask) * m_stride + index];
    }

    std::vector<CounterDef> m_defs;
    std::size_t m_shardMask;
    std::size_t m_stride;                          // cells per shard, padded to whole cache lines
    std::unique_ptr<Cell[], CellsDeleter> m_cells; // cache-line aligned
    std::atomic<WallClock::rep> m_startTime;
};

// Renders a snapshot exactly as Lustre's lprocfs_stats_seq_show does:
//   snapshot_time             1700000000.000000000 secs.nsecs
//   start_time                ...
//   elapsed_time              ...
//   hits                      42 samples [pages]
// Counters with no samples are left out; min/max/sum follow when the counter keeps them.
std::string renderStats(const CounterSnapshot &snapshot);

} // namespace lutra::params
