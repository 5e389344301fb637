#include "core/params/counters.h"

#include <algorithm>
#include <bit>
#include <cinttypes>
#include <cstdio>
#include <new>
#include <thread>

namespace lutra::params {

namespace detail {
std::size_t nextThreadIndex() noexcept
{
    static std::atomic<std::size_t> next{0};
    return next.fetch_add(1, std::memory_order_relaxed);
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

CounterBlock::~CounterBlock() = default;

void CounterBlock::sample(std::size_t index, std::int64_t value) noexcept
{
    Cell &c = cell(index);
    c.samples.fetch_add(1, std::memory_order_relaxed);
    c.sum.fetch_add(value, std::memory_order_relaxed);
    // The shard is normally written by one thread only, so these loops almost never retry.
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
    for (std::size_t i = 0; i < m_defs.size(); ++i) {
        CounterReading reading{m_defs[i].name,
                               m_defs[i].unit,
                               0,
                               m_defs[i].withMinMaxSum,
                               std::numeric_limits<std::int64_t>::max(),
                               std::numeric_limits<std::int64_t>::min(),
                               0};
        for (std::size_t shard = 0; shard <= m_shardMask; ++shard) {
            const Cell &c = m_cells[shard * m_stride + i];
            reading.samples += c.samples.load(std::memory_order_relaxed);
            reading.sum += c.sum.load(std::memory_order_relaxed);
            reading.min = std::min(reading.min, c.min.load(std::memory_order_relaxed));
            reading.max = std::max(reading.max, c.max.load(std::memory_order_relaxed));
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
    const std::size_t count = m_stride * (m_shardMask + 1);
    for (std::size_t i = 0; i < count; ++i) {
        Cell &c = m_cells[i];
        c.samples.store(0, std::memory_order_relaxed);
        c.sum.store(0, std::memory_order_relaxed);
        c.min.store(std::numeric_limits<std::int64_t>::max(), std::memory_order_relaxed);
        c.max.store(std::numeric_limits<std::int64_t>::min(), std::memory_order_relaxed);
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
