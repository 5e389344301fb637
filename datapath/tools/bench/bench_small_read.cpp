// lutra-bench small-read: small reads of cached data through the client (the LU-9749 fast path)
// against pread() of the same bytes from a file in the kernel page cache, same run.
#include "bench_ior_cluster.h"
#include "bench_loop.h"
#include "bench_modes.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <vector>

namespace lutra::tools {

namespace {

constexpr std::array<std::size_t, 3> kSizes{1, 1024, 4096};
// The sides of each size, measured in turns.
constexpr int kLutra = 0;
constexpr int kLutraFastReadOff = 1;
constexpr int kKernel = 2;
constexpr int kSides = 3;
constexpr int kRounds = 8;

std::string sizeName(std::size_t size)
{
    return size == 1 ? "1B" : std::to_string(size / 1024) + "KiB";
}

// The next offset of a stream of `size`-byte reads over `fileBytes`, wrapping at the end.
std::uint64_t advance(std::uint64_t offset, std::size_t size, std::uint64_t fileBytes)
{
    offset += size;
    return offset + size > fileBytes ? 0 : offset;
}

class LocalFile {
public:
    ~LocalFile()
    {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    // Writes `bytes` to `path` and reads it back once, so it sits in the kernel page cache.
    Status create(const std::string &path, std::span<const std::byte> bytes)
    {
        m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (m_fd < 0 ||
            ::pwrite(m_fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
            return Status(Errc::io_error, "cannot write " + path);
        }
        std::vector<std::byte> back(bytes.size());
        if (::pread(m_fd, back.data(), back.size(), 0) != static_cast<ssize_t>(back.size())) {
            return Status(Errc::io_error, "cannot read " + path);
        }
        return {};
    }
    int fd() const noexcept { return m_fd; }

private:
    int m_fd = -1;
};

} // namespace

Result<Report> runSmallReadBench(const BenchOptions &options, const LoopOptions &loop,
                                 const SmallReadBenchOptions &smallRead)
{
    const std::uint64_t fileBytes = std::uint64_t{smallRead.fileKb} * 1024;
    if (fileBytes < kSizes.back()) {
        return Status(Errc::out_of_range, "--file-kb must be at least 4");
    }
    auto cluster = BenchCluster::start(options, loop, "lutra-bench-small-read");
    if (!cluster) {
        return cluster.status();
    }
    client::Mount &mount = (*cluster)->mount();
    const std::string path = "small-read.dat";
    auto file = writeAndOpen(mount, path, fileBytes, 1);
    if (!file) {
        return file.status();
    }
    auto scratch = TempDir::create("lutra-bench-small-read-local");
    if (!scratch) {
        return scratch.status();
    }
    std::vector<std::byte> contents(fileBytes);
    if (auto got = (*file)->pread(contents, 0); !got || *got != fileBytes) {
        return Status(Errc::io_error, "warming " + path + " failed");
    }
    LocalFile local;
    if (auto status = local.create(scratch->path() + "/small-read.dat", contents); !status) {
        return status;
    }

    Report report;
    report.mode = "small-read";
    report.params = {{"targets", (*cluster)->uris().size()},
                     {"spawned_targets", (*cluster)->spawned()},
                     {"file_kb", smallRead.fileKb},
                     {"duration_s", options.durationSeconds},
                     {"threads", 1},
                     {"pattern", "sequential, wrapping; cached (read once to warm)"},
                     {"rounds", kRounds}};
    const auto iteration = [&]() -> Status {
        std::array<std::byte, kSizes.back()> buffer{};
        const ReadAheadCounts before = (*cluster)->readAheadStats();
        // Warm again: a FlushJob from the control socket (--loop) may have dropped the pages.
        if (auto status = readClientFile(**file, fileBytes, 1 << 20); !status) {
            return status;
        }
        for (const std::size_t size : kSizes) {
            // The three sides take turns in short slices, each round in another order, and each
            // side's rate is its median slice: a burst of load elsewhere on this shared machine
            // then falls on all of them alike instead of on whichever ran during it.
            std::array<std::uint64_t, kSides> offsets{};
            std::array<std::vector<double>, kSides> rates;
            const double slice = options.durationSeconds / kRounds;
            for (int round = 0; round < kRounds; ++round) {
                for (int turn = 0; turn < kSides; ++turn) {
                    const int side = (round + turn) % kSides;
                    std::uint64_t &offset = offsets[static_cast<std::size_t>(side)];
                    if (side != kKernel) {
                        // LU-9749's honest ratio: the same client with its fast read turned off.
                        if (auto status = (*cluster)->setLlite(
                                "fast_read", side == kLutraFastReadOff ? "0" : "1");
                            !status) {
                            return status;
                        }
                    }
                    auto rate = timedLoop(slice, [&]() -> Status {
                        if (side == kKernel) {
                            if (::pread(local.fd(), buffer.data(), size,
                                        static_cast<off_t>(offset)) != static_cast<ssize_t>(size)) {
                                return Status(Errc::io_error, "kernel pread failed");
                            }
                        } else if (auto got = (*file)->pread(std::span(buffer).first(size), offset);
                                   !got) {
                            return got.status().withContext(side == kLutraFastReadOff
                                                                ? "lutra pread, fast_read=0"
                                                                : "lutra pread");
                        }
                        offset = advance(offset, size, fileBytes);
                        return {};
                    });
                    if (!rate) {
                        (void)(*cluster)->setLlite("fast_read", "1");
                        return rate.status();
                    }
                    rates[static_cast<std::size_t>(side)].push_back(*rate);
                }
            }
            if (auto status = (*cluster)->setLlite("fast_read", "1"); !status) {
                return status;
            }
            const double lutra = median(rates[kLutra]);
            const double slow = median(rates[kLutraFastReadOff]);
            const double kernel = median(rates[kKernel]);
            const std::string name = sizeName(size);
            report.results["lutra_" + name + "_reads_per_s"] = rounded(lutra);
            report.results["lutra_" + name + "_fast_read_off_reads_per_s"] = rounded(slow);
            report.results["kernel_" + name + "_reads_per_s"] = rounded(kernel);
            report.ratios[size == 1 ? std::string("vs_kernel_pread") : "vs_kernel_pread_" + name] =
                rounded(lutra / kernel);
            report
                .ratios[size == 1 ? std::string("vs_fast_read_off") : "vs_fast_read_off_" + name] =
                rounded(lutra / slow);
        }
        report.results["read_ahead_stats"] = readAheadDelta(before, (*cluster)->readAheadStats());
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
