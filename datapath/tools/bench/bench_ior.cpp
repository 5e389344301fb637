// lutra-bench ior-easy, ior-hard and pressure: IOR's two standard workloads through the client
// library, write then cold read, with read_ahead_stats deltas of the read phase.
#include "bench_ior_cluster.h"
#include "bench_ior_raw.h"
#include "bench_loop.h"
#include "bench_modes.h"
#include "client/layout.h"
#include "core/types.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

namespace lutra::tools {

namespace {

constexpr std::size_t kSequentialTransfer = 1 << 20;

double megabytesPerSecond(std::uint64_t bytes, double seconds)
{
    return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0;
}

// ---- ior-easy ----------------------------------------------------------------------------------

Status easyWrite(client::Mount &mount, const IorEasyBenchOptions &ior, unsigned thread)
{
    const std::uint64_t fileBytes = std::uint64_t{ior.fileMb} << 20;
    return writeClientFile(mount, easyPath(thread), fileBytes, std::size_t{ior.transferKb} * 1024,
                           thread + 1);
}

Status easyRead(client::Mount &mount, const IorEasyBenchOptions &ior, unsigned thread)
{
    auto file = mount.open(easyPath(thread), client::kOpenRead);
    if (!file) {
        return file.status();
    }
    const std::uint64_t fileBytes = std::uint64_t{ior.fileMb} << 20;
    if (auto status = readClientFile(**file, fileBytes, std::size_t{ior.transferKb} * 1024);
        !status) {
        return status;
    }
    return (*file)->close();
}

// ---- ior-hard ----------------------------------------------------------------------------------

constexpr const char *kHardPath = "ior-hard.dat";

std::uint64_t hardFileBytes(const IorHardBenchOptions &ior)
{
    return std::uint64_t{ior.ranks} * ior.segments * ior.transferBytes;
}

// Rank r's k-th transfer is at (k * ranks + r) * transferBytes (IOR-hard's layout).
std::uint64_t hardOffset(const IorHardBenchOptions &ior, unsigned rank, std::uint64_t k)
{
    return (k * ior.ranks + rank) * ior.transferBytes;
}

// Every rank's own open of the shared file, opened before a phase and closed after all ranks
// finished, so the phase times the I/O alone. (A rank closing early used to fail another's I/O:
// the object's RPC handle was the first open's; now it stays open until the last open closes,
// TargetContext::closed.)
using RankFiles = std::vector<std::unique_ptr<client::File>>;

Result<RankFiles> openRanks(client::Mount &mount, unsigned ranks, unsigned flags)
{
    RankFiles files;
    for (unsigned r = 0; r < ranks; ++r) {
        auto file = mount.open(kHardPath, flags);
        if (!file) {
            return file.status();
        }
        files.push_back(std::move(file).value());
    }
    return files;
}

Status closeRanks(RankFiles &files)
{
    Status first;
    for (auto &file : files) {
        if (auto status = file->close(); !status && first.ok()) {
            first = status;
        }
    }
    return first;
}

// Runs `work(file, rank)` on every rank, each with its own open of the shared file.
Result<double> rankPhase(BenchCluster &cluster, unsigned ranks, unsigned flags,
                         const std::function<Status(client::File &, unsigned)> &work)
{
    auto files = openRanks(cluster.mount(), ranks, flags);
    if (!files) {
        return files.status();
    }
    auto seconds =
        runPhase(ranks, cluster.loop(), [&](unsigned r) { return work(*(*files)[r], r); });
    const Status closed = closeRanks(*files);
    if (!seconds) {
        return seconds.status();
    }
    if (!closed) {
        return closed;
    }
    return seconds;
}

Status hardWrite(client::File &file, const IorHardBenchOptions &ior, unsigned rank)
{
    std::vector<std::byte> buffer(ior.transferBytes);
    fillPattern(buffer, rank + 1);
    for (std::uint64_t k = 0; k < ior.segments; ++k) {
        auto written = file.pwrite(buffer, hardOffset(ior, rank, k));
        if (!written) {
            return written.status();
        }
    }
    return file.fsync();
}

// How far apart the ranks of a read are: each rank's next transfer, and after each of rank 0's
// reads the distance from the last rank to the first, in file pages. Ranks that share CPUs with
// each other and the targets run by time slices and drift apart; under pressure the pages
// between the last rank and the first must stay cached for the ranks still to read their part,
// so a spread beyond the cache is paid in pages fetched again (issue 12, session 15).
class RankSpread {
public:
    explicit RankSpread(const IorHardBenchOptions &ior)
        : m_next(ior.ranks), m_pagesPerTransfer(static_cast<double>(ior.ranks) *
                                                static_cast<double>(ior.transferBytes) /
                                                static_cast<double>(core::kPageSize))
    {
        m_samples.reserve(ior.segments);
    }

    void start() noexcept
    {
        for (Next &next : m_next) {
            next.value.store(0, std::memory_order_relaxed);
        }
    }
    // Rank `rank` is done with its transfers before `next`. Rank 0 samples (it allocates
    // nothing: the samples were reserved for its transfers).
    void advanced(unsigned rank, std::uint64_t next) noexcept
    {
        m_next[rank].value.store(next, std::memory_order_relaxed);
        if (rank != 0 || m_samples.size() == m_samples.capacity()) {
            return;
        }
        std::uint64_t first = 0;
        std::uint64_t last = std::numeric_limits<std::uint64_t>::max();
        for (const Next &other : m_next) {
            const std::uint64_t at = other.value.load(std::memory_order_relaxed);
            first = std::max(first, at);
            last = std::min(last, at);
        }
        m_samples.push_back(static_cast<double>(first - last) * m_pagesPerTransfer);
    }
    // The samples of the phase since start(), handed over and cleared.
    void takeSamples(std::vector<double> &into)
    {
        into.insert(into.end(), m_samples.begin(), m_samples.end());
        m_samples.clear();
    }

private:
    struct alignas(64) Next {
        std::atomic<std::uint64_t> value{0};
    };
    std::vector<Next> m_next;
    double m_pagesPerTransfer;
    std::vector<double> m_samples;
};

// `cacheFull` counts reads that failed with "cache full" and were retried: the client returns
// that to the application when max_cached_mb is too small for what is pinned at once (reported
// to the lead); the bench counts and retries it so the pressure run still gives its numbers.
Status hardRead(client::File &file, const IorHardBenchOptions &ior, unsigned rank,
                std::atomic<std::uint64_t> &cacheFull, RankSpread *spread = nullptr)
{
    constexpr int kMaxRetries = 1000;
    std::vector<std::byte> buffer(ior.transferBytes);
    for (std::uint64_t k = 0; k < ior.segments; ++k) {
        auto got = file.pread(buffer, hardOffset(ior, rank, k));
        for (int retry = 0;
             !got && got.status().code() == Errc::resource_exhausted && retry < kMaxRetries;
             ++retry) {
            ++cacheFull;
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            got = file.pread(buffer, hardOffset(ior, rank, k));
        }
        if (!got) {
            return got.status();
        }
        if (*got != buffer.size()) {
            return Status(Errc::io_error, std::string(kHardPath) + ": short read");
        }
        if (spread != nullptr) {
            spread->advanced(rank, k + 1);
        }
    }
    return {};
}

// The baseline of ior-hard's read: the same bytes, each rank reading one contiguous slice in
// 1 MiB transfers.
Status sequentialRead(client::File &file, std::uint64_t fileBytes, unsigned ranks, unsigned rank)
{
    const std::uint64_t slice = (fileBytes + ranks - 1) / ranks;
    const std::uint64_t begin = std::min(fileBytes, slice * rank);
    const std::uint64_t end = std::min(fileBytes, begin + slice);
    std::vector<std::byte> buffer(kSequentialTransfer);
    for (std::uint64_t offset = begin; offset < end; offset += kSequentialTransfer) {
        const auto length =
            static_cast<std::size_t>(std::min<std::uint64_t>(kSequentialTransfer, end - offset));
        auto got = file.pread(std::span(buffer).first(length), offset);
        if (!got) {
            return got.status();
        }
    }
    return {};
}

struct ReadPhase {
    double seconds = 0;
    double cpuSeconds = 0;                                   // client and targets
    std::map<std::uint64_t, std::uint64_t> readRpcs;         // pages per RPC (bucket) to RPCs
    std::map<std::uint64_t, std::uint64_t> readRpcsInFlight; // in flight as each left, to RPCs
    BenchCluster::RpcTime readRpcTime;                       // send to reply, summed
    ReadAheadCounts before;
    ReadAheadCounts after;
};

// A cold read phase: drop the client cache, then run `read()` (a phase over all ranks).
Result<ReadPhase> coldRead(BenchCluster &cluster, const std::function<Result<double>()> &read)
{
    if (auto status = cluster.dropCache(); !status) {
        return status;
    }
    ReadPhase phase;
    phase.before = cluster.readAheadStats();
    const double cpuBefore = cluster.cpuSeconds();
    const auto rpcsBefore = cluster.readRpcs();
    const auto inFlightBefore = cluster.readRpcsInFlight();
    const auto timeBefore = cluster.readRpcTime();
    auto seconds = read();
    if (!seconds) {
        return seconds.status();
    }
    phase.cpuSeconds = cluster.cpuSeconds() - cpuBefore;
    const auto since = [](std::map<std::uint64_t, std::uint64_t> now,
                          const std::map<std::uint64_t, std::uint64_t> &before) {
        for (auto &[bucket, rpcs] : now) {
            const auto it = before.find(bucket);
            rpcs -= it == before.end() ? 0 : it->second;
        }
        return now;
    };
    phase.readRpcs = since(cluster.readRpcs(), rpcsBefore);
    phase.readRpcsInFlight = since(cluster.readRpcsInFlight(), inFlightBefore);
    const auto timeAfter = cluster.readRpcTime();
    phase.readRpcTime = {timeAfter.rpcs - timeBefore.rpcs,
                         timeAfter.microseconds - timeBefore.microseconds};
    phase.seconds = *seconds;
    phase.after = cluster.readAheadStats();
    return phase;
}

// read_ahead_stats deltas summed over several phases (rounds).
class PhaseStats {
public:
    void add(const ReadPhase &phase)
    {
        for (const auto &[name, value] : phase.after) {
            m_total[name] += deltaOf(phase.before, phase.after, name);
        }
        m_seconds += phase.seconds;
        m_cpuSeconds += phase.cpuSeconds;
        for (const auto &[pages, rpcs] : phase.readRpcs) {
            m_readRpcs[pages] += rpcs;
        }
        for (const auto &[inFlight, rpcs] : phase.readRpcsInFlight) {
            m_readRpcsInFlight[inFlight] += rpcs;
        }
        m_readRpcTime.rpcs += phase.readRpcTime.rpcs;
        m_readRpcTime.microseconds += phase.readRpcTime.microseconds;
        ++m_phases;
    }
    // What the phases cost: cores the client and targets kept busy on average (2.0: both of a
    // 2-core machine), their CPU time per page of the file read (a side slower at the same CPU
    // per page waits), and the bulk read RPCs that carried the file.
    nlohmann::json costJson(std::uint64_t fileBytes) const
    {
        const double pages =
            static_cast<double>((fileBytes + core::kPageSize - 1) / core::kPageSize) * m_phases;
        const double phases = m_phases > 0 ? m_phases : 1;
        std::uint64_t rpcs = 0;
        nlohmann::json perRound = nlohmann::json::object();
        for (const auto &[bucket, count] : m_readRpcs) {
            rpcs += count;
            if (count != 0) {
                perRound[std::to_string(bucket)] = rounded(static_cast<double>(count) / phases);
            }
        }
        // How deep a target's pipeline ran: the mean of RPCs in flight as each left (itself
        // counted), a target's RPCs alone (the histogram's buckets are exact counts).
        std::uint64_t sent = 0;
        std::uint64_t depth = 0;
        for (const auto &[inFlight, count] : m_readRpcsInFlight) {
            sent += count;
            depth += inFlight * count;
        }
        return {{"cores_busy", rounded(m_seconds > 0 ? m_cpuSeconds / m_seconds : 0)},
                {"cpu_us_per_page", rounded(pages > 0 ? m_cpuSeconds * 1e6 / pages : 0)},
                {"read_rpcs_per_round", rounded(static_cast<double>(rpcs) / phases)},
                {"read_rpcs_per_round_by_pages", perRound},
                {"read_rpcs_in_flight_mean",
                 rounded(sent > 0 ? static_cast<double>(depth) / static_cast<double>(sent) : 0)},
                // A read RPC's time from send to reply (osc.*.stats' ost_read): with the RPC
                // rows, whether a side's RPCs took longer or were fewer in flight.
                {"read_rpc_us_mean",
                 rounded(m_readRpcTime.rpcs > 0 ? static_cast<double>(m_readRpcTime.microseconds) /
                                                      static_cast<double>(m_readRpcTime.rpcs)
                                                : 0)}};
    }
    std::uint64_t operator[](const std::string &name) const
    {
        const auto it = m_total.find(name);
        return it == m_total.end() ? 0 : it->second;
    }
    nlohmann::json json() const { return m_total; }
    double hitRatio() const
    {
        const double hits = static_cast<double>((*this)["hits"]);
        const double misses = static_cast<double>((*this)["misses"]);
        return hits + misses > 0 ? hits / (hits + misses) : 0;
    }
    // Pages that came from the targets: read ahead (readahead_pages counts only pages sent
    // for) plus the reads' own misses.
    std::uint64_t fetched() const { return (*this)["readahead_pages"] + (*this)["misses"]; }

private:
    ReadAheadCounts m_total;
    double m_seconds = 0;
    double m_cpuSeconds = 0;
    std::map<std::uint64_t, std::uint64_t> m_readRpcs;
    std::map<std::uint64_t, std::uint64_t> m_readRpcsInFlight;
    BenchCluster::RpcTime m_readRpcTime;
    unsigned m_phases = 0;
};

// Results every round-based read mode reports about what was fetched: a page fetched twice
// shows as pages_fetched above rounds * file_pages (under pressure, a discarded page is fetched
// again: at most read_but_discarded more).
void reportFetched(Report &report, const PhaseStats &stats, std::uint64_t fileBytes,
                   unsigned rounds)
{
    const std::uint64_t filePages = (fileBytes + core::kPageSize - 1) / core::kPageSize;
    report.results["file_pages"] = filePages;
    report.results["pages_fetched"] = stats.fetched();
    report.results["fetched_per_file_page"] =
        rounded(static_cast<double>(stats.fetched()) / static_cast<double>(filePages * rounds));
}

// The rounds of a two-sided read: at least --rounds, then more until --duration seconds of
// rounds passed (one round is well under a second here; 5-7 of them spread +-0.15). A --loop
// workload (the demo's) does exactly --rounds per iteration.
class RoundPlan {
public:
    static constexpr unsigned kMaxRounds = 1000;

    RoundPlan(const IorHardBenchOptions &ior, const LoopOptions &loop)
        : m_min(ior.rounds), m_duration(loop.enabled ? 0 : ior.durationSeconds),
          m_start(std::chrono::steady_clock::now())
    {
    }
    bool more(unsigned done) const
    {
        if (done < m_min) {
            return true;
        }
        const std::chrono::duration<double> passed = std::chrono::steady_clock::now() - m_start;
        return done < kMaxRounds && passed.count() < m_duration;
    }

private:
    unsigned m_min;
    double m_duration;
    std::chrono::steady_clock::time_point m_start;
};

// The q-quantile (nearest rank below) of values sorted ascending, rounded for the report.
double sortedQuantile(const std::vector<double> &sorted, double q)
{
    return rounded(sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1))]);
}

// The first and third quartile of the rounds' ratios: how far one run's rounds spread.
nlohmann::json quartiles(std::vector<double> values)
{
    if (values.empty()) {
        return nlohmann::json::array();
    }
    std::sort(values.begin(), values.end());
    return {sortedQuantile(values, 0.25), sortedQuantile(values, 0.75)};
}

// Rank spread samples (RankSpread): median, quartiles, 90th percentile, and the share of samples
// wider than `cachePages`.
nlohmann::json spreadJson(std::vector<double> samples, double cachePages)
{
    if (samples.empty()) {
        return nlohmann::json::object();
    }
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) { return sortedQuantile(samples, q); };
    const auto wider = std::upper_bound(samples.begin(), samples.end(), cachePages);
    return {{"median", at(0.5)},
            {"quartiles", {at(0.25), at(0.75)}},
            {"p90", at(0.9)},
            {"wider_than_pressured_cache", rounded(static_cast<double>(samples.end() - wider) /
                                                   static_cast<double>(samples.size()))}};
}

// The fastest round of a side: others' load only ever slows a round down, so the best rounds
// of two sides are the least disturbed pair to compare.
double best(const std::vector<double> &mbps)
{
    return mbps.empty() ? 0 : *std::max_element(mbps.begin(), mbps.end());
}

Status checkHard(const IorHardBenchOptions &ior)
{
    if (ior.ranks == 0 || ior.ranks > 256 || ior.segments == 0 || ior.transferBytes == 0 ||
        ior.rounds == 0) {
        return Status(Errc::out_of_range, "--ranks (1..256), --segments, --transfer-bytes and "
                                          "--rounds must be positive");
    }
    return {};
}

nlohmann::json hardParams(const BenchCluster &cluster, const IorHardBenchOptions &ior)
{
    return {{"targets", cluster.uris().size()},
            {"spawned_targets", cluster.spawned()},
            {"ranks", ior.ranks},
            {"ranks_are", "threads sharing one Mount, each with its own open file"},
            {"segments", ior.segments},
            {"transfer_bytes", ior.transferBytes},
            {"file_bytes", hardFileBytes(ior)},
            {"layout", "rank r's k-th transfer at (k * ranks + r) * transfer_bytes"},
            {"rounds", ior.rounds},
            {"duration_s", ior.durationSeconds},
            {"rounds_are", "cold reads of both sides, alternating which goes first, at least "
                           "`rounds`, then more until `duration_s` passed; ratios and MBps are "
                           "medians (and the ratio's quartiles), read_ahead_stats sums"}};
}

} // namespace

// What each side of a round-based comparison cost: the CPU time of the bench process and the
// targets it spawned per MiB the side read, and the cores that kept busy (2.0: both of a 2-core
// machine) -- medians over the rounds. On a host whose cores are all busy, MB/s follows
// 1 / cpu_us_per_mib, so a side's cost shows why it is slower.
class SideCosts {
public:
    void add(const std::string &side, double cpuSeconds, double seconds, std::uint64_t bytes)
    {
        auto &costs = m_sides[side];
        costs.cpuPerMib.push_back(cpuSeconds * 1e6 / (static_cast<double>(bytes) / (1 << 20)));
        costs.coresBusy.push_back(seconds > 0 ? cpuSeconds / seconds : 0);
    }
    nlohmann::json json() const
    {
        nlohmann::json out = nlohmann::json::object();
        for (const auto &[side, costs] : m_sides) {
            out[side] = {{"cpu_us_per_mib", rounded(median(costs.cpuPerMib))},
                         {"cores_busy", rounded(median(costs.coresBusy))}};
        }
        return out;
    }

private:
    struct Costs {
        std::vector<double> cpuPerMib;
        std::vector<double> coresBusy;
    };
    std::map<std::string, Costs> m_sides;
};

Result<Report> runIorEasyBench(const BenchOptions &options, const LoopOptions &loop,
                               const IorEasyBenchOptions &ior)
{
    if (ior.threads == 0 || ior.threads > 256 || ior.fileMb == 0 || ior.transferKb == 0 ||
        ior.conns == 0 || ior.rounds == 0) {
        return Status(Errc::out_of_range, "--threads (1..256), --file-mb, --transfer-kb, --conns "
                                          "and --rounds must be positive");
    }
    auto cluster = BenchCluster::start(options, loop, "lutra-bench-ior-easy");
    if (!cluster) {
        return cluster.status();
    }
    BenchCluster &c = **cluster;
    const std::uint64_t totalBytes = (std::uint64_t{ior.fileMb} << 20) * ior.threads;
    Report report;
    report.mode = "ior-easy";
    report.params = {
        {"targets", c.uris().size()},
        {"spawned_targets", c.spawned()},
        {"threads", ior.threads},
        {"file_mb", ior.fileMb},
        {"transfer_kb", ior.transferKb},
        {"conns", ior.conns},
        {"checksums", ior.checksums},
        {"rounds", ior.rounds},
        {"layout", "file per thread, sequential; write + fsync, then cold reads"},
        {"cold_read", "Mount::flushJob(\"\") before each read"},
        {"rounds_are", "a cold read with osc.*.conns_per_target=conns, one with 1 (2 when conns "
                       "is 1), the raw TCP stream of the same objects and the one from memory, "
                       "alternating their order; MBps and ratios are medians, read_ahead_stats "
                       "the sums of the conns reads"},
        {"raw_tcp", "per thread a connection to every target, each sending its object of the "
                    "thread's file from the target's page cache (sendfile), received in file "
                    "order into the transfer buffer: the same bytes and cache state"},
        {"raw_tcp_memory", "per thread one connection sending from a memory buffer: the network "
                           "alone, no file data"},
        {"raw_tcp_caching", "raw_tcp received into cache memory (a page per file page) a readahead "
                            "window (max_read_ahead_per_file_mb) ahead of the reader, crc32c per "
                            "page on arrival when checksums are on, then copied out: the least "
                            "any caching client does for these reads"}};
    const auto setConns = [&](unsigned conns) -> Status {
        const params::Assignment assignment{"osc.*.conns_per_target", std::to_string(conns)};
        auto result = c.registry().set({&assignment, 1}, "lutra-bench");
        return result.status
                   ? Status{}
                   : result.status.withContext("osc.*.conns_per_target=" + std::to_string(conns));
    };
    const std::function<Result<double>()> readPhase = [&] {
        return runPhase(ior.threads, loop, [&](unsigned t) { return easyRead(c.mount(), ior, t); });
    };
    // A --loop workload (the demo, the console's tests) runs with the tunables admins set: it
    // sets none and reads only as they are, without the one-connection and raw TCP sides.
    const bool compare = !loop.enabled;
    std::unique_ptr<CachingClientFloor> cachingFloor;
    std::uint64_t readaheadBytes = 0;
    if (compare && !c.rawUris().empty()) {
        const std::string name =
            "llite." + std::string(BenchCluster::kFsName) + ".max_read_ahead_per_file_mb";
        auto perFile = c.registry().get(name);
        if (!perFile || perFile->empty()) {
            return Status(Errc::not_found, name + " is not published");
        }
        readaheadBytes = std::stoull(perFile->front().value) << 20;
        cachingFloor =
            std::make_unique<CachingClientFloor>(ior.threads, std::uint64_t{ior.fileMb} << 20);
    }
    const auto iteration = [&]() -> Status {
        if (compare) {
            if (auto status = setConns(ior.conns); !status) {
                return status;
            }
            const params::Assignment checksums{"osc.*.checksums", ior.checksums ? "1" : "0"};
            if (auto result = c.registry().set({&checksums, 1}, "lutra-bench"); !result.status) {
                return result.status.withContext("osc.*.checksums");
            }
        }
        auto written =
            runPhase(ior.threads, loop, [&](unsigned t) { return easyWrite(c.mount(), ior, t); });
        if (!written) {
            return written.status().withContext("write phase");
        }
        enum Side { connsSide, otherSide, rawSide, rawMemorySide, rawCachingSide };
        static constexpr const char *kSideNames[] = {"read", "read_other", "raw_tcp",
                                                     "raw_tcp_memory", "raw_tcp_caching"};
        std::vector<Side> sides{connsSide};
        // The other connection count beside conns: one, or two when conns is one.
        const OtherConns other = otherConnsThan(ior.conns);
        const bool withRaw = compare && !c.rawUris().empty();
        if (compare) {
            sides.push_back(otherSide);
        }
        if (withRaw) {
            sides.push_back(rawSide);
            sides.push_back(rawMemorySide);
            sides.push_back(rawCachingSide);
        }
        PhaseStats stats;
        std::vector<double> readMBps, otherMBps, rawMBps, rawMemoryMBps, rawCachingMBps, vsRaw,
            vsRawMemory, vsRawCaching, vsOther;
        SideCosts costs;
        nlohmann::json rounds = nlohmann::json::array();
        for (unsigned round = 0; round < ior.rounds; ++round) {
            double mbps[5] = {0, 0, 0, 0, 0};
            for (std::size_t i = 0; i < sides.size(); ++i) {
                const Side side = sides[(i + round) % sides.size()]; // each side leads in turn
                if (side == rawSide || side == rawMemorySide || side == rawCachingSide) {
                    const double cpuBefore = c.cpuSeconds();
                    auto raw = side == rawSide
                                   ? rawObjectStream(c.rawUris(), ior, c.stripeSize(), loop)
                               : side == rawMemorySide
                                   ? rawMemoryStream(c.rawUris(), ior, loop)
                                   : cachingFloor->run(c.rawUris(), ior, c.stripeSize(),
                                                       readaheadBytes, ior.checksums, loop);
                    if (!raw) {
                        return raw.status().withContext(
                            side == rawSide         ? "raw TCP stream of the objects"
                            : side == rawMemorySide ? "raw TCP stream from memory"
                                                    : "raw TCP stream into cache memory");
                    }
                    mbps[side] = megabytesPerSecond(totalBytes, *raw);
                    costs.add(kSideNames[side], c.cpuSeconds() - cpuBefore, *raw, totalBytes);
                    continue;
                }
                if (compare) {
                    if (auto status = setConns(side == connsSide ? ior.conns : other.count);
                        !status) {
                        return status;
                    }
                }
                auto read = coldRead(c, readPhase);
                if (!read) {
                    return read.status().withContext("read phase");
                }
                if (side == connsSide) {
                    stats.add(*read);
                    costs.add(kSideNames[side], read->cpuSeconds, read->seconds, totalBytes);
                }
                mbps[side] = megabytesPerSecond(totalBytes, read->seconds);
            }
            nlohmann::json entry{{"read_MBps", rounded(mbps[connsSide])}};
            readMBps.push_back(mbps[connsSide]);
            if (compare) {
                otherMBps.push_back(mbps[otherSide]);
                vsOther.push_back(mbps[connsSide] / mbps[otherSide]);
                entry["read_" + other.name + "_MBps"] = rounded(mbps[otherSide]);
                entry[other.ratio] = rounded(vsOther.back());
            }
            if (withRaw) {
                rawMBps.push_back(mbps[rawSide]);
                vsRaw.push_back(mbps[connsSide] / mbps[rawSide]);
                entry["raw_tcp_MBps"] = rounded(mbps[rawSide]);
                entry["vs_raw_tcp"] = rounded(vsRaw.back());
                rawMemoryMBps.push_back(mbps[rawMemorySide]);
                vsRawMemory.push_back(mbps[connsSide] / mbps[rawMemorySide]);
                entry["raw_tcp_memory_MBps"] = rounded(mbps[rawMemorySide]);
                entry["vs_raw_tcp_memory"] = rounded(vsRawMemory.back());
                rawCachingMBps.push_back(mbps[rawCachingSide]);
                vsRawCaching.push_back(mbps[connsSide] / mbps[rawCachingSide]);
                entry["raw_tcp_caching_MBps"] = rounded(mbps[rawCachingSide]);
                entry["vs_raw_tcp_caching"] = rounded(vsRawCaching.back());
            }
            rounds.push_back(entry);
        }
        if (compare) {
            if (auto status = setConns(ior.conns); !status) {
                return status;
            }
        }
        report.results["cost_by_side"] = costs.json();
        report.results["write_MBps"] = rounded(megabytesPerSecond(totalBytes, *written));
        report.results["read_MBps"] = rounded(median(readMBps));
        report.results["read_ahead_stats"] = stats.json();
        report.results["rounds"] = rounds;
        report.ratios["ra_hit_ratio"] = rounded(stats.hitRatio());
        if (compare) {
            report.results["read_" + other.name + "_MBps"] = rounded(median(otherMBps));
            report.ratios[other.ratio] = rounded(median(vsOther));
        }
        if (!withRaw) {
            report.notes = {compare ? "no raw baseline endpoint (--raw-baseline): vs_raw_tcp not "
                                      "measured"
                                    : "--loop: a workload with the tunables as set, no baselines"};
            return {};
        }
        report.results["raw_tcp_MBps"] = rounded(median(rawMBps));
        report.ratios["vs_raw_tcp"] = rounded(median(vsRaw));
        report.results["raw_tcp_memory_MBps"] = rounded(median(rawMemoryMBps));
        report.ratios["vs_raw_tcp_memory"] = rounded(median(vsRawMemory));
        report.results["raw_tcp_caching_MBps"] = rounded(median(rawCachingMBps));
        report.ratios["vs_raw_tcp_caching"] = rounded(median(vsRawCaching));
        return {};
    };
    if (auto status = repeatWorkload(c, iteration); !status) {
        return status;
    }
    return report;
}

Result<Report> runIorHardBench(const BenchOptions &options, const LoopOptions &loop,
                               const IorHardBenchOptions &ior)
{
    if (auto status = checkHard(ior); !status) {
        return status;
    }
    auto cluster = BenchCluster::start(options, loop, "lutra-bench-ior-hard");
    if (!cluster) {
        return cluster.status();
    }
    BenchCluster &c = **cluster;
    const std::uint64_t fileBytes = hardFileBytes(ior);
    Report report;
    report.mode = "ior-hard";
    report.params = hardParams(c, ior);
    report.params["baseline"] = "the same file, each rank reading a contiguous slice in 1 MiB "
                                "transfers, cold";
    std::atomic<std::uint64_t> cacheFull{0};
    const auto hardReader = [&](client::File &file, unsigned r) {
        return hardRead(file, ior, r, cacheFull);
    };
    const auto iteration = [&]() -> Status {
        if (auto status = writeClientFile(c.mount(), kHardPath, 0, 1, 0); !status) {
            return status.withContext("truncating " + std::string(kHardPath));
        }
        auto written =
            rankPhase(c, ior.ranks, client::kOpenWrite,
                      [&](client::File &file, unsigned r) { return hardWrite(file, ior, r); });
        if (!written) {
            return written.status().withContext("write phase");
        }
        const std::function<Result<double>()> hardPhase = [&] {
            return rankPhase(c, ior.ranks, client::kOpenRead, hardReader);
        };
        const std::function<Result<double>()> sequentialPhase = [&] {
            return rankPhase(c, ior.ranks, client::kOpenRead, [&](client::File &file, unsigned r) {
                return sequentialRead(file, fileBytes, ior.ranks, r);
            });
        };
        PhaseStats hardStats;
        PhaseStats sequentialStats;
        std::vector<double> readMBps, sequentialMBps, vsSequential;
        nlohmann::json rounds = nlohmann::json::array();
        const RoundPlan plan(ior, loop);
        unsigned round = 0;
        for (; plan.more(round); ++round) {
            ReadPhase phases[2]; // hard, sequential
            for (int side = 0; side < 2; ++side) {
                const int which = (side + static_cast<int>(round)) % 2; // alternate the order
                auto phase = coldRead(c, which == 0 ? hardPhase : sequentialPhase);
                if (!phase) {
                    return phase.status().withContext(which == 0 ? "read phase"
                                                                 : "sequential read");
                }
                phases[which] = *phase;
            }
            hardStats.add(phases[0]);
            sequentialStats.add(phases[1]);
            readMBps.push_back(megabytesPerSecond(fileBytes, phases[0].seconds));
            sequentialMBps.push_back(megabytesPerSecond(fileBytes, phases[1].seconds));
            vsSequential.push_back(readMBps.back() / sequentialMBps.back());
            rounds.push_back(
                {{"read_MBps", rounded(readMBps.back())},
                 {"sequential_read_MBps", rounded(sequentialMBps.back())},
                 {"vs_sequential", rounded(vsSequential.back())},
                 {"ra_hit_ratio", rounded(raHitRatio(phases[0].before, phases[0].after))}});
        }
        report.results["cache_full_retries"] = cacheFull.exchange(0);
        report.results["write_MBps"] = rounded(megabytesPerSecond(fileBytes, *written));
        report.results["read_MBps"] = rounded(median(readMBps));
        report.results["sequential_read_MBps"] = rounded(median(sequentialMBps));
        report.results["read_ahead_stats"] = hardStats.json();
        report.results["sequential_read_ahead_stats"] = sequentialStats.json();
        report.results["cost"] = hardStats.costJson(fileBytes);
        report.results["sequential_cost"] = sequentialStats.costJson(fileBytes);
        report.results["rounds"] = rounds;
        reportFetched(report, hardStats, fileBytes, round);
        report.results["vs_sequential_quartiles"] = quartiles(vsSequential);
        report.results["vs_sequential_best"] = rounded(best(readMBps) / best(sequentialMBps));
        report.ratios["ra_hit_ratio"] = rounded(hardStats.hitRatio());
        report.ratios["vs_sequential"] = rounded(median(vsSequential));
        return {};
    };
    if (auto status = repeatWorkload(c, iteration); !status) {
        return status;
    }
    return report;
}

Result<Report> runPressureBench(const BenchOptions &options, const LoopOptions &loop,
                                const IorHardBenchOptions &ior)
{
    if (auto status = checkHard(ior); !status) {
        return status;
    }
    auto cluster = BenchCluster::start(options, loop, "lutra-bench-pressure");
    if (!cluster) {
        return cluster.status();
    }
    BenchCluster &c = **cluster;
    const std::uint64_t fileBytes = hardFileBytes(ior);
    const std::uint64_t pressuredMb =
        std::max<std::uint64_t>(1, (fileBytes >> 20) * ior.cachePercent / 100);
    auto original =
        c.registry().get("llite." + std::string(BenchCluster::kFsName) + ".max_cached_mb");
    if (!original || original->empty()) {
        return Status(Errc::not_found, "llite.bench.max_cached_mb is not published");
    }
    const std::string enough = original->front().value;
    Report report;
    report.mode = "pressure";
    report.params = hardParams(c, ior);
    report.params["pressured_max_cached_mb"] = pressuredMb;
    report.params["pressured_cache_percent"] = ior.cachePercent;
    report.params["unpressured_max_cached_mb"] = enough;
    if ((std::uint64_t{1} << 20) * pressuredMb >= fileBytes) {
        report.notes.push_back("the pressured cache holds the whole file: no pressure; raise "
                               "--segments or lower --cache-percent");
    } else if (ior.cachePercent <= 50 && (std::uint64_t{1} << 20) * pressuredMb * 2 > fileBytes) {
        report.notes.push_back("file too small for " + std::to_string(ior.cachePercent) +
                               " % of it to be a real limit; raise --segments");
    }
    // Written once, sequentially: only the read is measured.
    if (auto status = writeClientFile(c.mount(), kHardPath, fileBytes, kSequentialTransfer, 3);
        !status) {
        return status.withContext("writing " + std::string(kHardPath));
    }
    std::atomic<std::uint64_t> cacheFull{0};
    RankSpread spread(ior);
    const double cachePages = static_cast<double>(pressuredMb << 20) / core::kPageSize;
    const auto read = [&] {
        spread.start();
        return rankPhase(c, ior.ranks, client::kOpenRead, [&](client::File &file, unsigned r) {
            return hardRead(file, ior, r, cacheFull, &spread);
        });
    };
    // One cold read with max_cached_mb at `limit`; the cache is emptied before the limit is set,
    // so lowering it reclaims nothing of the other side's read.
    const auto readWith = [&](const std::string &limit) -> Result<ReadPhase> {
        if (auto status = c.dropCache(); !status) {
            return status;
        }
        if (auto status = c.setLlite("max_cached_mb", limit); !status) {
            return status;
        }
        auto phase = coldRead(c, read);
        if (auto status = c.setLlite("max_cached_mb", enough); !status) {
            return status;
        }
        return phase;
    };
    const auto iteration = [&]() -> Status {
        PhaseStats pressuredStats;
        PhaseStats unpressuredStats;
        std::vector<double> pressuredMBps, unpressuredMBps, ratios;
        std::uint64_t retries[2] = {0, 0}; // unpressured, pressured
        // Reads that waited for the file's trailing rank, and waits that ran out.
        std::uint64_t waits[2] = {0, 0};
        std::uint64_t waitTimeouts[2] = {0, 0};
        // Reads that missed, reached the marker or were an open's first, and the time in them.
        std::uint64_t slowReads[2] = {0, 0};
        std::uint64_t slowReadUs[2] = {0, 0};
        std::vector<double> spreads[2]; // unpressured, pressured
        nlohmann::json rounds = nlohmann::json::array();
        const RoundPlan plan(ior, loop);
        unsigned round = 0;
        for (; plan.more(round); ++round) {
            ReadPhase phases[2]; // unpressured, pressured
            nlohmann::json roundSpread[2];
            for (int side = 0; side < 2; ++side) {
                const int which = (side + static_cast<int>(round)) % 2; // alternate the order
                cacheFull = 0;
                const std::uint64_t waitsBefore = c.lliteNumber("trailing_reader_waits");
                const std::uint64_t timeoutsBefore = c.lliteNumber("trailing_reader_wait_timeouts");
                const std::uint64_t slowBefore = c.lliteNumber("slow_reads");
                const std::uint64_t slowUsBefore = c.lliteNumber("slow_read_us");
                auto phase = readWith(which == 0 ? enough : std::to_string(pressuredMb));
                retries[which] += cacheFull.exchange(0);
                waits[which] += c.lliteNumber("trailing_reader_waits") - waitsBefore;
                waitTimeouts[which] +=
                    c.lliteNumber("trailing_reader_wait_timeouts") - timeoutsBefore;
                slowReads[which] += c.lliteNumber("slow_reads") - slowBefore;
                slowReadUs[which] += c.lliteNumber("slow_read_us") - slowUsBefore;
                const std::size_t before = spreads[which].size();
                spread.takeSamples(spreads[which]);
                roundSpread[which] =
                    spreadJson(std::vector<double>(spreads[which].begin() +
                                                       static_cast<std::ptrdiff_t>(before),
                                                   spreads[which].end()),
                               cachePages);
                if (!phase) {
                    return phase.status().withContext(which == 0 ? "unpressured read"
                                                                 : "pressured read");
                }
                phases[which] = *phase;
            }
            unpressuredStats.add(phases[0]);
            pressuredStats.add(phases[1]);
            unpressuredMBps.push_back(megabytesPerSecond(fileBytes, phases[0].seconds));
            pressuredMBps.push_back(megabytesPerSecond(fileBytes, phases[1].seconds));
            ratios.push_back(pressuredMBps.back() / unpressuredMBps.back());
            rounds.push_back(
                {{"unpressured_read_MBps", rounded(unpressuredMBps.back())},
                 {"pressured_read_MBps", rounded(pressuredMBps.back())},
                 {"pressured_vs_unpressured", rounded(ratios.back())},
                 {"ra_hit_ratio", rounded(raHitRatio(phases[1].before, phases[1].after))},
                 {"read_but_discarded",
                  deltaOf(phases[1].before, phases[1].after, "read_but_discarded")},
                 {"pressured_rank_spread_pages", roundSpread[1]}});
        }
        const auto discarded = pressuredStats["read_but_discarded"];
        const auto readahead = pressuredStats["readahead_pages"];
        report.results["unpressured_read_MBps"] = rounded(median(unpressuredMBps));
        report.results["pressured_read_MBps"] = rounded(median(pressuredMBps));
        report.results["read_ahead_stats"] = pressuredStats.json();
        report.results["unpressured_read_ahead_stats"] = unpressuredStats.json();
        report.results["pressured_cost"] = pressuredStats.costJson(fileBytes);
        report.results["unpressured_cost"] = unpressuredStats.costJson(fileBytes);
        report.results["read_but_discarded_ratio"] =
            readahead > 0 ? rounded(static_cast<double>(discarded) / static_cast<double>(readahead))
                          : 0.0;
        report.results["ra_hit_ratio"] = rounded(pressuredStats.hitRatio());
        report.results["unpressured_ra_hit_ratio"] = rounded(unpressuredStats.hitRatio());
        report.results["unpressured_cache_full_retries"] = retries[0];
        report.results["trailing_reader_waits_per_round"] = {
            {"pressured", rounded(static_cast<double>(waits[1]) / round)},
            {"unpressured", rounded(static_cast<double>(waits[0]) / round)}};
        report.results["trailing_reader_wait_timeouts_per_round"] = {
            {"pressured", rounded(static_cast<double>(waitTimeouts[1]) / round)},
            {"unpressured", rounded(static_cast<double>(waitTimeouts[0]) / round)}};
        report.results["slow_reads_per_round"] = {
            {"pressured", rounded(static_cast<double>(slowReads[1]) / round)},
            {"unpressured", rounded(static_cast<double>(slowReads[0]) / round)}};
        report.results["slow_read_ms_per_round"] = {
            {"pressured", rounded(static_cast<double>(slowReadUs[1]) / 1000.0 / round)},
            {"unpressured", rounded(static_cast<double>(slowReadUs[0]) / 1000.0 / round)}};
        report.results["pressured_cache_full_retries"] = retries[1];
        report.results["rounds"] = rounds;
        reportFetched(report, pressuredStats, fileBytes, round);
        report.results["unpressured_pages_fetched"] = unpressuredStats.fetched();
        // The ranks' drift against the pressured cache (RankSpread).
        report.results["pressured_cache_pages"] = rounded(cachePages);
        report.results["pressured_rank_spread_pages"] = spreadJson(spreads[1], cachePages);
        report.results["unpressured_rank_spread_pages"] = spreadJson(spreads[0], cachePages);
        report.results["pressured_vs_unpressured_quartiles"] = quartiles(ratios);
        report.results["pressured_vs_unpressured_best"] =
            rounded(best(pressuredMBps) / best(unpressuredMBps));
        report.ratios["pressured_vs_unpressured"] = rounded(median(ratios));
        return {};
    };
    if (auto status = repeatWorkload(c, iteration); !status) {
        return status;
    }
    return report;
}

} // namespace lutra::tools
