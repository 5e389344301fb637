#include "target/lock_manager.h"

#include "core/params/bind.h"
#include "core/params/registry.h"

#include <algorithm>
#include <list>

namespace lutra::target {

namespace {

bool compatible(LockMode a, LockMode b)
{
    return a == LockMode::PR && b == LockMode::PR;
}

constexpr const params::catalog::CounterGroup &kStats = params::catalog::kTargetLockStats;
using params::catalog::counterIndex;
static_assert(counterIndex(kStats, "granted") == LockManager::granted &&
              counterIndex(kStats, "cancelled") == LockManager::cancelled &&
              counterIndex(kStats, "blocking_callbacks") == LockManager::blocking_callbacks &&
              counterIndex(kStats, "evictions") == LockManager::evictions &&
              kStats.counters.size() == LockManager::counter_count);

std::vector<params::CounterDef> lockStatDefs()
{
    return params::catalog::counterDefs(kStats);
}

} // namespace

// One object's locks. Its mutex guards everything but `refs`, which the map mutex guards.
struct LockManager::Resource {
    explicit Resource(std::string resourceName) : name(std::move(resourceName)) {}

    const std::string name;
    std::mutex mutex;
    std::condition_variable changed; // a lock was granted, cancelled or dropped; shutdown
    std::vector<Lock> granted;
    std::list<Waiter> queue; // enqueues not yet granted, in arrival order
    std::size_t refs = 0;    // granted locks + enqueues in progress
};

LockManager::LockManager(std::string ns, LockCallbacks &callbacks, LogSink log)
    : m_ns(std::move(ns)), m_callbacks(callbacks), m_log(std::move(log)), m_stats(lockStatDefs())
{
}

LockManager::~LockManager()
{
    shutdown();
}

std::shared_ptr<LockManager::Resource> LockManager::acquire(std::string_view name)
{
    std::lock_guard lock(m_mapMutex);
    if (m_stopping) {
        return nullptr;
    }
    auto it = m_resources.find(name);
    if (it == m_resources.end()) {
        it = m_resources.emplace(std::string(name), std::make_shared<Resource>(std::string(name)))
                 .first;
    }
    ++it->second->refs;
    return it->second;
}

void LockManager::release(const std::shared_ptr<Resource> &resource)
{
    std::lock_guard lock(m_mapMutex);
    if (--resource->refs == 0) {
        const auto it = m_resources.find(resource->name);
        if (it != m_resources.end() && it->second == resource) {
            m_resources.erase(it);
        }
    }
}

Result<LockHandle> LockManager::enqueue(std::string_view resourceName, LockMode mode,
                                        ClientId client, OnConflict onConflict)
{
    auto resource = acquire(resourceName);
    if (!resource) {
        return Status(Errc::unavailable, "lock namespace " + m_ns + " is shut down");
    }
    std::unique_lock lock(resource->mutex);
    if (onConflict == OnConflict::refuse) {
        const auto conflicts = [mode](LockMode other) { return !compatible(other, mode); };
        if (std::any_of(resource->queue.begin(), resource->queue.end(),
                        [&](const Waiter &w) { return conflicts(w.mode); }) ||
            std::any_of(resource->granted.begin(), resource->granted.end(),
                        [&](const Lock &l) { return conflicts(l.mode); })) {
            lock.unlock();
            release(resource);
            return Status(Errc::failed_precondition,
                          "lock on '" + std::string(resourceName) +
                              "' conflicts with another holder (non-blocking enqueue)");
        }
    }
    const auto me = resource->queue.insert(resource->queue.end(), Waiter{mode, client});
    std::vector<std::pair<ClientId, LockHandle>> callbacks;
    std::vector<std::pair<ClientId, LockHandle>> expired;
    for (;;) {
        {
            std::lock_guard mapLock(m_mapMutex);
            if (m_stopping) {
                break;
            }
        }
        // First come, first served: a PR does not overtake a waiting PW.
        const bool behindConflict =
            std::any_of(resource->queue.begin(), me,
                        [mode](const Waiter &earlier) { return !compatible(earlier.mode, mode); });
        const auto now = std::chrono::steady_clock::now();
        const auto timeout = blockingTimeout();
        auto deadline = std::chrono::steady_clock::time_point::max();
        bool conflicts = false;
        callbacks.clear();
        expired.clear();
        for (auto &holder : resource->granted) {
            if (compatible(holder.mode, mode)) {
                continue;
            }
            conflicts = true;
            if (!holder.callbackSent) {
                holder.callbackSent = true;
                holder.callbackTime = now;
                callbacks.emplace_back(holder.client, holder.handle);
            }
            const auto due = holder.callbackTime + timeout;
            if (due <= now) {
                expired.emplace_back(holder.client, holder.handle);
            }
            deadline = std::min(deadline, due);
        }

        if (!conflicts && !behindConflict) {
            LockHandle handle = 0;
            {
                std::lock_guard mapLock(m_mapMutex);
                handle = m_nextHandle++;
                m_locks.emplace(handle, Entry{resource, client}); // keeps our reference
            }
            resource->granted.push_back(Lock{handle, client, mode});
            resource->queue.erase(me);
            lock.unlock();
            resource->changed.notify_all(); // the next waiter may be compatible with us
            m_stats.add(granted);
            return handle;
        }
        if (!callbacks.empty()) {
            // Never call out with a lock held: the server may cancel from inside the callback.
            lock.unlock();
            for (const auto &[holder, handle] : callbacks) {
                m_stats.add(blocking_callbacks);
                m_callbacks.sendBlockingCallback(holder, handle, resource->name);
            }
            lock.lock();
            continue;
        }
        if (!expired.empty()) {
            lock.unlock();
            for (const auto &[holder, handle] : expired) {
                evict(holder, "lock " + std::to_string(handle) + " on '" + resource->name +
                                  "' not cancelled within " + std::to_string(timeout.count()) +
                                  " ms of its blocking callback");
            }
            lock.lock();
            continue;
        }
        if (conflicts) {
            resource->changed.wait_until(lock, deadline);
        } else {
            resource->changed.wait(lock); // an earlier waiter times its own holders out
        }
    }
    resource->queue.erase(me);
    lock.unlock();
    resource->changed.notify_all();
    release(resource);
    return Status(Errc::unavailable, "lock namespace " + m_ns + " is shut down");
}

bool LockManager::drop(LockHandle handle)
{
    std::shared_ptr<Resource> resource;
    {
        std::lock_guard mapLock(m_mapMutex);
        const auto it = m_locks.find(handle);
        if (it == m_locks.end()) {
            return false;
        }
        resource = std::move(it->second.resource);
        m_locks.erase(it);
    }
    {
        std::lock_guard lock(resource->mutex);
        std::erase_if(resource->granted, [handle](const Lock &l) { return l.handle == handle; });
    }
    resource->changed.notify_all();
    release(resource);
    return true;
}

Status LockManager::cancel(LockHandle lock)
{
    if (!drop(lock)) {
        return {Errc::not_found, "lock " + std::to_string(lock) + " is not granted in namespace " +
                                     m_ns + " (unknown, already cancelled, or its client evicted)"};
    }
    m_stats.add(cancelled);
    return {};
}

std::size_t LockManager::evict(ClientId client, std::string_view reason)
{
    std::vector<LockHandle> handles;
    {
        std::lock_guard mapLock(m_mapMutex);
        for (const auto &[handle, entry] : m_locks) {
            if (entry.client == client) {
                handles.push_back(handle);
            }
        }
    }
    std::size_t dropped = 0;
    for (const LockHandle handle : handles) {
        dropped += drop(handle) ? 1 : 0;
    }
    if (dropped == 0) {
        return 0; // nothing held, or another thread evicted it first
    }
    m_stats.add(evictions);
    log("ldlm.namespaces." + m_ns + ": evicting client " + std::to_string(client) + ": " +
        std::string(reason) + "; " + std::to_string(dropped) + " locks dropped");
    m_callbacks.clientEvicted(client);
    return dropped;
}

void LockManager::shutdown()
{
    std::vector<std::shared_ptr<Resource>> resources;
    {
        std::lock_guard mapLock(m_mapMutex);
        m_stopping = true;
        for (const auto &[name, resource] : m_resources) {
            resources.push_back(resource);
        }
    }
    for (const auto &resource : resources) {
        // Taking the mutex orders the flag before any waiter's next check.
        std::lock_guard lock(resource->mutex);
        resource->changed.notify_all();
    }
}

void LockManager::setBlockingTimeout(std::chrono::milliseconds timeout)
{
    const auto clamped = std::clamp<std::chrono::milliseconds>(
        timeout, std::chrono::milliseconds(1), kMaxBlockingTimeout);
    m_timeoutMs.store(clamped.count(), std::memory_order_relaxed);
}

std::chrono::milliseconds LockManager::blockingTimeout() const noexcept
{
    return std::chrono::milliseconds(m_timeoutMs.load(std::memory_order_relaxed));
}

std::size_t LockManager::lockCount() const
{
    std::lock_guard mapLock(m_mapMutex);
    return m_locks.size();
}

std::vector<LockInfo> LockManager::locksOf(ClientId client) const
{
    std::vector<std::pair<LockHandle, std::shared_ptr<Resource>>> mine;
    {
        std::lock_guard mapLock(m_mapMutex);
        for (const auto &[handle, entry] : m_locks) {
            if (entry.client == client) {
                mine.emplace_back(handle, entry.resource);
            }
        }
    }
    std::vector<LockInfo> out;
    for (const auto &[handle, resource] : mine) {
        std::lock_guard lock(resource->mutex);
        for (const auto &l : resource->granted) {
            if (l.handle == handle) {
                out.push_back({handle, client, l.mode, resource->name});
            }
        }
    }
    return out;
}

void LockManager::log(const std::string &line)
{
    if (m_log) {
        m_log(line);
    }
}

Status LockManager::publish(params::ParamGroup &group)
{
    params::Binding timeout;
    timeout.read = [this] { return params::Value(std::int64_t{blockingTimeout().count()}); };
    timeout.apply = [this](const params::Value &value) {
        setBlockingTimeout(std::chrono::milliseconds(std::get<std::int64_t>(value)));
        return Status{};
    };
    params::Binding count;
    count.read = [this] { return params::Value(static_cast<std::int64_t>(lockCount())); };
    std::vector<params::BindRow> rows;
    rows.push_back({"blocking_timeout", std::move(timeout), {}});
    rows.push_back({"lock_count", std::move(count), {}});
    if (auto status =
            params::bindGroup(group, params::catalog::kLockManager, m_ns, std::move(rows));
        !status) {
        return status;
    }
    const std::string prefix = "ldlm.namespaces." + m_ns + ".";
    return group.addStats(prefix + std::string(kStats.leaf), std::string(kStats.help), m_stats);
}

} // namespace lutra::target
