#include "core/jobs/job_stats.h"

#include "core/params/registry.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>

namespace lutra::jobs {

using params::WallClock;

namespace {

using Rep = WallClock::rep;

Rep toRep(WallClock::time_point time)
{
    return time.time_since_epoch().count();
}

WallClock::time_point fromRep(Rep rep)
{
    return WallClock::time_point(WallClock::duration(rep));
}

// A few ns instead of ~20 for the precise clock: enough to order eviction.
Rep coarseNow() noexcept
{
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
    return toRep(WallClock::time_point(std::chrono::duration_cast<WallClock::duration>(
        std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec))));
}

std::string_view trimId(std::string_view job)
{
    return job.substr(0, std::min(job.size(), JobStats::kMaxJobIdLength));
}

// "  snapshot_time:   1700000000.000000000 secs.nsecs", as lprocfs_stats_header prints it for
// job_stats (width 16, prefix of two spaces).
void appendTime(std::string &out, const char *label, std::chrono::nanoseconds value)
{
    const auto ns = std::max<std::int64_t>(value.count(), 0);
    char line[96];
    std::snprintf(line, sizeof line, "  %-16s %" PRId64 ".%09" PRId64 " secs.nsecs\n", label,
                  ns / 1'000'000'000, ns % 1'000'000'000);
    out += line;
}

// "  write_bytes:     { samples:  16, unit: bytes, min: ..., max: ..., sum: ... }", as
// lprocfs_jobstats_seq_show prints a counter: the name padded to 15 columns after its colon.
void appendCounter(std::string &out, const params::CounterReading &counter)
{
    const int pad = 15 - static_cast<int>(std::min<std::size_t>(counter.name.size(), 15));
    char line[256];
    int used = std::snprintf(line, sizeof line, "  %s:%*s { samples: %11" PRIu64 ", unit: %5s",
                             counter.name.c_str(), pad, "", counter.samples, counter.unit.c_str());
    out.append(line, static_cast<std::size_t>(std::clamp(used, 0, int(sizeof line) - 1)));
    if (counter.withMinMaxSum) {
        const bool any = counter.samples > 0;
        used = std::snprintf(line, sizeof line,
                             ", min: %8" PRId64 ", max: %8" PRId64 ", sum: %16" PRId64,
                             any ? counter.min : 0, any ? counter.max : 0, any ? counter.sum : 0);
        out.append(line, static_cast<std::size_t>(std::clamp(used, 0, int(sizeof line) - 1)));
    }
    out += " }\n";
}

} // namespace

struct JobStats::Job {
    Job(std::string jobId, const std::vector<params::CounterDef> &defs, WallClock::time_point now,
        std::uint64_t sequence)
        : id(std::move(jobId)), counters(defs, 4), start(toRep(now)), latest(toRep(now)),
          order(sequence)
    {
    }

    const std::string id;
    params::CounterBlock counters; // a few shards: a job is usually busy from few threads
    std::atomic<Rep> start;        // creation
    std::atomic<Rep> latest;       // last update: what snapshot_time shows, and the LRU key
    const std::uint64_t order;
};

// The job this thread updated last, in one table.
namespace {
std::atomic<std::uint64_t> g_nextInstance{1};
} // namespace

JobStats::JobRef &JobStats::threadRef() noexcept
{
    thread_local JobRef ref;
    return ref;
}

std::vector<params::CounterDef> JobStats::targetDefs()
{
    return {
        {"read_bytes", "bytes", true}, {"write_bytes", "bytes", true}, {"getattr", "reqs", false},
        {"setattr", "reqs", false},    {"punch", "reqs", false},       {"sync", "reqs", false},
        {"destroy", "reqs", false},    {"create", "reqs", false},      {"statfs", "reqs", false},
    };
}

JobStats::JobStats(std::vector<params::CounterDef> defs, std::size_t maxJobs, Clock clock)
    : m_defs(std::move(defs)), m_maxJobs(std::max<std::size_t>(maxJobs, 1)),
      m_clock(std::move(clock)), m_instance(g_nextInstance.fetch_add(1, std::memory_order_relaxed))
{
}

JobStats::~JobStats() = default;

WallClock::time_point JobStats::now() const
{
    return m_clock ? m_clock() : WallClock::now();
}

JobStats::Shard &JobStats::shardOf(std::string_view job) const
{
    return m_shards[std::hash<std::string_view>{}(job) % kShards];
}

void JobStats::stamp(Job &job) const noexcept
{
    // `latest` orders eviction and is what snapshot_time shows. Ticked: the tick's moment, and
    // the job's line is written once per tick, not per update. Otherwise the coarse clock (a
    // few ns instead of ~20 for the precise one), never before the job's start, which the
    // precise clock stamped.
    if (const Rep ticked = m_ticked.load(std::memory_order_relaxed); ticked != 0) {
        if (ticked > job.latest.load(std::memory_order_relaxed)) {
            job.latest.store(ticked, std::memory_order_relaxed);
        }
        return;
    }
    const Rep time = m_clock ? toRep(m_clock())
                             : std::max(coarseNow(), job.start.load(std::memory_order_relaxed));
    job.latest.store(time, std::memory_order_relaxed);
}

void JobStats::tick() noexcept
{
    m_ticked.store(m_clock ? toRep(m_clock()) : coarseNow(), std::memory_order_relaxed);
}

template <typename Update>
void JobStats::update(JobRef &ref, std::string_view rawJob, Update &&apply)
{
    const std::string_view job = trimId(rawJob);
    if (job.empty()) {
        return;
    }
    if (current(ref) && std::string_view(ref.m_id, ref.m_length) == job) {
        // The I/O path: the job this ref was pointed at last, still in the table. No lock.
        apply(*ref.m_counters);
        stamp(*ref.m_job);
        return;
    }
    lookUp(ref, job, apply);
}

template <typename Update> void JobStats::lookUp(JobRef &ref, std::string_view job, Update &&apply)
{
    // Read before the lookup: a job leaving after it makes the ref stale.
    const std::uint64_t generation = m_generation.load(std::memory_order_acquire);
    static_assert(sizeof ref.m_id == kMaxJobIdLength);
    const auto point = [&](const std::shared_ptr<Job> &entry) {
        ref.m_instance = m_instance;
        ref.m_generation = generation;
        ref.m_length = job.size();
        std::memcpy(ref.m_id, job.data(), job.size());
        ref.m_job = entry;
        ref.m_counters = &entry->counters;
        ref.m_mine = {}; // another block's cells
        ref.m_latest = &entry->latest;
    };
    Shard &shard = shardOf(job);
    {
        // The job exists: shared lock, atomic adds, no allocation.
        std::shared_lock lock(shard.mutex);
        if (const auto it = shard.jobs.find(job); it != shard.jobs.end()) {
            apply(it->second->counters);
            stamp(*it->second);
            point(it->second);
            return;
        }
    }
    const auto time = now();
    bool inserted = false;
    {
        std::unique_lock lock(shard.mutex);
        auto it = shard.jobs.find(job);
        if (it == shard.jobs.end()) {
            auto fresh = std::make_shared<Job>(std::string(job), m_defs, time,
                                               m_nextOrder.fetch_add(1, std::memory_order_relaxed));
            it = shard.jobs.emplace(std::string(job), std::move(fresh)).first;
            inserted = true;
        }
        apply(it->second->counters);
        it->second->latest.store(toRep(time), std::memory_order_relaxed);
        point(it->second);
    }
    if (inserted && m_jobCount.fetch_add(1, std::memory_order_relaxed) + 1 > m_maxJobs) {
        evictOldest();
    }
}

void JobStats::sample(JobRef &ref, std::string_view job, std::size_t counter, std::int64_t value)
{
    update(ref, job, [&](params::CounterBlock &block) { block.sample(counter, value); });
}

void JobStats::sampleStale(JobRef &ref, std::size_t counter, std::int64_t value)
{
    if (ref.m_length != 0) {
        char id[kMaxJobIdLength];
        std::memcpy(id, ref.m_id, ref.m_length);
        sample(ref, std::string_view(id, ref.m_length), counter, value);
    }
}

void JobStats::add(std::string_view job, std::size_t counter, std::uint64_t samples)
{
    update(threadRef(), job, [&](params::CounterBlock &block) { block.add(counter, samples); });
}

void JobStats::sample(std::string_view job, std::size_t counter, std::int64_t value)
{
    update(threadRef(), job, [&](params::CounterBlock &block) { block.sample(counter, value); });
}

void JobStats::evictOldest()
{
    while (m_jobCount.load(std::memory_order_relaxed) > m_maxJobs) {
        // Find the job used least recently; rare (only when a new job overflows the table).
        Shard *oldestShard = nullptr;
        std::string oldestId;
        Rep oldest = 0;
        for (Shard &shard : m_shards) {
            std::shared_lock lock(shard.mutex);
            for (const auto &[id, job] : shard.jobs) {
                const Rep latest = job->latest.load(std::memory_order_relaxed);
                if (oldestShard == nullptr || latest < oldest) {
                    oldestShard = &shard;
                    oldestId = id;
                    oldest = latest;
                }
            }
        }
        if (oldestShard == nullptr) {
            return;
        }
        std::unique_lock lock(oldestShard->mutex);
        if (oldestShard->jobs.erase(oldestId) == 1) {
            m_jobCount.fetch_sub(1, std::memory_order_relaxed);
            forgotten();
        }
    }
}

std::string JobStats::render() const
{
    struct Row {
        std::uint64_t order;
        std::string id;
        WallClock::time_point start;
        WallClock::time_point latest;
        params::CounterSnapshot counters;
    };
    std::vector<Row> rows;
    for (const Shard &shard : m_shards) {
        std::shared_lock lock(shard.mutex);
        for (const auto &[id, job] : shard.jobs) {
            rows.push_back({job->order, id, fromRep(job->start.load(std::memory_order_relaxed)),
                            fromRep(job->latest.load(std::memory_order_relaxed)),
                            job->counters.snapshot()});
        }
    }
    std::sort(rows.begin(), rows.end(),
              [](const Row &a, const Row &b) { return a.order < b.order; });

    using std::chrono::duration_cast;
    using std::chrono::nanoseconds;
    std::string out = "job_stats:\n";
    for (const auto &row : rows) {
        out += "- job_id:          ";
        out += row.id;
        out += '\n';
        appendTime(out,
                   "snapshot_time:", duration_cast<nanoseconds>(row.latest.time_since_epoch()));
        appendTime(out, "start_time:", duration_cast<nanoseconds>(row.start.time_since_epoch()));
        appendTime(out, "elapsed_time:", duration_cast<nanoseconds>(row.latest - row.start));
        for (const auto &counter : row.counters.counters) {
            appendCounter(out, counter);
        }
    }
    return out;
}

void JobStats::clear()
{
    for (Shard &shard : m_shards) {
        std::unique_lock lock(shard.mutex);
        m_jobCount.fetch_sub(shard.jobs.size(), std::memory_order_relaxed);
        shard.jobs.clear();
    }
    forgotten();
}

Status JobStats::remove(std::string_view rawJob)
{
    const std::string_view job = trimId(rawJob);
    Shard &shard = shardOf(job);
    std::unique_lock lock(shard.mutex);
    const auto it = shard.jobs.find(job);
    if (it == shard.jobs.end()) {
        return {Errc::not_found, "job '" + std::string(job) + "' has no statistics"};
    }
    shard.jobs.erase(it);
    m_jobCount.fetch_sub(1, std::memory_order_relaxed);
    forgotten();
    return {};
}

std::size_t JobStats::jobCount() const noexcept
{
    return m_jobCount.load(std::memory_order_relaxed);
}

Result<params::CounterSnapshot> JobStats::snapshot(std::string_view rawJob) const
{
    const std::string_view job = trimId(rawJob);
    const Shard &shard = shardOf(job);
    std::shared_lock lock(shard.mutex);
    const auto it = shard.jobs.find(job);
    if (it == shard.jobs.end()) {
        return Status(Errc::not_found, "job '" + std::string(job) + "' has no statistics");
    }
    auto snap = it->second->counters.snapshot();
    snap.startTime = fromRep(it->second->start.load(std::memory_order_relaxed));
    snap.snapshotTime = fromRep(it->second->latest.load(std::memory_order_relaxed));
    return snap;
}

Status JobStats::publish(params::ParamGroup &group, std::string name)
{
    params::Spec spec;
    spec.name = std::move(name);
    spec.type = params::Type::counters;
    spec.defaultValue = std::string();
    spec.help = "per-job I/O statistics (write 'clear' to forget every job, or a job id to "
                "forget that job)";
    spec.specialValues = {{"clear", "forget the statistics of every job"}};
    spec.textCommands = true;
    params::Binding binding;
    binding.read = [this] { return params::Value(render()); };
    binding.action = [this](std::string_view word) -> Status {
        if (word == "clear") {
            clear();
            return {};
        }
        return remove(word);
    };
    return group.add(std::move(spec), std::move(binding));
}

} // namespace lutra::jobs
