#include "client/rpc_session.h"

#include "protocol/codec.h"
#include "protocol/crc32c.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace lutra::client {

using protocol::Opcode;
using transport::Clock;
using transport::LogLevel;
using transport::Segment;

// Per-slot state. A slot is owned by at most one caller (through its SlotLease); the I/O thread
// touches only xid, state, replyLength and replyBuffer, and only under `mutex` while the state
// is `waiting`.
struct RpcSession::Slot {
    enum class State : std::uint8_t {
        idle,    // no reply expected: anything arriving for this slot is dropped
        waiting, // a request with `xid` is out; the I/O thread may fill the reply buffer
        replied, // replyBuffer holds replyLength bytes of the reply to `xid`
        failed,  // the connection went away while waiting
    };

    std::mutex mutex;
    std::condition_variable changed; // synchronous calls (call()) only
    std::uint64_t xid = 0;           // index + n × slot count: xid % slots finds the slot
    State state = State::idle;
    std::size_t replyLength = 0;
    std::vector<std::byte> sendBuffer;
    std::vector<std::byte> replyBuffer;
    std::vector<std::uint32_t> crcs; // one per page of the largest bulk
    std::vector<Segment> segments;   // the caller's segments cut to the transfer length
    // A checksummed read whose data the transport sums as it arrives (into crcs): the reply is
    // checked against those, and summedBytes must be the bytes it says were read.
    bool summedOnArrival = false;
    std::uint64_t summedBytes = 0;

    // An asynchronous bulk RPC: the slot is its whole state. Whoever moves it from `waiting` to
    // `idle` under `mutex` (reply, deadline, disconnect, failed send) completes it.
    bool async = false;
    bool sendPending = false; // a send is under way: only the sender may complete the RPC
    Deadline deadline{};
    std::size_t sendLength = 0;
    Opcode opcode = Opcode::read;
    std::uint64_t handle = 0;
    std::uint64_t offset = 0;
    std::uint64_t bytes = 0;
    bool checksums = false;
    transport::BulkDescriptor descriptor;
    BulkCallback callback;
    std::uint64_t laneBytes = 0; // under m_freeMutex: counted in its lane's bytesInFlight
};

// One transport connection of the session and its slots.
struct RpcSession::Lane {
    std::uint32_t index = 0;
    // Set under m_stateMutex; replaced only when the lane is lost, released and idle (reopened).
    transport::ConnectionPtr connection;
    std::unique_ptr<Slot[]> slots;           // m_slotsPerLane, allocated once
    std::atomic<std::uint32_t> slotCount{0}; // usable slots, published when complete
    std::atomic<bool> lost{false};           // its connection is gone (set before slots fail)
    // The transport sums read data on arrival (exposeBulkSummed), until it answers unimplemented.
    std::atomic<bool> arrivalSums{true};
    // Under m_freeMutex.
    std::vector<std::uint32_t> freeSlots; // a stack: reused slots stay warm in cache
    std::uint64_t bytesInFlight = 0;      // bulk bytes of the slots taken
    bool ready = false;                   // joined the export: takes RPCs
    // Under m_stateMutex.
    std::string lostReason;
    bool released = false; // onDisconnected has run: the transport is done with this lane
};

namespace {

// Waits on `changed` until `done` or `deadline`. A deadline already past (noWait()) does not
// wait at all, and never hands time_point::min() to the condition variable.
template <typename Predicate>
bool waitUntil(std::condition_variable &changed, std::unique_lock<std::mutex> &lock,
               Deadline deadline, Predicate done)
{
    while (!done()) {
        if (Clock::now() >= deadline) {
            return false;
        }
        changed.wait_until(lock, deadline);
    }
    return true;
}

std::string hex(std::uint32_t value)
{
    std::array<char, 16> text{};
    std::snprintf(text.data(), text.size(), "0x%08x", value);
    return text.data();
}

// crc32c of each kPageSize piece of the first `bytes` bytes of `segments`; a page may straddle
// segments (crc32c chains), the last one may be short. `out` has one slot per page.
void pageCrcs(std::span<const Segment> segments, std::uint64_t bytes,
              std::span<std::uint32_t> out) noexcept
{
    std::size_t page = 0;
    std::uint64_t inPage = 0;
    std::uint32_t crc = 0;
    std::uint64_t remaining = bytes;
    for (const Segment &segment : segments) {
        const auto *data = static_cast<const std::byte *>(segment.address);
        std::uint64_t left = std::min<std::uint64_t>(segment.length, remaining);
        while (left > 0) {
            const std::uint64_t take = std::min<std::uint64_t>(left, protocol::kPageSize - inPage);
            crc = protocol::crc32c({data, take}, inPage == 0 ? 0 : crc);
            data += take;
            left -= take;
            remaining -= take;
            inPage += take;
            if (inPage == protocol::kPageSize || remaining == 0) {
                out[page++] = crc;
                inPage = 0;
            }
        }
        if (remaining == 0) {
            break;
        }
    }
}

std::uint64_t pagesOf(std::uint64_t bytes)
{
    return (bytes + protocol::kPageSize - 1) / protocol::kPageSize;
}

} // namespace

// ---- SlotLease -------------------------------------------------------------------------------

SlotLease &SlotLease::operator=(SlotLease &&other) noexcept
{
    if (this != &other) {
        release();
        m_session = std::exchange(other.m_session, nullptr);
        m_index = other.m_index;
    }
    return *this;
}

void SlotLease::release() noexcept
{
    if (m_session != nullptr) {
        std::exchange(m_session, nullptr)->releaseSlot(m_index);
    }
}

// ---- setup and teardown ----------------------------------------------------------------------

RpcSession::RpcSession(std::string uri, Options options)
    : m_uri(std::move(uri)), m_options(std::move(options)),
      m_lanes(std::make_unique<Lane[]>(kMaxConnections))
{
    for (std::uint32_t i = 0; i < kMaxConnections; ++i) {
        m_lanes[i].index = i;
    }
}

RpcSession::~RpcSession()
{
    // The transport calls this handler until each connection's onDisconnected has run.
    const std::uint32_t lanes = m_laneCount.load(std::memory_order_acquire);
    std::vector<transport::ConnectionPtr> open;
    {
        std::lock_guard lock(m_stateMutex);
        for (std::uint32_t i = 0; i < lanes; ++i) {
            if (m_lanes[i].connection) {
                open.push_back(m_lanes[i].connection);
            }
        }
    }
    // The joined ones first: closing the first makes the target drop the rest itself.
    for (auto connection = open.rbegin(); connection != open.rend(); ++connection) {
        (*connection)->close();
    }
    {
        std::unique_lock lock(m_stateMutex);
        m_gone.wait(lock, [&] {
            for (std::uint32_t i = 0; i < lanes; ++i) {
                if (m_lanes[i].connection && !m_lanes[i].released) {
                    return false;
                }
            }
            return true;
        });
    }
    if (m_timer.joinable()) {
        {
            std::lock_guard lock(m_timerMutex);
            m_timerStop = true;
        }
        m_timerWake.notify_all();
        m_timer.join();
    }
}

Result<std::unique_ptr<RpcSession>> RpcSession::connect(transport::Transport &transport,
                                                        std::string_view uri, Options options)
{
    const std::string where = "connect " + std::string(uri);
    if (options.connections == 0 || options.connections > kMaxConnections) {
        return Status(Errc::invalid_argument, where + ": " + std::to_string(options.connections) +
                                                  " connections is outside 1.." +
                                                  std::to_string(kMaxConnections));
    }
    std::unique_ptr<RpcSession> session(new RpcSession(std::string(uri), std::move(options)));
    session->m_transport = &transport;
    Lane &first = session->m_lanes[0];
    auto connection = transport.connect(uri, *session, &first);
    if (!connection.ok()) {
        return connection.status().withContext(where);
    }
    {
        std::lock_guard lock(session->m_stateMutex);
        first.connection = std::move(*connection);
    }
    session->m_laneCount.store(1, std::memory_order_release);

    const transport::Limits &limits = first.connection->limits();
    if (limits.queueDepth == 0 || limits.maxMessageSize < protocol::kMinMessageSize) {
        return Status(Errc::failed_precondition,
                      where + ": the transport negotiated " + std::to_string(limits.queueDepth) +
                          " slots of " + std::to_string(limits.maxMessageSize) +
                          " bytes; the protocol needs at least 1 of " +
                          std::to_string(protocol::kMinMessageSize));
    }
    const std::uint32_t count = limits.queueDepth;
    session->m_slotsPerLane = count;
    session->m_xidStride = std::uint64_t{count} * kMaxConnections;
    session->allocateLane(0, limits);
    session->m_negotiated.slotCount = count;
    session->m_deferredSends.reserve(std::size_t{count} * kMaxConnections);
    try {
        RpcSession *self = session.get();
        session->m_timer = std::thread([self] { self->timerLoop(); });
    } catch (const std::system_error &error) {
        return Status(Errc::resource_exhausted, where + ": no timer thread: " + error.what());
    }

    if (Status status = session->negotiate(); !status.ok()) {
        return status.withContext(where);
    }
    {
        std::lock_guard lock(session->m_freeMutex);
        first.ready = true;
    }
    // Further connections are an optimisation: one that fails is logged and left out.
    std::lock_guard lanes(session->m_laneMutex);
    std::uint32_t opened = 1;
    while (opened < session->m_options.connections) {
        if (Status status = session->openLane(opened); !status.ok()) {
            session->m_options.log(LogLevel::warning,
                                   where + ": using " + std::to_string(opened) + " of " +
                                       std::to_string(session->m_options.connections) +
                                       " connections: " + status.toString());
            break;
        }
        ++opened;
    }
    session->m_connectionsInUse.store(opened, std::memory_order_relaxed);
    return session;
}

void RpcSession::allocateLane(std::uint32_t index, const transport::Limits &limits)
{
    // Everything a call needs is allocated here, once: buffers as large as the transport allows
    // (the Connect exchange can only lower the limits).
    Lane &lane = m_lanes[index];
    const std::uint32_t count = std::min(limits.queueDepth, m_slotsPerLane);
    const std::uint64_t maxPages =
        std::min<std::uint64_t>(limits.maxBulkSize, protocol::kMaxBulkBytes) / protocol::kPageSize;
    if (!lane.slots) {
        lane.slots = std::make_unique<Slot[]>(m_slotsPerLane);
        for (std::uint32_t i = 0; i < m_slotsPerLane; ++i) {
            Slot &slot = lane.slots[i];
            slot.xid = std::uint64_t{index} * m_slotsPerLane + i;
            slot.sendBuffer.resize(limits.maxMessageSize);
            slot.replyBuffer.resize(limits.maxMessageSize);
            slot.crcs.resize(maxPages);
            slot.segments.reserve(transport::kMaxBulkSegments);
        }
    }
    {
        std::lock_guard lock(m_freeMutex);
        lane.freeSlots.clear();
        lane.freeSlots.reserve(m_slotsPerLane);
        for (std::uint32_t i = 0; i < count; ++i) {
            // Popped from the back: the lane's first slot first.
            lane.freeSlots.push_back(index * m_slotsPerLane + count - 1 - i);
        }
        lane.bytesInFlight = 0;
        lane.ready = false;
    }
    lane.slotCount.store(count, std::memory_order_release);
}

RpcSession::Lane &RpcSession::laneOf(std::uint32_t index) const noexcept
{
    return m_lanes[index / m_slotsPerLane];
}

RpcSession::Slot &RpcSession::slotAt(std::uint32_t index) const noexcept
{
    return m_lanes[index / m_slotsPerLane].slots[index % m_slotsPerLane];
}

Status RpcSession::openLane(std::uint32_t index)
{
    Lane &lane = m_lanes[index];
    const std::string where = "connection " + std::to_string(index + 1) + " to " + m_uri;
    if ((m_negotiated.features & protocol::kFeatureMultiConnection) == 0) {
        return {Errc::failed_precondition,
                where + ": the target does not let several connections share one client's "
                        "export (no multi-connection feature)"};
    }
    if (m_disconnected.load(std::memory_order_acquire)) {
        return disconnectedStatus();
    }
    auto connection = m_transport->connect(m_uri, *this, &lane);
    if (!connection.ok()) {
        return connection.status().withContext(where);
    }
    {
        std::lock_guard lock(m_stateMutex);
        lane.connection = std::move(*connection);
        lane.lostReason.clear();
        lane.released = false;
    }
    lane.lost.store(false, std::memory_order_release);
    if (index >= m_laneCount.load(std::memory_order_relaxed)) {
        m_laneCount.store(index + 1, std::memory_order_release);
    }
    const auto fail = [&](Status status) {
        lane.connection->close(); // onDisconnected marks the lane lost
        return status;
    };
    const transport::Limits &limits = lane.connection->limits();
    if (limits.queueDepth == 0 || limits.maxMessageSize < m_negotiated.maxMessageBytes ||
        limits.maxBulkSize < m_negotiated.maxBulkBytes) {
        return fail({Errc::failed_precondition,
                     where + ": the transport negotiated " + std::to_string(limits.queueDepth) +
                         " slots, messages of " + std::to_string(limits.maxMessageSize) +
                         " and bulk of " + std::to_string(limits.maxBulkSize) +
                         " bytes, less than the first connection's"});
    }
    allocateLane(index, limits);
    // The first connection may have gone before this one was published (its disconnect closes
    // only the connections it sees).
    if (m_disconnected.load(std::memory_order_acquire)) {
        return fail(disconnectedStatus());
    }
    protocol::ConnectRequest request;
    request.maxVersion = m_options.maxVersion;
    request.maxBulkBytes = m_negotiated.maxBulkBytes;
    request.maxMessageBytes = m_negotiated.maxMessageBytes;
    request.features = m_options.features;
    request.clientId = m_options.clientId;
    request.exportCookie = m_exportCookie;
    auto reply = callOn(index, request, m_options.connectJobId,
                        transport::deadlineIn(m_options.connectTimeout));
    if (!reply.ok()) {
        return fail(reply.status().withContext(where + ": Connect exchange"));
    }
    if (reply->targetName != m_negotiated.targetName || reply->version != m_negotiated.version ||
        reply->exportCookie != m_exportCookie || reply->maxBulkBytes < m_negotiated.maxBulkBytes ||
        reply->maxMessageBytes < m_negotiated.maxMessageBytes ||
        (reply->features & m_options.features) != m_negotiated.features) {
        return fail({Errc::protocol_error, where + ": the target answered the join as " +
                                               std::string(reply->targetName) +
                                               " with other terms than the first connection's"});
    }
    {
        std::lock_guard lock(m_freeMutex);
        lane.ready = true;
    }
    m_freeChanged.notify_all();
    m_options.log(LogLevel::info, where + " joined the session to " + m_negotiated.targetName);
    return {};
}

Status RpcSession::setConnections(std::uint32_t count)
{
    if (count == 0 || count > kMaxConnections) {
        return {Errc::invalid_argument, "connections to " + m_uri + ": " + std::to_string(count) +
                                            " is outside 1.." + std::to_string(kMaxConnections)};
    }
    if (m_disconnected.load(std::memory_order_acquire)) {
        return disconnectedStatus();
    }
    std::lock_guard lanes(m_laneMutex);
    for (std::uint32_t i = 1; i < count; ++i) {
        Lane &lane = m_lanes[i];
        bool open = i >= m_laneCount.load(std::memory_order_relaxed);
        if (!open && lane.lost.load(std::memory_order_acquire)) {
            // A lost connection is opened again once the transport has let go of it (its
            // onDisconnected fails and frees the RPCs it had) and no sender still holds a slot.
            {
                std::unique_lock lock(m_stateMutex);
                m_gone.wait_for(lock, m_options.connectTimeout, [&] { return lane.released; });
            }
            std::scoped_lock lock(m_stateMutex, m_freeMutex);
            open = lane.released &&
                   lane.freeSlots.size() == lane.slotCount.load(std::memory_order_relaxed);
        }
        if (open) {
            if (Status status = openLane(i); !status.ok()) {
                return status;
            }
        }
    }
    {
        std::lock_guard lock(m_freeMutex);
        m_connectionsInUse.store(count, std::memory_order_relaxed);
    }
    m_freeChanged.notify_all();
    // Connections out of use close once their RPCs are done: none is cut off mid-transfer.
    // One still busy at the connect timeout stays open, unused (the next call tries again).
    const std::uint32_t opened = m_laneCount.load(std::memory_order_acquire);
    for (std::uint32_t i = count; i < opened; ++i) {
        Lane &lane = m_lanes[i];
        bool idle = false;
        {
            std::unique_lock lock(m_freeMutex);
            if (!lane.ready || lane.lost.load(std::memory_order_acquire)) {
                continue;
            }
            idle = m_freeChanged.wait_for(lock, m_options.connectTimeout, [&] {
                return lane.freeSlots.size() == lane.slotCount.load(std::memory_order_relaxed);
            });
            lane.ready = !idle;
        }
        if (idle) {
            lane.connection->close(); // the target keeps the export: the first holds it
        }
    }
    return {};
}

std::uint32_t RpcSession::liveConnections() const noexcept
{
    std::lock_guard lock(m_freeMutex);
    std::uint32_t live = 0;
    const std::uint32_t lanes = m_laneCount.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < lanes; ++i) {
        live += m_lanes[i].ready && !m_lanes[i].lost.load(std::memory_order_acquire) ? 1 : 0;
    }
    return live;
}

Status RpcSession::negotiate()
{
    const transport::Limits &limits = m_lanes[0].connection->limits();
    const std::uint64_t bulkCap = std::min<std::uint64_t>(
        {m_options.maxBulkBytes, limits.maxBulkSize, protocol::kMaxBulkBytes});
    const auto offerBulk =
        static_cast<std::uint32_t>(bulkCap / protocol::kPageSize * protocol::kPageSize);
    const auto offerMessage = static_cast<std::uint32_t>(std::min<std::uint64_t>(
        {m_options.maxMessageBytes, limits.maxMessageSize, protocol::kMaxMessageSize}));
    if (offerBulk < protocol::kPageSize || offerMessage < protocol::kMinMessageSize) {
        return {Errc::invalid_argument, "limits too small to offer: " + std::to_string(offerBulk) +
                                            " bulk bytes, " + std::to_string(offerMessage) +
                                            " message bytes"};
    }
    // The Connect request itself is encoded within the offered message size.
    m_negotiated.maxMessageBytes = offerMessage;

    protocol::ConnectRequest request;
    request.maxVersion = m_options.maxVersion;
    request.maxBulkBytes = offerBulk;
    request.maxMessageBytes = offerMessage;
    request.features = m_options.features;
    request.clientId = m_options.clientId;
    auto reply =
        call(request, m_options.connectJobId, transport::deadlineIn(m_options.connectTimeout));
    if (!reply.ok()) {
        return reply.status().withContext("Connect exchange");
    }
    if (reply->version < request.minVersion || reply->version > request.maxVersion) {
        return {Errc::protocol_error, "Connect exchange: the target chose version " +
                                          std::to_string(reply->version) + ", outside " +
                                          std::to_string(request.minVersion) + ".." +
                                          std::to_string(request.maxVersion)};
    }
    // A target may not raise the limits; take the minimum anyway rather than trust it.
    m_negotiated.version = reply->version;
    m_negotiated.maxBulkBytes = std::min(reply->maxBulkBytes, offerBulk);
    m_negotiated.maxMessageBytes = std::min(reply->maxMessageBytes, offerMessage);
    m_negotiated.features = reply->features & m_options.features;
    m_negotiated.targetName = std::string(reply->targetName);
    if ((m_negotiated.features & protocol::kFeatureMultiConnection) != 0) {
        m_exportCookie = reply->exportCookie; // further connections join with it
        m_negotiated.exportCookie = m_exportCookie;
    }
    m_options.log(LogLevel::info, "connected to " + m_negotiated.targetName + " at " + m_uri +
                                      ": version " + std::to_string(m_negotiated.version) + ", " +
                                      std::to_string(m_negotiated.slotCount) + " slots, bulk " +
                                      std::to_string(m_negotiated.maxBulkBytes) +
                                      " bytes, message " +
                                      std::to_string(m_negotiated.maxMessageBytes) + " bytes");
    return {};
}

// ---- calls -----------------------------------------------------------------------------------

RpcSession::Counters RpcSession::counters() const noexcept
{
    constexpr auto relaxed = std::memory_order_relaxed;
    return {m_rpcsSent.load(relaxed),      m_replies.load(relaxed),
            m_errorReplies.load(relaxed),  m_timeouts.load(relaxed),
            m_unsolicited.load(relaxed),   m_callbacks.load(relaxed),
            m_checksumErrors.load(relaxed)};
}

Status RpcSession::disconnectedStatus() const
{
    return lostStatus(m_lanes[0]);
}

Status RpcSession::lostStatus(const Lane &lane) const
{
    std::lock_guard lock(m_stateMutex);
    return {Errc::unavailable, (lane.index == 0 ? std::string("connection")
                                                : "connection " + std::to_string(lane.index + 1)) +
                                   " to " + m_uri + " lost: " + lane.lostReason};
}

Status RpcSession::unexpectedReply(Opcode opcode) const
{
    return {Errc::protocol_error, std::string(protocol::opcodeName(opcode)) + " to " + m_uri +
                                      ": the reply has the wrong body type"};
}

Result<SlotLease> RpcSession::acquireSlot(Opcode opcode, Deadline deadline, std::uint32_t laneIndex)
{
    Lane &lane = m_lanes[laneIndex];
    std::unique_lock lock(m_freeMutex);
    const bool ready = waitUntil(m_freeChanged, lock, deadline, [&] {
        return !lane.freeSlots.empty() || lane.lost.load(std::memory_order_acquire);
    });
    if (lane.lost.load(std::memory_order_acquire)) {
        lock.unlock();
        return lostStatus(lane);
    }
    if (!ready) {
        return Status(Errc::resource_exhausted, std::string(protocol::opcodeName(opcode)) + " to " +
                                                    m_uri + ": all " +
                                                    std::to_string(lane.slotCount.load()) +
                                                    " RPC slots busy until the deadline");
    }
    const std::uint32_t index = lane.freeSlots.back();
    lane.freeSlots.pop_back();
    return SlotLease(this, index);
}

Result<SlotLease> RpcSession::acquireBulkSlot(Opcode opcode, std::uint64_t bytes, Deadline deadline)
{
    std::unique_lock lock(m_freeMutex);
    std::uint32_t index = kNoSlot;
    const bool ready = waitUntil(m_freeChanged, lock, deadline, [&] {
        if (m_disconnected.load(std::memory_order_acquire)) {
            return true;
        }
        index = pickBulkSlotLocked(bytes);
        return index != kNoSlot;
    });
    if (index != kNoSlot) {
        return SlotLease(this, index);
    }
    if (m_disconnected.load(std::memory_order_acquire)) {
        lock.unlock();
        return disconnectedStatus();
    }
    (void)ready;
    return Status(Errc::resource_exhausted,
                  std::string(protocol::opcodeName(opcode)) + " to " + m_uri + ": all " +
                      std::to_string(m_negotiated.slotCount * connections()) +
                      " RPC slots busy until the deadline");
}

std::uint32_t RpcSession::pickBulkSlotLocked(std::uint64_t bytes) noexcept
{
    const std::uint32_t lanes = std::min(m_connectionsInUse.load(std::memory_order_relaxed),
                                         m_laneCount.load(std::memory_order_acquire));
    // The connection with the fewest bytes in flight; ties rotate, so equal RPCs alternate.
    const std::uint32_t start = m_nextLane.fetch_add(1, std::memory_order_relaxed);
    Lane *best = nullptr;
    for (std::uint32_t i = 0; i < lanes; ++i) {
        Lane &lane = m_lanes[(start + i) % lanes];
        if (!lane.ready || lane.freeSlots.empty() || lane.lost.load(std::memory_order_acquire)) {
            continue;
        }
        if (best == nullptr || lane.bytesInFlight < best->bytesInFlight) {
            best = &lane;
        }
    }
    if (best == nullptr) {
        return kNoSlot;
    }
    const std::uint32_t index = best->freeSlots.back();
    best->freeSlots.pop_back();
    best->bytesInFlight += bytes;
    slotAt(index).laneBytes = bytes;
    return index;
}

bool RpcSession::bulkSlotFreeLocked() const noexcept
{
    const std::uint32_t lanes = std::min(m_connectionsInUse.load(std::memory_order_relaxed),
                                         m_laneCount.load(std::memory_order_acquire));
    for (std::uint32_t i = 0; i < lanes; ++i) {
        const Lane &lane = m_lanes[i];
        if (lane.ready && !lane.freeSlots.empty() && !lane.lost.load(std::memory_order_acquire)) {
            return true;
        }
    }
    return false;
}

std::uint32_t RpcSession::tryAcquireSlot(std::uint64_t bytes) noexcept
{
    std::lock_guard lock(m_freeMutex);
    const std::uint32_t index = pickBulkSlotLocked(bytes);
    if (index == kNoSlot) {
        m_slotWanted = m_slotWaiter != nullptr;
    }
    return index;
}

void RpcSession::releaseSlot(std::uint32_t index) noexcept
{
    void (*wake)(void *) noexcept = nullptr;
    void *context = nullptr;
    {
        std::lock_guard lock(m_freeMutex);
        Lane &lane = laneOf(index);
        Slot &slot = slotAt(index);
        lane.freeSlots.push_back(index);
        lane.bytesInFlight -= slot.laneBytes;
        slot.laneBytes = 0;
        if (std::exchange(m_slotWanted, false) && m_slotWaiter != nullptr) {
            wake = m_slotWaiter;
            context = m_slotWaiterContext;
            ++m_wakesRunning;
        }
    }
    // All: a control call waits for the first connection's slots, a bulk one for any.
    m_freeChanged.notify_all();
    if (wake != nullptr) {
        wake(context);
        {
            std::lock_guard lock(m_freeMutex);
            --m_wakesRunning;
        }
        m_freeChanged.notify_all();
    }
}

bool RpcSession::armSlotWaiter() noexcept
{
    std::lock_guard lock(m_freeMutex);
    if (bulkSlotFreeLocked()) {
        return true;
    }
    m_slotWanted = m_slotWaiter != nullptr;
    return false;
}

void RpcSession::setSlotWaiter(void (*wake)(void *context) noexcept, void *context)
{
    std::unique_lock lock(m_freeMutex);
    m_slotWaiter = wake;
    m_slotWaiterContext = context;
    m_slotWanted = false;
    m_freeChanged.wait(lock, [&] { return m_wakesRunning == 0; });
}

Result<protocol::Message> RpcSession::exchange(std::uint32_t index, const protocol::Body &body,
                                               std::string_view jobId, Deadline deadline)
{
    Slot &slot = slotAt(index);
    Lane &lane = laneOf(index);
    // Only the owner changes xid, so reading it unlocked is fine; the next xid of this slot is
    // one generation up, so a late reply to an earlier call here can never match.
    const std::uint64_t xid = slot.xid + m_xidStride;
    // Connect is framed as version 1 (any target reads it); the rest as agreed at connect.
    const protocol::Message request{xid, jobId, body,
                                    std::holds_alternative<protocol::ConnectRequest>(body)
                                        ? protocol::kMinVersion
                                        : m_negotiated.version};
    const Opcode opcode = request.opcode();
    const std::string_view name = protocol::opcodeName(opcode);
    auto size = protocol::encode(
        request,
        std::span(slot.sendBuffer)
            .first(std::min<std::size_t>(slot.sendBuffer.size(), m_negotiated.maxMessageBytes)));
    if (!size.ok()) {
        return size.status().withContext(std::string(name) + " request");
    }
    {
        std::lock_guard lock(slot.mutex);
        slot.xid = xid;
        slot.state = Slot::State::waiting;
        slot.replyLength = 0;
        // Checked under the slot lock: onDisconnected sets the flag before it visits the slots,
        // so either it sees `waiting` here or this sees the flag.
        if (lane.lost.load(std::memory_order_acquire)) {
            slot.state = Slot::State::idle;
            return lostStatus(lane);
        }
    }
    if (Status sent = lane.connection->send(std::span(slot.sendBuffer).first(*size), deadline);
        !sent.ok()) {
        std::lock_guard lock(slot.mutex);
        slot.state = Slot::State::idle;
        return sent.withContext(std::string(name) + " to " + m_uri);
    }
    m_rpcsSent.fetch_add(1, std::memory_order_relaxed);

    std::unique_lock lock(slot.mutex);
    waitUntil(slot.changed, lock, deadline, [&] { return slot.state != Slot::State::waiting; });
    const Slot::State state = std::exchange(slot.state, Slot::State::idle);
    const std::size_t replyLength = slot.replyLength;
    lock.unlock();
    // From here on the I/O thread leaves the slot alone (state idle), so the caller reads the
    // reply buffer without the lock until its lease returns the slot.
    switch (state) {
    case Slot::State::waiting:
        m_timeouts.fetch_add(1, std::memory_order_relaxed);
        return Status(Errc::timeout, std::string(name) + " to " + m_uri +
                                         ": no reply within the deadline (xid " +
                                         std::to_string(xid) + ")");
    case Slot::State::failed: return lostStatus(lane).withContext(name);
    case Slot::State::idle: return Status(Errc::internal, "slot idle while a call waited");
    case Slot::State::replied: break;
    }

    auto reply = protocol::decode(std::span<const std::byte>(slot.replyBuffer).first(replyLength));
    if (!reply.ok()) {
        return reply.status().withContext(std::string(name) + " reply from " + m_uri);
    }
    if (reply->opcode() != opcode) {
        return Status(Errc::protocol_error,
                      std::string(name) + " to " + m_uri + ": answered by a " +
                          std::string(protocol::opcodeName(reply->opcode())) + " reply");
    }
    // A reply has its request's version: an older client could not read another.
    if (reply->version != request.version) {
        return Status(Errc::protocol_error,
                      std::string(name) + " to " + m_uri + ": reply framed as version " +
                          std::to_string(reply->version) + ", the request as " +
                          std::to_string(request.version));
    }
    if (const auto *error = std::get_if<protocol::ErrorReply>(&reply->body)) {
        m_errorReplies.fetch_add(1, std::memory_order_relaxed);
        return Status(error->code, std::string(name) + ": " + std::string(error->message));
    }
    return reply;
}

Status RpcSession::ping(std::string_view jobId, Deadline deadline)
{
    auto reply = call(protocol::PingRequest{}, jobId, deadline);
    return reply.ok() ? Status{} : reply.status();
}

Result<std::uint32_t> RpcSession::read(std::uint64_t handle, std::uint64_t offset,
                                       std::uint32_t pageCount, std::uint16_t lastPageBytes,
                                       std::span<const Segment> destination, bool checksums,
                                       std::string_view jobId, Deadline deadline)
{
    return bulk(Opcode::read, handle, offset, pageCount, lastPageBytes, destination, checksums,
                jobId, deadline);
}

Result<std::uint32_t> RpcSession::write(std::uint64_t handle, std::uint64_t offset,
                                        std::uint32_t pageCount, std::uint16_t lastPageBytes,
                                        std::span<const Segment> source, bool checksums,
                                        std::string_view jobId, Deadline deadline)
{
    return bulk(Opcode::write, handle, offset, pageCount, lastPageBytes, source, checksums, jobId,
                deadline);
}

Result<std::uint64_t> RpcSession::checkBulk(Opcode opcode, std::uint64_t handle,
                                            std::uint64_t offset, std::uint32_t pageCount,
                                            std::uint16_t lastPageBytes,
                                            std::span<const Segment> segments, bool checksums) const
{
    const auto where = [&] {
        return std::string(protocol::opcodeName(opcode)) + " handle " + std::to_string(handle) +
               " offset " + std::to_string(offset);
    };
    if (pageCount == 0 || lastPageBytes == 0 || lastPageBytes > protocol::kPageSize ||
        offset % protocol::kPageSize != 0) {
        return Status(Errc::invalid_argument,
                      where() +
                          ": needs a page-aligned offset, 1 or more pages and a last page "
                          "of 1.." +
                          std::to_string(protocol::kPageSize) + " bytes");
    }
    const std::uint64_t bytes = std::uint64_t{pageCount - 1} * protocol::kPageSize + lastPageBytes;
    if (bytes > m_negotiated.maxBulkBytes) {
        return Status(Errc::out_of_range, where() + ": " + std::to_string(bytes) +
                                              " bytes exceed the negotiated bulk maximum " +
                                              std::to_string(m_negotiated.maxBulkBytes));
    }
    if (checksums && (m_negotiated.features & protocol::kFeatureChecksums) == 0) {
        return Status(Errc::failed_precondition,
                      where() + ": checksums asked for but not negotiated with " + m_uri);
    }
    // Only the segments the transfer reaches count (the caller's buffers may be longer).
    std::uint64_t available = 0;
    std::size_t needed = 0;
    while (needed < segments.size() && available < bytes) {
        available += segments[needed++].length;
    }
    if (needed > transport::kMaxBulkSegments || available < bytes) {
        return Status(Errc::invalid_argument,
                      where() + ": " + std::to_string(needed) + " segments of " +
                          std::to_string(available) + " bytes for a transfer of " +
                          std::to_string(bytes) + " (at most " +
                          std::to_string(transport::kMaxBulkSegments) + " segments)");
    }
    return bytes;
}

Status RpcSession::submitRead(std::uint64_t handle, std::uint64_t offset, std::uint32_t pageCount,
                              std::uint16_t lastPageBytes, std::span<const Segment> destination,
                              bool checksums, std::string_view jobId, Deadline deadline,
                              BulkCallback done)
{
    return submitBulk(Opcode::read, handle, offset, pageCount, lastPageBytes, destination,
                      checksums, jobId, deadline, done);
}

Status RpcSession::submitWrite(std::uint64_t handle, std::uint64_t offset, std::uint32_t pageCount,
                               std::uint16_t lastPageBytes, std::span<const Segment> source,
                               bool checksums, std::string_view jobId, Deadline deadline,
                               BulkCallback done)
{
    return submitBulk(Opcode::write, handle, offset, pageCount, lastPageBytes, source, checksums,
                      jobId, deadline, done);
}

Status RpcSession::submitBulk(Opcode opcode, std::uint64_t handle, std::uint64_t offset,
                              std::uint32_t pageCount, std::uint16_t lastPageBytes,
                              std::span<const Segment> segments, bool checksums,
                              std::string_view jobId, Deadline deadline, BulkCallback done)
{
    auto bytes = checkBulk(opcode, handle, offset, pageCount, lastPageBytes, segments, checksums);
    if (!bytes.ok()) {
        return bytes.status();
    }
    // A connection lost between the pick and the start had nothing of this RPC yet: another
    // one takes it (each lost connection at most once, so the loop ends).
    for (std::uint32_t attempt = 0;; ++attempt) {
        if (m_disconnected.load(std::memory_order_acquire)) {
            return disconnectedStatus();
        }
        const std::uint32_t index = tryAcquireSlot(*bytes);
        if (index == kNoSlot) {
            return Status(Errc::resource_exhausted,
                          std::string(protocol::opcodeName(opcode)) + " to " + m_uri + ": all " +
                              std::to_string(m_negotiated.slotCount * connections()) +
                              " RPC slots busy");
        }
        Status started = startBulk(index, opcode, handle, offset, pageCount, lastPageBytes, *bytes,
                                   segments, checksums, jobId, deadline, done);
        if (!started.ok()) {
            const bool laneLost = laneOf(index).lost.load(std::memory_order_acquire);
            releaseSlot(index);
            if (laneLost && attempt < kMaxConnections) {
                continue;
            }
            return started;
        }
        // Never waits for a send credit: the submitter may be an I/O thread (a completion).
        sendAsync(index, false);
        return {};
    }
}

Status RpcSession::startBulk(std::uint32_t index, Opcode opcode, std::uint64_t handle,
                             std::uint64_t offset, std::uint32_t pageCount,
                             std::uint16_t lastPageBytes, std::uint64_t bytes,
                             std::span<const Segment> segments, bool checksums,
                             std::string_view jobId, Deadline deadline, BulkCallback done)
{
    const bool isRead = opcode == Opcode::read;
    Slot &slot = slotAt(index);
    Lane &lane = laneOf(index);
    // Expose exactly the transfer: the caller's buffers may be longer (a whole last page).
    slot.segments.clear();
    std::uint64_t remaining = bytes;
    for (const Segment &segment : segments) {
        if (remaining == 0) {
            break;
        }
        const std::uint64_t take = std::min<std::uint64_t>(segment.length, remaining);
        if (take > 0) {
            slot.segments.push_back({segment.address, take, segment.region});
        }
        remaining -= take;
    }
    const std::span<std::uint32_t> crcs = std::span(slot.crcs).first(pageCount);
    if (!isRead && checksums) {
        pageCrcs(slot.segments, bytes, crcs);
    }
    const auto where = [&] {
        return std::string(protocol::opcodeName(opcode)) + " handle " + std::to_string(handle) +
               " offset " + std::to_string(offset);
    };
    // A checksummed read's data is summed by the transport as it arrives, while in cache, where
    // it can (tcp); otherwise (verbs: the NIC writes it) the reply's check reads it back.
    const bool summed = isRead && checksums && lane.arrivalSums.load(std::memory_order_relaxed);
    const transport::ArrivalSums sums{slot.crcs.data(), &slot.summedBytes,
                                      static_cast<std::uint32_t>(protocol::kPageSize)};
    auto descriptor = summed ? lane.connection->exposeBulkSummed(slot.segments, sums)
                             : lane.connection->exposeBulk(slot.segments,
                                                           isRead ? transport::BulkAccess::putInto
                                                                  : transport::BulkAccess::getFrom);
    slot.summedOnArrival = summed && descriptor.ok();
    if (summed && descriptor.status().code() == Errc::unimplemented) {
        lane.arrivalSums.store(false, std::memory_order_relaxed);
        descriptor = lane.connection->exposeBulk(slot.segments, transport::BulkAccess::putInto);
    }
    if (!descriptor.ok()) {
        return descriptor.status().withContext(where());
    }
    protocol::BulkIo io;
    io.handle = handle;
    io.offset = offset;
    io.pageCount = pageCount;
    io.lastPageBytes = lastPageBytes;
    io.flags = checksums ? protocol::kBulkChecksums : 0;
    io.descriptor = protocol::OpaqueBytes{descriptor->view()};
    // Only the owner changes xid; the next xid of this slot is one generation up, so a late
    // reply to an earlier RPC here never matches.
    const std::uint64_t xid = slot.xid + m_xidStride;
    const protocol::Message request{
        xid, jobId,
        isRead ? protocol::Body{protocol::ReadRequest{io}}
               : protocol::Body{protocol::WriteRequest{io, checksums ? protocol::Crc32List(crcs)
                                                                     : protocol::Crc32List{}}},
        m_negotiated.version};
    auto size = protocol::encode(
        request,
        std::span(slot.sendBuffer)
            .first(std::min<std::size_t>(slot.sendBuffer.size(), m_negotiated.maxMessageBytes)));
    if (!size.ok()) {
        lane.connection->unexposeBulk(*descriptor);
        return size.status().withContext(where() + " request");
    }
    {
        std::lock_guard lock(slot.mutex);
        // Checked under the slot lock: onDisconnected sets the flag before it visits the slots,
        // so either it sees `waiting` here or this sees the flag.
        if (lane.lost.load(std::memory_order_acquire)) {
            lane.connection->unexposeBulk(*descriptor);
            return lostStatus(lane);
        }
        slot.xid = xid;
        slot.async = true;
        slot.sendPending = true; // until sendAsync has sent it
        slot.deadline = deadline;
        slot.sendLength = *size;
        slot.opcode = opcode;
        slot.handle = handle;
        slot.offset = offset;
        slot.bytes = bytes;
        slot.checksums = checksums;
        slot.descriptor = *descriptor;
        slot.callback = done;
        slot.replyLength = 0;
        slot.state = Slot::State::waiting;
    }
    // Pairs with the fence in timerLoop: either the timer's scan sees this slot waiting or this
    // sees the timer's "nothing armed" and arms it.
    std::atomic_thread_fence(std::memory_order_seq_cst);
    armTimer(deadline);
    return {};
}

void RpcSession::sendAsync(std::uint32_t index, bool sendWait) noexcept
{
    Slot &slot = slotAt(index);
    Lane &lane = laneOf(index);
    // sendPending keeps the deadline and disconnect paths off this slot while the buffer is
    // being copied out, so nobody can free and reuse it under the send.
    Status sent = lane.connection->send(std::span(slot.sendBuffer).first(slot.sendLength),
                                        sendWait ? slot.deadline : transport::noWait());
    Status failure;
    std::span<const std::byte> reply;
    {
        std::lock_guard lock(slot.mutex);
        if (!sent.ok() && sent.code() == Errc::resource_exhausted && !sendWait &&
            !lane.lost.load(std::memory_order_acquire)) {
            // The send queue is full: the timer thread sends it, waiting for a credit.
            {
                std::lock_guard timer(m_timerMutex);
                m_deferredSends.push_back(index);
            }
            m_timerWake.notify_one();
            return;
        }
        slot.sendPending = false;
        if (sent.ok()) {
            m_rpcsSent.fetch_add(1, std::memory_order_relaxed);
            if (slot.state == Slot::State::replied) {
                // The reply beat this thread back here; onMessage left it in the reply buffer.
                reply = std::span<const std::byte>(slot.replyBuffer).first(slot.replyLength);
            } else if (slot.state == Slot::State::waiting &&
                       lane.lost.load(std::memory_order_acquire)) {
                // A disconnect that ran during the send skipped this slot.
                failure = Status(Errc::unavailable, "lost");
            } else {
                return; // the reply, the timer or a disconnect completes it
            }
        } else {
            failure =
                sent.withContext(std::string(protocol::opcodeName(slot.opcode)) + " to " + m_uri);
        }
        slot.state = Slot::State::idle;
    }
    if (failure.code() == Errc::unavailable) {
        failure = lostStatus(lane).withContext(protocol::opcodeName(slot.opcode));
    }
    completeAsync(index, reply, failure);
}

Result<std::uint32_t> RpcSession::decodeBulkReply(Slot &slot, std::span<const std::byte> message)
{
    const Opcode opcode = slot.opcode;
    const auto where = [&] {
        return std::string(protocol::opcodeName(opcode)) + " handle " +
               std::to_string(slot.handle) + " offset " + std::to_string(slot.offset);
    };
    auto reply = protocol::decode(message);
    if (!reply.ok()) {
        return reply.status().withContext(std::string(protocol::opcodeName(opcode)) +
                                          " reply from " + m_uri);
    }
    if (reply->opcode() != opcode) {
        return Status(Errc::protocol_error, std::string(protocol::opcodeName(opcode)) + " to " +
                                                m_uri + ": answered by a " +
                                                std::string(protocol::opcodeName(reply->opcode())) +
                                                " reply");
    }
    if (reply->version != m_negotiated.version) {
        return Status(Errc::protocol_error, where() + ": reply framed as version " +
                                                std::to_string(reply->version) + ", agreed " +
                                                std::to_string(m_negotiated.version));
    }
    if (const auto *error = std::get_if<protocol::ErrorReply>(&reply->body)) {
        m_errorReplies.fetch_add(1, std::memory_order_relaxed);
        return Status(error->code, std::string(protocol::opcodeName(opcode)) + ": " +
                                       std::string(error->message));
    }
    const std::uint64_t bytes = slot.bytes;
    if (opcode == Opcode::write) {
        const auto *written = std::get_if<protocol::WriteReply>(&reply->body);
        if (written == nullptr) {
            return unexpectedReply(opcode);
        }
        if (written->bytesWritten > bytes) {
            return Status(Errc::protocol_error, where() + ": the target wrote " +
                                                    std::to_string(written->bytesWritten) + " of " +
                                                    std::to_string(bytes) + " bytes");
        }
        return written->bytesWritten;
    }
    const auto *read = std::get_if<protocol::ReadReply>(&reply->body);
    if (read == nullptr) {
        return unexpectedReply(opcode);
    }
    if (read->bytesRead > bytes) {
        return Status(Errc::protocol_error, where() + ": the target sent " +
                                                std::to_string(read->bytesRead) + " of " +
                                                std::to_string(bytes) + " bytes asked for");
    }
    if (slot.checksums) {
        if ((read->flags & protocol::kBulkChecksums) == 0 ||
            read->pageCrcs.size() != pagesOf(read->bytesRead)) {
            return Status(Errc::protocol_error, where() + ": the reply carries no page checksums");
        }
        // The data was put before the reply was delivered, so it is in place now (and summed,
        // when the transport summed it as it arrived).
        const std::span<std::uint32_t> received = std::span(slot.crcs).first(read->pageCrcs.size());
        if (!slot.summedOnArrival) {
            pageCrcs(slot.segments, read->bytesRead, received);
        } else if (slot.summedBytes != read->bytesRead) {
            m_checksumErrors.fetch_add(1, std::memory_order_relaxed);
            return Status(Errc::io_error, where() + ": " + std::to_string(slot.summedBytes) +
                                              " bytes of data arrived for a reply of " +
                                              std::to_string(read->bytesRead));
        }
        for (std::size_t page = 0; page < received.size(); ++page) {
            if (received[page] != read->pageCrcs[page]) {
                m_checksumErrors.fetch_add(1, std::memory_order_relaxed);
                return Status(Errc::io_error, where() + ": page " + std::to_string(page) +
                                                  " checksum mismatch (target " +
                                                  hex(read->pageCrcs[page]) + ", received " +
                                                  hex(received[page]) + ")");
            }
        }
    }
    return read->bytesRead;
}

void RpcSession::completeAsync(std::uint32_t index, std::span<const std::byte> reply,
                               Status failure) noexcept
{
    Slot &slot = slotAt(index);
    const Result<std::uint32_t> result =
        failure.ok() ? decodeBulkReply(slot, reply) : Result<std::uint32_t>(failure);
    // The transfer is over (reply), or the transport drops what still arrives for it.
    laneOf(index).connection->unexposeBulk(slot.descriptor);
    const BulkCallback callback = slot.callback;
    slot.callback = {};
    slot.async = false;
    // Freed before the callback, so a completion that submits the next RPC finds a slot.
    releaseSlot(index);
    const std::uint32_t bytes = result.ok() ? *result : 0;
    callback.function(callback.context, callback.tag, result.status(), bytes);
}

// ---- the timer thread ------------------------------------------------------------------------

void RpcSession::armTimer(Deadline deadline) noexcept
{
    const Deadline::rep when = deadline.time_since_epoch().count();
    if (when >= m_timerNext.load(std::memory_order_seq_cst)) {
        return; // the timer wakes earlier anyway (the common case: no lock)
    }
    {
        std::lock_guard lock(m_timerMutex);
        if (when >= m_timerNext.load(std::memory_order_relaxed)) {
            return;
        }
        m_timerNext.store(when, std::memory_order_seq_cst);
    }
    m_timerWake.notify_one();
}

Deadline RpcSession::expireAsync(Deadline now) noexcept
{
    Deadline earliest = Deadline::max();
    const std::uint32_t lanes = m_laneCount.load(std::memory_order_acquire);
    for (std::uint32_t lane = 0; lane < lanes; ++lane) {
        const std::uint32_t count = m_lanes[lane].slotCount.load(std::memory_order_acquire);
        for (std::uint32_t slotIndex = 0; slotIndex < count; ++slotIndex) {
            const std::uint32_t i = lane * m_slotsPerLane + slotIndex;
            Slot &slot = slotAt(i);
            std::uint64_t xid = 0;
            {
                std::lock_guard lock(slot.mutex);
                if (!slot.async || slot.state != Slot::State::waiting || slot.sendPending) {
                    continue;
                }
                if (slot.deadline > now) {
                    earliest = std::min(earliest, slot.deadline);
                    continue;
                }
                slot.state = Slot::State::idle; // a late reply finds it idle and is dropped
                xid = slot.xid;
            }
            m_timeouts.fetch_add(1, std::memory_order_relaxed);
            completeAsync(i, {},
                          Status(Errc::timeout, std::string(protocol::opcodeName(slot.opcode)) +
                                                    " to " + m_uri +
                                                    ": no reply within the deadline (xid " +
                                                    std::to_string(xid) + ")"));
        }
    }
    return earliest;
}

void RpcSession::timerLoop() noexcept
{
    std::vector<std::uint32_t> sends;
    sends.reserve(m_deferredSends.capacity());
    std::unique_lock lock(m_timerMutex);
    while (!m_timerStop) {
        if (!m_deferredSends.empty()) {
            sends.swap(m_deferredSends);
            lock.unlock();
            for (const std::uint32_t index : sends) {
                sendAsync(index, true);
            }
            sends.clear();
            lock.lock();
            continue;
        }
        const Deadline next{Deadline::duration(m_timerNext.load(std::memory_order_relaxed))};
        const Deadline now = Clock::now();
        if (now >= next) {
            m_timerNext.store(Deadline::max().time_since_epoch().count(),
                              std::memory_order_seq_cst);
            lock.unlock();
            std::atomic_thread_fence(std::memory_order_seq_cst);
            const Deadline earliest = expireAsync(now);
            lock.lock();
            if (earliest.time_since_epoch().count() < m_timerNext.load(std::memory_order_relaxed)) {
                m_timerNext.store(earliest.time_since_epoch().count(), std::memory_order_seq_cst);
            }
            continue;
        }
        if (next == Deadline::max()) {
            m_timerWake.wait(lock);
        } else {
            m_timerWake.wait_until(lock, next);
        }
    }
}

// ---- synchronous bulk ------------------------------------------------------------------------

namespace {

// What a synchronous read/write waits on: on the caller's stack, one per call.
struct BulkWaiter {
    std::mutex mutex;
    std::condition_variable done;
    bool finished = false;
    Status status;
    std::uint32_t bytes = 0;

    static void complete(void *context, std::uint64_t, const Status &status,
                         std::uint32_t bytes) noexcept
    {
        auto &waiter = *static_cast<BulkWaiter *>(context);
        std::lock_guard lock(waiter.mutex);
        waiter.status = status;
        waiter.bytes = bytes;
        waiter.finished = true;
        waiter.done.notify_one();
    }
};

} // namespace

Result<std::uint32_t> RpcSession::bulk(Opcode opcode, std::uint64_t handle, std::uint64_t offset,
                                       std::uint32_t pageCount, std::uint16_t lastPageBytes,
                                       std::span<const Segment> segments, bool checksums,
                                       std::string_view jobId, Deadline deadline)
{
    auto bytes = checkBulk(opcode, handle, offset, pageCount, lastPageBytes, segments, checksums);
    if (!bytes.ok()) {
        return bytes.status();
    }
    BulkWaiter waiter;
    Result<SlotLease> lease = Status(Errc::internal, "no slot");
    // As submitBulk: a connection lost before the start had nothing of this RPC yet.
    for (std::uint32_t attempt = 0;; ++attempt) {
        lease = acquireBulkSlot(opcode, *bytes, deadline);
        if (!lease.ok()) {
            return lease.status();
        }
        Status started =
            startBulk(lease->index(), opcode, handle, offset, pageCount, lastPageBytes, *bytes,
                      segments, checksums, jobId, deadline, {&BulkWaiter::complete, &waiter, 0});
        if (started.ok()) {
            break;
        }
        const bool laneLost = laneOf(lease->index()).lost.load(std::memory_order_acquire);
        lease = Status(Errc::internal, "released"); // returns the slot
        if (!laneLost || attempt >= kMaxConnections) {
            return started;
        }
    }
    const std::uint32_t index = lease->detach(); // the RPC owns the slot now; completing frees it
    sendAsync(index, true);
    // The reply, the deadline (the timer thread) or a disconnect completes it.
    std::unique_lock lock(waiter.mutex);
    waiter.done.wait(lock, [&] { return waiter.finished; });
    if (!waiter.status.ok()) {
        return waiter.status;
    }
    return waiter.bytes;
}

void RpcSession::setBlockingCallbackHandler(BlockingCallbackHandler handler)
{
    std::lock_guard lock(m_callbackMutex);
    m_callbackHandler.swap(handler);
}

// ---- I/O thread ------------------------------------------------------------------------------

void RpcSession::onMessage(transport::Connection &connection,
                           std::span<const std::byte> message) noexcept
{
    auto header = protocol::decodeHeader(message);
    if (!header.ok()) {
        m_unsolicited.fetch_add(1, std::memory_order_relaxed);
        m_options.log(LogLevel::warning,
                      "dropping a message from " + m_uri + ": " + header.status().toString());
        return;
    }
    if (!header->isReply()) {
        onTargetRequest(connection, message);
        return;
    }
    // The first lane's slots are published after m_slotsPerLane and m_xidStride are set.
    if (m_lanes[0].slotCount.load(std::memory_order_acquire) == 0) {
        dropUnsolicited(header->xid, "no call has been made yet");
        return;
    }
    const std::uint64_t global = header->xid % m_xidStride;
    const auto laneIndex = static_cast<std::uint32_t>(global / m_slotsPerLane);
    const auto slotIndex = static_cast<std::uint32_t>(global % m_slotsPerLane);
    if (slotIndex >= m_lanes[laneIndex].slotCount.load(std::memory_order_acquire)) {
        dropUnsolicited(header->xid, "no slot of this session has that xid");
        return;
    }
    const std::uint32_t index = laneIndex * m_slotsPerLane + slotIndex;
    Slot &slot = slotAt(index);
    {
        std::unique_lock lock(slot.mutex);
        if (slot.async && slot.state == Slot::State::waiting && slot.xid == header->xid) {
            m_replies.fetch_add(1, std::memory_order_relaxed);
            if (slot.sendPending && message.size() <= slot.replyBuffer.size()) {
                // Its sender has not come back from send(): it completes the RPC.
                std::memcpy(slot.replyBuffer.data(), message.data(), message.size());
                slot.replyLength = message.size();
                slot.state = Slot::State::replied;
                return;
            }
            if (!slot.sendPending) {
                slot.state = Slot::State::idle;
                lock.unlock();
                // Decoded where it lies: the message is valid during this call.
                completeAsync(index, message, {});
                return;
            }
        }
        if (!slot.async && slot.state == Slot::State::waiting && slot.xid == header->xid &&
            message.size() <= slot.replyBuffer.size()) {
            std::memcpy(slot.replyBuffer.data(), message.data(), message.size());
            slot.replyLength = message.size();
            slot.state = Slot::State::replied;
            slot.changed.notify_one();
            m_replies.fetch_add(1, std::memory_order_relaxed);
            return;
        }
    }
    dropUnsolicited(header->xid, "no call waits for it (a late reply after a timeout?)");
}

void RpcSession::dropUnsolicited(std::uint64_t xid, std::string_view why) noexcept
{
    m_unsolicited.fetch_add(1, std::memory_order_relaxed);
    m_options.log(LogLevel::warning, "dropping a reply from " + m_uri + " with xid " +
                                         std::to_string(xid) + ": " + std::string(why));
}

void RpcSession::onTargetRequest(transport::Connection &connection,
                                 std::span<const std::byte> message) noexcept
{
    auto request = protocol::decode(message);
    if (!request.ok()) {
        m_options.log(LogLevel::warning,
                      "dropping a request from " + m_uri + ": " + request.status().toString());
        return;
    }
    if (request->version != m_negotiated.version) {
        m_options.log(LogLevel::warning, "dropping a request from " + m_uri +
                                             ": framed as version " +
                                             std::to_string(request->version) + ", agreed " +
                                             std::to_string(m_negotiated.version));
        return;
    }
    protocol::Message reply{request->xid, {}, protocol::BlockingCallbackReply{}, request->version};
    if (const auto *callback = std::get_if<protocol::BlockingCallbackRequest>(&request->body)) {
        m_callbacks.fetch_add(1, std::memory_order_relaxed);
        std::lock_guard lock(m_callbackMutex);
        if (m_callbackHandler) {
            m_callbackHandler(callback->lockHandle, callback->conflictingMode);
        } else {
            reply.body = protocol::ErrorReply{Opcode::blocking_callback, Errc::failed_precondition,
                                              "no blocking callback handler is set"};
        }
    } else {
        reply.body = protocol::ErrorReply{request->opcode(), Errc::unimplemented,
                                          "the client serves only blocking callbacks"};
    }
    // Small and bounded: a header and at most a short error message.
    std::array<std::byte, 128> buffer{};
    auto size = protocol::encode(reply, buffer);
    Status sent = size.ok() ? connection.send(std::span(buffer).first(*size), transport::noWait())
                            : size.status();
    if (!sent.ok()) {
        m_options.log(LogLevel::warning, "could not answer " +
                                             std::string(protocol::opcodeName(request->opcode())) +
                                             " xid " + std::to_string(request->xid) + " from " +
                                             m_uri + ": " + sent.toString());
    }
}

void RpcSession::onDisconnected(transport::Connection &connection, const Status &reason) noexcept
{
    Lane &lane = *static_cast<Lane *>(connection.context());
    const bool first = lane.index == 0;
    {
        std::lock_guard lock(m_stateMutex);
        lane.lostReason = reason.toString();
    }
    // Before the slots are visited: a sender checks the flag under the slot lock.
    lane.lost.store(true, std::memory_order_release);
    if (first) {
        m_disconnected.store(true, std::memory_order_release);
    }
    const std::uint32_t count = lane.slotCount.load(std::memory_order_acquire);
    for (std::uint32_t slotIndex = 0; slotIndex < count; ++slotIndex) {
        const std::uint32_t i = lane.index * m_slotsPerLane + slotIndex;
        Slot &slot = slotAt(i);
        std::unique_lock lock(slot.mutex);
        if (slot.state != Slot::State::waiting) {
            continue;
        }
        if (!slot.async) {
            slot.state = Slot::State::failed;
            slot.changed.notify_one();
        } else if (!slot.sendPending) { // a sender still in send() fails it itself
            slot.state = Slot::State::idle;
            lock.unlock();
            completeAsync(i, {}, lostStatus(lane).withContext(protocol::opcodeName(slot.opcode)));
        }
    }
    {
        std::lock_guard lock(m_freeMutex);
    }
    m_freeChanged.notify_all();
    m_options.log(reason.code() == Errc::cancelled ? LogLevel::info : LogLevel::warning,
                  lostStatus(lane).message() +
                      (!first && connected() ? "; the session goes on without it" : ""));
    std::vector<transport::ConnectionPtr> others;
    {
        std::lock_guard lock(m_stateMutex);
        if (first) {
            // The session (the target's export) is gone: its other connections with it.
            const std::uint32_t lanes = m_laneCount.load(std::memory_order_acquire);
            for (std::uint32_t i = 1; i < lanes; ++i) {
                if (m_lanes[i].connection && !m_lanes[i].released) {
                    others.push_back(m_lanes[i].connection);
                }
            }
        }
        lane.released = true;
        m_gone.notify_all();
    }
    // Our own references keep them valid; the destructor waits for their onDisconnected too.
    for (const auto &other : others) {
        other->close(); // starts teardown only: never waits
    }
}

} // namespace lutra::client
