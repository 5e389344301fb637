// lutra-bench flush-job: Mount::flushJob of one job while other jobs keep reading and writing.
// Reports the flush's latency against the same flush with the other jobs paused (same run), and
// the other jobs' throughput in windows with a flush against windows without one.
#include "bench_flush_job.h"

#include "bench_ior_cluster.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace lutra::tools {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kTransfer = 1 << 20;
constexpr const char *kFlushedJob = "bench.flushed";

// The other jobs: each reads its own file in 1 MiB transfers, rewriting every fourth one, until
// stopped; paused on request (and then idle: nothing of theirs in flight).
class OtherJobs {
public:
    OtherJobs(client::Mount &mount, unsigned count, std::uint64_t fileBytes)
        : m_mount(mount), m_count(count), m_fileBytes(fileBytes)
    {
    }
    ~OtherJobs() { stop(); }

    Status start()
    {
        for (unsigned t = 0; t < m_count; ++t) {
            const std::string path = "other-" + std::to_string(t) + ".dat";
            client::Mount::setThreadJobId("bench.other." + std::to_string(t));
            Status written = writeClientFile(m_mount, path, m_fileBytes, kTransfer, 10 + t);
            auto file = written ? m_mount.open(path, client::kOpenRead | client::kOpenWrite)
                                : Result<std::unique_ptr<client::File>>(written);
            client::Mount::setThreadJobId("");
            if (!file) {
                return file.status();
            }
            m_files.push_back(std::move(file).value());
        }
        for (unsigned t = 0; t < m_count; ++t) {
            m_threads.emplace_back([this, t] { run(t); });
        }
        return {};
    }
    void stop()
    {
        m_stop = true;
        for (std::thread &thread : m_threads) {
            thread.join();
        }
        m_threads.clear();
        m_files.clear();
    }
    // Pauses every thread between transfers and waits until all are idle.
    void pause(bool paused)
    {
        m_paused = paused;
        while (paused && m_idle.load() != m_count && m_error.ok()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    std::uint64_t bytes() const { return m_bytes.load(); }
    Status error()
    {
        std::lock_guard lock(m_errorMutex);
        return m_error;
    }

private:
    void run(unsigned t)
    {
        client::Mount::setThreadJobId("bench.other." + std::to_string(t));
        std::vector<std::byte> buffer(kTransfer);
        std::uint64_t offset = 0;
        for (std::uint64_t k = 0; !m_stop; ++k) {
            if (m_paused) {
                ++m_idle;
                while (m_paused && !m_stop) {
                    std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                --m_idle;
                continue;
            }
            client::File &file = *m_files[t];
            auto moved = k % 4 == 3 ? file.pwrite(buffer, offset) : file.pread(buffer, offset);
            if (!moved) {
                std::lock_guard lock(m_errorMutex);
                m_error = moved.status().withContext("job bench.other." + std::to_string(t));
                ++m_idle;
                return;
            }
            m_bytes += *moved;
            offset = (offset + kTransfer) % m_fileBytes;
        }
    }

    client::Mount &m_mount;
    const unsigned m_count;
    const std::uint64_t m_fileBytes;
    std::vector<std::unique_ptr<client::File>> m_files;
    std::vector<std::thread> m_threads;
    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_paused{false};
    std::atomic<unsigned> m_idle{0};
    std::atomic<std::uint64_t> m_bytes{0};
    std::mutex m_errorMutex;
    Status m_error;
};

// The flushed job: a file it reads (cached pages under PR locks) and a file it writes without
// syncing (dirty pages under PW locks), both kept open as a running job's files are.
class FlushedJob {
public:
    explicit FlushedJob(client::Mount &mount, std::uint64_t bytes) : m_mount(mount), m_bytes(bytes)
    {
    }
    Status open()
    {
        // Its pages are the job's: the first flush drops them, every populate reads them again.
        client::Mount::setThreadJobId(kFlushedJob);
        if (auto status = writeClientFile(m_mount, "flushed-r.dat", m_bytes / 2, kTransfer, 3);
            !status) {
            client::Mount::setThreadJobId("");
            return status;
        }
        auto read = m_mount.open("flushed-r.dat", client::kOpenRead);
        auto written = m_mount.open("flushed-w.dat", client::kOpenWrite | client::kOpenCreate);
        client::Mount::setThreadJobId("");
        if (!read) {
            return read.status();
        }
        if (!written) {
            return written.status();
        }
        m_read = std::move(read).value();
        m_written = std::move(written).value();
        return {};
    }
    // Caches half of its bytes by reading and dirties the other half.
    Status populate()
    {
        client::Mount::setThreadJobId(kFlushedJob);
        Status status = readClientFile(*m_read, m_bytes / 2, kTransfer);
        std::vector<std::byte> buffer(kTransfer);
        fillPattern(buffer, 4);
        for (std::uint64_t offset = 0; status.ok() && offset < m_bytes / 2; offset += kTransfer) {
            if (auto moved = m_written->pwrite(buffer, offset); !moved) {
                status = moved.status();
            }
        }
        client::Mount::setThreadJobId("");
        return status;
    }
    void close()
    {
        m_read.reset();
        m_written.reset();
    }

private:
    client::Mount &m_mount;
    const std::uint64_t m_bytes;
    std::unique_ptr<client::File> m_read;
    std::unique_ptr<client::File> m_written;
};

void sleepFor(double seconds)
{
    if (seconds > 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    }
}

double secondsSince(Clock::time_point start)
{
    return std::chrono::duration<double>(Clock::now() - start).count();
}

} // namespace

Result<Report> runFlushJobBench(const BenchOptions &options, const FlushJobBenchOptions &flushJob)
{
    if (flushJob.rounds == 0 || flushJob.jobMb == 0 || flushJob.otherMb == 0) {
        return Status(Errc::out_of_range, "--rounds, --job-mb and --other-mb must be 1 or more");
    }
    auto cluster = BenchCluster::start(options, {}, "lutra-bench-flush-job");
    if (!cluster) {
        return cluster.status();
    }
    client::Mount &mount = (*cluster)->mount();
    FlushedJob flushed(mount, std::uint64_t{flushJob.jobMb} << 20);
    if (auto status = flushed.open(); !status) {
        return status.withContext("the flushed job's files");
    }
    OtherJobs others(mount, flushJob.others, std::uint64_t{flushJob.otherMb} << 20);
    if (auto status = others.start(); !status) {
        return status.withContext("the other jobs' files");
    }
    // One flush of the populated job; its latency and report.
    struct Flush {
        double seconds = 0;
        client::FlushReport report;
    };
    const auto flushOnce = [&]() -> Result<Flush> {
        if (auto status = flushed.populate(); !status) {
            return status.withContext("populating " + std::string(kFlushedJob));
        }
        const auto start = Clock::now();
        auto report = mount.flushJob(kFlushedJob);
        const double seconds = secondsSince(start);
        if (!report) {
            return report.status();
        }
        if (!report->errors.empty()) {
            return Status(Errc::io_error,
                          "flush of " + std::string(kFlushedJob) + ": " + report->errors.front());
        }
        return Flush{seconds, std::move(report).value()};
    };

    // The same-run baseline: the flush alone (the other jobs paused, nothing of theirs in
    // flight), then the flush among the running jobs, alternating.
    const double window = std::max(0.2, options.durationSeconds / 2);
    std::vector<double> idleMs;
    std::vector<double> busyMs;
    std::vector<double> withoutMBps;
    std::vector<double> withMBps;
    client::FlushReport last;
    for (unsigned round = 0; round < flushJob.rounds; ++round) {
        others.pause(true);
        auto idle = flushOnce();
        others.pause(false);
        if (!idle) {
            return idle.status().withContext("flush with the other jobs paused");
        }
        idleMs.push_back(idle->seconds * 1e3);
        if (auto status = flushed.populate(); !status) {
            return status;
        }
        // A window without a flush and one that starts with one, in alternating order.
        for (int side = 0; side < 2; ++side) {
            const bool withFlush = (side == 0) == (round % 2 == 0);
            const std::uint64_t before = others.bytes();
            const auto start = Clock::now();
            if (withFlush) {
                auto busy = flushOnce();
                if (!busy) {
                    return busy.status().withContext("flush with the other jobs running");
                }
                busyMs.push_back(busy->seconds * 1e3);
                last = busy->report;
            }
            sleepFor(window - secondsSince(start));
            const double mbps = double(others.bytes() - before) / 1e6 / secondsSince(start);
            (withFlush ? withMBps : withoutMBps).push_back(mbps);
        }
        if (auto status = others.error(); !status) {
            return status;
        }
    }
    others.stop();
    flushed.close();
    if (auto status = others.error(); !status) {
        return status;
    }

    Report report;
    report.mode = "flush-job";
    report.params = {{"targets", (*cluster)->uris().size()},
                     {"spawned_targets", (*cluster)->spawned()},
                     {"other_jobs", flushJob.others},
                     {"other_mb", flushJob.otherMb},
                     {"job_mb", flushJob.jobMb},
                     {"rounds", flushJob.rounds},
                     {"window_s", window},
                     {"flushed_job", "reads job_mb/2 (cached, PR locks) and writes job_mb/2 "
                                     "without syncing (dirty, PW locks) before each flush"},
                     {"baseline", "the same flush with the other jobs paused; the others' "
                                  "throughput in windows without a flush"}};
    report.results["flush_ms_idle"] = idleMs;
    report.results["flush_ms_busy"] = busyMs;
    report.results["others_MBps_without_flush"] = withoutMBps;
    report.results["others_MBps_with_flush"] = withMBps;
    report.results["locks_cancelled"] = last.locksCancelled;
    report.results["pages_dropped"] = last.pagesDropped;
    report.results["bytes_written_back"] = last.bytesWrittenBack;
    const double busy = median(busyMs);
    report.results["flush_pages_per_ms_busy"] =
        busy > 0 ? rounded(double(last.pagesDropped) / busy) : 0.0;
    report.ratios["flush_busy_vs_idle"] = rounded(busy / std::max(median(idleMs), 1e-9));
    report.ratios["others_with_vs_without_flush"] =
        rounded(median(withMBps) / std::max(median(withoutMBps), 1e-9));
    return report;
}

} // namespace lutra::tools
