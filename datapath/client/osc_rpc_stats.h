#pragma once
// osc.<target>.rpc_stats: Lustre's per-target bulk RPC histograms (pages per RPC, RPCs in flight,
// offset; read | write) and the in-flight / pending gauges, rendered byte-for-byte as Lustre's
// osc_rpc_stats_seq_show prints them. Writing `clear` resets the histograms.

#include "core/params/counters.h"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace lutra::client {

class OscRpcStats final : public params::StatsSource {
public:
    // Lustre's OBD_HIST_MAX: buckets per histogram; larger values land in the last one.
    static constexpr std::size_t kBuckets = 32;

    enum Direction : std::size_t { read = 0, write = 1 };

    // Plain copy of the histograms, for tests and for the console's structured view.
    struct Histograms {
        std::array<std::array<std::uint64_t, kBuckets>, 2> pagesPerRpc{}; // [direction][bucket]
        std::array<std::array<std::uint64_t, kBuckets>, 2> rpcsInFlight{};
        std::array<std::array<std::uint64_t, kBuckets>, 2> offset{};
    };

    OscRpcStats();
    OscRpcStats(const OscRpcStats &) = delete;
    OscRpcStats &operator=(const OscRpcStats &) = delete;

    // One RPC leaves for the target: `pages` in it, `inFlight` RPCs of its direction in flight
    // counting itself (as Lustre tallies after cl_r/w_in_flight++), starting at object page
    // `firstPage`. Lock-free: relaxed atomic adds, once per RPC.
    void recordRpc(Direction direction, std::uint32_t pages, std::uint32_t inFlight,
                   std::uint64_t firstPage) noexcept;

    // Gauges shown in the header; the owner keeps them current.
    void addInFlight(Direction direction, std::int64_t delta) noexcept
    {
        m_inFlight[direction].fetch_add(delta, std::memory_order_relaxed);
    }
    void addPendingPages(Direction direction, std::int64_t delta) noexcept
    {
        m_pendingPages[direction].fetch_add(delta, std::memory_order_relaxed);
    }
    std::int64_t inFlight(Direction direction) const noexcept
    {
        return m_inFlight[direction].load(std::memory_order_relaxed);
    }
    std::int64_t pendingPages(Direction direction) const noexcept
    {
        return m_pendingPages[direction].load(std::memory_order_relaxed);
    }

    Histograms histograms() const noexcept;

    // Lustre's lprocfs_oh_tally_log2 bucket: ceil(log2(value)), 0 for 0 and 1.
    static std::size_t log2Bucket(std::uint64_t value) noexcept;

    params::CounterSnapshot snapshot() const override;
    std::string render(params::WallClock::time_point now) const override;
    // Clears the histograms (the gauges describe the present and stay), as Lustre does.
    void clear() override;

private:
    using Histogram = std::array<std::atomic<std::uint64_t>, kBuckets>;
    static void tally(Histogram &histogram, std::size_t bucket) noexcept;

    // Each histogram pair on its own lines: completions of both directions add concurrently.
    alignas(64) std::array<Histogram, 2> m_pagesPerRpc{};
    alignas(64) std::array<Histogram, 2> m_rpcsInFlight{};
    alignas(64) std::array<Histogram, 2> m_offset{};
    alignas(64) std::array<std::atomic<std::int64_t>, 2> m_inFlight{};
    std::array<std::atomic<std::int64_t>, 2> m_pendingPages{};
    std::atomic<params::WallClock::rep> m_startTime;
};

} // namespace lutra::client
