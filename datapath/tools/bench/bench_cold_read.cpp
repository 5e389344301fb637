// lutra-bench cold-read: another client's hot reads while one client reads cold data from the
// same targets, against the hot reads alone (datapath/target/README.md, "Cold reads").
#include "bench_cold_read.h"

#include "bench_ior_cluster.h"
#include "target_process.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

namespace lutra::tools {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kTransfer = 1 << 20;
constexpr unsigned kTargets = 2;
constexpr const char *kHotPath = "cold-read.hot";

std::string coldPath(unsigned thread)
{
    return "cold-read." + std::to_string(thread);
}

Result<std::unique_ptr<client::Mount>> mountClient(const std::vector<std::string> &uris,
                                                   const std::string &name)
{
    client::MountOptions options;
    options.targets = uris;
    options.fsName = name;
    options.clientId = name + "-" + std::to_string(::getpid());
    return client::Mount::mount(options);
}

// Drops the cold files' objects from the targets' page cache; returns the fraction of their
// pages still cached afterwards (0 when the drop worked: nothing maps them any more).
Result<double> dropFromTargets(const std::string &dir, unsigned files)
{
    std::uint64_t pages = 0;
    std::uint64_t resident = 0;
    for (unsigned target = 0; target < kTargets; ++target) {
        for (unsigned f = 0; f < files; ++f) {
            const std::string path = dir + "/ost" + std::to_string(target) + "/" + coldPath(f);
            const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                return Status(Errc::io_error, "open " + path + ": " + std::strerror(errno));
            }
            struct stat st {};
            ::fstat(fd, &st);
            ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            const auto size = static_cast<std::size_t>(st.st_size);
            if (size > 0) {
                void *map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
                if (map != MAP_FAILED) {
                    std::vector<unsigned char> bits((size + 4095) / 4096);
                    if (::mincore(map, size, bits.data()) == 0) {
                        pages += bits.size();
                        for (const unsigned char bit : bits) {
                            resident += bit & 1;
                        }
                    }
                    ::munmap(map, size);
                }
            }
            ::close(fd);
        }
    }
    return pages == 0 ? 0.0 : static_cast<double>(resident) / static_cast<double>(pages);
}

Status readWhole(client::Mount &mount, const std::string &path, std::uint64_t size,
                 std::atomic<std::uint64_t> *progress, const std::atomic<bool> *stop)
{
    auto file = mount.open(path, client::kOpenRead);
    if (!file) {
        return file.status();
    }
    std::vector<std::byte> buffer(kTransfer);
    for (std::uint64_t offset = 0; offset < size; offset += kTransfer) {
        if (stop != nullptr && stop->load()) {
            break;
        }
        auto got = (*file)->pread(buffer, offset);
        if (!got) {
            return got.status();
        }
        if (progress != nullptr) {
            progress->fetch_add(*got);
        }
    }
    return (*file)->close();
}

// The other client: reads its file again and again, its own cache dropped before each pass (so
// every byte comes from the targets, where it is cached), counting bytes until stopped.
class HotReader {
public:
    HotReader(client::Mount &mount, std::uint64_t size) : m_mount(mount), m_size(size)
    {
        m_thread = std::thread([this] {
            while (!m_stop) {
                if (auto flushed = m_mount.flushJob(""); !flushed) {
                    fail(flushed.status());
                    return;
                }
                if (auto status = readWhole(m_mount, kHotPath, m_size, &m_bytes, &m_stop);
                    !status) {
                    fail(status);
                    return;
                }
            }
        });
    }
    ~HotReader() { (void)stop(); }
    std::uint64_t bytes() const { return m_bytes.load(); }
    Status stop()
    {
        m_stop = true;
        if (m_thread.joinable()) {
            m_thread.join();
        }
        std::lock_guard lock(m_mutex);
        return m_error;
    }

private:
    void fail(const Status &status)
    {
        std::lock_guard lock(m_mutex);
        m_error = status;
    }

    client::Mount &m_mount;
    const std::uint64_t m_size;
    std::atomic<std::uint64_t> m_bytes{0};
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    Status m_error;
    std::thread m_thread;
};

double mbps(std::uint64_t bytes, double seconds)
{
    return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0;
}

// One set of spawned targets with its two clients and files, and its rounds' numbers.
struct Side {
    std::string name;
    std::optional<TempDir> dir;
    std::vector<std::unique_ptr<TargetProcess>> targets;
    std::unique_ptr<client::Mount> coldClient;
    std::unique_ptr<client::Mount> hotClient;
    std::vector<double> ratios;
    std::vector<double> coldRates;
    nlohmann::json rounds = nlohmann::json::array();
};

Result<std::unique_ptr<Side>> startSide(const BenchOptions &options,
                                        const ColdReadBenchOptions &cold, std::string name,
                                        bool fill)
{
    auto side = std::make_unique<Side>();
    side->name = std::move(name);
    auto dir = TempDir::create("lutra-bench-cold-read");
    if (!dir) {
        return dir.status();
    }
    side->dir.emplace(std::move(dir).value());
    TargetProcess::Options spawn;
    spawn.binary = options.targetBinary;
    if (!fill) {
        spawn.extraArgs.push_back("--no-cold-read-fill");
    }
    auto targets = spawnTargets(side->dir->path(), kTargets, spawn);
    if (!targets) {
        return targets.status();
    }
    side->targets = std::move(targets).value();
    std::vector<std::string> uris;
    for (const auto &target : side->targets) {
        uris.push_back(target->uri());
    }
    auto coldClient = mountClient(uris, "cold");
    if (!coldClient) {
        return coldClient.status();
    }
    side->coldClient = std::move(coldClient).value();
    auto hotClient = mountClient(uris, "hot");
    if (!hotClient) {
        return hotClient.status();
    }
    side->hotClient = std::move(hotClient).value();
    const std::uint64_t fileBytes = std::uint64_t{cold.fileMb} << 20;
    if (auto written = runPhase(cold.threads, {},
                                [&](unsigned t) {
                                    return writeClientFile(*side->coldClient, coldPath(t),
                                                           fileBytes, kTransfer, t + 1);
                                });
        !written) {
        return written.status();
    }
    if (auto status = writeClientFile(*side->hotClient, kHotPath, std::uint64_t{cold.hotMb} << 20,
                                      kTransfer, 99);
        !status) {
        return status;
    }
    return side;
}

// One round on one side: the cold files dropped from the targets, then the hot reads beside the
// cold reads and alone for as long, in the order given.
Status runRound(Side &side, const ColdReadBenchOptions &cold, bool coldFirst)
{
    const std::uint64_t fileBytes = std::uint64_t{cold.fileMb} << 20;
    if (auto flushed = side.coldClient->flushJob(""); !flushed) {
        return flushed.status();
    }
    auto left = dropFromTargets(side.dir->path(), cold.threads);
    if (!left) {
        return left.status();
    }
    HotReader hot(*side.hotClient, std::uint64_t{cold.hotMb} << 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(300)); // the hot reads under way
    double coldSeconds = 0;
    double withCold = 0;
    double alone = 0;
    const auto coldPhase = [&]() -> Status {
        const std::uint64_t before = hot.bytes();
        auto seconds = runPhase(cold.threads, {}, [&](unsigned t) {
            return readWhole(*side.coldClient, coldPath(t), fileBytes, nullptr, nullptr);
        });
        if (!seconds) {
            return seconds.status();
        }
        coldSeconds = *seconds;
        withCold = mbps(hot.bytes() - before, coldSeconds);
        return {};
    };
    // As long as the cold phase (or 2 s before the first one ran).
    const auto alonePhase = [&] {
        const auto window = std::chrono::duration<double>(coldSeconds > 0 ? coldSeconds : 2.0);
        const std::uint64_t before = hot.bytes();
        const auto start = Clock::now();
        std::this_thread::sleep_for(window);
        alone =
            mbps(hot.bytes() - before, std::chrono::duration<double>(Clock::now() - start).count());
    };
    if (!coldFirst) {
        alonePhase();
    }
    if (auto status = coldPhase(); !status) {
        return status;
    }
    if (coldFirst) {
        alonePhase();
    }
    if (auto status = hot.stop(); !status) {
        return status.withContext("the hot reader");
    }
    const double coldRate = mbps(fileBytes * cold.threads, coldSeconds);
    const double ratio = alone > 0 ? withCold / alone : 0;
    side.ratios.push_back(ratio);
    side.coldRates.push_back(coldRate);
    side.rounds.push_back({{"cold_first", coldFirst},
                           {"cached_after_drop", rounded(*left)},
                           {"cold_read_MBps", rounded(coldRate)},
                           {"hot_with_cold_MBps", rounded(withCold)},
                           {"hot_alone_MBps", rounded(alone)},
                           {"hot_with_cold_vs_alone", rounded(ratio)}});
    return {};
}

} // namespace

Result<Report> runColdReadBench(const BenchOptions &options, const ColdReadBenchOptions &cold)
{
    if (!options.target.empty()) {
        return Status(Errc::invalid_argument,
                      "cold-read spawns its targets (it drops their files from the page cache)");
    }
    std::vector<std::unique_ptr<Side>> sides;
    auto fill = startSide(options, cold, "fill", true);
    if (!fill) {
        return fill.status();
    }
    sides.push_back(std::move(fill).value());
    if (cold.compareNoFill) {
        auto noFill = startSide(options, cold, "no_fill", false);
        if (!noFill) {
            return noFill.status();
        }
        sides.push_back(std::move(noFill).value());
    }
    for (unsigned round = 0; round < cold.rounds; ++round) {
        for (std::size_t i = 0; i < sides.size(); ++i) {
            // The sides take turns to go first, and each alternates the order of its phases.
            Side &side = *sides[(i + round) % sides.size()];
            if (auto status = runRound(side, cold, round % 2 == 0); !status) {
                return status.withContext("side " + side.name);
            }
        }
    }

    Report report;
    report.mode = "cold-read";
    report.params = {{"threads", cold.threads},
                     {"file_mb", cold.fileMb},
                     {"hot_mb", cold.hotMb},
                     {"rounds", cold.rounds},
                     {"targets", kTargets},
                     {"target_bin", options.targetBinary.empty() ? TargetProcess::defaultBinary()
                                                                 : options.targetBinary}};
    for (const auto &side : sides) {
        report.results[side->name] = {{"rounds", side->rounds},
                                      {"cold_read_MBps", rounded(median(side->coldRates))},
                                      {"hot_with_cold_vs_alone", rounded(median(side->ratios))}};
    }
    const double filled = median(sides.front()->ratios);
    report.ratios["hot_with_cold_vs_alone"] = rounded(filled);
    if (sides.size() > 1) {
        const double unfilled = median(sides.back()->ratios);
        report.ratios["hot_with_cold_vs_alone_no_fill"] = rounded(unfilled);
        report.ratios["fill_vs_no_fill"] = rounded(unfilled > 0 ? filled / unfilled : 0);
        report.ratios["cold_read_fill_vs_no_fill"] =
            rounded(median(sides.back()->coldRates) > 0
                        ? median(sides.front()->coldRates) / median(sides.back()->coldRates)
                        : 0);
    }
    return report;
}

} // namespace lutra::tools
