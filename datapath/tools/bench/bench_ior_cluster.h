#pragma once
// What the client workload modes of lutra-bench share: their own lutra-target processes (or the
// ones named by --target), a Mount with a registry the bench owns (to read read_ahead_stats and
// set llite.* tunables), cold remounts, and timed parallel phases with the job id set.

#include <lutra/client.h>

#include "bench_modes.h"
#include "core/params/registry.h"
#include "target_process.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace lutra::tools {

using ReadAheadCounts = std::map<std::string, std::uint64_t>;

class BenchCluster {
public:
    static constexpr const char *kFsName = "bench";

    // Spawns `targets` lutra-targets (with their raw TCP baselines) unless options.target names
    // running ones (comma-separated), then mounts them.
    static Result<std::unique_ptr<BenchCluster>>
    start(const BenchOptions &options, const LoopOptions &loop, const std::string &prefix,
          std::uint64_t stripeSize = 1 << 20, unsigned targets = 2);
    ~BenchCluster();
    BenchCluster(const BenchCluster &) = delete;
    BenchCluster &operator=(const BenchCluster &) = delete;

    client::Mount &mount() noexcept { return *m_mount; }
    params::Registry &registry() noexcept { return m_registry; }
    const std::vector<std::string> &uris() const noexcept { return m_uris; }
    std::uint64_t stripeSize() const noexcept { return m_stripeSize; }
    // Raw TCP baseline endpoints, one per target (empty with --target and no --raw-baseline).
    const std::vector<std::string> &rawUris() const noexcept { return m_rawUris; }
    bool spawned() const noexcept { return !m_targets.empty(); }
    const LoopOptions &loop() const noexcept { return m_loop; }

    // Empties the client cache so the next read is cold: flushJob("") (every job: write back,
    // cancel locks, drop pages); files must be closed.
    Status dropCache();
    // Sets llite.<fs>.<name> through the registry, as an admin would.
    Status setLlite(const std::string &name, const std::string &value);
    // llite.<fs>.<name> as a number (0 when it is not published or not a number).
    std::uint64_t lliteNumber(const std::string &name);
    // llite.<fs>.read_ahead_stats, by counter name.
    ReadAheadCounts readAheadStats();
    // Bulk read RPCs sent so far to every target, by pages per RPC (osc.*.rpc_stats' histogram:
    // Lustre's row label, a power of two, to RPCs).
    std::map<std::uint64_t, std::uint64_t> readRpcs();
    // The same RPCs by how many read RPCs their target had in flight as each left, itself
    // counted (osc.*.rpc_stats' rpcs-in-flight histogram): how deep each target's pipeline ran.
    std::map<std::uint64_t, std::uint64_t> readRpcsInFlight();
    // Bulk read RPCs timed so far on every target and their time from send to reply, summed
    // (osc.*.stats' ost_read).
    struct RpcTime {
        std::uint64_t rpcs = 0;
        std::uint64_t microseconds = 0;
    };
    RpcTime readRpcTime();
    // CPU seconds used so far by this process (the client: ranks, transport threads) and by the
    // targets it spawned: with wall time, it tells a phase that computes from one that waits.
    double cpuSeconds() const;
    // Flush handler of the control socket (--loop).
    Result<client::FlushReport> flushJob(std::string_view job, std::chrono::milliseconds timeout);

private:
    BenchCluster() = default;
    // One of osc.*.rpc_stats' histograms summed over the targets: bucket (the counter name's
    // number after `prefix`) to RPCs.
    std::map<std::uint64_t, std::uint64_t> rpcHistogram(std::string_view prefix);

    LoopOptions m_loop;
    std::uint64_t m_stripeSize = 0;
    params::Registry m_registry; // declared before the mount: it must outlive it
    std::optional<TempDir> m_dir;
    std::vector<std::unique_ptr<TargetProcess>> m_targets;
    std::vector<std::string> m_uris;
    std::vector<std::string> m_rawUris;
    std::unique_ptr<client::Mount> m_mount;
    std::mutex m_flushMutex; // one cleanup at a time (the workload's and the control socket's)
};

// after - before for every counter, as JSON.
nlohmann::json readAheadDelta(const ReadAheadCounts &before, const ReadAheadCounts &after);
// hits / (hits + misses) of a delta; 0 when nothing was read.
double raHitRatio(const ReadAheadCounts &before, const ReadAheadCounts &after);
std::uint64_t deltaOf(const ReadAheadCounts &before, const ReadAheadCounts &after,
                      const std::string &name);

// Runs `work(thread)` on `threads` threads started together (each tagged with the loop's job id,
// if any); returns the seconds from the start to the last thread's end, or the first error.
Result<double> runPhase(unsigned threads, const LoopOptions &loop,
                        const std::function<Status(unsigned)> &work);

// Creates (or truncates) `path` with `size` bytes of fillPattern(seed) in `transfer`-byte writes,
// fsyncs and closes it.
Status writeClientFile(client::Mount &mount, const std::string &path, std::uint64_t size,
                       std::size_t transfer, std::uint64_t seed);
// writeClientFile in 1 MiB writes, then the file opened for reading: the cached-read modes' setup.
Result<std::unique_ptr<client::File>> writeAndOpen(client::Mount &mount, const std::string &path,
                                                   std::uint64_t size, std::uint64_t seed);
// Reads [0, size) of `file` in `transfer`-byte reads (warms the cache).
Status readClientFile(client::File &file, std::uint64_t size, std::size_t transfer);

// Runs `op()` on this thread for `seconds` (the clock is read every 256 calls); returns calls/s.
template <typename Op> Result<double> timedLoop(double seconds, Op &&op)
{
    const auto start = std::chrono::steady_clock::now();
    const auto end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                 std::chrono::duration<double>(seconds));
    std::uint64_t calls = 0;
    auto now = start;
    while (now < end) {
        for (int i = 0; i < 256; ++i) {
            if (auto status = op(); !status) {
                return status;
            }
        }
        calls += 256;
        now = std::chrono::steady_clock::now();
    }
    return static_cast<double>(calls) / std::chrono::duration<double>(now - start).count();
}

// Deterministic bytes for file contents.
void fillPattern(std::span<std::byte> out, std::uint64_t seed);

std::vector<std::string> splitList(const std::string &list);

} // namespace lutra::tools
