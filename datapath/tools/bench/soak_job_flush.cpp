// Soak kind job-flush: per-job flush while writers of that job and of another job keep writing.
// Checked from the target's side: every byte the flushed job wrote before the flush began has
// reached the target when the flush returns (its job_stats write_bytes), the other job's pages
// are still cached (reading them costs the target no read), and after close every written byte
// reads back through a fresh client.

#include <lutra/client.h>

#include "bench_soak.h"
#include "soak_support.h"
#include "target_process.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

namespace lutra::tools {

namespace {

constexpr std::size_t kBlockBytes = 64 * 1024;
constexpr unsigned kMaxBlocks = 512; // per writer and cycle (32 MiB)

void fillBlock(std::byte *out, std::uint64_t seed, const std::string &file, unsigned block)
{
    std::uint64_t state =
        seed ^ std::hash<std::string>{}(file) ^ (block + 1) * 0x9e3779b97f4a7c15ull;
    for (std::size_t i = 0; i < kBlockBytes; i += sizeof state) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        std::memcpy(out + i, &state, sizeof state);
    }
}

// `sum` of `counter` for `job` in Lustre's job_stats text ("- job_id:   <id>" starts a job;
// "  write_bytes: { samples: ..., sum: N }"); 0 when the job or counter is absent.
std::uint64_t jobCounterSum(const std::string &text, const std::string &job,
                            const std::string &counter)
{
    std::size_t at = 0;
    while ((at = text.find("- job_id:", at)) != std::string::npos) {
        const auto lineEnd = text.find('\n', at);
        const auto idStart = text.find_first_not_of(' ', at + 9);
        const std::string id = text.substr(idStart, lineEnd - idStart);
        const auto next = text.find("- job_id:", at + 1);
        if (id == job) {
            const auto line = text.find("  " + counter + ":", at);
            if (line == std::string::npos || line > next) {
                return 0;
            }
            const auto sum = text.find("sum:", line);
            if (sum == std::string::npos || sum > text.find('\n', line)) {
                return 0;
            }
            return std::strtoull(text.c_str() + sum + 4, nullptr, 10);
        }
        at = next;
    }
    return 0;
}

struct JobWriter {
    std::string job;
    std::string file;
    std::atomic<unsigned> written{0}; // blocks whose pwrite returned
    std::atomic<bool> stop{false};
    std::string error;
};

void writeBlocks(client::Mount &mount, client::File &file, std::uint64_t seed, JobWriter &writer)
{
    mount.setThreadJobId(writer.job);
    std::vector<std::byte> block(kBlockBytes);
    for (unsigned b = 0; b < kMaxBlocks && !writer.stop; ++b) {
        fillBlock(block.data(), seed, writer.file, b);
        auto wrote = file.pwrite(block, std::uint64_t{b} * kBlockBytes);
        if (!wrote || *wrote != kBlockBytes) {
            writer.error = wrote ? "short write" : wrote.status().message();
            return;
        }
        writer.written = b + 1;
    }
}

// Reads blocks [0, count) of `path` and compares them with what was written.
std::string verify(client::Mount &mount, std::uint64_t seed, const std::string &path,
                   unsigned count)
{
    auto file = mount.open(path, client::kOpenRead);
    if (!file) {
        return path + ": " + file.status().message();
    }
    std::vector<std::byte> expected(kBlockBytes);
    std::vector<std::byte> actual(kBlockBytes);
    for (unsigned b = 0; b < count; ++b) {
        fillBlock(expected.data(), seed, path, b);
        auto got = (*file)->pread(actual, std::uint64_t{b} * kBlockBytes);
        if (!got || *got != kBlockBytes ||
            std::memcmp(expected.data(), actual.data(), kBlockBytes) != 0) {
            return path + " block " + std::to_string(b) + " of " + std::to_string(count) +
                   " reads back wrong";
        }
    }
    return {};
}

} // namespace

Status soakJobFlush(std::uint64_t seed, unsigned cycles, SoakTally &tally)
{
    auto dir = TempDir::create("lutra-soak-flush");
    if (!dir) {
        return dir.status();
    }
    auto random = soakRandom(seed, 3);
    TargetProcess::Options options;
    options.root = dir->path() + "/ost0";
    options.runDir = dir->path() + "/run";
    std::filesystem::create_directories(options.root);
    std::filesystem::create_directories(options.runDir);
    auto target = TargetProcess::spawn(options);
    if (!target) {
        return target.status();
    }
    const std::string jobStats = "obdfilter.ost0.job_stats";
    const auto targetJobStats = [&]() -> std::string {
        auto values = readParamsDirect((*target)->controlSocket(), {jobStats});
        return values ? (*values)[jobStats] : std::string();
    };
    // Whether the target's job_stats show `job`'s reads above `bytes`: at once, as the target
    // tallies a read before it sends it (until session 23 a zero-copy read was tallied after its
    // send, and 4 cycles in 320 reported a flushed block "cached" that the target did read).
    const auto readShows = [&](const std::string &job, std::uint64_t bytes) {
        return jobCounterSum(targetJobStats(), job, "read_bytes") > bytes;
    };

    for (unsigned cycle = 0; cycle < cycles; ++cycle) {
        tally.cycles = cycle + 1;
        const std::string tag = std::to_string(cycle);
        JobWriter flushed{"soak.a." + tag, "flush-a-" + tag};
        JobWriter other{"soak.b." + tag, "flush-b-" + tag};
        const std::string checker = "soak.check." + tag;
        {
            client::MountOptions mountOptions;
            mountOptions.targets = {(*target)->uri()};
            auto mount = client::Mount::mount(mountOptions);
            if (!mount) {
                return mount.status();
            }
            auto fileA = (*mount)->open(flushed.file, client::kOpenWrite | client::kOpenCreate);
            auto fileB = (*mount)->open(other.file, client::kOpenWrite | client::kOpenCreate);
            if (!fileA || !fileB) {
                return Status(Errc::io_error,
                              "cannot create the soak's files: " +
                                  (fileA ? fileB.status() : fileA.status()).message());
            }
            std::thread writerA([&] { writeBlocks(**mount, **fileA, seed, flushed); });
            std::thread writerB([&] { writeBlocks(**mount, **fileB, seed, other); });
            std::this_thread::sleep_for(std::chrono::milliseconds(uniform(random, 5, 80)));

            const std::uint64_t before = std::uint64_t{flushed.written} * kBlockBytes;
            client::Mount::setThreadJobId("soak.flusher");
            auto report = (*mount)->flushJob(flushed.job);
            const std::string statsAfterFlush = targetJobStats();
            const std::uint64_t reached =
                jobCounterSum(statsAfterFlush, flushed.job, "write_bytes");
            other.stop = true;
            writerB.join();
            if (!report) {
                tally.violation(cycle, "flushJob: " + report.status().message());
            } else if (!report->errors.empty()) {
                tally.violation(cycle, "flushJob reported: " + report->errors.front());
            }
            if (reached < before) {
                tally.violation(cycle, "after the flush of " + flushed.job + " the target holds " +
                                           std::to_string(reached) + " of the " +
                                           std::to_string(before) +
                                           " bytes it wrote before the flush; job_stats: " +
                                           statsAfterFlush.substr(0, 400));
            }
            tally.outcome(before == 0 ? "flushed_before_first_write" : "flushed_while_writing");

            // The other job's pages are still cached: reading them asks the target nothing.
            client::Mount::setThreadJobId(checker);
            const unsigned otherBlocks = other.written;
            if (auto wrong = verify(**mount, seed, other.file, otherBlocks); !wrong.empty()) {
                tally.violation(cycle, "before close: " + wrong);
            }
            const std::uint64_t reread = jobCounterSum(targetJobStats(), checker, "read_bytes");
            if (reread != 0) {
                tally.violation(cycle, "reading " + other.job + "'s " +
                                           std::to_string(otherBlocks) + " blocks after flushing " +
                                           flushed.job + " read " + std::to_string(reread) +
                                           " bytes from the target");
            }
            // And the flushed job's pages are gone: reading its first block costs a read (this
            // also proves the target tags the checker's reads, so the check above can fail).
            if (before > 0) {
                if (auto wrong = verify(**mount, seed, flushed.file, 1); !wrong.empty()) {
                    tally.violation(cycle, "before close: " + wrong);
                }
                if (!readShows(checker, reread)) {
                    tally.violation(cycle,
                                    "the flush of " + flushed.job + " left its first block cached");
                }
            }
            flushed.stop = true;
            writerA.join();
            for (auto *file : {&*fileA, &*fileB}) {
                if (auto closed = (*file)->close(); !closed) {
                    tally.violation(cycle, "close: " + closed.message());
                }
            }
            if (!flushed.error.empty() || !other.error.empty()) {
                tally.violation(cycle, "a writer failed: " + flushed.error + other.error);
            }
        }
        // Nothing written is lost: a fresh client reads every block back.
        client::MountOptions mountOptions;
        mountOptions.targets = {(*target)->uri()};
        auto fresh = client::Mount::mount(mountOptions);
        if (!fresh) {
            return fresh.status();
        }
        for (const auto *writer : {&flushed, &other}) {
            if (auto wrong = verify(**fresh, seed, writer->file, writer->written); !wrong.empty()) {
                tally.violation(cycle, "after close: " + wrong);
            }
        }
    }
    return {};
}

} // namespace lutra::tools
