// lutra-bench cached-read: large reads of cached data through the client against memcpy of the
// same size from a buffer, same run.
#include "bench_ior_cluster.h"
#include "bench_loop.h"
#include "bench_modes.h"

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
    const std::uint64_t transfers = fileBytes / transfer;

    Report report;
    report.mode = "cached-read";
    report.params = {{"targets", (*cluster)->uris().size()},
                     {"spawned_targets", (*cluster)->spawned()},
                     {"file_mb", cachedRead.fileMb},
                     {"transfer_kb", cachedRead.transferKb},
                     {"duration_s", options.durationSeconds},
                     {"threads", 1},
                     {"baseline", "memcpy of the same size from a buffer of the file's size"}};
    const auto iteration = [&]() -> Status {
        if (auto status = readClientFile(**file, fileBytes, transfer); !status) {
            return status; // warm (again, if a FlushJob dropped it)
        }
        const ReadAheadCounts before = (*cluster)->readAheadStats();
        std::uint64_t k = 0;
        auto lutra = timedLoop(options.durationSeconds, [&]() -> Status {
            auto got = (*file)->pread(buffer, (k++ % transfers) * transfer);
            if (!got) {
                return got.status();
            }
            return {};
        });
        const ReadAheadCounts after = (*cluster)->readAheadStats();
        if (!lutra) {
            return lutra.status().withContext("lutra pread");
        }
        k = 0;
        auto memcpys = timedLoop(options.durationSeconds, [&]() -> Status {
            std::memcpy(buffer.data(), source.data() + (k++ % transfers) * transfer, transfer);
            // Keep the copy observable so it is not optimised away.
            asm volatile("" : : "r"(buffer.data()) : "memory");
            return {};
        });
        if (!memcpys) {
            return memcpys.status();
        }
        const double lutraMBps = *lutra * static_cast<double>(transfer) / 1e6;
        const double memcpyMBps = *memcpys * static_cast<double>(transfer) / 1e6;
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
