#pragma once
// Per-job I/O counters, after Lustre's job_stats: every request carries a job id, and admins
// read obdfilter.<target>.job_stats / llite.<fs>.job_stats to see which job did what. A thread
// updating the job it updated last (the I/O path's normal case) takes no lock and does no
// lookup: it keeps that job in a one-entry per-thread cache, valid until any job leaves the
// table. Otherwise an update of an existing job takes a shared lock on one shard of the job table
// plus relaxed atomic adds; creating or evicting a job takes that shard's lock exclusively.

#include <lutra/status.h>

#include "core/params/counters.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::jobs {

class JobStats {
public:
    using Clock = std::function<params::WallClock::time_point()>;

    // The counters of an object target, in the order Lustre's OST prints them.
    enum TargetCounter : std::size_t {
        read_bytes,
        write_bytes,
        getattr,
        setattr,
        punch,
        sync,
        destroy,
        create,
        statfs,
        target_counter_count,
    };
    static std::vector<params::CounterDef> targetDefs();

    static constexpr std::size_t kDefaultMaxJobs = 1024;
    static constexpr std::size_t kMaxJobIdLength = 32; // longer ids are cut, as in Lustre

    // `defs`: the counters every job keeps (bytes counters with min/max/sum, ops as counts).
    // `clock`: wall time source (tests pin it).
    explicit JobStats(std::vector<params::CounterDef> defs = targetDefs(),
                      std::size_t maxJobs = kDefaultMaxJobs, Clock clock = {});
    ~JobStats();
    JobStats(const JobStats &) = delete;
    JobStats &operator=(const JobStats &) = delete;

    // Counts `samples` operations of `counter` for `job`. An empty job id is not tracked.
    void add(std::string_view job, std::size_t counter, std::uint64_t samples = 1);
    // Records one sample of `value` (bytes of a read or write) for `job`.
    void sample(std::string_view job, std::size_t counter, std::int64_t value);

    // Lustre's job_stats text, jobs in the order they first appeared.
    std::string render() const;
    void clear();
    // Forgets one job; not_found if it is not tracked.
    Status remove(std::string_view job);
    std::size_t jobCount() const noexcept;
    // A job's counters, for tests and the console; not_found if it is not tracked.
    Result<params::CounterSnapshot> snapshot(std::string_view job) const;

    // Registers `name` (e.g. obdfilter.ost0.job_stats): reading renders, writing `clear` forgets
    // every job, writing a job id forgets that job.
    Status publish(params::ParamGroup &group, std::string name);

private:
    struct Job;
    struct Shard {
        mutable std::shared_mutex mutex;
        // shared: a thread's cache may still hold a job that left the table (its last updates
        // then land there, as increments racing with a clear may).
        std::map<std::string, std::shared_ptr<Job>, std::less<>> jobs;
    };
    struct ThreadCache;
    static ThreadCache &threadCache() noexcept;
    static constexpr std::size_t kShards = 16;

    // Runs `update` on the job's counters, creating the job (and evicting the oldest) if needed.
    template <typename Update> void update(std::string_view job, Update &&update);
    Shard &shardOf(std::string_view job) const;
    void evictOldest();
    // A job left the table: every thread's cached job is stale.
    void forgotten() noexcept { m_generation.fetch_add(1, std::memory_order_release); }
    params::WallClock::time_point now() const;

    const std::vector<params::CounterDef> m_defs;
    const std::size_t m_maxJobs;
    const Clock m_clock;
    mutable std::array<Shard, kShards> m_shards;
    std::atomic<std::size_t> m_jobCount{0};
    const std::uint64_t m_instance; // names this table in threads' caches (never reused)
    std::atomic<std::uint64_t> m_generation{0};
    std::atomic<std::uint64_t> m_nextOrder{0};
};

} // namespace lutra::jobs
