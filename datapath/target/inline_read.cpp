// Reads served on the transport's I/O thread: no service thread, no wake-ups. Only what needs
// no waiting qualifies (its pages cached, its CRCs kept); everything else goes to the queue.
#include "target/page_residency.h"
#include "target/target_internal.h"

namespace lutra::target {

namespace {

using namespace protocol;

constexpr std::size_t kErrorReplyBytes = kMaxErrorMessageLength + 256;

} // namespace

bool TargetServer::Impl::serveReadInline(transport::Connection &connection, Session &session,
                                         std::span<const std::byte> message, bool &tallied) noexcept
{
    tallied = false;
    if (!zeroCopyRead || session.noFileBulk || session.noReplyBehindFile) {
        return false;
    }
    {
        std::lock_guard lock(shutdownMutex);
        if (shutDown) {
            return false; // the queue answers "shutting down"
        }
    }
    auto decoded = decode(message);
    if (!decoded) {
        return false;
    }
    const auto *request = std::get_if<ReadRequest>(&decoded->body);
    if (request == nullptr) {
        return false;
    }
    std::uint32_t maxBulk = 0;
    std::uint64_t features = 0;
    {
        std::lock_guard lock(session.mutex);
        if (!session.connected) {
            return false;
        }
        maxBulk = session.maxBulkBytes;
        features = session.features;
    }
    const std::uint64_t bytes = request->io.byteCount();
    if (bytes == 0 || bytes > maxBulk) {
        return false;
    }
    std::shared_ptr<OpenObject> object;
    {
        Session &owner = session.exportSession();
        std::lock_guard lock(owner.mutex);
        const auto it = owner.handles.find(request->io.handle);
        if (it == owner.handles.end()) {
            return false;
        }
        object = it->second;
    }
    auto descriptor = transport::BulkDescriptor::fromBytes(request->io.descriptor.bytes);
    const auto attr = object->handle.stat();
    if (!descriptor || !attr || attr->type == ObjectType::directory) {
        return false;
    }
    const std::uint64_t offset = request->io.offset;
    const std::uint64_t length = offset >= attr->size ? 0 : std::min(bytes, attr->size - offset);
    if (length == 0) {
        return false;
    }
    auto covered = object->mapping.cover(object->handle.fd(), offset + length);
    if (!covered || *covered == nullptr) {
        return false;
    }
    // Per I/O thread, allocated once.
    thread_local std::vector<unsigned char> residency(residencyScratchBytes(kMaxBulkBytes));
    thread_local std::vector<std::uint32_t> crcs(kMaxBulkPages);
    thread_local std::vector<std::byte> encoded(kMaxMessageSize);
    if (!isResident((*covered)->bytes().subspan(offset, length), residency)) {
        return false; // a service thread reads it in first
    }
    ReadReply reply;
    reply.bytesRead = static_cast<std::uint32_t>(length);
    if ((request->io.flags & kBulkChecksums) != 0 && (features & kFeatureChecksums) != 0) {
        // Whole pages whose CRCs are kept only: summing them is a service thread's work.
        if (offset % kPageSize != 0 || length % kPageSize != 0) {
            return false;
        }
        const std::size_t pages = length / kPageSize;
        if (!crcCache.lookup(object->handle.inode(), identityOf(*attr), offset / kPageSize,
                             {crcs.data(), pages})) {
            return false;
        }
        reply.flags = kBulkChecksums;
        reply.pageCrcs = Crc32List({crcs.data(), pages});
    }
    const auto size = encode(Message{decoded->xid, {}, reply, session.version.load()}, encoded);
    if (!size) {
        return false;
    }
    std::uint32_t index = 0;
    {
        std::lock_guard lock(inlineMutex);
        if (inlineFree.empty()) {
            return false;
        }
        index = inlineFree.back();
        inlineFree.pop_back();
        inlineReads[index] = {session.shared_from_this(), object, decoded->xid};
    }
    // Tallied before the put, as Lustre's OST tallies a read when it prepares it: the reply can be
    // with the client before this thread runs again.
    jobStats.sample(decoded->jobId, jobs::JobStats::read_bytes, static_cast<std::int64_t>(length));
    tallied = true;
    const Status put = connection.bulkPutFileThenSend(
        *descriptor, {object->handle.fd(), offset, length}, {encoded.data(), *size},
        kInlineTagBase + index, transport::noWait());
    if (!put) {
        // Nothing was sent (no credit now, or no such put): the service thread's way.
        std::lock_guard lock(inlineMutex);
        inlineReads[index] = {};
        inlineFree.push_back(index);
        return false;
    }
    zeroCopyReads.fetch_add(1, std::memory_order_relaxed);
    inlineReadCount.fetch_add(1, std::memory_order_relaxed);
    return true;
}

void TargetServer::Impl::finishInlineRead(std::uint32_t index, const Status &status) noexcept
{
    InlineRead done;
    {
        std::lock_guard lock(inlineMutex);
        done = std::move(inlineReads[index]);
        inlineReads[index] = {};
        inlineFree.push_back(index);
    }
    if (status.ok() || !done.session) {
        return; // the reply went behind the data
    }
    // The reply was dropped with the data: say why instead.
    const std::string text =
        errorReplyText("read " + done.object->handle.name() + ": " + status.message());
    Message reply;
    reply.xid = done.xid;
    reply.body = ErrorReply{Opcode::read, status.code(), text};
    reply.version = done.session->version.load();
    std::array<std::byte, kErrorReplyBytes> buffer{};
    if (auto size = encode(reply, buffer)) {
        (void)done.session->connection->send({buffer.data(), *size}, transport::noWait());
    }
}

} // namespace lutra::target
