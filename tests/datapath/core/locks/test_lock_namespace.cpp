// The client lock namespace: caching after release, PW covering PR, PR→PW upgrade, the LRU limit
// and its order, lru_size=clear through the registry, aging, blocking callbacks (queued, hook
// before cancel RPC), acquires racing cancels, per-job cleanup and parallel clears.
#include "core/locks/lock_namespace.h"
#include "core/params/registry.h"

#include <QTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::locks;
using namespace std::chrono_literals;
using core::ObjectKey;

namespace {

// Closed: callers block in pass() until open(). Counts who is waiting, so tests can tell a
// worker is inside an RPC without sleeping.
class Gate {
public:
    void close()
    {
        std::lock_guard guard(m_mutex);
        m_open = false;
    }
    void open()
    {
        std::lock_guard guard(m_mutex);
        m_open = true;
        m_changed.notify_all();
    }
    void pass()
    {
        std::unique_lock guard(m_mutex);
        ++m_waiting;
        m_changed.notify_all();
        m_changed.wait(guard, [&] { return m_open; });
        --m_waiting;
    }
    bool waitForWaiters(int count)
    {
        std::unique_lock guard(m_mutex);
        return m_changed.wait_for(guard, 5s, [&] { return m_waiting >= count; });
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    bool m_open = true;
    int m_waiting = 0;
};

// Records every enqueue, hook and cancel in one ordered event log; enqueues and cancels can be
// held at a gate or made to fail.
class FakeRpc final : public LockRpc {
public:
    Result<Grant> enqueue(const ObjectKey &key, LockMode mode, core::JobTag job,
                          OnConflict onConflict) override
    {
        m_enqueueGate.pass();
        std::lock_guard guard(m_mutex);
        m_onConflicts.push_back(onConflict);
        if (onConflict == OnConflict::refuse && m_conflicting) {
            m_events.push_back("enqueue-refused:" + std::to_string(key.object));
            return Status(Errc::failed_precondition, "fake: another client holds it");
        }
        if (m_failEnqueues > 0) {
            --m_failEnqueues;
            m_events.push_back("enqueue-failed:" + std::to_string(key.object));
            return Status(Errc::unavailable, "fake: target gone");
        }
        const RemoteHandle handle = m_nextHandle++;
        m_events.push_back("enqueue:" + std::to_string(key.object) + ":" +
                           (mode == LockMode::PW ? "PW" : "PR") + ":" + std::to_string(handle));
        ++m_enqueues;
        m_jobs.push_back(job);
        return Grant{handle, mode};
    }

    Status cancel(const ObjectKey &, RemoteHandle handle) override
    {
        m_cancelGate.pass();
        std::lock_guard guard(m_mutex);
        m_events.push_back("cancel:" + std::to_string(handle));
        m_cancelled.push_back(handle);
        return {};
    }

    void recordHook(RemoteHandle handle)
    {
        std::lock_guard guard(m_mutex);
        m_events.push_back("hook:" + std::to_string(handle));
    }

    std::vector<std::string> events() const
    {
        std::lock_guard guard(m_mutex);
        return m_events;
    }
    std::vector<RemoteHandle> cancelled() const
    {
        std::lock_guard guard(m_mutex);
        return m_cancelled;
    }
    std::set<RemoteHandle> cancelledSet() const
    {
        auto list = cancelled();
        return {list.begin(), list.end()};
    }
    int enqueues() const
    {
        std::lock_guard guard(m_mutex);
        return m_enqueues;
    }
    RemoteHandle nextHandle() const
    {
        std::lock_guard guard(m_mutex);
        return m_nextHandle;
    }
    void failNextEnqueues(int count)
    {
        std::lock_guard guard(m_mutex);
        m_failEnqueues = count;
    }
    // Another client holds a conflicting lock: enqueues that may not wait are refused.
    void setConflicting(bool conflicting)
    {
        std::lock_guard guard(m_mutex);
        m_conflicting = conflicting;
    }
    std::vector<OnConflict> onConflicts() const
    {
        std::lock_guard guard(m_mutex);
        return m_onConflicts;
    }

    Gate m_enqueueGate;
    Gate m_cancelGate;

private:
    mutable std::mutex m_mutex;
    std::vector<std::string> m_events;
    std::vector<RemoteHandle> m_cancelled;
    std::vector<core::JobTag> m_jobs;
    RemoteHandle m_nextHandle = 1;
    int m_enqueues = 0;
    int m_failEnqueues = 0;
    bool m_conflicting = false;
    std::vector<OnConflict> m_onConflicts;
};

// A controllable clock for aging.
struct FakeClock {
    std::atomic<LockNamespace::Clock::rep> ticks{0};

    LockNamespace::Clock::time_point at(std::chrono::seconds s) const
    {
        return LockNamespace::Clock::time_point(s);
    }
    void set(std::chrono::seconds s) { ticks = LockNamespace::Clock::duration(s).count(); }
    LockNamespace::ClockSource source()
    {
        return [this] {
            return LockNamespace::Clock::time_point(LockNamespace::Clock::duration(ticks.load()));
        };
    }
};

ObjectKey obj(std::uint64_t object)
{
    return ObjectKey{0, object};
}

std::uint64_t counter(const LockNamespace &ns, LockNamespace::Counter which)
{
    return ns.stats().snapshot().counters.at(which).samples;
}

LockRef take(LockNamespace &ns, std::uint64_t object, LockMode mode, core::JobTag job = 1)
{
    auto ref = ns.acquire(obj(object), mode, job);
    if (!ref.ok()) {
        qFatal("acquire failed: %s", ref.status().toString().c_str());
    }
    return std::move(*ref);
}

} // namespace

class TestLockNamespace : public QObject {
    Q_OBJECT

private:
    // A hook that logs into the fake's event log and reports one page per lock.
    CancelHook loggingHook(FakeRpc &rpc)
    {
        return [&rpc](const CancelInfo &info) {
            rpc.recordHook(info.handle);
            return CancelOutcome{1, info.mode == LockMode::PW ? core::kPageSize : 0, {}};
        };
    }

private slots:
    void cacheHitAfterRelease()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        RemoteHandle first = 0;
        {
            LockRef ref = take(ns, 1, LockMode::PR);
            first = ref.handle();
            QCOMPARE(ns.lockCount(), std::size_t(1));
            QCOMPARE(ns.unusedCount(), std::size_t(0));
        }
        QCOMPARE(ns.unusedCount(), std::size_t(1));
        LockRef again = take(ns, 1, LockMode::PR);
        QCOMPARE(again.handle(), first);
        QCOMPARE(rpc.enqueues(), 1);
        QCOMPARE(counter(ns, LockNamespace::hits), std::uint64_t(1));
        QCOMPARE(counter(ns, LockNamespace::enqueues), std::uint64_t(1));
        QCOMPARE(ns.unusedCount(), std::size_t(0));
        // Two users of one PR share the lock.
        LockRef second = take(ns, 1, LockMode::PR);
        QCOMPARE(second.handle(), first);
        QCOMPARE(ns.lockCount(), std::size_t(1));
        QVERIFY(rpc.cancelled().empty());
    }

    void pwSatisfiesPr()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        const RemoteHandle pw = take(ns, 1, LockMode::PW).handle();
        LockRef read = take(ns, 1, LockMode::PR);
        QCOMPARE(read.handle(), pw);
        QCOMPARE(read.mode(), LockMode::PW);
        QCOMPARE(rpc.enqueues(), 1);
    }

    void upgradeCancelsPrFirst()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        const RemoteHandle pr = take(ns, 1, LockMode::PR).handle();
        LockRef write = take(ns, 1, LockMode::PW);
        QCOMPARE(write.mode(), LockMode::PW);
        QVERIFY(write.handle() != pr);
        const std::vector<std::string> expected{"enqueue:1:PR:1", "hook:1", "cancel:1",
                                                "enqueue:1:PW:2"};
        QCOMPARE(rpc.events(), expected);
        QCOMPARE(counter(ns, LockNamespace::cancel_upgrade), std::uint64_t(1));
        QCOMPARE(ns.lockCount(), std::size_t(1));
    }

    void upgradeWaitsForOtherReaders()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        LockRef reader = take(ns, 1, LockMode::PR);
        std::atomic<bool> done{false};
        RemoteHandle writeHandle = 0;
        std::thread writer([&] {
            LockRef write = take(ns, 1, LockMode::PW);
            writeHandle = write.handle();
            done = true;
        });
        // The writer cannot cancel a PR someone still uses; give it time to (wrongly) proceed.
        std::this_thread::sleep_for(50ms);
        QVERIFY(!done.load());
        QVERIFY(rpc.cancelled().empty());
        reader.release();
        writer.join();
        QCOMPARE(writeHandle, RemoteHandle(2));
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{1});
    }

    void lruOrderAndLimit()
    {
        FakeRpc rpc;
        LockNamespace::Options options;
        options.lruSize = 3;
        LockNamespace ns("ost0", rpc, loggingHook(rpc), options);
        for (std::uint64_t object = 1; object <= 5; ++object) {
            take(ns, object, LockMode::PR); // released at once, in this order
        }
        ns.drain();
        // The two oldest went, the three newest stay.
        QCOMPARE(rpc.cancelledSet(), (std::set<RemoteHandle>{1, 2}));
        QCOMPARE(ns.unusedCount(), std::size_t(3));
        QCOMPARE(ns.lockCount(), std::size_t(3));
        QCOMPARE(counter(ns, LockNamespace::cancel_lru), std::uint64_t(2));
        // Using object 3 again makes it the newest: LRU is now 4, 5, 3.
        take(ns, 3, LockMode::PR);
        QVERIFY(ns.setLruSize(1).ok());
        ns.drain();
        QCOMPARE(rpc.cancelledSet(), (std::set<RemoteHandle>{1, 2, 4, 5}));
        QCOMPARE(ns.unusedCount(), std::size_t(1));
        // A used lock is never an LRU victim.
        LockRef held = take(ns, 3, LockMode::PR);
        take(ns, 6, LockMode::PR);
        ns.drain();
        QCOMPARE(ns.unusedCount(), std::size_t(1));
        QCOMPARE(ns.lockCount(), std::size_t(2));
        QCOMPARE(held.handle(), RemoteHandle(3));
        QVERIFY(ns.setLruSize(-1).code() == Errc::out_of_range);
    }

    void dynamicLimit()
    {
        FakeRpc rpc;
        LockNamespace::Options options;
        options.dynamicCap = 2;
        LockNamespace ns("ost0", rpc, loggingHook(rpc), options);
        QCOMPARE(ns.lruSize(), std::int64_t(0));
        QCOMPARE(ns.lruLimit(), std::size_t(2));
        for (std::uint64_t object = 1; object <= 3; ++object) {
            take(ns, object, LockMode::PR);
        }
        ns.drain();
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{1});
        // Without an explicit cap the memory-derived one is within its bounds.
        LockNamespace defaults("ost1", rpc, {});
        QVERIFY(defaults.lruLimit() >= LockNamespace::kMinDynamicCap);
        QVERIFY(defaults.lruLimit() <= LockNamespace::kMaxDynamicCap);
    }

    void clearThroughRegistry()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        params::Registry registry;
        params::ParamGroup group(registry);
        QVERIFY(ns.publish(group).ok());

        LockRef held = take(ns, 1, LockMode::PW);
        take(ns, 2, LockMode::PR);
        take(ns, 3, LockMode::PW);
        take(ns, 4, LockMode::PR);
        auto readings = registry.get("ldlm.namespaces.ost0.lock*count");
        QVERIFY(readings.ok());
        QCOMPARE(readings->size(), std::size_t(2));
        QCOMPARE((*readings)[0].name, std::string("ldlm.namespaces.ost0.lock_count"));
        QCOMPARE((*readings)[0].value, std::string("4"));
        QCOMPARE((*readings)[1].value, std::string("3"));

        const params::Assignment clear{"ldlm.namespaces.ost0.lru_size", "clear"};
        auto result = registry.set({&clear, 1}, "test");
        QVERIFY2(result.status.ok(), result.status.toString().c_str());
        // Synchronous: the unused ones are gone when set returns, the held one stays.
        QCOMPARE(rpc.cancelledSet(), (std::set<RemoteHandle>{2, 3, 4}));
        auto events = rpc.events();
        for (RemoteHandle handle : {2, 3, 4}) {
            const auto hook =
                std::find(events.begin(), events.end(), "hook:" + std::to_string(handle));
            const auto cancel =
                std::find(events.begin(), events.end(), "cancel:" + std::to_string(handle));
            QVERIFY(hook != events.end() && cancel != events.end());
            QVERIFY(hook < cancel);
            QCOMPARE(std::count(events.begin(), events.end(), *hook), std::ptrdiff_t(1));
        }
        QCOMPARE(registry.get("ldlm.namespaces.ost0.lock_count")->at(0).value, std::string("1"));
        QCOMPARE(registry.get("ldlm.namespaces.ost0.lock_unused_count")->at(0).value,
                 std::string("0"));
        QCOMPARE(counter(ns, LockNamespace::cancel_clear), std::uint64_t(3));
        // The value is untouched by the action; lru_size and lru_max_age are settable.
        QCOMPARE(registry.get("ldlm.namespaces.ost0.lru_size")->at(0).value, std::string("0"));
        const std::vector<params::Assignment> values{{"ldlm.namespaces.ost0.lru_size", "5"},
                                                     {"ldlm.namespaces.ost0.lru_max_age", "60s"}};
        QVERIFY(registry.set(values, "test").status.ok());
        QCOMPARE(ns.lruSize(), std::int64_t(5));
        QCOMPARE(ns.maxAge(), std::chrono::seconds(60));
        const params::Assignment readOnly{"ldlm.namespaces.ost0.lock_count", "3"};
        QVERIFY(!registry.set({&readOnly, 1}, "test").status.ok());
        auto stats = registry.get("ldlm.namespaces.ost0.lock_stats");
        QVERIFY(stats.ok());
        QVERIFY((*stats)[0].value.find("cancel_clear") != std::string::npos);
        QVERIFY((*stats)[0].value.find("lock_count") != std::string::npos);
    }

    void ageCancel()
    {
        FakeRpc rpc;
        FakeClock clock;
        LockNamespace::Options options;
        options.maxAge = 10s;
        options.clock = clock.source();
        LockNamespace ns("ost0", rpc, loggingHook(rpc), options);
        clock.set(0s);
        take(ns, 1, LockMode::PR);
        clock.set(5s);
        take(ns, 2, LockMode::PR);
        LockRef held = take(ns, 3, LockMode::PR); // in use: never aged out

        auto report = ns.tick(clock.at(9s));
        QCOMPARE(report.locksCancelled, std::uint64_t(0));
        report = ns.tick(clock.at(12s));
        QCOMPARE(report.locksCancelled, std::uint64_t(1));
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{1});
        report = ns.tick(clock.at(100s));
        QCOMPARE(report.locksCancelled, std::uint64_t(1));
        QCOMPARE(rpc.cancelled(), (std::vector<RemoteHandle>{1, 2}));
        QCOMPARE(counter(ns, LockNamespace::cancel_age), std::uint64_t(2));
        QCOMPARE(ns.lockCount(), std::size_t(1));
        // Reuse refreshes the age.
        held.release();
        clock.set(200s);
        take(ns, 3, LockMode::PR);
        QCOMPARE(ns.tick(clock.at(205s)).locksCancelled, std::uint64_t(0));
        QCOMPARE(ns.tick(clock.at(210s)).locksCancelled, std::uint64_t(1));
    }

    void blockingCallbackQueued()
    {
        FakeRpc rpc;
        Gate hookGate;
        std::mutex reasonsMutex;
        std::vector<CancelReason> reasons;
        LockNamespace ns("ost0", rpc, [&](const CancelInfo &info) {
            hookGate.pass();
            rpc.recordHook(info.handle);
            std::lock_guard guard(reasonsMutex);
            reasons.push_back(info.reason);
            return CancelOutcome{};
        });
        const RemoteHandle handle = take(ns, 1, LockMode::PW).handle();
        hookGate.close();
        // Returns although the hook is stuck: the cancel runs on a worker.
        ns.onBlockingCallback(handle);
        QVERIFY(hookGate.waitForWaiters(1));
        QVERIFY(rpc.cancelled().empty());
        QCOMPARE(ns.unusedCount(), std::size_t(0)); // out of the LRU while being cancelled
        hookGate.open();
        ns.drain();
        QCOMPARE(rpc.events(), (std::vector<std::string>{"enqueue:1:PW:1", "hook:1", "cancel:1"}));
        QCOMPARE(ns.lockCount(), std::size_t(0));
        QCOMPARE(counter(ns, LockNamespace::cancel_callback), std::uint64_t(1));
        QCOMPARE(counter(ns, LockNamespace::blocking_callbacks), std::uint64_t(1));

        // A lock in use is cancelled when its user lets go, and not handed out meanwhile.
        LockRef held = take(ns, 2, LockMode::PR);
        ns.onBlockingCallback(held.handle());
        ns.drain();
        QCOMPARE(rpc.cancelled().size(), std::size_t(1));
        held.release();
        ns.drain();
        QCOMPARE(rpc.cancelled(), (std::vector<RemoteHandle>{1, 2}));
        {
            std::lock_guard guard(reasonsMutex);
            QCOMPARE(reasons,
                     (std::vector<CancelReason>{CancelReason::callback, CancelReason::callback}));
        }
        // Unknown handles are ignored.
        ns.onBlockingCallback(999);
        ns.drain();
        QCOMPARE(rpc.cancelled().size(), std::size_t(2));
    }

    void acquireRacesCancel()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        const RemoteHandle first = take(ns, 1, LockMode::PR).handle();
        rpc.m_cancelGate.close();
        ns.onBlockingCallback(first);
        QVERIFY(rpc.m_cancelGate.waitForWaiters(1)); // hook done, cancel RPC in flight

        std::atomic<bool> done{false};
        RemoteHandle second = 0;
        std::thread reader([&] {
            LockRef ref = take(ns, 1, LockMode::PR);
            second = ref.handle();
            done = true;
        });
        std::this_thread::sleep_for(50ms);
        QVERIFY(!done.load()); // the lock being cancelled is not handed out
        rpc.m_cancelGate.open();
        reader.join();
        QVERIFY(second != first);
        QCOMPARE(rpc.enqueues(), 2);
        const std::vector<std::string> expected{"enqueue:1:PR:1", "hook:1", "cancel:1",
                                                "enqueue:1:PR:2"};
        QCOMPARE(rpc.events(), expected);
    }

    void callbackOvertakesEnqueueReply()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        rpc.m_enqueueGate.close();
        const RemoteHandle next = rpc.nextHandle();
        std::thread acquirer([&] { take(ns, 1, LockMode::PW); });
        QVERIFY(rpc.m_enqueueGate.waitForWaiters(1));
        ns.onBlockingCallback(next);
        rpc.m_enqueueGate.open();
        acquirer.join();
        ns.drain();
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{next});
        QCOMPARE(ns.lockCount(), std::size_t(0));
    }

    void enqueueFailure()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        rpc.failNextEnqueues(1);
        auto failed = ns.acquire(obj(1), LockMode::PR, 1);
        QVERIFY(!failed.ok());
        QCOMPARE(failed.status().code(), Errc::unavailable);
        QCOMPARE(ns.lockCount(), std::size_t(0));
        QCOMPARE(counter(ns, LockNamespace::enqueue_errors), std::uint64_t(1));
        QVERIFY(ns.acquire(obj(1), LockMode::PR, 1).ok());
        QCOMPARE(rpc.enqueues(), 1);
    }

    void jobCleanup()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, [&](const CancelInfo &info) {
            rpc.recordHook(info.handle);
            return CancelOutcome{8, 8 * core::kPageSize, {}};
        });
        take(ns, 1, LockMode::PW, 7);
        take(ns, 2, LockMode::PW, 8);
        take(ns, 3, LockMode::PR, 7);
        LockRef held = take(ns, 4, LockMode::PW, 7); // in use: left alone
        take(ns, 5, LockMode::PR, 7);
        take(ns, 5, LockMode::PR, 8); // last used by job 8 now

        const CancelReport report = ns.cancelJob(7);
        QCOMPARE(report.locksCancelled, std::uint64_t(2));
        QCOMPARE(report.pagesDropped, std::uint64_t(16));
        QCOMPARE(report.bytesWritten, std::uint64_t(16 * core::kPageSize));
        QCOMPARE(report.errors, std::uint64_t(0));
        QVERIFY(report.elapsed.count() >= 0);
        QCOMPARE(rpc.cancelledSet(), (std::set<RemoteHandle>{1, 3}));
        QCOMPARE(ns.lockCount(), std::size_t(3));
        QCOMPARE(ns.unusedCount(), std::size_t(2));
        QCOMPARE(counter(ns, LockNamespace::cancel_job), std::uint64_t(2));
        QCOMPARE(ns.cancelJob(7).locksCancelled, std::uint64_t(0));
        QCOMPARE(ns.cancelJob(8).locksCancelled, std::uint64_t(2));
    }

    void manyLocksClearedByTwoWorkers()
    {
        FakeRpc rpc;
        std::mutex mutex;
        std::map<RemoteHandle, int> calls;
        std::set<std::thread::id> threads;
        LockNamespace::Options options;
        options.workers = 2;
        options.lruSize = 10000;
        LockNamespace ns(
            "ost0", rpc,
            [&](const CancelInfo &info) {
                std::lock_guard guard(mutex);
                ++calls[info.handle];
                threads.insert(std::this_thread::get_id());
                return CancelOutcome{4, 0, {}};
            },
            options);
        constexpr std::uint64_t kLocks = 500;
        for (std::uint64_t object = 1; object <= kLocks; ++object) {
            take(ns, object, LockMode::PR, static_cast<core::JobTag>(object % 3));
        }
        QCOMPARE(ns.unusedCount(), std::size_t(kLocks));
        const CancelReport report = ns.clear();
        QCOMPARE(report.locksCancelled, kLocks);
        QCOMPARE(report.pagesDropped, 4 * kLocks);
        QCOMPARE(calls.size(), std::size_t(kLocks));
        QVERIFY(
            std::all_of(calls.begin(), calls.end(), [](const auto &c) { return c.second == 1; }));
        QVERIFY(threads.size() <= 2);
        QVERIFY(threads.count(std::this_thread::get_id()) == 0);
        QCOMPARE(rpc.cancelled().size(), std::size_t(kLocks));
        QCOMPARE(ns.lockCount(), std::size_t(0));
    }

    // A cancel whose hook cannot write back keeps the lock (no cancel RPC: the target keeps
    // protecting the object for this client's unwritten data) and tries again later.
    void failedWriteBackKeepsTheLock()
    {
        FakeRpc rpc;
        FakeClock clock;
        LockNamespace::Options options;
        options.clock = clock.source();
        std::atomic<bool> failing{true};
        std::atomic<int> hooks{0};
        std::atomic<int> retries{0};
        LockNamespace ns(
            "ost0", rpc,
            [&](const CancelInfo &info) {
                ++hooks;
                retries += info.retry ? 1 : 0;
                rpc.recordHook(info.handle);
                CancelOutcome outcome;
                if (failing) {
                    outcome.status = Status(Errc::timeout, "write-back: target slow");
                    outcome.keep = true;
                } else {
                    outcome.bytesWritten = core::kPageSize;
                    outcome.pagesDropped = 1;
                }
                return outcome;
            },
            options);
        const RemoteHandle pw = take(ns, 1, LockMode::PW).handle();
        take(ns, 2, LockMode::PR);

        CancelReport report = ns.clear();
        QCOMPARE(report.locksCancelled, std::uint64_t(0));
        QCOMPARE(report.kept, std::uint64_t(2));
        QCOMPARE(report.errors, std::uint64_t(2));
        QCOMPARE(report.messages.size(), std::size_t(2));
        QCOMPARE(report.messages.front(),
                 std::string("ldlm.namespaces.ost0: timeout: write-back: target slow"));
        QVERIFY(rpc.cancelled().empty());
        QCOMPARE(ns.lockCount(), std::size_t(2));
        QCOMPARE(ns.keptCount(), std::size_t(2));
        QCOMPARE(ns.unusedCount(), std::size_t(2));
        QCOMPARE(counter(ns, LockNamespace::cancel_errors), std::uint64_t(2));
        QCOMPARE(counter(ns, LockNamespace::cancel_clear), std::uint64_t(0));
        QCOMPARE(retries.load(), 0); // first attempts

        // A kept lock is still granted: using it again is a hit, and releasing it puts it back
        // in the LRU.
        {
            LockRef again = take(ns, 1, LockMode::PW);
            QCOMPARE(again.handle(), pw);
            QCOMPARE(ns.keptCount(), std::size_t(1));
        }
        QCOMPARE(rpc.enqueues(), 2);

        // Aging retries kept locks whatever their age; still failing, still kept.
        clock.set(1s);
        report = ns.tick(clock.at(1s));
        QCOMPARE(report.kept, std::uint64_t(1));
        QCOMPARE(retries.load(), 1); // the hook is told it is a retry
        QCOMPARE(ns.keptCount(), std::size_t(1));

        // A blocking callback retries at once; once write-back works the lock goes.
        failing = false;
        const int before = hooks;
        ns.onBlockingCallback(pw);
        ns.drain();
        QCOMPARE(hooks.load(), before + 1);
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{pw});
        QCOMPARE(counter(ns, LockNamespace::cancel_callback), std::uint64_t(1));
        report = ns.tick(clock.at(2s));
        QCOMPARE(report.locksCancelled, std::uint64_t(1)); // the kept PR
        QCOMPARE(report.kept, std::uint64_t(0));
        QCOMPARE(ns.lockCount(), std::size_t(0));
        QCOMPARE(ns.keptCount(), std::size_t(0));
    }

    // tryAcquire never waits for this client's own lock state.
    void tryAcquireDoesNotWait()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        auto fresh = ns.tryAcquire(obj(1), LockMode::PR, 1); // nothing cached: enqueues
        QVERIFY(fresh.ok());
        QCOMPARE(rpc.enqueues(), 1);
        auto hit = ns.tryAcquire(obj(1), LockMode::PR, 1);
        QVERIFY(hit.ok());
        QCOMPARE(hit->handle(), fresh->handle());
        // A PR in use asked for PW would need an upgrade: busy.
        QCOMPARE(ns.tryAcquire(obj(1), LockMode::PW, 1).status().code(), Errc::unavailable);
        fresh->release();
        hit->release();

        // Being enqueued by another thread: busy, not a wait.
        rpc.m_enqueueGate.close();
        std::thread enqueuer([&] { take(ns, 2, LockMode::PW); });
        QVERIFY(rpc.m_enqueueGate.waitForWaiters(1));
        QCOMPARE(ns.tryAcquire(obj(2), LockMode::PR, 1).status().code(), Errc::unavailable);
        rpc.m_enqueueGate.open();
        enqueuer.join();
        // Being cancelled: busy.
        rpc.m_cancelGate.close();
        const RemoteHandle pw = take(ns, 2, LockMode::PR).handle();
        ns.onBlockingCallback(pw);
        QVERIFY(rpc.m_cancelGate.waitForWaiters(1));
        QCOMPARE(ns.tryAcquire(obj(2), LockMode::PR, 1).status().code(), Errc::unavailable);
        rpc.m_cancelGate.open();
        ns.drain();
        QCOMPARE(rpc.enqueues(), 2);
    }

    // tryAcquire does not wait on the target either: its enqueue asks to be refused rather than
    // wait for another client's lock; a refusal caches nothing, counts no enqueue error, and a
    // later enqueue (acquire's, which waits) goes out again.
    void tryAcquireIsRefusedInsteadOfWaitingForAnotherClient()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        rpc.setConflicting(true);
        const auto refused = ns.tryAcquire(obj(1), LockMode::PR, 1);
        QCOMPARE(refused.status().code(), Errc::failed_precondition);
        QCOMPARE(ns.lockCount(), std::size_t(0));
        QCOMPARE(counter(ns, LockNamespace::enqueue_errors), std::uint64_t(0));
        auto waited = ns.acquire(obj(1), LockMode::PR, 1);
        QVERIFY(waited.ok());
        QCOMPARE(rpc.onConflicts(),
                 (std::vector<OnConflict>{OnConflict::refuse, OnConflict::wait}));
        QCOMPARE(rpc.events(), (std::vector<std::string>{"enqueue-refused:1", "enqueue:1:PR:1"}));
    }

    void keptLocksGoAtShutdown()
    {
        FakeRpc rpc;
        {
            LockNamespace ns("ost0", rpc, [](const CancelInfo &) {
                CancelOutcome outcome;
                outcome.status = Status(Errc::unavailable, "target gone");
                outcome.keep = true;
                return outcome;
            });
            take(ns, 1, LockMode::PW);
            QCOMPARE(ns.clear().kept, std::uint64_t(1));
            ns.shutdown(); // nothing can be kept any more: the cancel RPC goes out
            QCOMPARE(ns.lockCount(), std::size_t(0));
        }
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{1});
    }

    // A shared reference (readahead still filling pages under the lock) holds off a cancel
    // until it is released.
    void sharedReferenceDelaysTheCancel()
    {
        FakeRpc rpc;
        LockNamespace ns("ost0", rpc, loggingHook(rpc));
        LockRef shared;
        RemoteHandle handle = 0;
        {
            LockRef reader = take(ns, 1, LockMode::PR);
            handle = reader.handle();
            shared = reader.share();
            QCOMPARE(shared.handle(), handle);
        }
        QCOMPARE(ns.unusedCount(), std::size_t(0)); // still in use
        ns.onBlockingCallback(handle);
        ns.drain();
        QVERIFY(rpc.cancelled().empty());
        shared.release();
        ns.drain();
        QCOMPARE(rpc.cancelled(), std::vector<RemoteHandle>{handle});
        QVERIFY(!LockRef().share());
    }

    void shutdownCancelsCachedLocks()
    {
        FakeRpc rpc;
        {
            LockNamespace ns("ost0", rpc, loggingHook(rpc));
            take(ns, 1, LockMode::PW);
            take(ns, 2, LockMode::PR);
            ns.shutdown();
            QCOMPARE(ns.acquire(obj(3), LockMode::PR, 1).status().code(), Errc::unavailable);
        }
        QCOMPARE(rpc.cancelledSet(), (std::set<RemoteHandle>{1, 2}));
    }
};

QTEST_GUILESS_MAIN(TestLockNamespace)
#include "test_lock_namespace.moc"
