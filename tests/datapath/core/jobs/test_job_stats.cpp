// JobStats: Lustre's job_stats text exactly, bounded job table with the least recently used job
// evicted, clear / remove through the registry, and correct sums under concurrent updates.
#include "core/jobs/job_stats.h"
#include "core/params/registry.h"

#include <QTest>

#include <barrier>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::jobs;
using params::WallClock;

namespace {

WallClock::time_point at(std::int64_t seconds, std::int64_t nanoseconds = 0)
{
    return WallClock::time_point(std::chrono::duration_cast<WallClock::duration>(
        std::chrono::seconds(seconds) + std::chrono::nanoseconds(nanoseconds)));
}

const char *const kExpected = "job_stats:\n"
                              "- job_id:          dd.0\n"
                              "  snapshot_time:   1700000005.500000000 secs.nsecs\n"
                              "  start_time:      1700000000.000000000 secs.nsecs\n"
                              "  elapsed_time:    5.500000000 secs.nsecs\n"
                              "  read_bytes:      { samples:           0, unit: bytes, min:        "
                              "0, max:        0, sum:                0 }\n"
                              "  write_bytes:     { samples:          16, unit: bytes, min:  "
                              "1048576, max:  1048576, sum:         16777216 }\n"
                              "  getattr:         { samples:           0, unit:  reqs }\n"
                              "  setattr:         { samples:           0, unit:  reqs }\n"
                              "  punch:           { samples:           0, unit:  reqs }\n"
                              "  sync:            { samples:           1, unit:  reqs }\n"
                              "  destroy:         { samples:           0, unit:  reqs }\n"
                              "  create:          { samples:           0, unit:  reqs }\n"
                              "  statfs:          { samples:           0, unit:  reqs }\n"
                              "- job_id:          cp.1000\n"
                              "  snapshot_time:   1700000010.250000000 secs.nsecs\n"
                              "  start_time:      1700000010.250000000 secs.nsecs\n"
                              "  elapsed_time:    0.000000000 secs.nsecs\n"
                              "  read_bytes:      { samples:           2, unit: bytes, min:     "
                              "4096, max:    65536, sum:            69632 }\n"
                              "  write_bytes:     { samples:           0, unit: bytes, min:        "
                              "0, max:        0, sum:                0 }\n"
                              "  getattr:         { samples:           3, unit:  reqs }\n"
                              "  setattr:         { samples:           0, unit:  reqs }\n"
                              "  punch:           { samples:           1, unit:  reqs }\n"
                              "  sync:            { samples:           0, unit:  reqs }\n"
                              "  destroy:         { samples:           0, unit:  reqs }\n"
                              "  create:          { samples:           0, unit:  reqs }\n"
                              "  statfs:          { samples:           0, unit:  reqs }\n";

} // namespace

class TestJobStats : public QObject {
    Q_OBJECT

    WallClock::time_point m_now = at(1'700'000'000);

    JobStats::Clock clock()
    {
        return [this] { return m_now; };
    }

    void fill(JobStats &stats)
    {
        m_now = at(1'700'000'000);
        stats.sample("dd.0", JobStats::write_bytes, 1 << 20);
        m_now = at(1'700'000'005, 500'000'000);
        for (int i = 0; i < 15; ++i) {
            stats.sample("dd.0", JobStats::write_bytes, 1 << 20);
        }
        stats.add("dd.0", JobStats::sync);
        m_now = at(1'700'000'010, 250'000'000);
        stats.sample("cp.1000", JobStats::read_bytes, 4096);
        stats.sample("cp.1000", JobStats::read_bytes, 65536);
        stats.add("cp.1000", JobStats::getattr, 3);
        stats.add("cp.1000", JobStats::punch);
    }

private slots:
    void rendersLustreFormat()
    {
        JobStats stats(JobStats::targetDefs(), 16, clock());
        QCOMPARE(stats.render(), std::string("job_stats:\n"));
        fill(stats);
        QCOMPARE(stats.jobCount(), std::size_t(2));
        QCOMPARE(stats.render(), std::string(kExpected));
    }

    void clearAndRemove()
    {
        JobStats stats(JobStats::targetDefs(), 16, clock());
        fill(stats);
        QVERIFY(stats.remove("dd.0").ok());
        QCOMPARE(stats.remove("dd.0"), Status(Errc::not_found, "job 'dd.0' has no statistics"));
        QCOMPARE(stats.jobCount(), std::size_t(1));
        QVERIFY(stats.render().find("dd.0") == std::string::npos);
        QVERIFY(stats.render().find("cp.1000") != std::string::npos);
        stats.clear();
        QCOMPARE(stats.jobCount(), std::size_t(0));
        QCOMPARE(stats.render(), std::string("job_stats:\n"));
    }

    void leastRecentlyUsedJobIsEvicted()
    {
        JobStats stats(JobStats::targetDefs(), 3, clock());
        for (int i = 0; i < 3; ++i) {
            m_now = at(1'700'000'000 + i);
            stats.add("job" + std::to_string(i), JobStats::getattr);
        }
        m_now = at(1'700'000'100);
        stats.add("job0", JobStats::getattr); // job0 is now the most recent
        m_now = at(1'700'000'101);
        stats.add("job3", JobStats::getattr);
        QCOMPARE(stats.jobCount(), std::size_t(3));
        QCOMPARE(stats.snapshot("job1").status().code(), Errc::not_found);
        QVERIFY(stats.snapshot("job0").ok());
        QCOMPARE(stats.snapshot("job0")->counters[JobStats::getattr].samples, std::uint64_t(2));
        QVERIFY(stats.snapshot("job2").ok());
        QVERIFY(stats.snapshot("job3").ok());
    }

    // A thread updates the job it updated last without a lookup; a job leaving the table
    // (clear, remove, eviction) must end that, or later updates would vanish into it.
    void updatesAfterTheJobLeftTheTableAreKept()
    {
        JobStats stats(JobStats::targetDefs(), 2, clock());
        JobStats other(JobStats::targetDefs(), 2, clock());
        m_now = at(1'600'000'000);
        stats.sample("dd.0", JobStats::read_bytes, 10);
        stats.sample("dd.0", JobStats::read_bytes, 20); // the cached path
        other.sample("dd.0", JobStats::read_bytes, 1);  // another table, same thread and id
        stats.sample("dd.0", JobStats::read_bytes, 30);
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(60));
        QCOMPARE(other.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(1));

        stats.clear();
        stats.sample("dd.0", JobStats::read_bytes, 5);
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].samples, std::uint64_t(1));
        QVERIFY(stats.remove("dd.0").ok());
        stats.sample("dd.0", JobStats::read_bytes, 6);
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(6));

        m_now = at(1'700'000'000);
        stats.add("cp.1", JobStats::getattr);
        m_now = at(1'700'000'010);
        stats.add("ls.2", JobStats::getattr); // evicts dd.0 (oldest), the cached one
        QCOMPARE(stats.snapshot("dd.0").status().code(), Errc::not_found);
        stats.sample("dd.0", JobStats::read_bytes, 7);
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(7));
    }

    // The client's fast read keeps a JobRef per thread: updates through it land in its job, a
    // job that left the table (or another table, or another job id) makes it look up again.
    void updatesThroughAJobRef()
    {
        JobStats stats(JobStats::targetDefs(), 4, clock());
        JobStats other(JobStats::targetDefs(), 4, clock());
        JobStats::JobRef ref;
        stats.sample(ref, "dd.0", JobStats::read_bytes, 10);
        stats.sample(ref, "dd.0", JobStats::read_bytes, 20);
        stats.sample("dd.0", JobStats::read_bytes, 5); // the per-thread cache, same counters
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(35));
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].samples, std::uint64_t(3));

        stats.sample(ref, "cp.1", JobStats::read_bytes, 7);
        other.sample(ref, "cp.1", JobStats::read_bytes, 1);
        stats.sample(ref, "cp.1", JobStats::read_bytes, 8);
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(15));
        QCOMPARE(other.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(1));
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(35));

        QVERIFY(stats.remove("cp.1").ok()); // e.g. the job's flush
        stats.sample(ref, "cp.1", JobStats::read_bytes, 3);
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(3));
        stats.clear();
        stats.sample(ref, "cp.1", JobStats::read_bytes, 4);
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(4));
        QCOMPARE(stats.jobCount(), std::size_t(1));
    }

    // The fast read's update through a ref without the id keeps the thread's cells of the ref's
    // job: a ref pointed at another job (or another table) must not write the old job's cells.
    void updatesThroughAJobRefFollowItsJob()
    {
        JobStats stats(JobStats::targetDefs(), 4, clock());
        JobStats other(JobStats::targetDefs(), 4, clock());
        JobStats::JobRef ref;
        stats.sample(ref, "dd.0", JobStats::read_bytes, 10);
        stats.sample(ref, JobStats::read_bytes, 20);
        stats.sample(ref, "cp.1", JobStats::read_bytes, 7);
        stats.sample(ref, JobStats::read_bytes, 8);
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].sum, std::int64_t(30));
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(15));
        other.sample(ref, "cp.1", JobStats::read_bytes, 1);
        other.sample(ref, JobStats::read_bytes, 2);
        QCOMPARE(other.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(3));
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(15));
        stats.clear(); // the ref is stale: looked up again by its id, then cells of the new job
        stats.sample(ref, "cp.1", JobStats::read_bytes, 4);
        stats.sample(ref, JobStats::read_bytes, 5);
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].sum, std::int64_t(9));
        QCOMPARE(stats.snapshot("cp.1")->counters[JobStats::read_bytes].samples, std::uint64_t(2));
    }

    // Once ticked, an update of a known job is stamped with the last tick, not the clock: the
    // I/O path reads no clock, and snapshot_time trails by at most the tick period.
    void tickedUpdatesUseTheTick()
    {
        JobStats stats(JobStats::targetDefs(), 4, clock());
        JobStats::JobRef ref;
        m_now = at(1'700'000'000);
        stats.sample(ref, "dd.0", JobStats::read_bytes, 1); // a new job: the clock
        m_now = at(1'700'000'003);
        stats.sample(ref, "dd.0", JobStats::read_bytes, 1); // not ticked yet: the clock
        QCOMPARE(stats.snapshot("dd.0")->snapshotTime, at(1'700'000'003));
        m_now = at(1'700'000'004);
        stats.tick();
        m_now = at(1'700'000'009);
        stats.sample(ref, "dd.0", JobStats::read_bytes, 1);
        stats.add("dd.0", JobStats::getattr);
        QCOMPARE(stats.snapshot("dd.0")->snapshotTime, at(1'700'000'004));
        m_now = at(1'700'000'010);
        stats.tick();
        stats.sample(ref, "dd.0", JobStats::read_bytes, 1);
        QCOMPARE(stats.snapshot("dd.0")->snapshotTime, at(1'700'000'010));
        QCOMPARE(stats.snapshot("dd.0")->counters[JobStats::read_bytes].samples, std::uint64_t(4));
        // Never before the job's last stamp: a tick older than it changes nothing.
        m_now = at(1'700'000'020);
        stats.sample("cp.1", JobStats::read_bytes, 1); // new: the clock, 20
        stats.sample("cp.1", JobStats::read_bytes, 1); // ticked at 10: stays 20
        QCOMPARE(stats.snapshot("cp.1")->snapshotTime, at(1'700'000'020));
    }

    void emptyAndLongJobIds()
    {
        JobStats stats(JobStats::targetDefs(), 16, clock());
        stats.add("", JobStats::getattr);
        QCOMPARE(stats.jobCount(), std::size_t(0));
        const std::string longId(40, 'j');
        stats.add(longId, JobStats::getattr);
        QVERIFY(stats.snapshot(std::string(32, 'j')).ok());
        QVERIFY(stats.snapshot(longId).ok()); // cut the same way on lookup
    }

    void concurrentUpdatesAddUp()
    {
        JobStats stats;
        constexpr int kThreads = 4;
        constexpr int kUpdates = 5000;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&stats, t] {
                for (int i = 0; i < kUpdates; ++i) {
                    stats.sample("shared", JobStats::write_bytes, 4096);
                    stats.add("job" + std::to_string(t), JobStats::sync);
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        auto shared = stats.snapshot("shared");
        QVERIFY(shared.ok());
        const auto &writes = shared->counters[JobStats::write_bytes];
        QCOMPARE(writes.samples, std::uint64_t(kThreads * kUpdates));
        QCOMPARE(writes.sum, std::int64_t(kThreads) * kUpdates * 4096);
        QCOMPARE(stats.jobCount(), std::size_t(kThreads + 1));
    }

    // A job's counters are a CounterBlock like any other: threads that own a counter slot and
    // threads beyond the owned slots (shared shards), through JobRefs and by id, all at once,
    // and threads that exit: exact sums (a lost increment fails it).
    void moreThreadsThanCounterSlotsAddUp()
    {
        JobStats stats;
        const int threads = static_cast<int>(params::detail::kOwnedSlots) + 16;
        constexpr int kUpdates = 3000;
        std::barrier started(threads);
        std::vector<std::thread> pool;
        for (int t = 0; t < threads; ++t) {
            pool.emplace_back([&stats, &started, t] {
                started.arrive_and_wait();
                JobStats::JobRef ref;
                for (int i = 0; i < kUpdates; ++i) {
                    if (t % 2 == 0) {
                        stats.sample(ref, "ior.7", JobStats::read_bytes, 1);
                    } else {
                        stats.sample("ior.7", JobStats::read_bytes, 1);
                    }
                }
            });
        }
        for (auto &thread : pool) {
            thread.join();
        }
        const auto job = stats.snapshot("ior.7");
        QVERIFY(job.ok());
        QCOMPARE(job->counters[JobStats::read_bytes].samples, std::uint64_t(threads) * kUpdates);
        QCOMPARE(job->counters[JobStats::read_bytes].sum, std::int64_t(threads) * kUpdates);
    }

    void publishedThroughTheRegistry()
    {
        JobStats stats(JobStats::targetDefs(), 16, clock());
        fill(stats);
        params::Registry registry;
        params::ParamGroup group(registry);
        QVERIFY(stats.publish(group, "obdfilter.ost0.job_stats").ok());
        auto reading = registry.get("obdfilter.ost0.job_stats");
        QVERIFY(reading.ok());
        QCOMPARE(reading->front().value, std::string(kExpected));

        const params::Assignment removeOne{"obdfilter.ost0.job_stats", "dd.0"};
        auto result = registry.set(std::span(&removeOne, 1), "test");
        QVERIFY2(result.status.ok(), result.status.toString().c_str());
        QCOMPARE(stats.jobCount(), std::size_t(1));
        QVERIFY(result.results[0].special); // a command, not a value: nothing is "clamped"
        QVERIFY(!result.results[0].clamped);
        QCOMPARE(result.results[0].requested, std::string("dd.0"));
        const params::Assignment spaced{"obdfilter.ost0.job_stats", "two words"};
        QCOMPARE(registry.set(std::span(&spaced, 1), "test").status.code(), Errc::invalid_argument);
        const params::Assignment unknown{"obdfilter.ost0.job_stats", "nosuchjob"};
        QCOMPARE(registry.set(std::span(&unknown, 1), "test").status.code(), Errc::not_found);
        const params::Assignment clear{"obdfilter.ost0.job_stats", "clear"};
        QVERIFY(registry.set(std::span(&clear, 1), "test").status.ok());
        QCOMPARE(stats.jobCount(), std::size_t(0));
    }
};

QTEST_GUILESS_MAIN(TestJobStats)
#include "test_job_stats.moc"
