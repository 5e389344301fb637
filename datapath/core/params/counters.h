#pragma once
// Counter blocks: cheap to bump from many threads, summed on read, rendered as Lustre stats.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace lutra::params {

namespace detail {
// Counter slots: each of the first kOwnedSlots live threads owns one slot, and its cells in every
// block are written by that thread only, so an update is a plain load and store (no lock
// prefix). A thread gives its slot back when it exits; the next new thread takes it over with the
// counts in it, so nothing a thread counted vanishes and a block holds at most kOwnedSlots owned
// cell groups. Threads beyond kOwnedSlots share atomic shards.
inline constexpr std::uint32_t kOwnedSlots = 64;
inline constexpr std::uint32_t kSlotUnclaimed = 0xffffffff; // this thread has not counted yet
inline constexpr std::uint32_t kSlotShared = 0xfffffffe;    // no slot free, or the thread exits
// initial-exec: the linker turns it into one %fs-relative load in an executable (the default
// model, relaxed from PIC code, loads the thread pointer first: one more load per update).
[[gnu::tls_model("initial-exec")]] inline thread_local constinit std::uint32_t t_slot =
    kSlotUnclaimed;
// Claims a slot for the calling thread (kSlotShared when none is free) and stores it in t_slot.
std::uint32_t claimSlot() noexcept;
// The shared shard of a thread without a slot: threads started one after another differ.
std::size_t sharedShardIndex() noexcept;
// Slots owned by live threads now (for tests).
std::size_t ownedSlotsInUse() noexcept;
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

// A fixed set of counters. A thread that owns a counter slot (detail::kOwnedSlots) writes its
// own cells in the block, allocated on its first update: one plain load and store per counter,
// on a line no other thread writes. Threads without a slot share cache-line-aligned shards with
// atomic adds. Readers sum every cell with relaxed loads, so a read may see an update half done,
// as with Lustre's lprocfs counters. `clear` moves the block's epoch: owned cells of an older
// epoch read as zero and their owner zeroes them at its next update; increments racing with a
// clear may land on either side.
class CounterBlock final : public StatsSource {
    struct Cell;

public:
    // This thread's own cells in one block, kept by a caller that counts in that block again and
    // again (the client's per-thread fast read): an update through it checks the block's epoch
    // and the thread's slot (two loads side by side) and writes the cell, instead of the chain
    // slot -> cell table -> cells. Stale after a clear or in another thread: the update through
    // it then takes the ordinary way and points it again.
    class Mine {
    private:
        friend class CounterBlock;
        Cell *m_cells = nullptr;
        std::uint64_t m_epoch = 0; // never a block's epoch (they start at 1): unbound
        std::uint32_t m_slot = detail::kSlotShared;
    };

    explicit CounterBlock(std::vector<CounterDef> defs, std::size_t shards = defaultShards());
    ~CounterBlock() override;
    CounterBlock(const CounterBlock &) = delete;
    CounterBlock &operator=(const CounterBlock &) = delete;

    // Adds `samples` to counter `index`.
    void add(std::size_t index, std::uint64_t samples = 1) noexcept
    {
        if (Cell *own = ownCells()) {
            bump(own[index].samples, samples);
            return;
        }
        addSlow(index, samples);
    }

    // Records one sample of `value` (for counters with min/max/sum).
    void sample(std::size_t index, std::int64_t value) noexcept
    {
        if (Cell *own = ownCells()) {
            sampleOwned(own[index], value);
            return;
        }
        sampleSlow(index, value);
    }

    // The same through `mine`, which must be used with this block only.
    void add(Mine &mine, std::size_t index, std::uint64_t samples = 1) noexcept
    {
        if (current(mine)) {
            bump(mine.m_cells[index].samples, samples);
            return;
        }
        addRebinding(mine, index, samples);
    }
    void sample(Mine &mine, std::size_t index, std::int64_t value) noexcept
    {
        if (current(mine)) {
            sampleOwned(mine.m_cells[index], value);
            return;
        }
        sampleRebinding(mine, index, value);
    }

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
    // One slot's cells in this block: written by the slot's owner only.
    struct OwnedCells {
        std::atomic<Cell *> cells{nullptr};
        std::atomic<std::uint64_t> epoch{0}; // the block's epoch the cells count in
    };
    static constexpr std::size_t kCacheLine = 64;
    static_assert(kCacheLine % sizeof(Cell) == 0, "cells must tile cache lines");
    struct CellsDeleter {
        void operator()(Cell *cells) const noexcept;
    };

    static void bump(std::atomic<std::uint64_t> &counter, std::uint64_t by) noexcept
    {
        counter.store(counter.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
    }

    static void sampleOwned(Cell &c, std::int64_t value) noexcept
    {
        bump(c.samples, 1);
        c.sum.store(static_cast<std::int64_t>(
                        static_cast<std::uint64_t>(c.sum.load(std::memory_order_relaxed)) +
                        static_cast<std::uint64_t>(value)),
                    std::memory_order_relaxed);
        if (value < c.min.load(std::memory_order_relaxed)) {
            c.min.store(value, std::memory_order_relaxed);
        }
        if (value > c.max.load(std::memory_order_relaxed)) {
            c.max.store(value, std::memory_order_relaxed);
        }
    }

    // This thread's cells, when it owns a slot and its cells are current; else null.
    Cell *ownCells() const noexcept
    {
        const std::uint32_t slot = detail::t_slot;
        if (slot >= detail::kOwnedSlots) {
            return nullptr;
        }
        const OwnedCells &own = m_owned[slot];
        Cell *cells = own.cells.load(std::memory_order_relaxed);
        if (cells == nullptr ||
            own.epoch.load(std::memory_order_relaxed) != m_epoch.load(std::memory_order_relaxed)) {
            return nullptr;
        }
        return cells;
    }
    // The block's epoch has not moved since `mine` was pointed, by this thread: its cells are
    // current (only their owner moves their epoch, to the block's).
    bool current(const Mine &mine) const noexcept
    {
        return mine.m_epoch == m_epoch.load(std::memory_order_relaxed) &&
               mine.m_slot == detail::t_slot;
    }
    void addRebinding(Mine &mine, std::size_t index, std::uint64_t samples) noexcept;
    void sampleRebinding(Mine &mine, std::size_t index, std::int64_t value) noexcept;
    // Points `mine` at this thread's cells when prepareOwnCells gave them.
    void bind(Mine &mine, Cell *cells) const noexcept;
    // The first update of this thread (claims a slot), of its slot in this block (allocates the
    // cells) or since a clear (zeroes them); or a thread without a slot (a shared shard).
    Cell *prepareOwnCells() noexcept;
    void addSlow(std::size_t index, std::uint64_t samples) noexcept;
    void sampleSlow(std::size_t index, std::int64_t value) noexcept;
    Cell &sharedCell(std::size_t index) const noexcept
    {
        return m_cells[(detail::sharedShardIndex() & m_shardMask) * m_stride + index];
    }
    static void resetCell(Cell &cell) noexcept;

    std::vector<CounterDef> m_defs;
    std::size_t m_shardMask;
    std::size_t m_stride;                          // cells per shard, padded to whole cache lines
    std::unique_ptr<Cell[], CellsDeleter> m_cells; // shared shards, cache-line aligned
    // In the block, not behind a pointer: an update's chain of dependent loads is the thread's
    // slot, then its cells.
    std::array<OwnedCells, detail::kOwnedSlots> m_owned;
    std::atomic<std::uint64_t> m_epoch{1}; // moves on clear
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
