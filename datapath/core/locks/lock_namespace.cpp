#include "core/locks/lock_namespace.h"

#include "core/params/bind.h"
#include "core/params/registry.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <iterator>
#include <utility>

namespace lutra::locks {

namespace {

enum class State : std::uint8_t {
    enqueuing,     // the enqueue RPC is in flight: others wait for it
    granted,       // handed out or in the LRU
    cancelPending, // must go once its users let go; no new user gets it
    cancelling,    // hook and cancel RPC running or queued
};

LockNamespace::Counter counterOf(CancelReason reason)
{
    switch (reason) {
    case CancelReason::callback: return LockNamespace::cancel_callback;
    case CancelReason::lru: return LockNamespace::cancel_lru;
    case CancelReason::age: return LockNamespace::cancel_age;
    case CancelReason::clear: return LockNamespace::cancel_clear;
    case CancelReason::job: return LockNamespace::cancel_job;
    case CancelReason::upgrade: return LockNamespace::cancel_upgrade;
    case CancelReason::shutdown: return LockNamespace::cancel_shutdown;
    }
    return LockNamespace::cancel_lru;
}

constexpr const params::catalog::CounterGroup &kStats = params::catalog::kClientLockStats;
using params::catalog::counterIndex;
static_assert(counterIndex(kStats, "enqueues") == LockNamespace::enqueues &&
              counterIndex(kStats, "enqueue_errors") == LockNamespace::enqueue_errors &&
              counterIndex(kStats, "hits") == LockNamespace::hits &&
              counterIndex(kStats, "blocking_callbacks") == LockNamespace::blocking_callbacks &&
              counterIndex(kStats, "cancel_callback") == LockNamespace::cancel_callback &&
              counterIndex(kStats, "cancel_lru") == LockNamespace::cancel_lru &&
              counterIndex(kStats, "cancel_age") == LockNamespace::cancel_age &&
              counterIndex(kStats, "cancel_clear") == LockNamespace::cancel_clear &&
              counterIndex(kStats, "cancel_job") == LockNamespace::cancel_job &&
              counterIndex(kStats, "cancel_upgrade") == LockNamespace::cancel_upgrade &&
              counterIndex(kStats, "cancel_shutdown") == LockNamespace::cancel_shutdown &&
              counterIndex(kStats, "cancel_errors") == LockNamespace::cancel_errors &&
              counterIndex(kStats, "lock_count") == LockNamespace::counter_count &&
              counterIndex(kStats, "lock_unused_count") == LockNamespace::counter_count + 1 &&
              kStats.counters.size() == LockNamespace::counter_count + 2);

std::vector<params::CounterDef> counterDefs()
{
    return params::catalog::counterDefs(kStats);
}

// One unused lock per MiB of RAM: a cached lock usually pins at least that much page cache, so
// the cap grows with what the node can cache without letting lock memory run away.
std::size_t dynamicCapFromMemory()
{
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long pageSize = ::sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || pageSize <= 0) {
        return LockNamespace::kMinDynamicCap;
    }
    const auto mib = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(pageSize) >> 20;
    return static_cast<std::size_t>(std::clamp<std::uint64_t>(mib, LockNamespace::kMinDynamicCap,
                                                              LockNamespace::kMaxDynamicCap));
}

constexpr std::int64_t kMaxLruSize = std::int64_t{1} << 24; // the catalog's bound

} // namespace

std::string_view cancelReasonName(CancelReason reason) noexcept
{
    switch (reason) {
    case CancelReason::callback: return "callback";
    case CancelReason::lru: return "lru";
    case CancelReason::age: return "age";
    case CancelReason::clear: return "clear";
    case CancelReason::job: return "job";
    case CancelReason::upgrade: return "upgrade";
    case CancelReason::shutdown: return "shutdown";
    }
    return "unknown";
}

struct LockRef::Lock {
    core::ObjectKey key;
    LockMode mode = LockMode::PR; // fixed once granted
    RemoteHandle handle = 0;      // fixed once granted
    core::JobTag job = 0;
    State state = State::enqueuing;
    CancelReason reason = CancelReason::lru;
    std::uint32_t users = 0;
    LockNamespace::Clock::time_point lastUsed;
    bool inLru = false;   // in m_lru at lruPos
    bool inKept = false;  // in m_kept at lruPos
    bool wasKept = false; // kept at least once (a failed cancel); cleared when it goes
    std::list<std::shared_ptr<Lock>>::iterator lruPos;
};

LockRef::LockRef(LockRef &&other) noexcept
    : m_ns(std::exchange(other.m_ns, nullptr)), m_lock(std::move(other.m_lock))
{
}

LockRef &LockRef::operator=(LockRef &&other) noexcept
{
    if (this != &other) {
        release();
        m_ns = std::exchange(other.m_ns, nullptr);
        m_lock = std::move(other.m_lock);
    }
    return *this;
}

LockRef LockRef::share() const
{
    if (m_lock == nullptr) {
        return {};
    }
    m_ns->addUser(m_lock);
    return LockRef(m_ns, m_lock);
}

void LockRef::release() noexcept
{
    if (m_lock != nullptr) {
        m_ns->release(m_lock);
        m_lock.reset();
        m_ns = nullptr;
    }
}

LockMode LockRef::mode() const noexcept
{
    return m_lock != nullptr ? m_lock->mode : LockMode::PR;
}

RemoteHandle LockRef::handle() const noexcept
{
    return m_lock != nullptr ? m_lock->handle : 0;
}

core::ObjectKey LockRef::key() const noexcept
{
    return m_lock != nullptr ? m_lock->key : core::ObjectKey{};
}

// lock_stats: the counters plus the two gauges, so one read shows the whole namespace.
class LockNamespace::StatsView final : public params::StatsSource {
public:
    explicit StatsView(LockNamespace &ns) : m_ns(ns) {}

    params::CounterSnapshot snapshot() const override
    {
        params::CounterSnapshot snap = m_ns.m_stats.snapshot();
        // The catalog's gauges after the counters (kStats, checked where it is defined).
        const auto gauge = [&snap](std::size_t index, std::size_t value) {
            const params::catalog::CounterDefinition &def = kStats.counters[index];
            params::CounterReading reading;
            reading.name = def.name;
            reading.unit = def.unit;
            reading.samples = value;
            snap.counters.push_back(std::move(reading));
        };
        gauge(LockNamespace::counter_count, m_ns.lockCount());
        gauge(LockNamespace::counter_count + 1, m_ns.unusedCount());
        return snap;
    }

    std::string render(params::WallClock::time_point now) const override
    {
        params::CounterSnapshot snap = snapshot();
        snap.snapshotTime = now;
        return params::renderStats(snap);
    }

    void clear() override { m_ns.m_stats.clear(); }

private:
    LockNamespace &m_ns;
};

LockNamespace::LockNamespace(std::string ns, LockRpc &rpc, CancelHook hook, Options options)
    : m_ns(std::move(ns)), m_rpc(rpc), m_hook(std::move(hook)), m_clock(std::move(options.clock)),
      m_dynamicCap(options.dynamicCap != 0 ? options.dynamicCap : dynamicCapFromMemory()),
      m_lruSize(std::clamp<std::int64_t>(options.lruSize, 0, kMaxLruSize)),
      m_maxAge(options.maxAge), m_stats(counterDefs()),
      m_statsView(std::make_unique<StatsView>(*this))
{
    if (!m_clock) {
        m_clock = [] { return Clock::now(); };
    }
    const std::size_t workers = std::max<std::size_t>(options.workers, 1);
    m_workers.reserve(workers);
    for (std::size_t i = 0; i < workers; ++i) {
        m_workers.emplace_back([this] { workerLoop(); });
    }
}

LockNamespace::~LockNamespace()
{
    shutdown();
}

LockNamespace::Clock::time_point LockNamespace::now() const
{
    return m_clock();
}

Result<LockRef> LockNamespace::acquire(const core::ObjectKey &key, LockMode mode, core::JobTag job)
{
    return acquire(key, mode, job, true);
}

Result<LockRef> LockNamespace::tryAcquire(const core::ObjectKey &key, LockMode mode,
                                          core::JobTag job)
{
    return acquire(key, mode, job, false);
}

Result<LockRef> LockNamespace::acquire(const core::ObjectKey &key, LockMode mode, core::JobTag job,
                                       bool wait)
{
    std::unique_lock guard(m_mutex);
    for (;;) {
        if (m_stopping) {
            return Status(Errc::unavailable, "ldlm.namespaces." + m_ns + ": shutting down");
        }
        auto it = m_locks.find(key);
        if (it == m_locks.end()) {
            break;
        }
        LockPtr lock = it->second;
        const bool fits = lock->mode == LockMode::PW || mode == LockMode::PR;
        if (!wait && (lock->state != State::granted || !fits)) {
            return Status(Errc::unavailable, "ldlm.namespaces." + m_ns + ": lock busy");
        }
        if (lock->state != State::granted) {
            // Being enqueued or cancelled: wait for it to settle, then look again.
            m_changed.wait(guard);
            continue;
        }
        if (fits) {
            unlist(*lock);
            ++lock->users;
            lock->job = job;
            m_stats.add(hits);
            return LockRef(this, lock);
        }
        // PR cached, PW wanted: the PR must go before the target would grant the PW anyway.
        if (lock->users > 0) {
            lock->state = State::cancelPending;
            lock->reason = CancelReason::upgrade;
            m_changed.wait(guard);
            continue;
        }
        markCancelling(*lock, CancelReason::upgrade);
        guard.unlock();
        const CancelOutcome outcome = runCancel(lock);
        guard.lock();
        if (outcome.keep) {
            return outcome.status; // the PR could not let go: no PW for now
        }
    }

    auto lock = std::make_shared<Lock>();
    lock->key = key;
    lock->mode = mode;
    lock->job = job;
    m_locks.emplace(key, lock);
    ++m_enqueuing;
    guard.unlock();
    Result<Grant> grant =
        m_rpc.enqueue(key, mode, job, wait ? OnConflict::wait : OnConflict::refuse);
    guard.lock();
    --m_enqueuing;
    m_changed.notify_all();
    if (!grant.ok()) {
        m_locks.erase(key);
        // A refusal is what a non-waiting enqueue asked for, not an error.
        if (wait || grant.status().code() != Errc::failed_precondition) {
            m_stats.add(enqueue_errors);
        }
        return grant.status();
    }
    m_stats.add(enqueues);
    // Trust a stronger grant; never record less than was asked for.
    lock->mode = grant->mode == LockMode::PW ? LockMode::PW : mode;
    lock->handle = grant->handle;
    lock->state = State::granted;
    lock->users = 1;
    m_byHandle[lock->handle] = lock;
    if (auto early = std::find(m_earlyCallbacks.begin(), m_earlyCallbacks.end(), lock->handle);
        early != m_earlyCallbacks.end()) {
        // The target already wants it back: this caller may use it once, then it goes.
        m_earlyCallbacks.erase(early);
        lock->state = State::cancelPending;
        lock->reason = CancelReason::callback;
    }
    return LockRef(this, lock);
}

void LockNamespace::addUser(const LockPtr &lock)
{
    std::lock_guard guard(m_mutex);
    assert(lock->users > 0);
    ++lock->users;
}

void LockNamespace::unlist(Lock &lock) noexcept
{
    if (lock.inLru) {
        m_lru.erase(lock.lruPos);
        lock.inLru = false;
    } else if (lock.inKept) {
        m_kept.erase(lock.lruPos);
        lock.inKept = false;
    }
}

void LockNamespace::release(const LockPtr &lock) noexcept
{
    std::lock_guard guard(m_mutex);
    assert(lock->users > 0);
    if (--lock->users > 0) {
        return;
    }
    if (lock->state == State::cancelPending) {
        const CancelReason reason = lock->reason;
        markCancelling(*lock, reason);
        if (reason == CancelReason::callback) {
            m_queue.push_front({lock, nullptr});
        } else {
            m_queue.push_back({lock, nullptr});
        }
        m_workAvailable.notify_one();
        return;
    }
    lock->lastUsed = now();
    m_lru.push_back(lock);
    lock->lruPos = std::prev(m_lru.end());
    lock->inLru = true;
    trimLocked(limitLocked(), CancelReason::lru);
}

void LockNamespace::onBlockingCallback(RemoteHandle handle) noexcept
{
    std::lock_guard guard(m_mutex);
    m_stats.add(blocking_callbacks);
    auto it = m_byHandle.find(handle);
    if (it == m_byHandle.end()) {
        // The callback may have overtaken our enqueue's reply; remember it for a while.
        if (m_enqueuing > 0) {
            if (m_earlyCallbacks.size() >= kMaxEarlyCallbacks) {
                m_earlyCallbacks.pop_front();
            }
            m_earlyCallbacks.push_back(handle);
        }
        return;
    }
    Lock &lock = *it->second;
    if (lock.state == State::granted && lock.users == 0) {
        markCancelling(lock, CancelReason::callback);
        // Ahead of LRU and batch work: a conflicting client is waiting for this cancel.
        m_queue.push_front({it->second, nullptr});
        m_workAvailable.notify_one();
    } else if (lock.state == State::granted || lock.state == State::cancelPending) {
        lock.state = State::cancelPending;
        lock.reason = CancelReason::callback;
    }
}

void LockNamespace::markCancelling(Lock &lock, CancelReason reason)
{
    lock.state = State::cancelling;
    lock.reason = reason;
    unlist(lock);
}

std::size_t LockNamespace::limitLocked() const
{
    return m_lruSize > 0 ? static_cast<std::size_t>(m_lruSize) : m_dynamicCap;
}

void LockNamespace::trimLocked(std::size_t limit, CancelReason reason)
{
    while (m_lru.size() > limit) {
        LockPtr victim = m_lru.front();
        markCancelling(*victim, reason);
        m_queue.push_back({std::move(victim), nullptr});
        m_workAvailable.notify_one();
    }
}

CancelOutcome LockNamespace::runCancel(const LockPtr &lock)
{
    // The lock is in `cancelling`: nobody else reads or writes it until it is forgotten below.
    const CancelInfo info{lock->key, lock->mode,   lock->handle,
                          lock->job, lock->reason, lock->wasKept};
    CancelOutcome outcome;
    if (m_hook) {
        outcome = m_hook(info);
    }
    if (outcome.keep && info.reason != CancelReason::shutdown) {
        // The data the lock covers is still only here: keep the lock (the target goes on
        // protecting the object for us) and try again later.
        std::lock_guard guard(m_mutex);
        lock->state = State::granted;
        lock->lastUsed = now();
        m_kept.push_back(lock);
        lock->lruPos = std::prev(m_kept.end());
        lock->inKept = true;
        lock->wasKept = true;
        m_stats.add(cancel_errors);
        m_changed.notify_all();
        return outcome;
    }
    outcome.keep = false;
    Status rpcStatus = m_rpc.cancel(info.key, info.handle);
    {
        std::lock_guard guard(m_mutex);
        m_byHandle.erase(info.handle);
        if (auto it = m_locks.find(info.key); it != m_locks.end() && it->second == lock) {
            m_locks.erase(it);
        }
        m_stats.add(counterOf(info.reason));
        if (!outcome.status.ok() || !rpcStatus.ok()) {
            m_stats.add(cancel_errors);
        }
        m_changed.notify_all();
    }
    if (outcome.status.ok() && !rpcStatus.ok()) {
        outcome.status = std::move(rpcStatus);
    }
    return outcome;
}

void LockNamespace::addOutcome(CancelReport &report, const CancelOutcome &outcome)
{
    if (outcome.keep) {
        ++report.kept;
    } else {
        ++report.locksCancelled;
    }
    report.pagesDropped += outcome.pagesDropped;
    report.bytesWritten += outcome.bytesWritten;
    if (!outcome.status.ok()) {
        ++report.errors;
        if (report.messages.size() < CancelReport::kMaxMessages) {
            report.messages.push_back("ldlm.namespaces." + m_ns + ": " + outcome.status.toString());
        }
    }
}

CancelReport LockNamespace::runBatch(std::unique_lock<std::mutex> &guard,
                                     std::vector<LockPtr> victims, Clock::time_point start,
                                     Clock::time_point deadline)
{
    CancelReport report;
    if (victims.empty()) {
        guard.unlock();
    } else if (m_workers.empty()) {
        // After shutdown: no workers left, so cancel on this thread.
        guard.unlock();
        for (const LockPtr &lock : victims) {
            addOutcome(report, runCancel(lock));
        }
    } else {
        auto batch = std::make_shared<Batch>();
        batch->remaining = victims.size();
        for (LockPtr &lock : victims) {
            m_queue.push_back({std::move(lock), batch});
        }
        m_workAvailable.notify_all();
        guard.unlock();
        // The batch is shared with the workers: a caller that stops waiting leaves it to them.
        std::unique_lock batchGuard(batch->mutex);
        const auto finished = [&] { return batch->remaining == 0; };
        if (deadline == Clock::time_point::max()) {
            batch->done.wait(batchGuard, finished);
        } else {
            batch->done.wait_until(batchGuard, deadline, finished);
        }
        report = batch->report;
        report.unfinished = batch->remaining;
        if (report.unfinished != 0 && report.messages.size() < CancelReport::kMaxMessages) {
            report.messages.push_back("ldlm.namespaces." + m_ns + ": " +
                                      std::to_string(report.unfinished) +
                                      " lock cancels still running at the deadline");
        }
    }
    report.elapsed = Clock::now() - start;
    return report;
}

CancelReport LockNamespace::cancelUnused(CancelReason reason, core::JobTag job,
                                         Clock::time_point olderThan, Clock::time_point deadline)
{
    const auto start = Clock::now();
    std::unique_lock guard(m_mutex);
    std::vector<LockPtr> victims;
    for (const LockPtr &lock : m_lru) {
        if (reason == CancelReason::job && lock->job != job) {
            continue;
        }
        if (reason == CancelReason::age && lock->lastUsed > olderThan) {
            break; // the LRU is in release order, so the rest are younger
        }
        victims.push_back(lock);
    }
    const std::size_t fromLru = victims.size();
    for (const LockPtr &lock : m_kept) {
        if (reason != CancelReason::job || lock->job == job) {
            victims.push_back(lock);
        }
    }
    for (std::size_t i = 0; i < victims.size(); ++i) {
        // A kept lock retried by aging keeps the reason it was first cancelled for.
        const bool retriedByAge = i >= fromLru && reason == CancelReason::age;
        markCancelling(*victims[i], retriedByAge ? victims[i]->reason : reason);
    }
    return runBatch(guard, std::move(victims), start, deadline);
}

CancelReport LockNamespace::clear(Clock::time_point deadline)
{
    return cancelUnused(CancelReason::clear, 0, {}, deadline);
}

CancelReport LockNamespace::cancelJob(core::JobTag job, Clock::time_point deadline)
{
    return cancelUnused(CancelReason::job, job, {}, deadline);
}

CancelReport LockNamespace::tick(Clock::time_point now)
{
    return cancelUnused(CancelReason::age, 0, now - maxAge());
}

void LockNamespace::drain()
{
    std::unique_lock guard(m_mutex);
    m_idle.wait(guard, [&] { return m_queue.empty() && m_running == 0; });
}

void LockNamespace::workerLoop()
{
    std::unique_lock guard(m_mutex);
    for (;;) {
        m_workAvailable.wait(guard, [&] { return m_shutDown || !m_queue.empty(); });
        if (m_queue.empty()) {
            return;
        }
        Work work = std::move(m_queue.front());
        m_queue.pop_front();
        ++m_running;
        guard.unlock();
        const CancelOutcome outcome = runCancel(work.lock);
        if (work.batch != nullptr) {
            std::lock_guard batchGuard(work.batch->mutex);
            addOutcome(work.batch->report, outcome);
            if (--work.batch->remaining == 0) {
                work.batch->done.notify_all();
            }
        }
        work = {};
        guard.lock();
        --m_running;
        if (m_queue.empty() && m_running == 0) {
            m_idle.notify_all();
        }
    }
}

void LockNamespace::shutdown()
{
    {
        std::lock_guard guard(m_mutex);
        if (m_stopping) {
            return;
        }
        m_stopping = true;
        m_changed.notify_all();
    }
    drain();
    (void)cancelUnused(CancelReason::shutdown, 0, {});
    drain();
    std::vector<std::thread> workers;
    {
        std::lock_guard guard(m_mutex);
        m_shutDown = true;
        workers.swap(m_workers);
        m_workAvailable.notify_all();
    }
    for (std::thread &worker : workers) {
        worker.join();
    }
}

Status LockNamespace::setLruSize(std::int64_t size)
{
    if (size < 0 || size > kMaxLruSize) {
        return {Errc::out_of_range, "ldlm.namespaces." + m_ns + ".lru_size=" +
                                        std::to_string(size) + ": allowed 0..16777216"};
    }
    std::lock_guard guard(m_mutex);
    m_lruSize = size;
    trimLocked(limitLocked(), CancelReason::lru);
    return {};
}

std::int64_t LockNamespace::lruSize() const
{
    std::lock_guard guard(m_mutex);
    return m_lruSize;
}

void LockNamespace::setMaxAge(std::chrono::seconds age)
{
    std::lock_guard guard(m_mutex);
    m_maxAge = age;
}

std::chrono::seconds LockNamespace::maxAge() const
{
    std::lock_guard guard(m_mutex);
    return m_maxAge;
}

std::size_t LockNamespace::lruLimit() const
{
    std::lock_guard guard(m_mutex);
    return limitLocked();
}

std::size_t LockNamespace::lockCount() const
{
    std::lock_guard guard(m_mutex);
    return m_byHandle.size();
}

std::size_t LockNamespace::unusedCount() const
{
    std::lock_guard guard(m_mutex);
    return m_lru.size() + m_kept.size();
}

std::size_t LockNamespace::keptCount() const
{
    std::lock_guard guard(m_mutex);
    return m_kept.size();
}

Status clearOutcome(const CancelReport &report)
{
    if (report.errors == 0) {
        return {};
    }
    std::string message = "lru_size=clear: " + std::to_string(report.errors) + " lock(s) failed (" +
                          std::to_string(report.kept) + " kept because their write-back failed); " +
                          std::to_string(report.locksCancelled) + " cancelled, " +
                          std::to_string(report.pagesDropped) + " pages dropped, " +
                          std::to_string(report.bytesWritten) + " bytes written back";
    for (const auto &error : report.messages) {
        message += "; " + error;
    }
    return {Errc::io_error, message};
}

Status LockNamespace::publish(params::ParamGroup &group)
{
    params::Binding lruSizeBinding;
    lruSizeBinding.read = [this] { return params::Value(lruSize()); };
    lruSizeBinding.apply = [this](const params::Value &value) {
        return setLruSize(std::get<std::int64_t>(value));
    };
    // Synchronous, as with lctl: when set_param returns, the unused locks are gone; a failed
    // write-back or cancel fails the set, with the report, instead of saying ok.
    lruSizeBinding.action = [this](std::string_view) { return clearOutcome(clear()); };

    params::Binding maxAgeBinding;
    maxAgeBinding.read = [this] { return params::Value(std::int64_t{maxAge().count()}); };
    maxAgeBinding.apply = [this](const params::Value &value) {
        setMaxAge(std::chrono::seconds(std::get<std::int64_t>(value)));
        return Status{};
    };

    params::Binding lockCountBinding;
    lockCountBinding.read = [this] {
        return params::Value(static_cast<std::int64_t>(lockCount()));
    };
    params::Binding unusedCountBinding;
    unusedCountBinding.read = [this] {
        return params::Value(static_cast<std::int64_t>(unusedCount()));
    };

    std::vector<params::BindRow> rows;
    rows.push_back({"lru_size", std::move(lruSizeBinding), {}});
    rows.push_back({"lru_max_age", std::move(maxAgeBinding), {}});
    rows.push_back({"lock_count", std::move(lockCountBinding), {}});
    rows.push_back({"lock_unused_count", std::move(unusedCountBinding), {}});
    if (auto status =
            params::bindGroup(group, params::catalog::kLockNamespace, m_ns, std::move(rows));
        !status) {
        return status;
    }
    return group.addStats("ldlm.namespaces." + m_ns + "." + std::string(kStats.leaf),
                          std::string(kStats.help), *m_statsView);
}

} // namespace lutra::locks
