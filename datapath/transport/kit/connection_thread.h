#pragma once
// A reactor that owns connections: adopts them (refused once it stops), keeps those torn down
// during a batch until the batch is over (a later event of the batch must not see a destroyed
// one), and at shutdown tears down every connection it still has. `Conn` has
// teardown(const Status &) noexcept.

#include <lutra/status.h>

#include "transport/kit/reactor.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::transport::kit {

template <typename Conn> class ConnectionThread : public Reactor {
public:
    using Reactor::Reactor;

    // Control path, any thread. unavailable "<owner> is shutting down" once stopped.
    Status adopt(const std::shared_ptr<Conn> &connection)
    {
        std::lock_guard lock(m_mutex);
        return adoptLocked(connection);
    }
    // What EngineBase::pickThread balances: the connections adopted and not yet retired, those to
    // `peer` first (none counted when it is empty), then all of them.
    struct Load {
        std::size_t toPeer = 0;
        std::size_t total = 0;
        auto operator<=>(const Load &) const = default;
    };
    Load load(std::string_view peer)
    {
        std::lock_guard lock(m_mutex);
        Load load{0, m_connections.size()};
        if (!peer.empty()) {
            load.toPeer = static_cast<std::size_t>(
                std::count_if(m_connections.begin(), m_connections.end(),
                              [peer](const auto &c) { return c->peer() == peer; }));
        }
        return load;
    }
    // I/O thread: the connection is done (it no longer counts); released after the current batch.
    void retire(Conn *connection) noexcept
    {
        std::lock_guard lock(m_mutex);
        const auto it = std::find_if(m_connections.begin(), m_connections.end(),
                                     [connection](const auto &c) { return c.get() == connection; });
        if (it != m_connections.end()) {
            m_retired.push_back(std::move(*it));
            m_connections.erase(it);
        }
    }

protected:
    // With m_mutex held (a derived adopt registers more under the same hold).
    Status adoptLocked(const std::shared_ptr<Conn> &connection)
    {
        if (m_stopped) {
            return {Errc::unavailable, owner() + " is shutting down"};
        }
        m_connections.push_back(connection);
        // Room for every connection on the ready list at once: queueReady never allocates.
        reserveReady(m_connections.size());
        return {};
    }
    std::vector<std::shared_ptr<Conn>> connections()
    {
        std::lock_guard lock(m_mutex);
        return m_connections;
    }
    // Calls `visit(connection)` for each, with m_mutex held (it may lock the connection).
    template <typename Visit> void forEachConnection(Visit visit)
    {
        std::lock_guard lock(m_mutex);
        for (const auto &connection : m_connections) {
            visit(connection);
        }
    }
    // The connections retired so far (a derived thread releases their resources first).
    std::vector<std::shared_ptr<Conn>> takeRetired()
    {
        std::vector<std::shared_ptr<Conn>> retired;
        std::lock_guard lock(m_mutex);
        retired.swap(m_retired);
        return retired;
    }

    void afterBatch() noexcept override { (void)takeRetired(); }
    void onShutdown() noexcept override
    {
        for (const auto &connection : connections()) {
            connection->teardown({Errc::cancelled, "transport shutting down"});
        }
        afterBatch();
    }

private:
    std::vector<std::shared_ptr<Conn>> m_connections; // guarded by m_mutex
    std::vector<std::shared_ptr<Conn>> m_retired;     // guarded by m_mutex
};

} // namespace lutra::transport::kit
