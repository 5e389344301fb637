#include "bench_ior_cluster.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <latch>
#include <mutex>
#include <sstream>
#include <thread>

namespace lutra::tools {

Result<std::unique_ptr<BenchCluster>>
BenchCluster::start(const BenchOptions &options, const LoopOptions &loop, const std::string &prefix,
                    std::uint64_t stripeSize, unsigned targets)
{
    std::unique_ptr<BenchCluster> cluster(new BenchCluster());
    cluster->m_loop = loop;
    cluster->m_stripeSize = stripeSize;
    if (!options.target.empty()) {
        cluster->m_uris = splitList(options.target);
        if (cluster->m_uris.empty()) {
            return Status(Errc::invalid_argument, "--target names no target");
        }
        cluster->m_rawUris = splitList(options.rawBaseline);
    } else {
        auto dir = TempDir::create(prefix);
        if (!dir) {
            return dir.status();
        }
        cluster->m_dir.emplace(std::move(dir).value());
        TargetProcess::Options spawn;
        spawn.binary = options.targetBinary;
        spawn.rawBaseline = true;
        auto started = spawnTargets(cluster->m_dir->path(), targets, spawn);
        if (!started) {
            return started.status();
        }
        for (auto &target : *started) {
            cluster->m_uris.push_back(target->uri());
            cluster->m_rawUris.push_back(target->rawBaselineUri());
        }
        cluster->m_targets = std::move(started).value();
    }
    client::MountOptions mountOptions;
    mountOptions.targets = cluster->m_uris;
    mountOptions.fsName = kFsName;
    mountOptions.stripeSize = stripeSize;
    mountOptions.clientId = "lutra-bench-" + std::to_string(::getpid());
    mountOptions.registry = &cluster->m_registry;
    mountOptions.transportIoThreads = options.transportIoThreads;
    auto mounted = client::Mount::mount(mountOptions);
    if (!mounted) {
        return mounted.status();
    }
    cluster->m_mount = std::move(mounted).value();
    for (const std::string &setting : options.settings) {
        const auto equals = setting.find('=');
        if (equals == std::string::npos || equals == 0) {
            return Status(Errc::invalid_argument, "--set " + setting +
                                                      ": expected NAME=VALUE, e.g. "
                                                      "llite.*.max_read_ahead_mb=16");
        }
        const params::Assignment assignment{setting.substr(0, equals), setting.substr(equals + 1)};
        if (auto result = cluster->m_registry.set({&assignment, 1}, "lutra-bench");
            !result.status) {
            return result.status.withContext("--set " + setting);
        }
    }
    if (!loop.jobId.empty()) {
        client::Mount::setThreadJobId(loop.jobId); // the mode's own thread works for the job too
    }
    return cluster;
}

BenchCluster::~BenchCluster() = default;

Status BenchCluster::dropCache()
{
    auto flushed = flushJob("", std::chrono::seconds(60));
    if (!flushed) {
        return flushed.status().withContext("dropping the client cache");
    }
    return {};
}

Result<client::FlushReport> BenchCluster::flushJob(std::string_view job,
                                                   std::chrono::milliseconds timeout)
{
    std::lock_guard guard(m_flushMutex);
    return m_mount->flushJob(job, timeout);
}

Status BenchCluster::setLlite(const std::string &name, const std::string &value)
{
    const params::Assignment assignment{"llite." + std::string(kFsName) + "." + name, value};
    auto result = m_registry.set({&assignment, 1}, "lutra-bench");
    if (!result.status) {
        return result.status.withContext("setting " + assignment.pattern + "=" + value);
    }
    return {};
}

std::uint64_t BenchCluster::lliteNumber(const std::string &name)
{
    auto readings = m_registry.get("llite." + std::string(kFsName) + "." + name);
    if (!readings || readings->empty()) {
        return 0;
    }
    const std::string &text = readings->front().value;
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    return error == std::errc{} ? value : 0;
}

ReadAheadCounts BenchCluster::readAheadStats()
{
    ReadAheadCounts counts;
    auto blocks = m_registry.counters("llite." + std::string(kFsName) + ".read_ahead_stats");
    if (!blocks || blocks->empty()) {
        return counts;
    }
    for (const auto &counter : blocks->front().second.counters) {
        counts[counter.name] = counter.samples;
    }
    return counts;
}

std::map<std::uint64_t, std::uint64_t> BenchCluster::rpcHistogram(std::string_view prefix)
{
    std::map<std::uint64_t, std::uint64_t> rpcs;
    auto blocks = m_registry.counters("osc.*.rpc_stats");
    if (!blocks) {
        return rpcs;
    }
    for (const auto &[name, snapshot] : *blocks) {
        for (const auto &counter : snapshot.counters) {
            if (counter.name.starts_with(prefix)) {
                rpcs[std::stoull(counter.name.substr(prefix.size()))] += counter.samples;
            }
        }
    }
    return rpcs;
}

std::map<std::uint64_t, std::uint64_t> BenchCluster::readRpcs()
{
    return rpcHistogram("read_pages_per_rpc_");
}

std::map<std::uint64_t, std::uint64_t> BenchCluster::readRpcsInFlight()
{
    return rpcHistogram("read_rpcs_in_flight_");
}

BenchCluster::RpcTime BenchCluster::readRpcTime()
{
    RpcTime time;
    auto blocks = m_registry.counters("osc.*.stats");
    if (!blocks) {
        return time;
    }
    for (const auto &[name, snapshot] : *blocks) {
        for (const auto &counter : snapshot.counters) {
            if (counter.name == "ost_read") {
                time.rpcs += counter.samples;
                time.microseconds += static_cast<std::uint64_t>(counter.sum);
            }
        }
    }
    return time;
}

double BenchCluster::cpuSeconds() const
{
    const auto secondsOf = [](clockid_t clock) {
        timespec ts{};
        if (clock_gettime(clock, &ts) != 0) {
            return 0.0; // a target gone: its time is no longer counted
        }
        return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
    };
    double seconds = secondsOf(CLOCK_PROCESS_CPUTIME_ID);
    for (const auto &target : m_targets) {
        clockid_t clock{};
        if (target->pid() > 0 && clock_getcpuclockid(target->pid(), &clock) == 0) {
            seconds += secondsOf(clock);
        }
    }
    return seconds;
}

std::uint64_t deltaOf(const ReadAheadCounts &before, const ReadAheadCounts &after,
                      const std::string &name)
{
    const auto a = after.find(name);
    if (a == after.end()) {
        return 0;
    }
    const auto b = before.find(name);
    const std::uint64_t base = b == before.end() ? 0 : b->second;
    return a->second >= base ? a->second - base : 0;
}

nlohmann::json readAheadDelta(const ReadAheadCounts &before, const ReadAheadCounts &after)
{
    nlohmann::json delta = nlohmann::json::object();
    for (const auto &[name, value] : after) {
        delta[name] = deltaOf(before, after, name);
    }
    return delta;
}

double raHitRatio(const ReadAheadCounts &before, const ReadAheadCounts &after)
{
    const double hits = static_cast<double>(deltaOf(before, after, "hits"));
    const double misses = static_cast<double>(deltaOf(before, after, "misses"));
    return hits + misses > 0 ? hits / (hits + misses) : 0;
}

Result<double> runPhase(unsigned threads, const LoopOptions &loop,
                        const std::function<Status(unsigned)> &work)
{
    using Clock = std::chrono::steady_clock;
    std::mutex errorMutex;
    Status firstError;
    std::latch ready(threads);
    // Each thread times itself: the phase is from the first start to the last end (the main
    // thread may be descheduled while the workers run).
    std::vector<Clock::time_point> starts(threads);
    std::vector<Clock::time_point> ends(threads);
    std::vector<std::thread> workers;
    workers.reserve(threads);
    for (unsigned t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            if (!loop.jobId.empty()) {
                client::Mount::setThreadJobId(loop.jobId);
            }
            ready.arrive_and_wait();
            starts[t] = Clock::now();
            Status status = work(t);
            ends[t] = Clock::now();
            if (!status) {
                std::lock_guard guard(errorMutex);
                if (firstError.ok()) {
                    firstError = std::move(status);
                }
            }
        });
    }
    for (auto &worker : workers) {
        worker.join();
    }
    if (!firstError.ok()) {
        return firstError;
    }
    const auto first = *std::min_element(starts.begin(), starts.end());
    const auto last = *std::max_element(ends.begin(), ends.end());
    return std::chrono::duration<double>(last - first).count();
}

Status writeClientFile(client::Mount &mount, const std::string &path, std::uint64_t size,
                       std::size_t transfer, std::uint64_t seed)
{
    auto file = mount.open(path, client::kOpenWrite | client::kOpenCreate);
    if (!file) {
        return file.status();
    }
    if (auto status = (*file)->truncate(0); !status) {
        return status;
    }
    std::vector<std::byte> buffer(transfer);
    fillPattern(buffer, seed);
    for (std::uint64_t offset = 0; offset < size; offset += transfer) {
        const auto length =
            static_cast<std::size_t>(std::min<std::uint64_t>(transfer, size - offset));
        auto written = (*file)->pwrite(std::span(buffer).first(length), offset);
        if (!written) {
            return written.status();
        }
    }
    if (auto status = (*file)->fsync(); !status) {
        return status;
    }
    return (*file)->close();
}

Result<std::unique_ptr<client::File>> writeAndOpen(client::Mount &mount, const std::string &path,
                                                   std::uint64_t size, std::uint64_t seed)
{
    if (auto status = writeClientFile(mount, path, size, 1 << 20, seed); !status) {
        return status.withContext("writing " + path);
    }
    return mount.open(path, client::kOpenRead);
}

Status readClientFile(client::File &file, std::uint64_t size, std::size_t transfer)
{
    std::vector<std::byte> buffer(transfer);
    for (std::uint64_t offset = 0; offset < size; offset += transfer) {
        auto got = file.pread(buffer, offset);
        if (!got) {
            return got.status();
        }
        if (*got == 0) {
            return Status(Errc::io_error,
                          file.path() + ": short read at " + std::to_string(offset));
        }
    }
    return {};
}

void fillPattern(std::span<std::byte> out, std::uint64_t seed)
{
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (auto &b : out) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        b = static_cast<std::byte>(x >> 56);
    }
}

std::vector<std::string> splitList(const std::string &list)
{
    std::vector<std::string> items;
    std::stringstream stream(list);
    std::string item;
    while (std::getline(stream, item, ',')) {
        if (!item.empty()) {
            items.push_back(item);
        }
    }
    return items;
}

} // namespace lutra::tools
