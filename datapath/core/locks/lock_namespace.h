#pragma once
// The client's lock namespace for one target: PR/PW locks per object, cached after use in an
// LRU, cancelled through one path (page write-back and drop first, then the cancel RPC) whatever
// the reason. See datapath/core/locks/README.md.

#include <lutra/status.h>

#include "core/params/catalog.h"
#include "core/params/counters.h"
#include "core/types.h"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::locks {

enum class LockMode : std::uint8_t {
    PR, // protected read: shared
    PW, // protected write: exclusive, also satisfies PR
};

using RemoteHandle = std::uint64_t; // the target's lock handle, never 0

// Why a lock is cancelled. Every reason runs the same path (hook, then cancel RPC).
enum class CancelReason : std::uint8_t {
    callback, // the target sent a blocking callback
    lru,      // the LRU grew past its limit
    age,      // unused for longer than lru_max_age
    clear,    // lru_size=clear
    job,      // per-job cleanup
    upgrade,  // a PR cancelled so that a PW can be enqueued
    shutdown, // the namespace is going away
};

std::string_view cancelReasonName(CancelReason reason) noexcept;

// What the target granted.
struct Grant {
    RemoteHandle handle = 0;
    LockMode mode = LockMode::PR;
};

// What an enqueue does on the target when another client's lock conflicts: wait for it to be
// cancelled, or be refused at once (protocol::kLockNonBlocking; no blocking callback is sent).
enum class OnConflict { wait, refuse };

// The two RPCs the namespace needs, implemented over RpcSession by the engine's integrator.
// Called from acquiring threads and from the namespace's workers, never with a namespace lock
// held; both may block for as long as the RPC takes.
class LockRpc {
public:
    virtual ~LockRpc() = default;
    virtual Result<Grant> enqueue(const core::ObjectKey &key, LockMode mode, core::JobTag job,
                                  OnConflict onConflict) = 0;
    virtual Status cancel(const core::ObjectKey &key, RemoteHandle handle) = 0;
};

// The lock being cancelled, as the cancel hook sees it.
struct CancelInfo {
    core::ObjectKey key;
    LockMode mode = LockMode::PR;
    RemoteHandle handle = 0;
    core::JobTag job = 0; // the last job that used the lock
    CancelReason reason = CancelReason::lru;
    bool retry = false; // the lock was kept after an earlier cancel's write-back failed
};

// What the hook did for one lock.
struct CancelOutcome {
    std::uint64_t pagesDropped = 0;
    std::uint64_t bytesWritten = 0;
    Status status; // a write-back error
    // The hook could not write back what the lock covers (status says why): the lock is kept
    // (no cancel RPC, so no other client sees the object without this client's data), set
    // aside and cancelled again later — by tick(), a blocking callback, clear() or
    // cancelJob(). Ignored at shutdown, where nothing can be kept.
    bool keep = false;
};

// Writes back the lock's dirty pages and drops its cached pages (the page cache releases them
// in batches). Runs before the cancel RPC, on a namespace worker or the thread that asked for
// the cancel, with no namespace lock held; it must not call back into the namespace nor the
// parameter registry (lru_size=clear runs it under the registry's locks). When the write-back
// fails it returns `keep`: nothing written is lost to a cancel.
using CancelHook = std::function<CancelOutcome(const CancelInfo &)>;

// The outcome of a cancel of many locks (clear, per-job cleanup, aging).
struct CancelReport {
    std::uint64_t locksCancelled = 0;
    std::uint64_t pagesDropped = 0;
    std::uint64_t bytesWritten = 0;
    std::uint64_t errors = 0;     // hooks or cancel RPCs that failed
    std::uint64_t kept = 0;       // of those, locks kept because their write-back failed
    std::uint64_t unfinished = 0; // cancels still running at the caller's deadline (they go on)
    std::vector<std::string> messages; // the first kMaxMessages errors, as text
    std::chrono::nanoseconds elapsed{0};

    static constexpr std::size_t kMaxMessages = 16;
};

// What lru_size=clear answers: ok, or the failures with the whole report (io_error).
Status clearOutcome(const CancelReport &report);

class LockNamespace;

// A held reference to a granted lock. Destroying it (or release()) makes the lock unused: it
// stays cached in the LRU unless a cancel is pending. Must not outlive its namespace.
class LockRef {
public:
    LockRef() = default;
    LockRef(LockRef &&other) noexcept;
    LockRef &operator=(LockRef &&other) noexcept;
    LockRef(const LockRef &) = delete;
    LockRef &operator=(const LockRef &) = delete;
    ~LockRef() { release(); }

    void release() noexcept;
    // Another reference to the same lock (one more user): for work that outlives this one,
    // such as readahead RPCs still filling pages under the lock.
    LockRef share() const;
    explicit operator bool() const noexcept { return m_lock != nullptr; }
    LockMode mode() const noexcept;       // the granted mode (PW may answer a PR request)
    RemoteHandle handle() const noexcept; // 0 when empty
    core::ObjectKey key() const noexcept;

private:
    friend class LockNamespace;
    struct Lock;
    LockRef(LockNamespace *ns, std::shared_ptr<Lock> lock) : m_ns(ns), m_lock(std::move(lock)) {}

    LockNamespace *m_ns = nullptr;
    std::shared_ptr<Lock> m_lock;
};

class LockNamespace {
public:
    using Clock = std::chrono::steady_clock;
    using ClockSource = std::function<Clock::time_point()>;

    enum Counter : std::size_t {
        enqueues,
        enqueue_errors,
        hits,
        blocking_callbacks,
        cancel_callback,
        cancel_lru,
        cancel_age,
        cancel_clear,
        cancel_job,
        cancel_upgrade,
        cancel_shutdown,
        cancel_errors,
        counter_count,
    };

    struct Options {
        std::size_t workers = 2; // cancel threads (at least 1)
        // initial lru_size (0 = dynamic) and lru_max_age
        std::int64_t lruSize =
            params::catalog::defaultOf(params::catalog::kLockNamespace, "lru_size");
        std::chrono::seconds maxAge{
            params::catalog::defaultOf(params::catalog::kLockNamespace, "lru_max_age")};
        // LRU cap when lru_size is 0 (dynamic); 0 derives it from physical memory.
        std::size_t dynamicCap = 0;
        ClockSource clock; // defaults to steady_clock::now (tests pass a fake)
    };

    static constexpr std::size_t kMinDynamicCap = 1024;
    static constexpr std::size_t kMaxDynamicCap = std::size_t{1} << 20;
    static constexpr std::size_t kMaxEarlyCallbacks = 256;

    // `ns` names the namespace in parameters ("ost0"). `rpc` must outlive the namespace.
    LockNamespace(std::string ns, LockRpc &rpc, CancelHook hook, Options options);
    LockNamespace(std::string ns, LockRpc &rpc, CancelHook hook)
        : LockNamespace(std::move(ns), rpc, std::move(hook), Options{})
    {
    }
    // Calls shutdown().
    ~LockNamespace();
    LockNamespace(const LockNamespace &) = delete;
    LockNamespace &operator=(const LockNamespace &) = delete;

    // Returns a held reference to a granted lock on `key` covering `mode`: a cached lock if one
    // fits (PW satisfies PR), else an enqueue. A cached PR asked for PW is cancelled first (once
    // its other users let go). An acquire meeting a lock being cancelled waits for the cancel and
    // enqueues again. A thread must not hold a PR on `key` while asking for PW on it.
    Result<LockRef> acquire(const core::ObjectKey &key, LockMode mode, core::JobTag job);
    // As acquire, but never waits: a lock being enqueued or cancelled, or a PR when PW is wanted,
    // gives `unavailable` at once; with no lock cached it enqueues without waiting on the target
    // (OnConflict::refuse: another client's conflicting lock gives failed_precondition, and that
    // client hears nothing). For readahead, which holds page locks and the read's own locks:
    // waiting on this client's upgrade could close a cycle with readers, and waiting on another
    // client one with that client's readers and writers (three clients writing one file while
    // each read it stalled 30 s at a time, until the RPC timeout broke the cycle).
    Result<LockRef> tryAcquire(const core::ObjectKey &key, LockMode mode, core::JobTag job);

    // The target wants `handle` back. Quick and non-blocking beyond a short internal mutex: meant
    // for the transport I/O thread. An unused lock is queued for cancel at once (ahead of LRU
    // work); a used one is cancelled when its last user releases it; no new user gets it.
    void onBlockingCallback(RemoteHandle handle) noexcept;

    // lru_size: 0 = dynamic, N = at most N unused locks (the oldest are cancelled, on the
    // workers, as soon as it is exceeded).
    Status setLruSize(std::int64_t size);
    std::int64_t lruSize() const;
    void setMaxAge(std::chrono::seconds age);
    std::chrono::seconds maxAge() const;
    // The LRU limit in force: lru_size, or the dynamic soft cap when it is 0.
    std::size_t lruLimit() const;

    // Cancels every unused lock now, on the workers, and waits for them (lru_size=clear) until
    // `deadline`: cancels not done by then go on, counted in `unfinished`.
    // Kept locks (a failed write-back) are tried again too.
    CancelReport clear(Clock::time_point deadline = Clock::time_point::max());
    // Cancels the unused locks last used by `job` and waits (per-job cleanup), kept ones too,
    // until `deadline` as clear() does.
    CancelReport cancelJob(core::JobTag job, Clock::time_point deadline = Clock::time_point::max());
    // The periodic aging step, driven by the engine (about once a second): cancels the locks
    // unused since `now - lru_max_age` or earlier and tries the kept locks again, on the
    // workers, and waits for them. (The LRU limit needs no tick: it is enforced whenever a lock
    // joins the LRU or lru_size changes.)
    CancelReport tick(Clock::time_point now);
    // Waits until no cancel is queued or running (tests, orderly teardown).
    void drain();

    // Refuses new acquires, finishes queued cancels, cancels the remaining unused locks (hook and
    // RPC) and stops the workers. No LockRef may be alive. Idempotent.
    void shutdown();

    std::size_t lockCount() const;   // granted locks: used, unused or being cancelled
    std::size_t unusedCount() const; // the LRU plus the kept locks
    std::size_t keptCount() const;   // unused locks kept after a failed write-back
    const params::CounterBlock &stats() const noexcept { return m_stats; }

    // Publishes ldlm.namespaces.<ns>.{lru_size,lru_max_age,lock_count,lock_unused_count} (the
    // catalog's specs) and .lock_stats. `group` must be destroyed before the namespace.
    Status publish(params::ParamGroup &group);

private:
    friend class LockRef;
    using Lock = LockRef::Lock;
    using LockPtr = std::shared_ptr<Lock>;

    // A set of cancels someone waits for.
    struct Batch {
        std::mutex mutex;
        std::condition_variable done;
        std::size_t remaining = 0;
        CancelReport report;
    };
    struct Work {
        LockPtr lock;
        std::shared_ptr<Batch> batch; // null for fire-and-forget cancels
    };

    Result<LockRef> acquire(const core::ObjectKey &key, LockMode mode, core::JobTag job, bool wait);
    void release(const LockPtr &lock) noexcept;
    void addUser(const LockPtr &lock);
    // Under m_mutex: takes `lock` off the LRU or the kept list.
    void unlist(Lock &lock) noexcept;
    // Under m_mutex: takes `lock` out of use and out of the LRU; the caller then cancels it.
    void markCancelling(Lock &lock, CancelReason reason);
    // Under m_mutex: queues LRU victims while the LRU is over its limit.
    void trimLocked(std::size_t limit, CancelReason reason);
    std::size_t limitLocked() const;
    // Runs the hook and the cancel RPC (no lock held) and forgets the lock, or keeps it when
    // the hook says so.
    CancelOutcome runCancel(const LockPtr &lock);
    void addOutcome(CancelReport &report, const CancelOutcome &outcome);
    // Cancels `victims` (already marked, `guard` held) on the workers and waits for them, at
    // most until `deadline`.
    CancelReport runBatch(std::unique_lock<std::mutex> &guard, std::vector<LockPtr> victims,
                          Clock::time_point start, Clock::time_point deadline);
    // Marks and cancels the unused locks `reason` selects (all, one job's, or the old ones) and
    // the kept locks (one job's for `job`).
    CancelReport cancelUnused(CancelReason reason, core::JobTag job, Clock::time_point olderThan,
                              Clock::time_point deadline = Clock::time_point::max());
    void workerLoop();
    Clock::time_point now() const;

    const std::string m_ns;
    LockRpc &m_rpc;
    CancelHook m_hook;
    ClockSource m_clock;
    std::size_t m_dynamicCap;

    mutable std::mutex m_mutex;        // everything below; never held while calling out
    std::condition_variable m_changed; // a lock left the namespace or was granted
    std::unordered_map<core::ObjectKey, LockPtr, core::ObjectKeyHash> m_locks;
    std::unordered_map<RemoteHandle, LockPtr> m_byHandle;
    std::list<LockPtr> m_lru;                  // unused locks, oldest first
    std::list<LockPtr> m_kept;                 // unused locks whose cancel could not write back
    std::deque<RemoteHandle> m_earlyCallbacks; // callbacks that overtook their enqueue reply
    std::size_t m_enqueuing = 0;               // enqueue RPCs in flight
    std::int64_t m_lruSize = 0;
    std::chrono::seconds m_maxAge;
    bool m_stopping = false;
    bool m_shutDown = false;

    std::deque<Work> m_queue; // blocking-callback cancels go to the front
    std::size_t m_running = 0;
    std::condition_variable m_workAvailable;
    std::condition_variable m_idle;
    std::vector<std::thread> m_workers;

    params::CounterBlock m_stats;

    class StatsView;
    std::unique_ptr<StatsView> m_statsView;
};

} // namespace lutra::locks
