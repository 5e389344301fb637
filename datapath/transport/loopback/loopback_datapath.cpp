// The loopback plugin's hot path: send, expose, bulk, and the delivery of each end's inbox on its
// I/O thread. Every buffer was sized by establish(); nothing here allocates in steady state
// (error texts aside) and nothing throws.
#include "transport/kit/limits.h"
#include "transport/kit/wire_codec.h"
#include "transport/loopback/loopback_internal.h"

#include <algorithm>
#include <cstring>

namespace lutra::transport::loopback {

namespace {

// Copies `bytes` bytes from the pieces of `from` to the pieces of `to`.
void copyAcross(const Segment *from, std::uint32_t fromCount, const Segment *to,
                std::uint32_t toCount, std::uint64_t bytes) noexcept
{
    std::uint32_t i = 0;
    std::uint32_t j = 0;
    std::size_t fromOffset = 0;
    std::size_t toOffset = 0;
    while (bytes > 0 && i < fromCount && j < toCount) {
        const std::size_t piece =
            std::min<std::uint64_t>({from[i].length - fromOffset, to[j].length - toOffset, bytes});
        if (piece > 0) {
            std::memcpy(static_cast<std::byte *>(to[j].address) + toOffset,
                        static_cast<const std::byte *>(from[i].address) + fromOffset, piece);
        }
        bytes -= piece;
        fromOffset += piece;
        toOffset += piece;
        if (fromOffset == from[i].length) {
            ++i;
            fromOffset = 0;
        }
        if (toOffset == to[j].length) {
            ++j;
            toOffset = 0;
        }
    }
}

} // namespace

// ---- Caller side

void LoopbackConnection::deliverLocked(const Event &event) noexcept
{
    if (m_state == State::closed || m_inbox.empty()) {
        return; // torn down (or never established): the peer hears of it by peerGone
    }
    m_inbox[(m_inboxHead + m_inboxCount) % m_inbox.size()] = event;
    ++m_inboxCount;
    if (!m_readyQueued) {
        m_readyQueued = true;
        m_thread.queueReady(shared_from_this());
    }
}

Status LoopbackConnection::send(std::span<const std::byte> message, Deadline deadline) noexcept
{
    std::unique_lock lock(m_link->mutex);
    const auto taken = takeMessageSlotLocked(lock, message.size(), deadline, m_freeMessages);
    if (!taken.ok()) {
        return taken.status();
    }
    const std::uint32_t slot = *taken;
    if (!message.empty()) {
        std::memcpy(&m_messageBuffers[std::size_t{slot} * m_limits.maxMessageSize], message.data(),
                    message.size());
    }
    m_messageLength[slot] = static_cast<std::uint32_t>(message.size());
    m_peerEnd->deliverLocked({EventKind::message, Errc::ok, slot, 0});
    return {};
}

Result<BulkDescriptor> LoopbackConnection::exposeBulk(std::span<const Segment> segments,
                                                      BulkAccess access) noexcept
{
    const auto total = kit::bulkBytes(segments);
    if (!total.ok()) {
        return total.status();
    }
    std::lock_guard lock(m_link->mutex);
    const auto slot = takeExposureSlotLocked(m_exposures, *total);
    if (!slot.ok()) {
        return slot.status();
    }
    Exposure &exposure = m_exposures[*slot].value;
    exposure.access = access;
    exposure.count = static_cast<std::uint32_t>(segments.size());
    exposure.total = *total;
    std::copy(segments.begin(), segments.end(), exposure.segments);
    return kit::describeSlot<WireDescriptor::kFormat>(access, *slot, m_exposures[*slot].generation,
                                                      *total);
}

void LoopbackConnection::unexposeBulk(const BulkDescriptor &descriptor) noexcept
{
    const auto wire = kit::peekDescriptor<WireDescriptor>(descriptor);
    if (!wire) {
        return;
    }
    // Under the link's mutex: a copy into or out of this memory is over, none starts after.
    std::lock_guard lock(m_link->mutex);
    m_exposures.releaseIfCurrent(wire->slot, wire->generation);
}

Status LoopbackConnection::startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                                     const FileRange *file, std::uint64_t tag, Deadline deadline,
                                     bool isGet) noexcept
{
    (void)file; // no bulkPutFile: the SDK's default answers unimplemented
    auto wire = kit::readDescriptor<WireDescriptor>(
        remote, isGet ? BulkAccess::getFrom : BulkAccess::putInto, "loopback");
    if (!wire.ok()) {
        return wire.status();
    }
    const auto total = kit::bulkBytes(local);
    if (!total.ok()) {
        return total.status();
    }
    if (auto status = kit::checkAgainstExposed(*total, wire->length); !status.ok()) {
        return status;
    }
    std::unique_lock lock(m_link->mutex);
    const auto taken = takeOpSlotLocked(lock, *total, deadline, m_ops);
    if (!taken.ok()) {
        return taken.status();
    }
    const std::uint32_t slot = *taken;
    Op &op = m_ops[slot].value;
    op.isGet = isGet;
    op.count = static_cast<std::uint32_t>(local.size());
    op.total = *total;
    op.tag = tag;
    op.remote = *wire;
    std::copy(local.begin(), local.end(), op.local);
    m_peerEnd->deliverLocked(
        {isGet ? EventKind::get : EventKind::put, Errc::ok, slot, m_ops[slot].generation});
    return {};
}

// ---- I/O thread

void LoopbackConnection::serveBulkLocked(const Event &event) noexcept
{
    LoopbackConnection &peer = *m_peerEnd;
    const Op *op = peer.m_ops.find(event.slot, event.generation);
    if (op == nullptr) {
        return; // the peer was torn down: it failed the operation itself
    }
    const BulkAccess wanted = op->isGet ? BulkAccess::getFrom : BulkAccess::putInto;
    const Exposure *exposure = m_exposures.find(op->remote.slot, op->remote.generation);
    Errc code = Errc::ok;
    if (exposure == nullptr || exposure->access != wanted || op->total > exposure->total) {
        // Memory the host already took back (a timed-out request): nothing moves.
        m_engine->log(LogLevel::warning, "refusing a bulk " +
                                             std::string(op->isGet ? "get" : "put") + " of " +
                                             std::to_string(op->total) + " bytes from " + m_peer +
                                             " for a descriptor no longer exposed");
        code = Errc::not_found;
    } else if (op->isGet) {
        copyAcross(exposure->segments, exposure->count, op->local, op->count, op->total);
    } else {
        copyAcross(op->local, op->count, exposure->segments, exposure->count, op->total);
    }
    peer.deliverLocked({EventKind::bulkDone, code, event.slot, event.generation});
}

void LoopbackConnection::onReady() noexcept
{
    // Hold a reference: a handler or teardown may drop the thread's one.
    const auto self = shared_from_this();
    std::unique_lock lock(m_link->mutex);
    m_readyQueued = false;
    // At most one inbox's worth per turn, so one busy connection does not starve the others.
    for (std::size_t budget = m_inbox.size(); budget > 0; --budget) {
        if (m_state != State::established || m_inboxCount == 0) {
            return;
        }
        const Event event = m_inbox[m_inboxHead];
        m_inboxHead = (m_inboxHead + 1) % m_inbox.size();
        --m_inboxCount;
        switch (event.kind) {
        case EventKind::accepted:
            lock.unlock();
            m_announced = true;
            m_engine->log(LogLevel::debug, "accepted " + m_peer);
            m_handler.onAccepted(self);
            lock.lock();
            break;
        case EventKind::message: {
            // The peer's slot stays taken until the handler returns: no copy on this side.
            const auto peer = m_peerEnd;
            const std::span<const std::byte> message(
                &peer->m_messageBuffers[std::size_t{event.slot} * m_limits.maxMessageSize],
                peer->m_messageLength[event.slot]);
            lock.unlock();
            m_handler.onMessage(*this, message);
            lock.lock();
            peer->m_freeMessages.push_back(event.slot);
            peer->m_space.notify_all();
            break;
        }
        case EventKind::put:
        case EventKind::get: serveBulkLocked(event); break;
        case EventKind::bulkDone: {
            const Op *op = m_ops.find(event.slot, event.generation);
            if (op == nullptr) {
                break;
            }
            const std::uint64_t tag = op->tag;
            m_ops.release(event.slot);
            m_space.notify_all();
            lock.unlock();
            if (event.code == Errc::ok) {
                m_handler.onBulkDone(*this, tag, Status{});
            } else {
                m_handler.onBulkDone(*this, tag,
                                     {event.code, "the peer no longer exposes this memory"});
            }
            lock.lock();
            break;
        }
        case EventKind::peerGone:
            lock.unlock();
            teardown({Errc::unavailable, "peer closed the connection"});
            return;
        }
    }
    if (m_inboxCount > 0 && m_state == State::established && !m_readyQueued) {
        m_readyQueued = true;
        m_thread.queueReady(shared_from_this());
    }
}

} // namespace lutra::transport::loopback
