#pragma once
// What every plugin's Connection has in common: the negotiated limits, the peer's URI, the host
// context, the connected flag, bulkPut/bulkGet as one startBulk, and the texts of a closed
// connection and of a full queue. The plugin's connection derives from it and implements the
// rest (send, expose, startBulk, close).

#include <lutra/status.h>
#include <lutra/transport.h>

#include "transport/kit/limits.h"
#include "transport/kit/slot_table.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::transport::kit {

class ConnectionBase : public Connection {
public:
    ConnectionBase(Handler &handler, std::string peer) : m_handler(handler), m_peer(std::move(peer))
    {
    }

    const Limits &limits() const noexcept override { return m_limits; }
    std::string_view peer() const noexcept override { return m_peer; }
    bool connected() const noexcept override { return m_connected.load(); }
    void setContext(void *context) noexcept override { m_context.store(context); }
    void *context() const noexcept override { return m_context.load(); }

    Status bulkPut(const BulkDescriptor &remote, std::span<const Segment> local, std::uint64_t tag,
                   Deadline deadline) noexcept override
    {
        return startBulk(remote, local, nullptr, tag, deadline, false);
    }
    Status bulkGet(const BulkDescriptor &remote, std::span<const Segment> local, std::uint64_t tag,
                   Deadline deadline) noexcept override
    {
        return startBulk(remote, local, nullptr, tag, deadline, true);
    }

protected:
    // A put (of `local`, or of `file` when not null) into the peer's memory, or a get from it.
    virtual Status startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                             const FileRange *file, std::uint64_t tag, Deadline deadline,
                             bool isGet) noexcept = 0;

    // Where the connection is; guarded by the plugin's connection mutex, like m_closeReason.
    enum class State : std::uint8_t { opening, established, closing, closed };

    // unavailable "connection to <peer> is closed[: <reason>]" (no reason while it is ok).
    Status closedStatus(const Status &reason) const
    {
        if (!reason.ok()) {
            return {Errc::unavailable,
                    "connection to " + m_peer + " is closed: " + reason.toString()};
        }
        return {Errc::unavailable, "connection to " + m_peer + " is closed"};
    }
    // resource_exhausted "<what> queue to <peer> is full (depth D<detail>)".
    Status queueFull(std::string_view what, std::string_view detail = {}) const
    {
        return {Errc::resource_exhausted,
                std::string(what) + " queue to " + m_peer + " is full (depth " +
                    std::to_string(m_limits.queueDepth) + std::string(detail) + ")"};
    }

    // With the connection mutex held.
    Status closedStatusLocked() const
    {
        return closedStatus(m_state == State::closed ? m_closeReason : Status{});
    }
    // A caller's wait for credit, with the connection mutex held: ok once `room()` while the
    // connection is established; its closed status, or queueFull(queue, detail) at the deadline.
    template <typename Room>
    Status waitForRoomLocked(std::unique_lock<std::mutex> &lock, Deadline deadline,
                             std::string_view queue, Room room, std::string_view detail = {})
    {
        if (!waitUntil(lock, m_space, deadline,
                       [&] { return m_state != State::established || room(); })) {
            return queueFull(queue, detail);
        }
        if (m_state != State::established) {
            return closedStatusLocked();
        }
        return {};
    }
    // send()'s admission, with the connection mutex held: established, `size` within the
    // negotiated maximum, and a slot of `freeSlots` by the deadline, which it takes.
    Result<std::uint32_t> takeMessageSlotLocked(std::unique_lock<std::mutex> &lock,
                                                std::size_t size, Deadline deadline,
                                                std::vector<std::uint32_t> &freeSlots)
    {
        if (m_state != State::established) {
            return closedStatusLocked();
        }
        if (auto status = checkMessageSize(size, m_limits); !status.ok()) {
            return status;
        }
        if (auto status = waitForRoomLocked(lock, deadline, "send",
                                            [&freeSlots] { return !freeSlots.empty(); });
            !status.ok()) {
            return status;
        }
        const std::uint32_t slot = freeSlots.back();
        freeSlots.pop_back();
        return slot;
    }
    // A bulk operation's admission, with the connection mutex held: established, `total` within
    // the negotiated maximum, and a slot of `ops` by the deadline, which it takes.
    template <typename T>
    Result<std::uint32_t> takeOpSlotLocked(std::unique_lock<std::mutex> &lock, std::uint64_t total,
                                           Deadline deadline, SlotTable<T> &ops)
    {
        if (m_state != State::established) {
            return closedStatusLocked();
        }
        if (auto status = checkBulkSize(total, m_limits); !status.ok()) {
            return status;
        }
        if (auto status = waitForRoomLocked(lock, deadline, "bulk", [&ops] { return !ops.full(); });
            !status.ok()) {
            return status;
        }
        return *ops.acquire();
    }
    // close(), with the connection mutex held: true for the first call on an open connection,
    // now closing (the caller wakes waiters and has the teardown run on its I/O thread).
    bool beginCloseLocked() noexcept
    {
        if (m_state == State::closed || m_state == State::closing) {
            return false;
        }
        m_state = State::closing;
        m_connected.store(false);
        return true;
    }

    // exposeBulk's admission, with the connection mutex held: established, `total` within the
    // negotiated bulk size (out_of_range), and a free slot of `exposures` (resource_exhausted
    // when every one is in use), which it takes.
    template <typename T>
    Result<std::uint32_t> takeExposureSlotLocked(SlotTable<T> &exposures, std::uint64_t total) const
    {
        if (m_state != State::established) {
            return closedStatusLocked();
        }
        if (auto status = checkBulkSize(total, m_limits); !status.ok()) {
            return status;
        }
        const auto slot = exposures.acquire();
        if (!slot) {
            return Status(Errc::resource_exhausted, "all bulk exposure slots are in use");
        }
        return *slot;
    }

    // Waits on `space` until `ready()` (credit, or the connection closed: the caller's predicate
    // says both) or the deadline; noWait() never waits. False on timeout.
    template <typename Ready>
    static bool waitUntil(std::unique_lock<std::mutex> &lock, std::condition_variable &space,
                          Deadline deadline, Ready ready) noexcept
    {
        while (!ready()) {
            if (deadline == Deadline::min() || Clock::now() >= deadline) {
                return false;
            }
            space.wait_until(lock, deadline);
        }
        return true;
    }

    Handler &m_handler;
    const std::string m_peer;
    std::atomic<void *> m_context{nullptr};
    std::atomic<bool> m_connected{false};
    Limits m_limits;
    // Guarded by the plugin's connection mutex.
    State m_state = State::opening;
    Status m_closeReason;            // why it closed, once closed
    std::condition_variable m_space; // credit or a slot freed, or the connection closed
};

} // namespace lutra::transport::kit
