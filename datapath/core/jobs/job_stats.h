#pragma once
// Per-job I/O counters, after Lustre's job_stats: every request carries a job id, and admins
// read obdfilter.<target>.job_stats / llite.<fs>.job_stats to see which job did what. A thread
// updating the job it updated last (the I/O path's normal case) takes no lock and does no
// lookup: it keeps that job in a one-entry per-thread cache, valid until any job leaves the
// table (a caller that keeps a JobRef skips even that check). Otherwise an update of an existing
// job takes a shared lock on one shard of the job table plus relaxed atomic adds; creating or
// evicting a job takes that shard's lock exclusively. Counts are exact at every read; a ticked
// table (tick()) stamps a job's last update with the tick instead of reading the clock each.

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
    struct Job;

public:
    using Clock = std::function<params::WallClock::time_point()>;

    // One job's counters held by a caller that updates that job again and again (the client's
    // per-thread fast read): an update through it does no lookup while it is current (no job has
    // left the table since it was taken); a stale one is looked up again.
    class JobRef {
    private:
        friend class JobStats;
        std::shared_ptr<Job> m_job;
        // m_job's counters and last-update stamp, for the inline update (Job is not defined here)
        params::CounterBlock *m_counters = nullptr;
        params::CounterBlock::Mine m_mine; // this thread's cells in *m_counters
        std::atomic<params::WallClock::rep> *m_latest = nullptr;
        std::uint64_t m_instance = 0;
        std::uint64_t m_generation = 0;
        std::size_t m_length = 0;
        char m_id[32] = {};
    };

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
    // The same through `ref`, which is (re)pointed at `job` if it is not already current for it.
    void sample(JobRef &ref, std::string_view job, std::size_t counter, std::int64_t value);
    // For the job `ref` was last pointed at (the caller knows its job did not change): no id
    // comparison; a stale ref is looked up again by its id. Does nothing for a ref never pointed.
    // Inline while current: the cached small read's update is two compares, the counters' own
    // cells and, once ticked, the stamp.
    [[gnu::always_inline]] void sample(JobRef &ref, std::size_t counter, std::int64_t value)
    {
        if (current(ref)) {
            ref.m_counters->sample(ref.m_mine, counter, value);
            const params::WallClock::rep ticked = m_ticked.load(std::memory_order_relaxed);
            if (ticked == 0) {
                stamp(*ref.m_job);
            } else if (ticked > ref.m_latest->load(std::memory_order_relaxed)) {
                ref.m_latest->store(ticked, std::memory_order_relaxed);
            }
            return;
        }
        sampleStale(ref, counter, value);
    }

    // Stamps later updates with this moment instead of a clock read each (snapshot_time then
    // trails a job's last update by at most the tick period). Call about once a second from a
    // thread the owner already has (the client engine's lock-aging tick); a table never ticked
    // reads the coarse clock per update.
    void tick() noexcept;

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
    struct Shard {
        mutable std::shared_mutex mutex;
        // shared: a JobRef may still hold a job that left the table (its last updates
        // then land there, as increments racing with a clear may).
        std::map<std::string, std::shared_ptr<Job>, std::less<>> jobs;
    };
    // The calling thread's ref for updates by id: the job it updated last.
    static JobRef &threadRef() noexcept;
    static constexpr std::size_t kShards = 16;

    // No job has left the table since `ref` was pointed.
    bool current(const JobRef &ref) const noexcept
    {
        return ref.m_instance == m_instance &&
               ref.m_generation == m_generation.load(std::memory_order_acquire);
    }
    // Runs `update` on the job's counters, through `ref` when it is current for `job`, else
    // looking the job up (creating it, and evicting the oldest, if needed) and pointing `ref`.
    template <typename Update> void update(JobRef &ref, std::string_view job, Update &&update);
    template <typename Update> void lookUp(JobRef &ref, std::string_view job, Update &&update);
    void stamp(Job &job) const noexcept;
    void sampleStale(JobRef &ref, std::size_t counter, std::int64_t value);
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
    std::atomic<params::WallClock::rep> m_ticked{0}; // tick()'s moment, 0 until the first
};

} // namespace lutra::jobs
