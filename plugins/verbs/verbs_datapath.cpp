// The verbs plugin's hot path: SEND with credits, exposure, bulk by RDMA WRITE/READ, and the
// completion queue. Every buffer and work request array was sized by create()/establish();
// nothing here allocates in steady state (error texts and region-0 registrations aside) and
// nothing throws.
#include "transport/kit/limits.h"
#include "verbs_internal.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace lutra::transport::verbs {

namespace {

std::uint64_t addressOf(const void *pointer) noexcept
{
    return reinterpret_cast<std::uintptr_t>(pointer);
}

const char *kindName(bool isGet) noexcept
{
    return isGet ? "RDMA READ" : "RDMA WRITE";
}

} // namespace

// ---- Caller side: messages

std::uint64_t VerbsConnection::reserveLocked(WrKind kind, std::uint32_t index,
                                             bool lastOfOp) noexcept
{
    assert(m_postedSeq - m_completedSeq < m_ring.size() && "send queue accounting is off");
    const std::uint64_t seq = m_postedSeq++;
    m_ring[seq % m_ring.size()] = {kind, lastOfOp, index};
    return seq;
}

bool VerbsConnection::postLocked(ibv_send_wr &first) noexcept
{
    ibv_send_wr *bad = nullptr;
    if (const int error = ibv_post_send(m_qp.get(), &first, &bad); error != 0) {
        m_state = State::closing;
        m_connected.store(false);
        requestTeardown(
            {Errc::unavailable, "ibv_post_send to " + m_peer + ": " + errnoText(error)});
        return false;
    }
    return true;
}

// One SEND of header + payload: inline when it fits the device's max_inline_data (no copy, no
// buffer), else copied into a registered send slot. Signalled one in m_signalInterval.
bool VerbsConnection::postMessageLocked(MessageType type,
                                        std::span<const std::byte> payload) noexcept
{
    const bool control = type == MessageType::credits;
    MessageHeader header;
    header.type = type;
    header.returnedData = static_cast<std::uint16_t>(m_owedData);
    header.returnedControl = static_cast<std::uint16_t>(m_owedControl);
    m_owedData = 0;
    m_owedControl = 0;
    std::array<std::byte, kHeaderBytes> headerBytes;
    encode(header, headerBytes.data());

    std::array<ibv_sge, 2> sges{};
    ibv_send_wr wr{};
    std::uint32_t slot = kNoSlot;
    const std::size_t bytes = kHeaderBytes + payload.size();
    if (bytes <= m_maxInline && (payload.empty() || m_maxSge >= 2)) {
        sges[0] = {addressOf(headerBytes.data()), kHeaderBytes, 0};
        wr.num_sge = 1;
        if (!payload.empty()) {
            sges[1] = {addressOf(payload.data()), static_cast<std::uint32_t>(payload.size()), 0};
            wr.num_sge = 2;
        }
        wr.send_flags = IBV_SEND_INLINE;
    } else {
        auto &freeSlots = control ? m_freeControlSlots : m_freeSendSlots;
        slot = freeSlots.back();
        freeSlots.pop_back();
        std::byte *buffer = &m_sendBuffers[std::size_t{slot} * m_slotBytes];
        std::memcpy(buffer, headerBytes.data(), kHeaderBytes);
        if (!payload.empty()) {
            std::memcpy(buffer + kHeaderBytes, payload.data(), payload.size());
        }
        sges[0] = {addressOf(buffer), static_cast<std::uint32_t>(bytes), m_sendMr->lkey};
        wr.num_sge = 1;
    }
    wr.opcode = IBV_WR_SEND;
    wr.sg_list = sges.data();
    if (++m_unsignaled >= m_signalInterval) {
        m_unsignaled = 0;
        wr.send_flags |= IBV_SEND_SIGNALED;
    }
    wr.wr_id = reserveLocked(control ? WrKind::control : WrKind::message, slot, false);
    ++m_messageWrs;
    return postLocked(wr);
}

Status VerbsConnection::send(std::span<const std::byte> message, Deadline deadline) noexcept
{
    std::unique_lock lock(m_mutex);
    if (m_state != State::established) {
        return closedStatusLocked();
    }
    if (auto status = kit::checkMessageSize(message.size(), m_limits); !status.ok()) {
        return status;
    }
    const bool inlined =
        kHeaderBytes + message.size() <= m_maxInline && (message.empty() || m_maxSge >= 2);
    const auto ready = [&] {
        return m_dataCredits > 0 && m_messageWrs < m_messageWrCapacity &&
               (inlined || !m_freeSendSlots.empty());
    };
    if (auto status = waitForRoomLocked(lock, deadline, "send", ready, ", no credit from the peer");
        !status.ok()) {
        return status;
    }
    --m_dataCredits;
    if (!postMessageLocked(MessageType::message, message)) {
        return closedStatusLocked();
    }
    return {};
}

// A credit-only message when enough data credits are owed and a control credit is at hand;
// otherwise it is retried at the next completion or arrival.
void VerbsConnection::maybeReturnCreditsLocked() noexcept
{
    if (m_state != State::established || m_owedData < m_creditThreshold || m_controlCredits == 0 ||
        m_messageWrs >= m_messageWrCapacity ||
        (m_maxInline < kHeaderBytes && m_freeControlSlots.empty())) {
        return;
    }
    --m_controlCredits;
    (void)postMessageLocked(MessageType::credits, {});
}

// ---- Caller side: bulk

// Local keys for `segments`, merged where contiguous. Memory in no region is registered per
// contiguous run into `transient`.
Result<std::uint32_t> VerbsConnection::resolve(std::span<const Segment> segments, Piece *out,
                                               TransientSet &transient) noexcept
{
    std::uint32_t count = 0;
    const auto append = [&](const Segment &segment, const Keys &keys) {
        const std::uint64_t address = addressOf(segment.address);
        if (count > 0) {
            Piece &last = out[count - 1];
            if (last.address + last.length == address && last.lkey == keys.lkey &&
                last.rkey == keys.rkey &&
                std::uint64_t{last.length} + segment.length <= UINT32_MAX) {
                last.length += static_cast<std::uint32_t>(segment.length);
                return;
            }
        }
        out[count++] = {address, static_cast<std::uint32_t>(segment.length), keys.lkey, keys.rkey};
    };
    for (std::size_t i = 0; i < segments.size();) {
        const Segment &segment = segments[i];
        if (segment.length == 0) {
            ++i;
            continue;
        }
        if (segment.length > kMaxBulkSize) {
            return Status(Errc::out_of_range, "a bulk segment larger than 1 GiB");
        }
        if (segment.region != 0) {
            const auto keys = m_engine->regions().find(segment.region, segment.address,
                                                       segment.length, m_device.index);
            if (!keys) {
                return Status(Errc::invalid_argument,
                              "bulk segment of " + std::to_string(segment.length) +
                                  " bytes is not inside registered region " +
                                  std::to_string(segment.region));
            }
            append(segment, *keys);
            ++i;
            continue;
        }
        // A run of contiguous unregistered segments: one registration for all of it.
        auto *start = static_cast<std::byte *>(segment.address);
        std::size_t runBytes = 0;
        std::size_t end = i;
        while (end < segments.size() && segments[end].region == 0 &&
               (segments[end].length == 0 || segments[end].address == start + runBytes) &&
               runBytes + segments[end].length <= kMaxBulkSize) {
            runBytes += segments[end].length;
            ++end;
        }
        auto registration = registerTransient(m_device.pd.get(), start, runBytes);
        if (!registration) {
            return registration.status();
        }
        const Keys keys{(*registration)->lkey, (*registration)->rkey};
        transient.items[transient.count++] = std::move(registration).value();
        for (; i < end; ++i) {
            if (segments[i].length > 0) {
                append(segments[i], keys);
            }
        }
    }
    return count;
}

Result<BulkDescriptor> VerbsConnection::exposeBulk(std::span<const Segment> segments,
                                                   BulkAccess access) noexcept
{
    const auto bytes = kit::bulkBytes(segments);
    if (!bytes.ok()) {
        return bytes.status();
    }
    if (access != BulkAccess::putInto && access != BulkAccess::getFrom) {
        return Status(Errc::invalid_argument, "unknown bulk access");
    }
    const std::uint64_t total = *bytes;
    std::uint32_t slot = 0;
    {
        std::lock_guard lock(m_mutex);
        // A new generation, never 0 ("not exposed").
        const auto acquired = takeExposureSlotLocked(m_exposures, total);
        if (!acquired.ok()) {
            return acquired.status();
        }
        slot = *acquired;
        m_exposures[slot].value.phase = ExposurePhase::preparing;
    }
    Exposure &exposure = m_exposures[slot].value;
    const std::uint32_t generation = m_exposures[slot].generation;
    exposure.transient.clear();
    auto count = resolve(segments, exposure.pieces, exposure.transient);

    std::lock_guard lock(m_mutex);
    if (!count || m_state != State::established) {
        m_exposures.release(slot);
        return count ? closedStatusLocked() : count.status();
    }
    std::byte *entry = &m_table[std::size_t{slot} * kExposureEntryBytes];
    for (std::uint32_t i = 0; i < *count; ++i) {
        const Piece &piece = exposure.pieces[i];
        encode(RemoteExtent{piece.address, piece.rkey, piece.length},
               entry + sizeof(ExposureHeader) + i * sizeof(RemoteExtent));
    }
    ExposureHeader header;
    header.generation = generation;
    header.access = static_cast<std::uint8_t>(access);
    header.count = static_cast<std::uint16_t>(*count);
    header.total = total;
    encode(header, entry);
    exposure.phase = ExposurePhase::exposed;

    WireDescriptor wire;
    wire.access = static_cast<std::uint8_t>(access);
    wire.count = header.count;
    wire.generation = generation;
    wire.entryAddress = addressOf(entry);
    wire.entryRkey = m_tableMr->rkey;
    wire.slot = slot;
    wire.total = total;
    return kit::toDescriptor(wire);
}

void VerbsConnection::unexposeBulk(const BulkDescriptor &descriptor) noexcept
{
    const auto wire = kit::peekDescriptor<WireDescriptor>(descriptor);
    if (!wire) {
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        Exposure *exposure = m_exposures.find(wire->slot, wire->generation);
        if (exposure == nullptr || exposure->phase != ExposurePhase::exposed) {
            return;
        }
        // A peer that reads the entry from now on sees generation 0 and fails its operation.
        encode(std::uint32_t{0}, &m_table[std::size_t{wire->slot} * kExposureEntryBytes]);
        exposure->phase = ExposurePhase::releasing;
    }
    // Unregistered memory loses its keys now: a late RDMA into it fails at the peer instead of
    // landing in memory the host has reused.
    m_exposures[wire->slot].value.transient.clear();
    std::lock_guard lock(m_mutex);
    m_exposures.release(wire->slot);
}

Result<WireDescriptor> VerbsConnection::decodeDescriptor(const BulkDescriptor &descriptor,
                                                         BulkAccess expected) const noexcept
{
    auto wire = kit::readDescriptor<WireDescriptor>(descriptor, expected, "verbs");
    if (wire.ok() && wire->count > kMaxBulkSegments) {
        return Status(Errc::invalid_argument, "not a verbs bulk descriptor");
    }
    return wire;
}

// Takes an op slot, resolves the local keys, then reads the peer's extent list (one signalled
// RDMA READ); the data WRs follow from the I/O thread once the list is checked.
Status VerbsConnection::startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                                  const FileRange *file, std::uint64_t tag, Deadline deadline,
                                  bool isGet) noexcept
{
    (void)file; // no bulkPutFile: the SDK's default answers unimplemented (see README.md)
    auto wire = decodeDescriptor(remote, isGet ? BulkAccess::getFrom : BulkAccess::putInto);
    if (!wire) {
        return wire.status();
    }
    const auto bytes = kit::bulkBytes(local);
    if (!bytes.ok()) {
        return bytes.status();
    }
    const std::uint64_t total = *bytes;
    if (auto status = kit::checkAgainstExposed(total, wire->total); !status.ok()) {
        return status;
    }
    std::uint32_t index = 0;
    {
        std::unique_lock lock(m_mutex);
        if (m_state != State::established) {
            return closedStatusLocked();
        }
        if (auto status = kit::checkBulkSize(total, m_limits); !status.ok()) {
            return status;
        }
        if (auto status =
                waitForRoomLocked(lock, deadline, "bulk", [&] { return !m_freeOps.empty(); });
            !status.ok()) {
            return status;
        }
        index = m_freeOps.back();
        m_freeOps.pop_back();
        m_ops[index].phase = OpPhase::preparing;
    }
    Op &op = m_ops[index];
    op.transient.clear(); // the previous operation's registrations
    auto count = resolve(local, op.local, op.transient);

    std::lock_guard lock(m_mutex);
    if (!count || m_state != State::established) {
        op.phase = OpPhase::free;
        m_freeOps.push_back(index);
        m_space.notify_all();
        return count ? closedStatusLocked() : count.status();
    }
    op.isGet = isGet;
    op.tag = tag;
    op.total = total;
    op.remote = *wire;
    op.localCount = *count;
    op.phase = OpPhase::readingList;

    ibv_sge sge{addressOf(&m_lists[std::size_t{index} * kExposureEntryBytes]),
                static_cast<std::uint32_t>(exposureReadBytes(wire->count)), m_listsMr->lkey};
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_RDMA_READ;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.rdma.remote_addr = wire->entryAddress;
    wr.wr.rdma.rkey = wire->entryRkey;
    wr.wr_id = reserveLocked(WrKind::listRead, index, false);
    m_unsignaled = 0;
    if (!postLocked(wr)) {
        op.phase = OpPhase::free;
        m_freeOps.push_back(index);
        return closedStatusLocked();
    }
    return {};
}

// ---- I/O thread: completions

void VerbsConnection::finishOpLocked(std::uint32_t opIndex, Errc code) noexcept
{
    Op &op = m_ops[opIndex];
    m_done.push_back({op.tag, code});
    op.phase = OpPhase::free;
    m_freeOps.push_back(opIndex);
}

// The peer's extent list arrived: still exposed (generation), the same memory, well formed?
void VerbsConnection::checkListLocked(std::uint32_t opIndex) noexcept
{
    Op &op = m_ops[opIndex];
    if (op.phase != OpPhase::readingList) {
        return;
    }
    const std::byte *list = &m_lists[std::size_t{opIndex} * kExposureEntryBytes];
    const auto header = decode<ExposureHeader>(list);
    if (header.generation == 0 || header.generation != op.remote.generation ||
        header.access != op.remote.access || header.count != op.remote.count) {
        finishOpLocked(opIndex, Errc::not_found);
        return;
    }
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < header.count; ++i) {
        const auto extent =
            decode<RemoteExtent>(list + sizeof(ExposureHeader) + i * sizeof(RemoteExtent));
        if (extent.length == 0) {
            sum = UINT64_MAX;
            break;
        }
        sum += extent.length;
    }
    if (sum != header.total || header.total != op.remote.total) {
        finishOpLocked(opIndex, Errc::protocol_error);
        return;
    }
    op.localIndex = 0;
    op.localOffset = 0;
    op.remoteIndex = 0;
    op.remoteOffset = 0;
    op.remaining = op.total;
    if (op.remaining == 0) {
        finishOpLocked(opIndex, Errc::ok);
        return;
    }
    op.phase = OpPhase::queued;
    m_bulkQueue[(m_bulkHead + m_bulkCount) % m_bulkQueue.size()] = opIndex;
    ++m_bulkCount;
}

// Posts data WRs of queued ops while the bulk window has room: each WR covers (part of) one
// remote extent and gathers up to max_sge local pieces; chains of kBulkBatch, the last one
// signalled, and the last WR of each op signalled so its completion finishes the op.
void VerbsConnection::pumpBulkLocked() noexcept
{
    while (m_bulkCount > 0 && m_bulkWrs < kBulkWindow && m_state == State::established) {
        const std::uint32_t opIndex = m_bulkQueue[m_bulkHead];
        Op &op = m_ops[opIndex];
        const std::byte *extents =
            &m_lists[std::size_t{opIndex} * kExposureEntryBytes] + sizeof(ExposureHeader);
        const std::uint32_t room = std::min(kBulkBatch, kBulkWindow - m_bulkWrs);
        std::uint32_t built = 0;
        while (built < room && op.remaining > 0) {
            const auto extent =
                decode<RemoteExtent>(extents + op.remoteIndex * sizeof(RemoteExtent));
            const std::uint64_t extentLeft = extent.length - op.remoteOffset;
            ibv_sge *sges = &m_bulkSges[std::size_t{built} * m_maxSge];
            std::uint32_t sgeCount = 0;
            std::uint64_t bytes = 0;
            while (sgeCount < m_maxSge && bytes < extentLeft && op.remaining > 0) {
                const Piece &piece = op.local[op.localIndex];
                const std::uint64_t take =
                    std::min({piece.length - op.localOffset, extentLeft - bytes, op.remaining});
                sges[sgeCount++] = {piece.address + op.localOffset,
                                    static_cast<std::uint32_t>(take), piece.lkey};
                bytes += take;
                op.remaining -= take;
                op.localOffset += take;
                if (op.localOffset == piece.length) {
                    ++op.localIndex;
                    op.localOffset = 0;
                }
            }
            ibv_send_wr &wr = m_bulkWrList[built];
            wr = {};
            wr.opcode = op.isGet ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
            wr.sg_list = sges;
            wr.num_sge = static_cast<int>(sgeCount);
            wr.wr.rdma.remote_addr = extent.address + op.remoteOffset;
            wr.wr.rdma.rkey = extent.rkey;
            op.remoteOffset += bytes;
            if (op.remoteOffset == extent.length) {
                ++op.remoteIndex;
                op.remoteOffset = 0;
            }
            const bool last = op.remaining == 0;
            wr.send_flags = last ? IBV_SEND_SIGNALED : 0;
            wr.wr_id = reserveLocked(WrKind::bulkData, opIndex, last);
            if (built > 0) {
                m_bulkWrList[built - 1].next = &wr;
            }
            ++built;
        }
        m_bulkWrList[built - 1].send_flags |= IBV_SEND_SIGNALED; // reclaims the window
        m_unsignaled = 0;
        m_bulkWrs += built;
        if (op.remaining == 0) {
            op.phase = OpPhase::posted;
            m_bulkHead = (m_bulkHead + 1) % m_bulkQueue.size();
            --m_bulkCount;
        }
        if (!postLocked(m_bulkWrList[0])) {
            return;
        }
    }
}

void VerbsConnection::fail(Status reason) noexcept
{
    teardown(reason);
}

void VerbsConnection::onCompletionEvent() noexcept
{
    m_cq.eventTaken(kAckEventsEvery);
    if (m_tornDown) {
        return;
    }
    drain();
    if (m_tornDown) {
        return;
    }
    // Re-armed, then polled once more: a completion that slipped in between raises no event.
    ibv_req_notify_cq(m_cq.get(), 0);
    drain();
}

void VerbsConnection::drain() noexcept
{
    // Keeps this object alive even if a handler drops the host's last reference.
    const auto self = shared_from_this();
    for (;;) {
        const int n = ibv_poll_cq(m_cq.get(), kPollBatch, m_completions.data());
        if (n < 0) {
            fail({Errc::io_error, "ibv_poll_cq failed on the connection to " + m_peer});
            return;
        }
        for (int i = 0; i < n; ++i) {
            const ibv_wc &wc = m_completions[static_cast<std::size_t>(i)];
            if ((wc.wr_id & kReceiveBit) != 0) {
                onReceive(wc);
            } else {
                onSendCompletion(wc);
            }
            if (m_tornDown) {
                return;
            }
        }
        if (n < static_cast<int>(kPollBatch)) {
            break;
        }
    }
    repostReceives();
}

void VerbsConnection::onReceive(const ibv_wc &wc) noexcept
{
    if (wc.status != IBV_WC_SUCCESS) {
        fail({Errc::unavailable,
              "receive from " + m_peer + " failed: " + ibv_wc_status_str(wc.status)});
        return;
    }
    const auto index = static_cast<std::uint32_t>(wc.wr_id & ~kReceiveBit);
    std::byte *buffer = &m_receiveBuffers[std::size_t{index} * m_slotBytes];
    if (wc.byte_len < kHeaderBytes) {
        fail({Errc::protocol_error, "message without a header from " + m_peer});
        return;
    }
    const auto header = decode<MessageHeader>(buffer);
    const std::size_t payload = wc.byte_len - kHeaderBytes;
    m_arrivedData += header.returnedData;
    m_arrivedControl += header.returnedControl;
    switch (header.type) {
    case MessageType::message:
        if (payload > m_limits.maxMessageSize) {
            fail({Errc::protocol_error,
                  "oversize message from " + m_peer + ": " + std::to_string(payload) + " bytes"});
            return;
        }
        m_handler.onMessage(*this, {buffer + kHeaderBytes, payload});
        m_repost.push_back(index);
        ++m_repostData;
        break;
    case MessageType::credits:
        if (payload != 0) {
            fail({Errc::protocol_error, "credit message with a payload from " + m_peer});
            return;
        }
        m_repost.push_back(index);
        ++m_repostControl;
        break;
    default:
        fail({Errc::protocol_error, "unknown message type " +
                                        std::to_string(static_cast<int>(header.type)) + " from " +
                                        m_peer});
        return;
    }
    if (m_repost.size() >= kRepostBatch) {
        repostReceives();
    }
}

// Posts the consumed receive buffers again (one chained ibv_post_recv), then owes the peer
// their credits, and only then applies the credits the peer returned: a sender woken by them
// thus always carries our returns for the peer's credit messages.
void VerbsConnection::repostReceives() noexcept
{
    if (m_tornDown) {
        return;
    }
    const std::size_t count = m_repost.size();
    if (count > 0) {
        for (std::size_t i = 0; i < count; ++i) {
            const std::uint32_t index = m_repost[i];
            m_receiveSges[i] = {addressOf(&m_receiveBuffers[std::size_t{index} * m_slotBytes]),
                                static_cast<std::uint32_t>(m_slotBytes), m_receiveMr->lkey};
            m_receiveWrs[i] = {};
            m_receiveWrs[i].wr_id = kReceiveBit | index;
            m_receiveWrs[i].sg_list = &m_receiveSges[i];
            m_receiveWrs[i].num_sge = 1;
            m_receiveWrs[i].next = i + 1 < count ? &m_receiveWrs[i + 1] : nullptr;
        }
        m_repost.clear();
        ibv_recv_wr *bad = nullptr;
        if (const int error = ibv_post_recv(m_qp.get(), m_receiveWrs.data(), &bad); error != 0) {
            fail({Errc::io_error, "ibv_post_recv: " + errnoText(error)});
            return;
        }
    }
    bool overflow = false;
    bool arrived = false;
    {
        std::lock_guard lock(m_mutex);
        m_owedData += m_repostData;
        m_owedControl += m_repostControl;
        arrived = m_arrivedData > 0 || m_arrivedControl > 0;
        m_dataCredits += m_arrivedData;
        m_controlCredits += m_arrivedControl;
        overflow = m_dataCredits > m_limits.queueDepth || m_controlCredits > kControlCredits;
        if (!overflow) {
            maybeReturnCreditsLocked();
        }
    }
    m_repostData = 0;
    m_repostControl = 0;
    m_arrivedData = 0;
    m_arrivedControl = 0;
    if (overflow) {
        fail({Errc::protocol_error, m_peer + " returned more credits than it was given"});
        return;
    }
    if (arrived) {
        m_space.notify_all();
    }
}

void VerbsConnection::onSendCompletion(const ibv_wc &wc) noexcept
{
    if (wc.status != IBV_WC_SUCCESS) {
        const char *what = "SEND";
        {
            std::lock_guard lock(m_mutex);
            if (wc.wr_id < m_postedSeq) {
                const RingEntry &entry = m_ring[wc.wr_id % m_ring.size()];
                what = entry.kind == WrKind::listRead   ? "RDMA READ of the extent list"
                       : entry.kind == WrKind::bulkData ? kindName(m_ops[entry.index].isGet)
                                                        : "SEND";
            }
        }
        fail({Errc::unavailable,
              std::string(what) + " to " + m_peer + " failed: " + ibv_wc_status_str(wc.status)});
        return;
    }
    {
        std::lock_guard lock(m_mutex);
        // Completions come in posting order: this one covers every unsignalled WR before it.
        for (std::uint64_t seq = m_completedSeq; seq <= wc.wr_id && seq < m_postedSeq; ++seq) {
            const RingEntry &entry = m_ring[seq % m_ring.size()];
            switch (entry.kind) {
            case WrKind::message:
                --m_messageWrs;
                if (entry.index != kNoSlot) {
                    m_freeSendSlots.push_back(entry.index);
                }
                break;
            case WrKind::control:
                --m_messageWrs;
                if (entry.index != kNoSlot) {
                    m_freeControlSlots.push_back(entry.index);
                }
                break;
            case WrKind::listRead: checkListLocked(entry.index); break;
            case WrKind::bulkData:
                --m_bulkWrs;
                if (entry.lastOfOp) {
                    finishOpLocked(entry.index, Errc::ok);
                }
                break;
            }
        }
        m_completedSeq = std::max(m_completedSeq, wc.wr_id + 1);
        pumpBulkLocked();
        maybeReturnCreditsLocked();
        m_reporting.swap(m_done);
    }
    m_space.notify_all();
    reportDone();
}

void VerbsConnection::reportDone() noexcept
{
    for (const auto &done : m_reporting) {
        if (done.code == Errc::ok) {
            m_handler.onBulkDone(*this, done.tag, Status{});
        } else if (done.code == Errc::not_found) {
            m_handler.onBulkDone(*this, done.tag,
                                 {Errc::not_found, "the peer no longer exposes this memory"});
        } else {
            m_handler.onBulkDone(*this, done.tag,
                                 {done.code, "the peer's bulk extent list is malformed"});
        }
    }
    m_reporting.clear();
}

} // namespace lutra::transport::verbs
