// lutra-bench cached-read: large reads of cached data through the client against memcpy of the
// same size from a buffer, same run.
#include "bench_ior_cluster.h"
#include "bench_loop.h"
#include "bench_modes.h"

#include <chrono>
#include <cstring>

namespace lutra::tools {

Result<Report> runCachedReadBench(const BenchOptions &options, const LoopOptions &loop,
                                  const CachedReadBenchOptions &cachedRead)
{
    const std::uint64_t fileBytes = std::uint64_t{cachedRead.fileMb} << 20;
    const std::size_t transfer = std::size_t{cachedRead.transferKb} * 1024;
    if (transfer == 0 || transfer > fileBytes) {
        return Status(Errc::out_of_range, "--transfer-kb must be 1..file size");
    }
    auto cluster = BenchCluster::start(options, loop, "lutra-bench-cached-read");
    if (!cluster) {
        return cluster.status();
    }
    client::Mount &mount = (*cluster)->mount();
    const std::string path = "cached-read.dat";
    auto file = writeAndOpen(mount, path, fileBytes, 2);
    if (!file) {
        return file.status();
    }
    // The baseline's source: a buffer as large as the file, touched once.
    std::vector<std::byte> source(fileBytes);
    fillPattern(source, 2);
    std::vector<std::byte> buffer(transfer);
    const std::uint64_t transfers = fileBytes / transfer; // a pass: the whole file, both sides

    Report report;
    report.mode = "cached-read";
    report.params = {{"targets", (*cluster)->uris().size()},
                     {"spawned_targets", (*cluster)->spawned()},
                     {"file_mb", cachedRead.fileMb},
                     {"transfer_kb", cachedRead.transferKb},
                     {"duration_s", options.durationSeconds},
                     {"threads", 1},
                     {"source_mb", cachedRead.fileMb},
                     {"baseline", "memcpy of the same transfer size from a source as large as "
                                  "the file; whole passes of each side alternate"}};
    // One side's pass: every transfer of the file once, in order.
    const auto lutraPass = [&]() -> Status {
        for (std::uint64_t k = 0; k < transfers; ++k) {
            auto got = (*file)->pread(buffer, k * transfer);
            if (!got) {
                return got.status();
            }
            if (*got != transfer) {
                return Status(Errc::io_error,
                              path + ": short read at " + std::to_string(k * transfer));
            }
        }
        return {};
    };
    const auto memcpyPass = [&] {
        for (std::uint64_t k = 0; k < transfers; ++k) {
            std::memcpy(buffer.data(), source.data() + k * transfer, transfer);
            // Keep the copy observable so it is not optimised away.
            asm volatile("" : : "r"(buffer.data()) : "memory");
        }
    };
    const auto iteration = [&]() -> Status {
        if (auto status = readClientFile(**file, fileBytes, transfer); !status) {
            return status; // warm (again, if a FlushJob dropped it)
        }
        // Whole passes, alternating which side goes first: each pass follows a file-sized
        // sweep of the other side, so neither is measured cache-hot against the other's
        // cache-cold, and both share the machine's noisy moments.
        using Clock = std::chrono::steady_clock;
        const ReadAheadCounts before = (*cluster)->readAheadStats();
        const auto until =
            Clock::now() + std::chrono::duration_cast<Clock::duration>(
                               std::chrono::duration<double>(2 * options.durationSeconds));
        double lutraSeconds = 0;
        double memcpySeconds = 0;
        std::uint64_t passes = 0;
        do {
            for (int turn = 0; turn < 2; ++turn) {
                const bool lutraTurn = (turn == 0) == (passes % 2 == 0);
                const auto begin = Clock::now();
                if (lutraTurn) {
                    if (auto status = lutraPass(); !status) {
                        return status.withContext("lutra pread");
                    }
                } else {
                    memcpyPass();
                }
                const double took = std::chrono::duration<double>(Clock::now() - begin).count();
                (lutraTurn ? lutraSeconds : memcpySeconds) += took;
            }
            ++passes;
        } while (Clock::now() < until);
        const ReadAheadCounts after = (*cluster)->readAheadStats();
        const double passBytes = static_cast<double>(transfers * transfer);
        const double lutraMBps = static_cast<double>(passes) * passBytes / lutraSeconds / 1e6;
        const double memcpyMBps = static_cast<double>(passes) * passBytes / memcpySeconds / 1e6;
        report.results["passes"] = passes;
        report.results["lutra_read_MBps"] = rounded(lutraMBps);
        report.results["memcpy_MBps"] = rounded(memcpyMBps);
        report.results["read_ahead_stats"] = readAheadDelta(before, after);
        report.results["ra_hit_ratio"] = rounded(raHitRatio(before, after));
        report.ratios["vs_memcpy"] = rounded(lutraMBps / memcpyMBps);
        return {};
    };
    if (auto status = repeatWorkload(**cluster, iteration); !status) {
        return status;
    }
    if (auto status = (*file)->close(); !status) {
        return status;
    }
    return report;
}

} // namespace lutra::tools
