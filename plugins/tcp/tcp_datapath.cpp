// The tcp plugin's hot path: framing, send/receive, bulk. Every buffer was sized by establish();
// nothing here allocates in steady state (error texts aside) and nothing throws.
#include "tcp_internal.h"
#include "transport/kit/limits.h"

#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lutra::transport::tcp {

namespace {

// Copies up to `room` iovecs describing `bytes` bytes of `source` starting `offset` bytes in.
std::size_t sliceIov(const iovec *source, std::uint32_t count, std::uint64_t offset,
                     std::uint64_t bytes, iovec *out, std::size_t room) noexcept
{
    std::size_t used = 0;
    for (std::uint32_t i = 0; i < count && bytes > 0 && used < room; ++i) {
        if (offset >= source[i].iov_len) {
            offset -= source[i].iov_len;
            continue;
        }
        const std::uint64_t length = std::min<std::uint64_t>(source[i].iov_len - offset, bytes);
        out[used].iov_base = static_cast<std::byte *>(source[i].iov_base) + offset;
        out[used].iov_len = length;
        ++used;
        bytes -= length;
        offset = 0;
    }
    return used;
}

bool wouldBlock(int error) noexcept
{
    return error == EAGAIN || error == EWOULDBLOCK;
}

} // namespace

// ---- Caller side: messages and bulk

void TcpConnection::wakeWriterLocked() noexcept
{
    // EPOLLOUT armed: the socket is full and its event resumes writing. Queued: the I/O thread
    // will look at this connection anyway.
    if (m_writeArmed || m_writeQueued || m_fd < 0) {
        return;
    }
    m_writeQueued = true;
    m_thread.queueWrite(shared_from_this());
}

void TcpConnection::setEpollOutLocked(bool on) noexcept
{
    if (m_writeArmed == on || m_fd < 0) {
        return;
    }
    m_thread.rewatch(m_fd, on ? EPOLLIN | EPOLLOUT : EPOLLIN, static_cast<Pollable *>(this));
    m_writeArmed = on;
}

bool TcpConnection::pushTxLocked(const FrameHeader &header, const iovec *payload,
                                 std::uint32_t count, std::uint64_t bytes, TxKind kind,
                                 std::uint32_t slot, const FileRange *file) noexcept
{
    if (m_txCount == m_tx.size()) {
        return false;
    }
    TxEntry &entry = m_tx[(m_txHead + m_txCount) % m_tx.size()];
    encode(header, entry.header.data());
    entry.payload = payload;
    entry.payloadCount = count;
    entry.payloadBytes = bytes;
    entry.sent = 0;
    entry.kind = kind;
    entry.slot = slot;
    entry.fileFd = file != nullptr ? file->fd : -1;
    entry.fileOffset = file != nullptr ? file->offset : 0;
    entry.fileEnd = false;
    entry.fileError = 0;
    entry.afterFilePut = false;
    ++m_txCount;
    wakeWriterLocked();
    return true;
}

Status TcpConnection::send(std::span<const std::byte> message, Deadline deadline) noexcept
{
    std::unique_lock lock(m_mutex);
    const auto slot = takeMessageSlotLocked(lock, message.size(), deadline, m_freeMessages);
    if (!slot.ok()) {
        return slot.status();
    }
    pushMessageLocked(message, *slot);
    return {};
}

void TcpConnection::pushMessageLocked(std::span<const std::byte> message,
                                      std::uint32_t slot) noexcept
{
    iovec &iov = m_messageIov[slot];
    if (!message.empty()) {
        std::memcpy(iov.iov_base, message.data(), message.size());
    }
    iov.iov_len = message.size();
    FrameHeader header;
    header.type = static_cast<std::uint8_t>(FrameType::message);
    header.length = message.size();
    pushTxLocked(header, &iov, 1, message.size(), TxKind::message, slot);
}

Result<BulkDescriptor> TcpConnection::exposeBulk(std::span<const Segment> segments,
                                                 BulkAccess access) noexcept
{
    return expose(segments, access, {});
}

Result<BulkDescriptor> TcpConnection::exposeBulkSummed(std::span<const Segment> segments,
                                                       const ArrivalSums &sums) noexcept
{
    if (sums.pageCrcs == nullptr || sums.pageBytes == 0 || sums.pageBytes > (1u << 30)) {
        return Status(Errc::invalid_argument,
                      "arrival sums need a crc array and a page size of 1 byte to 1 GiB");
    }
    return expose(segments, BulkAccess::putInto, sums);
}

Result<BulkDescriptor> TcpConnection::expose(std::span<const Segment> segments, BulkAccess access,
                                             const ArrivalSums &sums) noexcept
{
    const auto total = kit::bulkBytes(segments);
    if (!total.ok()) {
        return total.status();
    }
    std::lock_guard lock(m_mutex);
    const auto slot = takeExposureSlotLocked(m_exposures, *total);
    if (!slot.ok()) {
        return slot.status();
    }
    Exposure &exposure = m_exposures[*slot].value;
    exposure.access = access;
    exposure.count = static_cast<std::uint32_t>(segments.size());
    exposure.total = *total;
    exposure.sums = sums;
    if (sums.summedBytes != nullptr) {
        *sums.summedBytes = 0;
    }
    for (std::size_t i = 0; i < segments.size(); ++i) {
        exposure.iov[i] = {segments[i].address, segments[i].length};
    }
    return kit::describeSlot<WireDescriptor::kFormat>(access, *slot, m_exposures[*slot].generation,
                                                      *total);
}

void TcpConnection::unexposeBulk(const BulkDescriptor &descriptor) noexcept
{
    const auto wire = kit::peekDescriptor<WireDescriptor>(descriptor);
    if (!wire) {
        return;
    }
    std::lock_guard lock(m_mutex);
    m_exposures.releaseIfCurrent(wire->slot, wire->generation);
    // Waits for a receive into this memory in progress; the rest of its frame is skipped.
    std::lock_guard memory(m_rxMemoryMutex);
    if (m_rxExposureSlot == wire->slot && m_rxExposureGeneration == wire->generation) {
        m_rxRevoked = true;
    }
}

Status TcpConnection::startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                                const FileRange *file, std::uint64_t tag, Deadline deadline,
                                bool isGet) noexcept
{
    auto wire = kit::readDescriptor<WireDescriptor>(
        remote, isGet ? BulkAccess::getFrom : BulkAccess::putInto, "tcp");
    if (!wire.ok()) {
        return wire.status();
    }
    std::uint64_t total = 0;
    if (file != nullptr) {
        if (file->fd < 0 || file->length == 0) {
            return {Errc::invalid_argument,
                    "a file bulk put needs an open file and 1 byte or more"};
        }
        total = file->length;
    } else {
        auto bytes = kit::bulkBytes(local);
        if (!bytes.ok()) {
            return bytes.status();
        }
        total = *bytes;
    }
    if (auto status = kit::checkAgainstExposed(total, wire->length); !status.ok()) {
        return status;
    }
    std::unique_lock lock(m_mutex);
    const auto taken = takeOpSlotLocked(lock, total, deadline, m_ops);
    if (!taken.ok()) {
        return taken.status();
    }
    const std::uint32_t slot = *taken;
    Op &op = m_ops[slot].value;
    op.isGet = isGet;
    op.count = static_cast<std::uint32_t>(local.size()); // 0 for a file put
    op.total = total;
    op.tag = tag;
    for (std::size_t i = 0; i < local.size(); ++i) {
        op.iov[i] = {local[i].address, local[i].length};
    }
    FrameHeader header;
    header.cookie = cookieOf(wire->slot, wire->generation);
    if (isGet) {
        header.type = static_cast<std::uint8_t>(FrameType::getRequest);
        header.aux = static_cast<std::uint32_t>(total);
        header.tag = cookieOf(slot, m_ops[slot].generation);
        pushTxLocked(header, nullptr, 0, 0, TxKind::getRequest, slot);
    } else {
        header.type = static_cast<std::uint8_t>(FrameType::putData);
        header.length = total;
        pushTxLocked(header, op.iov, op.count, total, TxKind::put, slot, file);
    }
    return {};
}

Status TcpConnection::bulkPutFile(const BulkDescriptor &remote, const FileRange &file,
                                  std::uint64_t tag, Deadline deadline) noexcept
{
    return startBulk(remote, {}, &file, tag, deadline, false);
}

Status TcpConnection::bulkPutFileThenSend(const BulkDescriptor &remote, const FileRange &file,
                                          std::span<const std::byte> message, std::uint64_t tag,
                                          Deadline deadline) noexcept
{
    return startFilePut(remote, file, message, tag, deadline);
}

// The put and its message enter the ring together, so nothing comes between them: the I/O thread
// writes the message right after the file's last byte, in the same wake-up.
Status TcpConnection::startFilePut(const BulkDescriptor &remote, const FileRange &file,
                                   std::span<const std::byte> message, std::uint64_t tag,
                                   Deadline deadline) noexcept
{
    auto wire = kit::readDescriptor<WireDescriptor>(remote, BulkAccess::putInto, "tcp");
    if (!wire.ok()) {
        return wire.status();
    }
    if (file.fd < 0 || file.length == 0) {
        return {Errc::invalid_argument, "a file bulk put needs an open file and 1 byte or more"};
    }
    if (auto status = kit::checkAgainstExposed(file.length, wire->length); !status.ok()) {
        return status;
    }
    std::unique_lock lock(m_mutex);
    const auto messageSlot = takeMessageSlotLocked(lock, message.size(), deadline, m_freeMessages);
    if (!messageSlot.ok()) {
        return messageSlot.status();
    }
    const auto taken = takeOpSlotLocked(lock, file.length, deadline, m_ops);
    if (!taken.ok()) {
        m_freeMessages.push_back(*messageSlot);
        return taken.status();
    }
    const std::uint32_t slot = *taken;
    Op &op = m_ops[slot].value;
    op.isGet = false;
    op.count = 0;
    op.total = file.length;
    op.tag = tag;
    FrameHeader put;
    put.type = static_cast<std::uint8_t>(FrameType::putData);
    put.length = file.length;
    put.cookie = cookieOf(wire->slot, wire->generation);
    pushTxLocked(put, nullptr, 0, file.length, TxKind::put, slot, &file);

    pushMessageLocked(message, *messageSlot);
    m_tx[(m_txHead + m_txCount - 1) % m_tx.size()].afterFilePut = true;
    return {};
}

// ---- I/O thread

void TcpConnection::onEvents(std::uint32_t events) noexcept
{
    // Keep ourselves alive: teardown retires the connection from its thread.
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) {
        onReadable();
    }
    if (events & EPOLLOUT) {
        onWritable();
    }
}

void TcpConnection::protocolError(std::string_view what) noexcept
{
    teardown({Errc::protocol_error, std::string(what) + " from " + m_peer});
}

void TcpConnection::onReady() noexcept
{
    {
        std::lock_guard lock(m_mutex);
        m_writeQueued = false;
    }
    onWritable();
}

// Writes the head entry's file payload (its header is on the wire) straight from the file's
// page cache into the socket. The bytes written, or -1: stop writing for now (socket full, or
// torn down).
std::int64_t TcpConnection::sendFilePayload(int fd) noexcept
{
    int fileFd;
    off_t offset;
    std::uint64_t left;
    {
        std::lock_guard lock(m_mutex);
        const TxEntry &entry = m_tx[m_txHead];
        fileFd = entry.fileFd;
        const std::uint64_t done = entry.sent - kHeaderSize;
        offset = static_cast<off_t>(entry.fileOffset + done);
        left = entry.payloadBytes - done;
    }
    const ssize_t n = ::sendfile(fd, fileFd, &offset, std::min<std::uint64_t>(left, kWriteBudget));
    if (n > 0) {
        return completeWritten(static_cast<std::uint64_t>(n)) ? n : -1;
    }
    const int error = n == 0 ? 0 : errno;
    if (error == EINTR) {
        return 0;
    }
    if (wouldBlock(error)) {
        std::lock_guard lock(m_mutex);
        setEpollOutLocked(true);
        return -1;
    }
    if (error == EPIPE || error == ECONNRESET || error == ENOTCONN) {
        teardown({Errc::unavailable, "send to " + m_peer + " failed: " + errnoText(error)});
        return -1;
    }
    // End of file (the file shrank) or a read error: zeros fill the promised length.
    std::lock_guard lock(m_mutex);
    if (m_state == State::closed) {
        return -1;
    }
    TxEntry &entry = m_tx[m_txHead];
    entry.fileEnd = true;
    entry.fileError = error;
    if (error != 0 && m_txCount > 1) {
        TxEntry &next = m_tx[(m_txHead + 1) % m_tx.size()];
        if (next.afterFilePut) {
            next.sent = kHeaderSize + next.payloadBytes; // nothing of it goes
        }
    }
    return 0;
}

bool TcpConnection::retireEmptyHeadLocked() noexcept
{
    bool freed = false;
    while (m_txCount > 0) {
        TxEntry &entry = m_tx[m_txHead];
        if (entry.sent < kHeaderSize + entry.payloadBytes) {
            break;
        }
        // Only a dropped message is whole before its first byte went out.
        m_txHead = (m_txHead + 1) % m_tx.size();
        --m_txCount;
        if (entry.kind == TxKind::message) {
            m_freeMessages.push_back(entry.slot);
            freed = true;
        }
    }
    return freed;
}

void TcpConnection::onWritable() noexcept
{
    // Zeros for a file put cut short; the frame's length was promised in its header.
    static const std::array<std::byte, kScratchSize> zeros{};
    std::size_t budget = kWriteBudget;
    while (budget > 0) {
        std::size_t used = 0;
        int fd = -1;
        bool fileHead = false; // the head entry's payload goes with sendfile
        bool more = false;     // a file payload follows what this call writes
        {
            std::lock_guard lock(m_mutex);
            if (m_state == State::closed) {
                return;
            }
            fd = m_fd;
            // Gather as many queued frames as fit in one call. Senders only append, so these
            // entries stay put while we write without the lock.
            for (std::size_t i = 0; i < m_txCount && used < kIovBatch; ++i) {
                const TxEntry &entry = m_tx[(m_txHead + i) % m_tx.size()];
                std::uint64_t offset = entry.sent;
                if (offset == kHeaderSize + entry.payloadBytes) {
                    continue; // dropped: nothing of it goes
                }
                if (offset < kHeaderSize) {
                    m_txIov[used++] = {const_cast<std::byte *>(entry.header.data()) + offset,
                                       kHeaderSize - offset};
                    offset = 0;
                } else {
                    offset -= kHeaderSize;
                }
                if (entry.fileFd >= 0 && !entry.fileEnd) {
                    fileHead = used == 0;
                    more = !fileHead;
                    break;
                }
                if (entry.fileFd >= 0) {
                    for (std::uint64_t left = entry.payloadBytes - offset;
                         left > 0 && used < kIovBatch;) {
                        const std::size_t piece = std::min<std::uint64_t>(left, zeros.size());
                        m_txIov[used++] = {const_cast<std::byte *>(zeros.data()), piece};
                        left -= piece;
                    }
                    continue;
                }
                used += sliceIov(entry.payload, entry.payloadCount, offset,
                                 entry.payloadBytes - offset, &m_txIov[used], kIovBatch - used);
            }
            if (used == 0 && !fileHead) {
                const bool freed = retireEmptyHeadLocked();
                setEpollOutLocked(false);
                if (freed) {
                    m_space.notify_all();
                }
                return;
            }
        }
        if (fileHead) {
            const std::int64_t n = sendFilePayload(fd);
            if (n < 0) {
                return;
            }
            budget -= std::min(budget, static_cast<std::size_t>(n));
            continue;
        }
        msghdr message{};
        message.msg_iov = m_txIov.data();
        message.msg_iovlen = used;
        const ssize_t n =
            ::sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT | (more ? MSG_MORE : 0));
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (wouldBlock(errno)) {
                std::lock_guard lock(m_mutex);
                setEpollOutLocked(true);
                return;
            }
            teardown({Errc::unavailable, "send to " + m_peer + " failed: " + errnoText(errno)});
            return;
        }
        budget -= std::min(budget, static_cast<std::size_t>(n));
        if (!completeWritten(static_cast<std::uint64_t>(n))) {
            return;
        }
    }
    // Budget spent with frames left: come back after the other connections had their turn.
    std::lock_guard lock(m_mutex);
    if (m_txCount > 0) {
        wakeWriterLocked();
    }
}

// `written` more bytes of the ring are on the wire: retire whole frames, report puts done.
// False when the connection is closed.
bool TcpConnection::completeWritten(std::uint64_t written) noexcept
{
    m_done.clear();
    bool freed = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_state == State::closed) {
            return false;
        }
        // Also retires entries with nothing left (a message dropped behind a failed file put).
        while (m_txCount > 0) {
            TxEntry &entry = m_tx[m_txHead];
            const std::uint64_t left = kHeaderSize + entry.payloadBytes - entry.sent;
            if (written < left) {
                entry.sent += written;
                break;
            }
            written -= left;
            m_txHead = (m_txHead + 1) % m_tx.size();
            --m_txCount;
            switch (entry.kind) {
            case TxKind::message:
                m_freeMessages.push_back(entry.slot);
                freed = true;
                break;
            case TxKind::put:
                // On the wire: ordering guarantees the peer sees it before any later frame.
                m_done.push_back({m_ops[entry.slot].value.tag, entry.fileError});
                m_ops.release(entry.slot);
                freed = true;
                break;
            case TxKind::getData: --m_pendingGetData; break;
            case TxKind::getRequest: // the op completes when its data arrives
            case TxKind::control: break;
            }
        }
    }
    if (freed) {
        m_space.notify_all();
    }
    for (const auto &done : m_done) {
        if (done.fileError == 0) {
            m_handler.onBulkDone(*this, done.tag, Status{});
        } else {
            m_handler.onBulkDone(*this, done.tag,
                                 {Errc::io_error, "reading the file for a bulk put failed: " +
                                                      errnoText(done.fileError)});
        }
    }
    return true;
}

void TcpConnection::onReadable() noexcept
{
    // Hold a reference: a handler or teardown may drop the thread's one.
    const auto self = shared_from_this();
    std::size_t budget = kReadBudget;
    // Past the budget, only what is staged: the socket is level-triggered, the stage is not.
    while (budget > 0 || m_rxStageBegin != m_rxStageEnd) {
        int fd;
        {
            std::lock_guard lock(m_mutex);
            if (m_state == State::closed) {
                return;
            }
            fd = m_fd;
        }
        ssize_t n = 0;
        // Held from the read into exposed memory through its sums (see m_rxMemoryMutex).
        std::unique_lock memory(m_rxMemoryMutex, std::defer_lock);
        if (m_rxPhase == RxPhase::bulk) {
            memory.lock();
            if (m_rxRevoked) {
                memory.unlock();
                m_engine->log(LogLevel::warning, "discarding the last " +
                                                     std::to_string(m_rxRemaining) +
                                                     " bytes of a bulk put from " + m_peer +
                                                     ": its memory was taken back meanwhile");
                m_rxSummer.stop();
                m_rxPhase = RxPhase::discard;
            }
        }
        switch (m_rxPhase) {
        case RxPhase::header:
            n = receiveSmall(fd, m_rxHeaderBytes.data() + m_rxHave, kHeaderSize - m_rxHave);
            break;
        case RxPhase::hello:
            n = receiveSmall(fd, m_helloBytes.data() + m_rxHave, sizeof(Hello) - m_rxHave);
            break;
        case RxPhase::message:
            n = receiveSmall(fd, m_rxMessage.data() + m_rxHave, m_rxHeader.length - m_rxHave);
            break;
        case RxPhase::bulk: {
            // Scatter straight into the destination pages: no bounce buffer (but for what came
            // in the stage with the header, see receiveScattered). Summed data comes in
            // pieces that stay in cache until they are summed.
            std::array<iovec, kIovBatch> iov;
            const std::uint64_t want = m_rxSummer.active()
                                           ? std::min<std::uint64_t>(m_rxRemaining, kSummedReadSize)
                                           : m_rxRemaining;
            const std::size_t count = sliceIov(m_rxIov + m_rxIovIndex, UINT32_MAX, m_rxIovOffset,
                                               want, iov.data(), iov.size());
            n = receiveScattered(fd, iov.data(), count);
            break;
        }
        case RxPhase::discard:
            n = receiveSmall(fd, m_thread.scratch(),
                             std::min<std::uint64_t>(m_rxRemaining, kScratchSize));
            break;
        }
        if (n <= 0 && memory.owns_lock()) {
            memory.unlock(); // teardown's handlers may unexpose
        }
        if (n == 0) {
            const bool clean = m_rxPhase == RxPhase::header && m_rxHave == 0;
            teardown({Errc::unavailable, clean ? "peer closed the connection"
                                               : "peer closed the connection in the middle of a "
                                                 "frame"});
            return;
        }
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (wouldBlock(errno)) {
                setWakeThreshold(fd);
                return;
            }
            teardown(
                {Errc::unavailable, "receive from " + m_peer + " failed: " + errnoText(errno)});
            return;
        }
        budget -= std::min(budget, static_cast<std::size_t>(n));
        const auto got = static_cast<std::size_t>(n);
        switch (m_rxPhase) {
        case RxPhase::header:
            m_rxHave += got;
            if (m_rxHave == kHeaderSize && !dispatchHeader()) {
                return;
            }
            break;
        case RxPhase::hello:
            m_rxHave += got;
            if (m_rxHave == sizeof(Hello)) {
                onHello();
            }
            break;
        case RxPhase::message:
            m_rxHave += got;
            if (m_rxHave == m_rxHeader.length && !finishFrame()) {
                return;
            }
            break;
        case RxPhase::bulk:
            m_rxRemaining -= got;
            for (std::size_t left = got; left > 0;) {
                const std::size_t room = m_rxIov[m_rxIovIndex].iov_len - m_rxIovOffset;
                m_rxSummer.add(static_cast<const std::byte *>(m_rxIov[m_rxIovIndex].iov_base) +
                                   m_rxIovOffset,
                               std::min(left, room));
                if (left < room) {
                    m_rxIovOffset += left;
                    break;
                }
                left -= room;
                ++m_rxIovIndex;
                m_rxIovOffset = 0;
            }
            memory.unlock();
            if (m_rxRemaining == 0 && !finishFrame()) {
                return;
            }
            break;
        case RxPhase::discard:
            m_rxRemaining -= got;
            if (m_rxRemaining == 0) {
                m_rxPhase = RxPhase::header;
                m_rxHave = 0;
            }
            break;
        }
    }
    // The budget is spent and the stage empty: the rest waits for the next wake-up.
    int fd;
    {
        std::lock_guard lock(m_mutex);
        if (m_state == State::closed) {
            return;
        }
        fd = m_fd;
    }
    setWakeThreshold(fd);
}

void TcpConnection::setWakeThreshold(int fd) noexcept
{
    // Only the socket's bytes count: the stage is empty whenever the I/O thread goes back to
    // epoll (its loop drains it first).
    int lowat = 1;
    if (m_rxPhase == RxPhase::bulk && m_rxRemaining >= kWakeLowatMin) {
        lowat = static_cast<int>(std::min<std::uint64_t>(m_rxRemaining, kWakeLowatMax));
    }
    if (lowat == m_rxLowat) {
        return;
    }
    // Lowering also wakes epoll at once when that much is already queued (tcp_set_rcvlowat).
    // It fails only for a descriptor that is no TCP socket, which this one always is.
    if (::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) == 0) {
        m_rxLowat = lowat;
    }
}

// recv() of up to `want` bytes into `to`, served from the stage first. A small want refills the
// stage with whatever has arrived (the rest of this frame and the frames behind it); a large
// one goes straight to `to`. Returns what recv would: bytes, 0 at the peer's close, -1 + errno.
ssize_t TcpConnection::receiveSmall(int fd, std::byte *to, std::size_t want) noexcept
{
    if (m_rxStageBegin == m_rxStageEnd) {
        if (want >= kRxStageSize) {
            return ::recv(fd, to, want, 0);
        }
        const ssize_t n = ::recv(fd, m_rxStage.get(), kRxStageSize, 0);
        if (n <= 0) {
            return n;
        }
        m_rxStageBegin = 0;
        m_rxStageEnd = static_cast<std::size_t>(n);
    }
    const std::size_t take = std::min(want, m_rxStageEnd - m_rxStageBegin);
    std::memcpy(to, m_rxStage.get() + m_rxStageBegin, take);
    m_rxStageBegin += take;
    return static_cast<ssize_t>(take);
}

// readv() into a bulk destination, served from the stage first (the payload's start that came
// with its header): the rest goes straight from the socket into the pages.
ssize_t TcpConnection::receiveScattered(int fd, const iovec *iov, std::size_t count) noexcept
{
    if (m_rxStageBegin == m_rxStageEnd) {
        return ::readv(fd, iov, static_cast<int>(count));
    }
    std::size_t copied = 0;
    for (std::size_t i = 0; i < count && m_rxStageBegin < m_rxStageEnd; ++i) {
        const std::size_t take = std::min(iov[i].iov_len, m_rxStageEnd - m_rxStageBegin);
        std::memcpy(iov[i].iov_base, m_rxStage.get() + m_rxStageBegin, take);
        m_rxStageBegin += take;
        copied += take;
    }
    return static_cast<ssize_t>(copied);
}

// A whole header arrived: validate it and choose what to read next. False when the connection
// was dropped.
bool TcpConnection::dispatchHeader() noexcept
{
    m_rxHeader = decode<FrameHeader>(m_rxHeaderBytes.data());
    m_rxHave = 0;
    const FrameHeader &h = m_rxHeader;
    if (h.magic != kMagic || h.version != kWireVersion) {
        protocolError("garbage frame header (bad magic or version)");
        return false;
    }
    const auto type = static_cast<FrameType>(h.type);
    bool handshaking;
    {
        std::lock_guard lock(m_mutex);
        handshaking = m_state == State::opening;
    }
    if (handshaking) {
        if (!m_accepted || type != FrameType::hello || h.length != sizeof(Hello)) {
            protocolError("garbage frame: expected a hello");
            return false;
        }
        m_rxPhase = RxPhase::hello;
        return true;
    }
    switch (type) {
    case FrameType::message:
        if (h.length > m_limits.maxMessageSize) {
            protocolError("oversize message frame: " + std::to_string(h.length) +
                          " bytes, negotiated maximum " + std::to_string(m_limits.maxMessageSize));
            return false;
        }
        m_rxPhase = RxPhase::message;
        return h.length > 0 || finishFrame();
    case FrameType::putData: {
        if (h.length > m_limits.maxBulkSize || h.length == 0) {
            protocolError("oversize bulk frame: " + std::to_string(h.length) +
                          " bytes, negotiated maximum " + std::to_string(m_limits.maxBulkSize));
            return false;
        }
        std::unique_lock lock(m_mutex);
        const Exposure *exposure = m_exposures.find(slotOf(h.cookie), generationOf(h.cookie));
        if (exposure == nullptr || exposure->access != BulkAccess::putInto) {
            lock.unlock();
            // Late data for memory the host already took back (a timed-out request): skip it.
            m_engine->log(LogLevel::warning, "discarding " + std::to_string(h.length) +
                                                 " bulk bytes from " + m_peer +
                                                 " for a descriptor no longer exposed");
            m_rxPhase = RxPhase::discard;
            m_rxRemaining = h.length;
            return true;
        }
        if (h.length > exposure->total) {
            lock.unlock();
            protocolError("bulk put larger than the exposed memory");
            return false;
        }
        m_rxIov = exposure->iov;
        m_rxIovIndex = 0;
        m_rxIovOffset = 0;
        m_rxRemaining = h.length;
        m_rxOp = UINT32_MAX;
        m_rxSummer.start(exposure->sums);
        {
            std::lock_guard memory(m_rxMemoryMutex);
            m_rxExposureSlot = slotOf(h.cookie);
            m_rxExposureGeneration = generationOf(h.cookie);
            m_rxRevoked = false;
        }
        m_rxPhase = RxPhase::bulk;
        return true;
    }
    case FrameType::getRequest: {
        if (h.length != 0 || h.aux > m_limits.maxBulkSize) {
            protocolError("malformed get request");
            return false;
        }
        std::unique_lock lock(m_mutex);
        if (m_pendingGetData >= m_limits.queueDepth) {
            lock.unlock();
            protocolError("get requests beyond the negotiated queue depth");
            return false;
        }
        const Exposure *exposure = m_exposures.find(slotOf(h.cookie), generationOf(h.cookie));
        FrameHeader answer;
        answer.type = static_cast<std::uint8_t>(FrameType::getData);
        answer.cookie = h.tag;
        if (exposure == nullptr || exposure->access != BulkAccess::getFrom ||
            h.aux > exposure->total) {
            answer.aux = static_cast<std::uint32_t>(Errc::not_found);
            pushTxLocked(answer, nullptr, 0, 0, TxKind::getData, 0);
        } else {
            answer.length = h.aux;
            pushTxLocked(answer, exposure->iov, exposure->count, h.aux, TxKind::getData, 0);
        }
        ++m_pendingGetData;
        m_rxPhase = RxPhase::header;
        return true;
    }
    case FrameType::getData: {
        std::unique_lock lock(m_mutex);
        const std::uint32_t slot = slotOf(h.cookie);
        const Op *op = m_ops.find(slot, generationOf(h.cookie));
        if (op == nullptr || !op->isGet || (h.aux == 0 && h.length != op->total) ||
            (h.aux != 0 && h.length != 0)) {
            lock.unlock();
            protocolError("bulk data for no pending get");
            return false;
        }
        m_rxOp = slot;
        if (h.aux != 0) {
            lock.unlock();
            return finishFrame();
        }
        m_rxIov = op->iov;
        m_rxIovIndex = 0;
        m_rxIovOffset = 0;
        m_rxRemaining = h.length;
        m_rxSummer.stop();
        {
            std::lock_guard memory(m_rxMemoryMutex);
            m_rxExposureSlot = UINT32_MAX; // this side's own get buffer, not an exposure
            m_rxRevoked = false;
        }
        m_rxPhase = RxPhase::bulk;
        return true;
    }
    case FrameType::hello:
    case FrameType::helloAck: protocolError("unexpected hello"); return false;
    }
    protocolError("garbage frame: unknown type " + std::to_string(h.type));
    return false;
}

// The payload of the current frame is complete.
bool TcpConnection::finishFrame() noexcept
{
    m_rxPhase = RxPhase::header;
    m_rxHave = 0;
    const auto type = static_cast<FrameType>(m_rxHeader.type);
    if (type == FrameType::message) {
        m_handler.onMessage(*this, {m_rxMessage.data(), m_rxHeader.length});
    } else if (type == FrameType::getData) {
        std::uint64_t tag;
        {
            std::lock_guard lock(m_mutex);
            if (m_state == State::closed) {
                return false;
            }
            tag = m_ops[m_rxOp].value.tag;
            m_ops.release(m_rxOp);
        }
        m_space.notify_all();
        if (m_rxHeader.aux == 0) {
            m_handler.onBulkDone(*this, tag, Status{});
        } else {
            m_handler.onBulkDone(*this, tag,
                                 {Errc::not_found, "peer refused the bulk get: descriptor not "
                                                   "exposed for get"});
        }
    }
    std::lock_guard lock(m_mutex);
    return m_state != State::closed;
}

} // namespace lutra::transport::tcp
