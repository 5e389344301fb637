// lutra-bench crc-read: CPU per MB of the zero-copy read's page CRCs, by the way they read the
// file (see datapath/target/README.md for the measurements and the choice).
#include "bench_crc_read.h"

#include "protocol/crc32c.h"
#include "protocol/messages.h"
#include "target/mapped_crcs.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>

namespace lutra::tools {

namespace {

using protocol::kPageSize;
constexpr std::size_t kChunkBytes = 256u << 10; // the target's pread chunk

double processCpuSeconds()
{
    timespec now{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

Status errnoStatus(const std::string &what)
{
    return {Errc::io_error, what + ": " + std::strerror(errno)};
}

struct Way {
    std::string name;
    // Sums the pages of [offset, offset + length) into `out`, on thread `thread`.
    std::function<Status(unsigned thread, std::uint64_t offset, std::size_t length,
                         std::span<std::uint32_t> out)>
        sum;
    std::vector<double> cpuNsPerMb;
    std::vector<double> megabytesPerSecond;
};

} // namespace

Result<Report> runCrcReadBench(const BenchOptions &options, const CrcReadBenchOptions &crcRead)
{
    const std::uint64_t fileBytes = std::uint64_t{crcRead.fileMb} << 20;
    const std::size_t rpc = std::size_t{crcRead.rpcKb} << 10;
    if (rpc == 0 || rpc % kPageSize != 0 || rpc > fileBytes || rpc > protocol::kMaxBulkBytes) {
        return Status(Errc::out_of_range, "--rpc-kb must be a multiple of 4 up to the file size "
                                          "and the largest bulk");
    }
    const char *tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/lutra-crc-read-XXXXXX";
    const int fd = ::mkstemp(path.data());
    if (fd < 0) {
        return errnoStatus("create " + path);
    }
    ::unlink(path.c_str()); // gone with the process
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    {
        std::vector<std::byte> block(1u << 20);
        for (std::uint64_t at = 0; at < fileBytes; at += block.size()) {
            for (std::size_t i = 0; i < block.size(); i += 8) {
                const std::uint64_t word = (at + i) * 0x9e3779b97f4a7c15ull;
                std::memcpy(block.data() + i, &word, 8);
            }
            if (::pwrite(fd, block.data(), block.size(), static_cast<off_t>(at)) !=
                static_cast<ssize_t>(block.size())) {
                return errnoStatus("write " + path);
            }
        }
    }
    const unsigned threads = std::max(1u, crcRead.threads);
    const std::uint64_t ranges = fileBytes / rpc;
    const std::size_t pagesPerRange = rpc / kPageSize;

    // Per thread: a bulk buffer (pread). The object's mapping: made anew for each pass (inside
    // its timing, unmapped at its end), so every page is faulted in once, as a cold read does.
    std::vector<std::unique_ptr<std::byte[]>> buffers;
    for (unsigned t = 0; t < threads; ++t) {
        buffers.push_back(std::make_unique<std::byte[]>(rpc));
    }
    std::unique_ptr<target::ObjectMapping> objectMapping;
    std::vector<std::uint32_t> expected(ranges * pagesPerRange);

    std::vector<Way> ways;
    ways.push_back(
        {"pread",
         [&](unsigned thread, std::uint64_t offset, std::size_t length,
             std::span<std::uint32_t> out) -> Status {
             std::byte *buffer = buffers[thread].get();
             for (std::size_t done = 0; done < length; done += kChunkBytes) {
                 const std::size_t chunk = std::min(kChunkBytes, length - done);
                 if (::pread(fd, buffer, chunk, static_cast<off_t>(offset + done)) !=
                     static_cast<ssize_t>(chunk)) {
                     return errnoStatus("pread");
                 }
                 if (auto status = protocol::computePageCrcs(
                         {buffer, chunk}, out.subspan(done / kPageSize, chunk / kPageSize));
                     !status) {
                     return status;
                 }
             }
             return {};
         }});
    const auto mappedPerRead = [&](target::FileMapping::Fill fill) {
        return [&, fill](unsigned, std::uint64_t offset, std::size_t length,
                         std::span<std::uint32_t> out) -> Status {
            auto mapping = target::FileMapping::map(fd, offset, length, fill);
            if (!mapping) {
                return mapping.status();
            }
            if (!target::guardedPageCrcs(mapping->bytes(), out)) {
                return Status(Errc::io_error, "SIGBUS summing a mapping");
            }
            return {};
        };
    };
    ways.push_back({"mmap_per_read", mappedPerRead(target::FileMapping::Fill::now)});
    ways.push_back({"mmap_per_read_on_touch", mappedPerRead(target::FileMapping::Fill::onTouch)});
    ways.push_back(
        {"object_mapping",
         [&](unsigned, std::uint64_t offset, std::size_t length,
             std::span<std::uint32_t> out) -> Status {
             auto mapping = objectMapping->cover(fd, offset + length);
             if (!mapping) {
                 return mapping.status();
             }
             if (!target::guardedPageCrcs((*mapping)->bytes().subspan(offset, length), out)) {
                 return Status(Errc::io_error, "SIGBUS summing a mapping");
             }
             return {};
         }});

    // One pass: every range once, thread t taking ranges t, t + threads, ...
    const auto pass = [&](Way &way, bool check) -> Status {
        std::vector<Status> errors(threads);
        std::vector<std::thread> running;
        const double cpuBefore = processCpuSeconds();
        const auto wallBefore = std::chrono::steady_clock::now();
        objectMapping = std::make_unique<target::ObjectMapping>();
        for (unsigned t = 0; t < threads; ++t) {
            running.emplace_back([&, t] {
                std::vector<std::uint32_t> crcs(pagesPerRange);
                for (std::uint64_t r = t; r < ranges && errors[t].ok(); r += threads) {
                    errors[t] = way.sum(t, r * rpc, rpc, crcs);
                    if (!errors[t].ok()) {
                        break;
                    }
                    std::uint32_t *slot = expected.data() + r * pagesPerRange;
                    if (!check) {
                        std::copy(crcs.begin(), crcs.end(), slot);
                    } else if (!std::equal(crcs.begin(), crcs.end(), slot)) {
                        errors[t] =
                            Status(Errc::internal, way.name + " summed range " + std::to_string(r) +
                                                       " differently from pread");
                    }
                }
            });
        }
        for (auto &thread : running) {
            thread.join();
        }
        objectMapping.reset();
        const double wall =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wallBefore).count();
        const double cpu = processCpuSeconds() - cpuBefore;
        for (const Status &error : errors) {
            if (!error.ok()) {
                return error;
            }
        }
        const double megabytes = static_cast<double>(fileBytes) / 1e6;
        way.cpuNsPerMb.push_back(cpu * 1e9 / megabytes);
        way.megabytesPerSecond.push_back(wall > 0 ? megabytes / wall : 0);
        return {};
    };
    // Warm: the file read once, the expected CRCs from pread (not counted).
    if (auto status = pass(ways[0], false); !status) {
        return status;
    }
    ways[0].cpuNsPerMb.clear();
    ways[0].megabytesPerSecond.clear();
    for (unsigned round = 0; round < crcRead.rounds; ++round) {
        for (std::size_t k = 0; k < ways.size(); ++k) {
            if (auto status = pass(ways[(round + k) % ways.size()], true); !status) {
                return status;
            }
        }
    }

    Report report;
    report.mode = "crc-read";
    report.params = {{"file_mb", crcRead.fileMb},
                     {"rpc_kb", crcRead.rpcKb},
                     {"threads", threads},
                     {"rounds", crcRead.rounds},
                     {"baseline", "pread of each range in 256 KiB chunks into a buffer, then "
                                  "the page CRCs (the target's checksum pass before mmap)"}};
    for (const Way &way : ways) {
        std::vector<double> cpu;
        std::vector<double> rate;
        for (double value : way.cpuNsPerMb) {
            cpu.push_back(rounded(value));
        }
        for (double value : way.megabytesPerSecond) {
            rate.push_back(rounded(value));
        }
        report.results[way.name + "_cpu_us_per_MB"] = rounded(median(way.cpuNsPerMb) / 1e3);
        report.results[way.name + "_MBps"] = rounded(median(way.megabytesPerSecond));
        report.results[way.name + "_cpu_ns_per_MB_rounds"] = cpu;
        report.results[way.name + "_MBps_rounds"] = rate;
    }
    const double baseline = median(ways[0].cpuNsPerMb);
    // CPU per MB against pread's (below 1: cheaper), medians of the same rounds.
    for (std::size_t k = 1; k < ways.size(); ++k) {
        report.ratios[ways[k].name + "_cpu_vs_pread"] =
            rounded(median(ways[k].cpuNsPerMb) / baseline);
    }
    (void)options;
    return report;
}

} // namespace lutra::tools
