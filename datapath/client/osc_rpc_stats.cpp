#include "client/osc_rpc_stats.h"

#include <bit>
#include <chrono>
#include <cinttypes>
#include <cstdio>

namespace lutra::client {

namespace {

using params::WallClock;

// Lustre's pct(): integer percentage, 0 of nothing.
std::uint64_t pct(std::uint64_t part, std::uint64_t total) noexcept
{
    return total != 0 ? part * 100 / total : 0;
}

std::uint64_t sum(const std::array<std::uint64_t, OscRpcStats::kBuckets> &buckets) noexcept
{
    std::uint64_t total = 0;
    for (const std::uint64_t count : buckets) {
        total += count;
    }
    return total;
}

// Lustre's row labels are C ints: 1 << 31 prints as a negative number there, and here too.
int shiftedLabel(std::size_t shift) noexcept
{
    return static_cast<int>(static_cast<std::int32_t>(std::uint32_t{1} << shift));
}

enum class Labels { powers, counts, offsets };

void appendTable(std::string &out, const char *title,
                 const std::array<std::array<std::uint64_t, OscRpcStats::kBuckets>, 2> &histogram,
                 Labels labels)
{
    char line[128];
    std::snprintf(line, sizeof(line), "\n\t\t\tread\t\t\twrite\n%-22srpcs   %% cum %% |", title);
    out += line;
    out += "       rpcs   % cum %\n";
    const auto &reads = histogram[OscRpcStats::read];
    const auto &writes = histogram[OscRpcStats::write];
    const std::uint64_t readTotal = sum(reads);
    const std::uint64_t writeTotal = sum(writes);
    std::uint64_t readCum = 0;
    std::uint64_t writeCum = 0;
    for (std::size_t i = 0; i < OscRpcStats::kBuckets; ++i) {
        const std::uint64_t r = reads[i];
        const std::uint64_t w = writes[i];
        readCum += r;
        writeCum += w;
        int label = static_cast<int>(i);
        if (labels == Labels::powers) {
            label = shiftedLabel(i);
        } else if (labels == Labels::offsets) {
            label = i == 0 ? 0 : shiftedLabel(i - 1);
        }
        std::snprintf(line, sizeof(line),
                      "%d:\t\t%10" PRIu64 " %3" PRIu64 " %3" PRIu64 "   | %10" PRIu64 " %3" PRIu64
                      " %3" PRIu64 "\n",
                      label, r, pct(r, readTotal), pct(readCum, readTotal), w, pct(w, writeTotal),
                      pct(writeCum, writeTotal));
        out += line;
        // Like Lustre: stop after the row where both columns have reached their totals.
        if (readCum == readTotal && writeCum == writeTotal) {
            break;
        }
    }
}

} // namespace

OscRpcStats::OscRpcStats() : m_startTime(WallClock::now().time_since_epoch().count()) {}

std::size_t OscRpcStats::log2Bucket(std::uint64_t value) noexcept
{
    // fls(value - 1): the smallest b with value <= 2^b.
    return value <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(value - 1));
}

void OscRpcStats::tally(Histogram &histogram, std::size_t bucket) noexcept
{
    histogram[bucket < kBuckets ? bucket : kBuckets - 1].fetch_add(1, std::memory_order_relaxed);
}

void OscRpcStats::recordRpc(Direction direction, std::uint32_t pages, std::uint32_t inFlight,
                            std::uint64_t firstPage) noexcept
{
    tally(m_pagesPerRpc[direction], log2Bucket(pages));
    tally(m_rpcsInFlight[direction], inFlight);
    tally(m_offset[direction], log2Bucket(firstPage + 1));
}

OscRpcStats::Histograms OscRpcStats::histograms() const noexcept
{
    Histograms copy;
    for (std::size_t d = 0; d < 2; ++d) {
        for (std::size_t i = 0; i < kBuckets; ++i) {
            copy.pagesPerRpc[d][i] = m_pagesPerRpc[d][i].load(std::memory_order_relaxed);
            copy.rpcsInFlight[d][i] = m_rpcsInFlight[d][i].load(std::memory_order_relaxed);
            copy.offset[d][i] = m_offset[d][i].load(std::memory_order_relaxed);
        }
    }
    return copy;
}

params::CounterSnapshot OscRpcStats::snapshot() const
{
    params::CounterSnapshot snap;
    snap.snapshotTime = WallClock::now();
    snap.startTime =
        WallClock::time_point(WallClock::duration(m_startTime.load(std::memory_order_relaxed)));
    const Histograms copy = histograms();
    const char *const directions[2] = {"read", "write"};
    auto add = [&](std::string name, std::string unit, std::uint64_t samples) {
        params::CounterReading reading;
        reading.name = std::move(name);
        reading.unit = std::move(unit);
        reading.samples = samples;
        snap.counters.push_back(std::move(reading));
    };
    for (std::size_t d = 0; d < 2; ++d) {
        const std::string prefix = directions[d];
        add(prefix + "_rpcs_in_flight", "reqs", static_cast<std::uint64_t>(inFlight(Direction(d))));
        add("pending_" + prefix + "_pages", "pages",
            static_cast<std::uint64_t>(pendingPages(Direction(d))));
        // Non-empty buckets only, named by their Lustre row label.
        for (std::size_t i = 0; i < kBuckets; ++i) {
            if (copy.pagesPerRpc[d][i] != 0) {
                add(prefix + "_pages_per_rpc_" + std::to_string(shiftedLabel(i)), "rpcs",
                    copy.pagesPerRpc[d][i]);
            }
        }
        for (std::size_t i = 0; i < kBuckets; ++i) {
            if (copy.rpcsInFlight[d][i] != 0) {
                add(prefix + "_rpcs_in_flight_" + std::to_string(i), "rpcs",
                    copy.rpcsInFlight[d][i]);
            }
        }
    }
    return snap;
}

std::string OscRpcStats::render(params::WallClock::time_point now) const
{
    const Histograms copy = histograms();
    const auto sinceEpoch =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch());
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(sinceEpoch);
    const auto nanoseconds = sinceEpoch - seconds;

    std::string out;
    out.reserve(4096);
    char line[160];
    std::snprintf(line, sizeof(line),
                  "snapshot_time:         %lld.%09lu (secs.nsecs)\n"
                  "read RPCs in flight:  %d\n"
                  "write RPCs in flight: %d\n"
                  "pending write pages:  %d\n"
                  "pending read pages:   %d\n",
                  static_cast<long long>(seconds.count()),
                  static_cast<unsigned long>(nanoseconds.count()), static_cast<int>(inFlight(read)),
                  static_cast<int>(inFlight(write)), static_cast<int>(pendingPages(write)),
                  static_cast<int>(pendingPages(read)));
    out += line;
    appendTable(out, "pages per rpc", copy.pagesPerRpc, Labels::powers);
    appendTable(out, "rpcs in flight", copy.rpcsInFlight, Labels::counts);
    appendTable(out, "offset", copy.offset, Labels::offsets);
    return out;
}

void OscRpcStats::clear()
{
    for (std::size_t d = 0; d < 2; ++d) {
        for (std::size_t i = 0; i < kBuckets; ++i) {
            m_pagesPerRpc[d][i].store(0, std::memory_order_relaxed);
            m_rpcsInFlight[d][i].store(0, std::memory_order_relaxed);
            m_offset[d][i].store(0, std::memory_order_relaxed);
        }
    }
    m_startTime.store(WallClock::now().time_since_epoch().count(), std::memory_order_relaxed);
}

} // namespace lutra::client
