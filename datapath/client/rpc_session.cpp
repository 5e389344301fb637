#include "client/rpc_session.h"

#include "protocol/codec.h"
#include "protocol/crc32c.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>

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
    std::condition_variable changed;
    std::uint64_t xid = 0; // index + n × slot count: xid % slots finds the slot
    State state = State::idle;
    std::size_t replyLength = 0;
    std::vector<std::byte> sendBuffer;
    std::vector<std::byte> replyBuffer;
    std::vector<std::uint32_t> crcs; // one per page of the largest bulk
    std::vector<Segment> segments;   // the caller's segments cut to the transfer length
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
    : m_uri(std::move(uri)), m_options(std::move(options))
{
}

RpcSession::~RpcSession()
{
    if (m_connection) {
        // The transport calls this handler until onDisconnected has run: wait for it.
        m_connection->close();
        std::unique_lock lock(m_stateMutex);
        m_gone.wait(lock, [&] { return m_handlerReleased; });
    }
}

Result<std::unique_ptr<RpcSession>> RpcSession::connect(transport::Transport &transport,
                                                        std::string_view uri, Options options)
{
    const std::string where = "connect " + std::string(uri);
    std::unique_ptr<RpcSession> session(new RpcSession(std::string(uri), std::move(options)));
    auto connection = transport.connect(uri, *session, session.get());
    if (!connection.ok()) {
        return connection.status().withContext(where);
    }
    session->m_connection = std::move(*connection);

    const transport::Limits &limits = session->m_connection->limits();
    if (limits.queueDepth == 0 || limits.maxMessageSize < protocol::kMinMessageSize) {
        return Status(Errc::failed_precondition,
                      where + ": the transport negotiated " + std::to_string(limits.queueDepth) +
                          " slots of " + std::to_string(limits.maxMessageSize) +
                          " bytes; the protocol needs at least 1 of " +
                          std::to_string(protocol::kMinMessageSize));
    }
    // Everything a call needs is allocated here, once: buffers as large as the transport allows
    // (the Connect exchange can only lower the limits).
    const std::uint32_t count = limits.queueDepth;
    const std::uint64_t maxPages =
        std::min<std::uint64_t>(limits.maxBulkSize, protocol::kMaxBulkBytes) / protocol::kPageSize;
    session->m_slots = std::make_unique<Slot[]>(count);
    session->m_freeSlots.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        Slot &slot = session->m_slots[i];
        slot.xid = i;
        slot.sendBuffer.resize(limits.maxMessageSize);
        slot.replyBuffer.resize(limits.maxMessageSize);
        slot.crcs.resize(maxPages);
        slot.segments.reserve(transport::kMaxBulkSegments);
        // Popped from the back: slot 0 first.
        session->m_freeSlots.push_back(count - 1 - i);
    }
    session->m_negotiated.slotCount = count;
    session->m_slotCount.store(count, std::memory_order_release);

    if (Status status = session->negotiate(); !status.ok()) {
        return status.withContext(where);
    }
    return session;
}

Status RpcSession::negotiate()
{
    const transport::Limits &limits = m_connection->limits();
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
    std::lock_guard lock(m_stateMutex);
    return {Errc::unavailable, "connection to " + m_uri + " lost: " + m_disconnectReason};
}

Status RpcSession::unexpectedReply(Opcode opcode) const
{
    return {Errc::protocol_error, std::string(protocol::opcodeName(opcode)) + " to " + m_uri +
                                      ": the reply has the wrong body type"};
}

Result<SlotLease> RpcSession::acquireSlot(Opcode opcode, Deadline deadline)
{
    std::unique_lock lock(m_freeMutex);
    const bool ready = waitUntil(m_freeChanged, lock, deadline, [&] {
        return !m_freeSlots.empty() || m_disconnected.load(std::memory_order_acquire);
    });
    if (m_disconnected.load(std::memory_order_acquire)) {
        lock.unlock();
        return disconnectedStatus();
    }
    if (!ready) {
        return Status(Errc::resource_exhausted, std::string(protocol::opcodeName(opcode)) + " to " +
                                                    m_uri + ": all " +
                                                    std::to_string(m_negotiated.slotCount) +
                                                    " RPC slots busy until the deadline");
    }
    const std::uint32_t index = m_freeSlots.back();
    m_freeSlots.pop_back();
    return SlotLease(this, index);
}

void RpcSession::releaseSlot(std::uint32_t index) noexcept
{
    {
        std::lock_guard lock(m_freeMutex);
        m_freeSlots.push_back(index);
    }
    m_freeChanged.notify_one();
}

Result<protocol::Message> RpcSession::exchange(std::uint32_t index, const protocol::Body &body,
                                               std::string_view jobId, Deadline deadline)
{
    Slot &slot = m_slots[index];
    // Only the owner changes xid, so reading it unlocked is fine; the next xid of this slot is
    // one generation up, so a late reply to an earlier call here can never match.
    const std::uint64_t xid = slot.xid + m_negotiated.slotCount;
    const protocol::Message request{xid, jobId, body};
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
        if (m_disconnected.load(std::memory_order_acquire)) {
            slot.state = Slot::State::idle;
            return disconnectedStatus();
        }
    }
    if (Status sent = m_connection->send(std::span(slot.sendBuffer).first(*size), deadline);
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
    case Slot::State::failed: return disconnectedStatus().withContext(name);
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

Result<std::uint32_t> RpcSession::bulk(Opcode opcode, std::uint64_t handle, std::uint64_t offset,
                                       std::uint32_t pageCount, std::uint16_t lastPageBytes,
                                       std::span<const Segment> segments, bool checksums,
                                       std::string_view jobId, Deadline deadline)
{
    const bool isRead = opcode == Opcode::read;
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

    auto lease = acquireSlot(opcode, deadline);
    if (!lease.ok()) {
        return lease.status();
    }
    Slot &slot = m_slots[lease->index()];
    // Expose exactly the transfer: the caller's buffers may be longer (a whole last page).
    slot.segments.clear();
    std::uint64_t remaining = bytes;
    for (const Segment &segment : segments.first(needed)) {
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

    auto descriptor = m_connection->exposeBulk(
        slot.segments, isRead ? transport::BulkAccess::putInto : transport::BulkAccess::getFrom);
    if (!descriptor.ok()) {
        return descriptor.status().withContext(where());
    }
    // Unexposed on every path once the call is over: after the reply (the transfer is done), a
    // timeout or a disconnect. The transport drops data that arrives later for this descriptor.
    struct Unexpose {
        transport::Connection &connection;
        const transport::BulkDescriptor &descriptor;
        ~Unexpose() { connection.unexposeBulk(descriptor); }
    } unexpose{*m_connection, *descriptor};

    protocol::BulkIo io;
    io.handle = handle;
    io.offset = offset;
    io.pageCount = pageCount;
    io.lastPageBytes = lastPageBytes;
    io.flags = checksums ? protocol::kBulkChecksums : 0;
    io.descriptor = protocol::OpaqueBytes{descriptor->view()};
    const protocol::Body body =
        isRead ? protocol::Body{protocol::ReadRequest{io}}
               : protocol::Body{protocol::WriteRequest{io, checksums ? protocol::Crc32List(crcs)
                                                                     : protocol::Crc32List{}}};
    auto reply = exchange(lease->index(), body, jobId, deadline);
    if (!reply.ok()) {
        return reply.status();
    }

    if (!isRead) {
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
    if (checksums) {
        if ((read->flags & protocol::kBulkChecksums) == 0 ||
            read->pageCrcs.size() != pagesOf(read->bytesRead)) {
            return Status(Errc::protocol_error, where() + ": the reply carries no page checksums");
        }
        // The data was put before the reply was delivered, so it is in place now.
        const std::span<std::uint32_t> received = crcs.first(read->pageCrcs.size());
        pageCrcs(slot.segments, read->bytesRead, received);
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
    const std::uint32_t count = m_slotCount.load(std::memory_order_acquire);
    if (count == 0) {
        dropUnsolicited(header->xid, "no call has been made yet");
        return;
    }
    Slot &slot = m_slots[header->xid % count];
    {
        std::lock_guard lock(slot.mutex);
        if (slot.state == Slot::State::waiting && slot.xid == header->xid &&
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
    protocol::Message reply{request->xid, {}, protocol::BlockingCallbackReply{}};
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
    (void)connection;
    {
        std::lock_guard lock(m_stateMutex);
        m_disconnectReason = reason.toString();
    }
    m_disconnected.store(true, std::memory_order_release);
    const std::uint32_t count = m_slotCount.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < count; ++i) {
        Slot &slot = m_slots[i];
        std::lock_guard lock(slot.mutex);
        if (slot.state == Slot::State::waiting) {
            slot.state = Slot::State::failed;
            slot.changed.notify_one();
        }
    }
    {
        std::lock_guard lock(m_freeMutex);
    }
    m_freeChanged.notify_all();
    m_options.log(reason.code() == Errc::cancelled ? LogLevel::info : LogLevel::warning,
                  "connection to " + m_uri + " lost: " + reason.toString());
    std::lock_guard lock(m_stateMutex);
    m_handlerReleased = true;
    m_gone.notify_all();
}

} // namespace lutra::client
