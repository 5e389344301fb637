#include "core/params/counters.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <new>
#include <thread>

namespace lutra::params {

namespace detail {

namespace {

constexpr std::uint32_t kSlotWordBits = 64;
// Bit s set: slot s is owned by a live thread. Plain atomics, so threads exiting after static
// destruction began still find them.
constinit std::array<std::atomic<std::uint64_t>, (kOwnedSlots + kSlotWordBits - 1) / kSlotWordBits>
    g_slotsInUse{};
thread_local constinit std::size_t t_sharedShard = std::numeric_limits<std::size_t>::max();

// Gives the thread's slot back when the thread exits. The counts stay in the blocks: the release
// below publishes them to whichever thread claims the slot next.
struct SlotReleaser {
    std::uint32_t slot = kSlotShared;
    ~SlotReleaser()
    {
        if (slot >= kOwnedSlots) {
            return;
        }
        t_slot = kSlotShared; // counts from later thread-exit code go to the shared shards
        g_slotsInUse[slot / kSlotWordBits].fetch_and(~(std::uint64_t{1} << (slot % kSlotWordBits)),
                                                     std::memory_order_release);
    }
};

} // namespace

std::uint32_t claimSlot() noexcept
{
    if (t_slot != kSlotUnclaimed) {
        return t_slot;
    }
    thread_local SlotReleaser releaser;
    for (std::uint32_t word = 0; word < g_slotsInUse.size(); ++word) {
        std::uint64_t used = g_slotsInUse[word].load(std::memory_order_relaxed);
        while (true) {
            const auto bit = static_cast<std::uint32_t>(std::countr_one(used));
            const std::uint32_t slot = word * kSlotWordBits + bit;
            if (bit == kSlotWordBits || slot >= kOwnedSlots) {
                break;
            }
            // Acquire: the previous owner's counts in this slot's cells are visible.
            if (g_slotsInUse[word].compare_exchange_weak(used, used | (std::uint64_t{1} << bit),
                                                         std::memory_order_acquire,
                                                         std::memory_order_relaxed)) {
                releaser.slot = slot;
                t_slot = slot;
                return slot;
            }
        }
    }
    t_slot = kSlotShared;
    return kSlotShared;
}

std::size_t sharedShardIndex() noexcept
{
    if (t_sharedShard == std::numeric_limits<std::size_t>::max()) {
        static std::atomic<std::size_t> next{0};
        t_sharedShard = next.fetch_add(1, std::memory_order_relaxed);
    }
    return t_sharedShard;
}

std::size_t ownedSlotsInUse() noexcept
{
    std::size_t used = 0;
    for (const auto &word : g_slotsInUse) {
        used += static_cast<std::size_t>(std::popcount(word.load(std::memory_order_relaxed)));
    }
    return used;
}

} // namespace detail

namespace {

WallClock::rep toRep(WallClock::time_point time)
{
    return time.time_since_epoch().count();
}

WallClock::time_point fromRep(WallClock::rep rep)
{
    return WallClock::time_point(WallClock::duration(rep));
}

void appendTime(std::string &out, const char *label, std::chrono::nanoseconds value)
{
    const auto ns = std::max<std::int64_t>(value.count(), 0);
    char line[96];
    std::snprintf(line, sizeof line, "%-25s %" PRId64 ".%09" PRId64 " secs.nsecs\n", label,
                  ns / 1'000'000'000, ns % 1'000'000'000);
    out += line;
}

} // namespace

void CounterBlock::CellsDeleter::operator()(Cell *cells) const noexcept
{
    ::operator delete[](cells, std::align_val_t{kCacheLine});
}

std::size_t CounterBlock::defaultShards() noexcept
{
    const std::size_t threads = std::max(1U, std::thread::hardware_concurrency());
    return std::clamp<std::size_t>(std::bit_ceil(2 * threads), 4, 64);
}

CounterBlock::CounterBlock(std::vector<CounterDef> defs, std::size_t shards)
    : m_defs(std::move(defs)), m_shardMask(std::bit_ceil(std::max<std::size_t>(shards, 1)) - 1),
      m_startTime(toRep(WallClock::now()))
{
    constexpr std::size_t cellsPerLine = kCacheLine / sizeof(Cell);
    m_stride =
        std::max<std::size_t>(1, (m_defs.size() + cellsPerLine - 1) / cellsPerLine) * cellsPerLine;
    const std::size_t count = m_stride * (m_shardMask + 1);
    void *raw = ::operator new[](count * sizeof(Cell), std::align_val_t{kCacheLine});
    auto *cells = static_cast<Cell *>(raw);
    for (std::size_t i = 0; i < count; ++i) {
        new (cells + i) Cell{};
    }
    m_cells.reset(cells);
}

CounterBlock::~CounterBlock()
{
    const CellsDeleter free;
    for (std::uint32_t slot = 0; slot < detail::kOwnedSlots; ++slot) {
        if (Cell *cells = m_owned[slot].cells.load(std::memory_order_relaxed)) {
            free(cells);
        }
    }
}

void CounterBlock::resetCell(Cell &c) noexcept
{
    c.samples.store(0, std::memory_order_relaxed);
    c.sum.store(0, std::memory_order_relaxed);
    c.min.store(std::numeric_limits<std::int64_t>::max(), std::memory_order_relaxed);
    c.max.store(std::numeric_limits<std::int64_t>::min(), std::memory_order_relaxed);
}

CounterBlock::Cell *CounterBlock::prepareOwnCells() noexcept
{
    const std::uint32_t slot = detail::claimSlot();
    if (slot >= detail::kOwnedSlots) {
        return nullptr;
    }
    OwnedCells &own = m_owned[slot];
    const std::uint64_t epoch = m_epoch.load(std::memory_order_acquire);
    Cell *cells = own.cells.load(std::memory_order_relaxed);
    if (cells == nullptr) {
        void *raw =
            ::operator new[](m_stride * sizeof(Cell), std::align_val_t{kCacheLine}, std::nothrow);
        if (raw == nullptr) {
            return nullptr;
        }
        cells = static_cast<Cell *>(raw);
        for (std::size_t i = 0; i < m_stride; ++i) {
            new (cells + i) Cell{};
        }
        own.epoch.store(epoch, std::memory_order_relaxed);
        own.cells.store(cells, std::memory_order_release); // readers see the cells made
        return cells;
    }
    if (own.epoch.load(std::memory_order_relaxed) != epoch) {
        // Cleared since this slot last counted: start again from zero. Release: a reader that
        // sees the new epoch sees the zeroes, never the counts from before the clear.
        for (std::size_t i = 0; i < m_stride; ++i) {
            resetCell(cells[i]);
        }
        own.epoch.store(epoch, std::memory_order_release);
    }
    return cells;
}

void CounterBlock::addSlow(std::size_t index, std::uint64_t samples) noexcept
{
    if (Cell *own = prepareOwnCells()) {
        bump(own[index].samples, samples);
        return;
    }
    sharedCell(index).samples.fetch_add(samples, std::memory_order_relaxed);
}

void CounterBlock::bind(Mine &mine, Cell *cells) const noexcept
{
    const std::uint32_t slot = detail::t_slot;
    mine.m_cells = cells;
    mine.m_slot = slot;
    // The epoch prepareOwnCells just gave the slot's cells (the owner is the only writer).
    mine.m_epoch = m_owned[slot].epoch.load(std::memory_order_relaxed);
}

void CounterBlock::addRebinding(Mine &mine, std::size_t index, std::uint64_t samples) noexcept
{
    if (Cell *own = prepareOwnCells()) {
        bind(mine, own);
        bump(own[index].samples, samples);
        return;
    }
    mine = Mine{};
    sharedCell(index).samples.fetch_add(samples, std::memory_order_relaxed);
}

void CounterBlock::sampleRebinding(Mine &mine, std::size_t index, std::int64_t value) noexcept
{
    if (Cell *own = prepareOwnCells()) {
        bind(mine, own);
        sampleOwned(own[index], value);
        return;
    }
    mine = Mine{};
    sampleSlow(index, value);
}

void CounterBlock::sampleSlow(std::size_t index, std::int64_t value) noexcept
{
    if (Cell *own = prepareOwnCells()) {
        sampleOwned(own[index], value);
        return;
    }
    Cell &c = sharedCell(index);
    c.samples.fetch_add(1, std::memory_order_relaxed);
    c.sum.fetch_add(value, std::memory_order_relaxed);
    // A shard is shared by threads beyond the owned slots only: these loops rarely retry.
    auto low = c.min.load(std::memory_order_relaxed);
    while (value < low && !c.min.compare_exchange_weak(low, value, std::memory_order_relaxed)) {
    }
    auto high = c.max.load(std::memory_order_relaxed);
    while (value > high && !c.max.compare_exchange_weak(high, value, std::memory_order_relaxed)) {
    }
}

CounterSnapshot CounterBlock::snapshot() const
{
    CounterSnapshot snap;
    snap.snapshotTime = WallClock::now();
    snap.startTime = fromRep(m_startTime.load(std::memory_order_relaxed));
    snap.counters.reserve(m_defs.size());
    // The owned cells that count in this epoch; older ones were cleared (their owner has not
    // counted since to zero them).
    const std::uint64_t epoch = m_epoch.load(std::memory_order_acquire);
    std::vector<const Cell *> owned;
    for (std::uint32_t slot = 0; slot < detail::kOwnedSlots; ++slot) {
        const OwnedCells &own = m_owned[slot];
        const Cell *cells = own.cells.load(std::memory_order_acquire);
        if (cells != nullptr && own.epoch.load(std::memory_order_acquire) == epoch) {
            owned.push_back(cells);
        }
    }
    for (std::size_t i = 0; i < m_defs.size(); ++i) {
        CounterReading reading{m_defs[i].name,
                               m_defs[i].unit,
                               0,
                               m_defs[i].withMinMaxSum,
                               std::numeric_limits<std::int64_t>::max(),
                               std::numeric_limits<std::int64_t>::min(),
                               0};
        const auto addCell = [&reading](const Cell &c) {
            reading.samples += c.samples.load(std::memory_order_relaxed);
            reading.sum = static_cast<std::int64_t>(
                static_cast<std::uint64_t>(reading.sum) +
                static_cast<std::uint64_t>(c.sum.load(std::memory_order_relaxed)));
            reading.min = std::min(reading.min, c.min.load(std::memory_order_relaxed));
            reading.max = std::max(reading.max, c.max.load(std::memory_order_relaxed));
        };
        for (std::size_t shard = 0; shard <= m_shardMask; ++shard) {
            addCell(m_cells[shard * m_stride + i]);
        }
        for (const Cell *cells : owned) {
            addCell(cells[i]);
        }
        if (reading.samples == 0 || !reading.withMinMaxSum) {
            reading.min = reading.max = 0;
        }
        snap.counters.push_back(std::move(reading));
    }
    return snap;
}

std::string CounterBlock::render(WallClock::time_point now) const
{
    auto snap = snapshot();
    snap.snapshotTime = now;
    return renderStats(snap);
}

void CounterBlock::clear()
{
    // Owned cells are their owners' to write: the new epoch makes them read as zero, and each
    // owner zeroes its own at its next update.
    m_epoch.fetch_add(1, std::memory_order_acq_rel);
    const std::size_t count = m_stride * (m_shardMask + 1);
    for (std::size_t i = 0; i < count; ++i) {
        resetCell(m_cells[i]);
    }
    m_startTime.store(toRep(WallClock::now()), std::memory_order_relaxed);
}

std::string renderStats(const CounterSnapshot &snapshot)
{
    using std::chrono::duration_cast;
    using std::chrono::nanoseconds;
    std::string out;
    appendTime(out, "snapshot_time",
               duration_cast<nanoseconds>(snapshot.snapshotTime.time_since_epoch()));
    appendTime(out, "start_time",
               duration_cast<nanoseconds>(snapshot.startTime.time_since_epoch()));
    appendTime(out, "elapsed_time",
               duration_cast<nanoseconds>(snapshot.snapshotTime - snapshot.startTime));
    for (const auto &counter : snapshot.counters) {
        if (counter.samples == 0) {
            continue;
        }
        char line[160];
        int used = std::snprintf(line, sizeof line, "%-25s %" PRIu64 " samples [%s]",
                                 counter.name.c_str(), counter.samples, counter.unit.c_str());
        out.append(
            line, static_cast<std::size_t>(std::clamp(used, 0, static_cast<int>(sizeof line) - 1)));
        if (counter.withMinMaxSum) {
            used = std::snprintf(line, sizeof line, " %" PRId64 " %" PRId64 " %" PRId64,
                                 counter.min, counter.max, counter.sum);
            out.append(line, static_cast<std::size_t>(
                                 std::clamp(used, 0, static_cast<int>(sizeof line) - 1)));
        }
        out += '\n';
    }
    return out;
}

} // namespace lutra::params
