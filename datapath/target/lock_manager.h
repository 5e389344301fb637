#pragma once
// LockManager: PR/PW locks per object resource, as Lustre's LDLM grants extent-less locks.
// Granted locks stay until the client cancels them (clients cache locks). A conflicting enqueue
// sends one blocking callback to each conflicting holder and waits, without any global lock,
// for the cancels; a holder that does not cancel within the blocking timeout is evicted: all its
// locks are dropped, the server's evict hook runs, a line is logged, and the waiter proceeds.

#include <lutra/status.h>

#include "core/params/catalog.h"
#include "core/params/counters.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::target {

enum class LockMode : std::uint8_t {
    PR, // protected read: shared with other PR
    PW, // protected write: exclusive
};

using ClientId = std::uint64_t;
using LockHandle = std::uint64_t; // never 0

// What the server supplies: how to reach clients and what eviction means for them.
class LockCallbacks {
public:
    virtual ~LockCallbacks() = default;
    // Ask `client` to cancel `lock` on `resource` (asynchronously: must not wait for the cancel).
    virtual void sendBlockingCallback(ClientId client, LockHandle lock,
                                      std::string_view resource) = 0;
    // `client` was evicted; its locks are already gone.
    virtual void clientEvicted(ClientId client) = 0;
};

struct LockInfo {
    LockHandle handle = 0;
    ClientId client = 0;
    LockMode mode = LockMode::PR;
    std::string resource;
};

class LockManager {
public:
    using LogSink = std::function<void(std::string_view line)>;

    enum Counter : std::size_t {
        granted,
        cancelled,
        blocking_callbacks,
        evictions,
        counter_count,
    };

    // ldlm.namespaces.<ns>.blocking_timeout
    static constexpr std::chrono::milliseconds kDefaultBlockingTimeout{
        params::catalog::defaultOf(params::catalog::kLockManager, "blocking_timeout")};
    static constexpr std::chrono::milliseconds kMaxBlockingTimeout{
        params::catalog::maxOf(params::catalog::kLockManager, "blocking_timeout")};

    // `ns` names the namespace in parameters and log lines ("ost0").
    LockManager(std::string ns, LockCallbacks &callbacks, LogSink log = {});
    ~LockManager();
    LockManager(const LockManager &) = delete;
    LockManager &operator=(const LockManager &) = delete;

    // What an enqueue does when a holder or an earlier waiter conflicts: wait (blocking callbacks,
    // then eviction at the timeout), or refuse at once with failed_precondition, sending no
    // callback (protocol::kLockNonBlocking: a client's readahead, which must not wait on another
    // client while it holds locks of its own).
    enum class OnConflict { wait, refuse };
    // Grants a lock on `resource` to `client`. Requests on one resource are served in order.
    Result<LockHandle> enqueue(std::string_view resource, LockMode mode, ClientId client,
                               OnConflict onConflict = OnConflict::wait);
    // Releases a granted lock; not_found for an unknown (or already dropped) handle.
    Status cancel(LockHandle lock);
    // Drops every lock of `client`, calls the evict hook and logs why. Returns the locks dropped.
    std::size_t evict(ClientId client, std::string_view reason);
    // Wakes every waiter with `unavailable` and refuses new enqueues.
    void shutdown();

    void setBlockingTimeout(std::chrono::milliseconds timeout);
    std::chrono::milliseconds blockingTimeout() const noexcept;

    std::size_t lockCount() const;
    std::vector<LockInfo> locksOf(ClientId client) const;
    const params::CounterBlock &stats() const noexcept { return m_stats; }

    // Publishes ldlm.namespaces.<ns>.blocking_timeout, .lock_count and .lock_stats.
    Status publish(params::ParamGroup &group);

private:
    struct Resource;
    struct Lock {
        LockHandle handle;
        ClientId client;
        LockMode mode;
        bool callbackSent = false;
        std::chrono::steady_clock::time_point callbackTime;
    };
    struct Waiter {
        LockMode mode;
        ClientId client;
    };
    struct Entry {
        std::shared_ptr<Resource> resource;
        ClientId client;
    };

    std::shared_ptr<Resource> acquire(std::string_view name);
    void release(const std::shared_ptr<Resource> &resource);
    // Removes `handle` from its resource and wakes its waiters; false if it was already gone.
    bool drop(LockHandle handle);
    void log(const std::string &line);

    const std::string m_ns;
    LockCallbacks &m_callbacks;
    LogSink m_log;

    // Guards the maps only: never held while waiting or while calling out.
    mutable std::mutex m_mapMutex;
    std::map<std::string, std::shared_ptr<Resource>, std::less<>> m_resources;
    std::map<LockHandle, Entry> m_locks;
    LockHandle m_nextHandle = 1;
    bool m_stopping = false;

    std::atomic<std::int64_t> m_timeoutMs{kDefaultBlockingTimeout.count()};
    params::CounterBlock m_stats;
};

} // namespace lutra::target
