// Soak kind target-kill: kill -9 of lutra-target while clients write patterned blocks with
// fsync; after a restart every block acknowledged by an fsync reads back byte for byte.

#include <lutra/client.h>

#include "bench_soak.h"
#include "soak_support.h"
#include "target_process.h"

#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

namespace lutra::tools {

namespace {

constexpr std::size_t kBlockBytes = 64 * 1024;
constexpr unsigned kBlocksPerFsync = 4;
constexpr unsigned kWriters = 2;
constexpr unsigned kMaxBlocks = 1024; // per writer and cycle (64 MiB)

// The bytes of one block: a function of where it lives, so a read-back proves both the data
// and its placement.
void fillBlock(std::byte *out, std::uint64_t seed, unsigned cycle, unsigned writer, unsigned block)
{
    std::uint64_t state = seed ^ (std::uint64_t{cycle} << 40) ^ (std::uint64_t{writer} << 32) ^
                          (block + 1) * 0x9e3779b97f4a7c15ull;
    for (std::size_t i = 0; i < kBlockBytes; i += sizeof state) {
        state ^= state << 13; // xorshift64
        state ^= state >> 7;
        state ^= state << 17;
        std::memcpy(out + i, &state, sizeof state);
    }
}

std::string fileName(unsigned cycle, unsigned writer)
{
    return "soak-" + std::to_string(cycle) + "-" + std::to_string(writer);
}

struct Writer {
    std::atomic<unsigned> acknowledged{0}; // blocks made durable by a successful fsync
    std::string firstError;
    bool failedBeforeKill = false; // an error with the target still alive is a defect
};

void writeUntilFailure(client::Mount &mount, std::uint64_t seed, unsigned cycle, unsigned index,
                       const std::atomic<bool> &killed, Writer &writer)
{
    auto file = mount.open(fileName(cycle, index), client::kOpenWrite | client::kOpenCreate);
    if (!file) {
        writer.firstError = file.status().message();
        writer.failedBeforeKill = !killed;
        return;
    }
    std::vector<std::byte> block(kBlockBytes);
    for (unsigned b = 0; b < kMaxBlocks; ++b) {
        fillBlock(block.data(), seed, cycle, index, b);
        auto wrote = (*file)->pwrite(block, std::uint64_t{b} * kBlockBytes);
        if (!wrote || *wrote != kBlockBytes) {
            writer.firstError = wrote ? "short write" : wrote.status().message();
            writer.failedBeforeKill = !killed;
            break;
        }
        if ((b + 1) % kBlocksPerFsync == 0) {
            if (auto synced = (*file)->fsync(); !synced) {
                writer.firstError = synced.message();
                writer.failedBeforeKill = !killed;
                break;
            }
            writer.acknowledged = b + 1;
        }
    }
    (void)(*file)->close(); // fails once the target is gone: its data was never acknowledged
}

} // namespace

Status soakTargetKill(std::uint64_t seed, unsigned cycles, SoakTally &tally)
{
    auto dir = TempDir::create("lutra-soak-target");
    if (!dir) {
        return dir.status();
    }
    auto random = soakRandom(seed, 1);
    TargetProcess::Options options;
    options.root = dir->path() + "/ost0";
    std::filesystem::create_directories(options.root);
    for (unsigned cycle = 0; cycle < cycles; ++cycle) {
        tally.cycles = cycle + 1;
        auto target = TargetProcess::spawn(options);
        if (!target) {
            return target.status();
        }
        std::vector<Writer> writers(kWriters);
        std::atomic<bool> killed{false};
        {
            client::MountOptions mountOptions;
            mountOptions.targets = {(*target)->uri()};
            mountOptions.rpcTimeout = std::chrono::milliseconds(3000);
            auto mount = client::Mount::mount(mountOptions);
            if (!mount) {
                return mount.status();
            }
            std::vector<std::thread> threads;
            for (unsigned w = 0; w < kWriters; ++w) {
                threads.emplace_back(
                    [&, w] { writeUntilFailure(**mount, seed, cycle, w, killed, writers[w]); });
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(uniform(random, 5, 600)));
            killed = true;
            if (auto stopped = (*target)->stop(SIGKILL); !stopped) {
                return stopped.status();
            }
            for (auto &thread : threads) {
                thread.join();
            }
        }
        target->reset();
        unsigned acknowledged = 0;
        for (const auto &writer : writers) {
            acknowledged += writer.acknowledged;
            if (writer.failedBeforeKill) {
                tally.violation(cycle, "a writer failed before the kill: " + writer.firstError);
            }
        }
        tally.outcome(acknowledged == 0 ? "killed_before_first_fsync" : "killed_after_fsyncs");

        // Restart on the same directory and read back with a fresh client.
        auto restarted = TargetProcess::spawn(options);
        if (!restarted) {
            tally.violation(cycle, "lutra-target did not restart after kill -9: " +
                                       restarted.status().message());
            continue;
        }
        client::MountOptions mountOptions;
        mountOptions.targets = {(*restarted)->uri()};
        auto mount = client::Mount::mount(mountOptions);
        if (!mount) {
            return mount.status();
        }
        std::vector<std::byte> expected(kBlockBytes);
        std::vector<std::byte> actual(kBlockBytes);
        for (unsigned w = 0; w < kWriters; ++w) {
            const unsigned blocks = writers[w].acknowledged;
            if (blocks == 0) {
                continue;
            }
            auto file = (*mount)->open(fileName(cycle, w), client::kOpenRead);
            if (!file) {
                tally.violation(cycle,
                                fileName(cycle, w) + " with " + std::to_string(blocks) +
                                    " acknowledged blocks is gone: " + file.status().message());
                continue;
            }
            for (unsigned b = 0; b < blocks; ++b) {
                fillBlock(expected.data(), seed, cycle, w, b);
                auto got = (*file)->pread(actual, std::uint64_t{b} * kBlockBytes);
                if (!got || *got != kBlockBytes ||
                    std::memcmp(expected.data(), actual.data(), kBlockBytes) != 0) {
                    tally.violation(cycle, fileName(cycle, w) + " block " + std::to_string(b) +
                                               " of " + std::to_string(blocks) +
                                               " acknowledged reads back wrong" +
                                               (got ? "" : ": " + got.status().message()));
                    break;
                }
            }
            (void)(*file)->close();
        }
        tally.outcome("blocks_verified", acknowledged);
    }
    return {};
}

} // namespace lutra::tools
