// Executing client requests on service threads.
#include "core/log.h"
#include "protocol/crc32c.h"
#include "target/page_residency.h"
#include "target/target_internal.h"

#include <sys/uio.h>

namespace lutra::target {

namespace {

using namespace protocol;
using jobs::JobStats;

constexpr auto kReplyDeadline = std::chrono::seconds(10);
constexpr auto kBulkDeadline = std::chrono::seconds(30);
// A zero-copy read's CRC pass without a mapping reads this much at a time: stays in cache while
// it is summed.
constexpr std::size_t kCrcChunkBytes = 256u << 10;
static_assert(kCrcChunkBytes % kPageSize == 0);

std::uint64_t toNanos(std::chrono::system_clock::time_point time)
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count());
}

protocol::ObjectAttr toWire(const target::ObjectAttr &attr)
{
    protocol::ObjectAttr out;
    out.objectId = attr.inode;
    out.kind = attr.type == ObjectType::directory ? ObjectKind::directory : ObjectKind::file;
    out.mode = attr.mode;
    out.size = attr.size;
    out.mtimeNs = toNanos(attr.mtime);
    return out;
}

std::string resourceOf(const ObjectHandle &handle)
{
    return "ino:" + std::to_string(handle.inode());
}

// The outcome of one request: a reply body, or an error for the client.
using Outcome = std::variant<Body, Status>;

} // namespace

void TargetServer::Impl::serve(Worker &worker)
{
    for (;;) {
        const int index = queue.pop();
        if (index < 0) {
            return;
        }
        execute(worker, queue.slot(static_cast<std::uint32_t>(index)));
        queue.release(static_cast<std::uint32_t>(index));
    }
}

Status TargetServer::Impl::waitBulk(Worker &worker)
{
    std::unique_lock lock(worker.bulkMutex);
    // The transport reports every accepted bulk operation exactly once (also on disconnect), so
    // this wait ends; the deadline only guards against a plugin bug.
    if (!worker.bulkDone.wait_for(lock, kBulkDeadline + std::chrono::seconds(5),
                                  [&worker] { return worker.bulkFinished; })) {
        return {Errc::timeout, "bulk transfer did not complete"};
    }
    worker.bulkFinished = false;
    return worker.bulkStatus;
}

std::uint64_t TargetServer::Impl::bulkRegion(Worker &worker, std::size_t bytes)
{
    if (bytes <= worker.region.length || worker.registrationFailed) {
        return worker.region.id;
    }
    // Grown only when a larger bulk size was negotiated: at most a few times per worker.
    if (worker.region.id != 0) {
        transport->deregisterMemory(worker.region);
        worker.region = {};
    }
    const std::size_t length = std::max<std::size_t>(bytes, std::size_t{4} << 20);
    auto region =
        transport->registerMemory(worker.bulk.get(), std::min<std::size_t>(length, kMaxBulkBytes));
    if (!region) {
        // The transport can still move unregistered memory (per operation): slower, not wrong.
        worker.registrationFailed = true;
        log::warning(category, "service thread " + std::to_string(worker.index) +
                                   ": cannot register its bulk buffer, registering per "
                                   "operation: " +
                                   region.status().message());
        return 0;
    }
    worker.region = *region;
    return worker.region.id;
}

void TargetServer::Impl::sendReply(Session &session, Worker &worker, const Message &reply)
{
    auto size = encode(reply, {worker.reply.get(), kMaxMessageSize});
    if (!size) {
        log::error(category, "cannot encode " + std::string(opcodeName(reply.opcode())) +
                                 " reply: " + size.status().message());
        return;
    }
    const Status sent = session.connection->send({worker.reply.get(), *size},
                                                 transport::deadlineIn(kReplyDeadline));
    if (!sent && sent.code() != Errc::unavailable) {
        log::warning(category, "reply to " + session.label() + " not sent: " + sent.message());
    }
}

void TargetServer::Impl::sendError(Session &session, Worker &worker, const Message &request,
                                   const Status &status)
{
    const std::string text = errorReplyText(status.message());
    Message reply;
    reply.xid = request.xid;
    reply.version = request.version;
    reply.body = ErrorReply{request.opcode(), status.ok() ? Errc::internal : status.code(), text};
    sendReply(session, worker, reply);
}

namespace {

// The page CRCs of a zero-copy read's range into worker.crcs, summed straight from the page cache
// through the object's mapping (no copy: lutra-bench crc-read, datapath/target/README.md); where
// the file cannot be mapped, read in cache-sized chunks into the bulk buffer and summed there.
// An object shrinking meanwhile (SIGBUS in the mapping, or a short read) is an io_error.
Status zeroCopyPageCrcs(Worker &worker, const OpenObject &object, const FileMapping *mapping,
                        std::uint64_t offset, std::uint64_t length, std::span<std::uint32_t> out)
{
    const auto shrank = [&object] {
        return Status(Errc::io_error,
                      "read " + object.handle.name() + ": the object shrank while it was read");
    };
    if (mapping != nullptr) {
        if (!guardedPageCrcs(mapping->bytes().subspan(offset, length), out)) {
            return shrank();
        }
        return {};
    }
    for (std::uint64_t done = 0; done < length;) {
        const std::size_t chunk = std::min<std::uint64_t>(kCrcChunkBytes, length - done);
        auto got = object.handle.pread({worker.bulk.get(), chunk}, offset + done);
        if (!got) {
            return got.status();
        }
        if (*got != chunk) {
            return shrank();
        }
        if (auto status =
                computePageCrcs({worker.bulk.get(), chunk},
                                out.subspan(done / kPageSize, (chunk + kPageSize - 1) / kPageSize));
            !status) {
            return status;
        }
        done += chunk;
    }
    return {};
}

std::uint64_t pagesOf(std::uint64_t bytes)
{
    return (bytes + kPageSize - 1) / kPageSize;
}

} // namespace

Status TargetServer::Impl::readCrcs(Worker &worker, const OpenObject &object,
                                    const FileMapping *mapping, const ObjectAttr &attr,
                                    std::uint64_t offset, std::uint64_t length)
{
    const std::uint64_t inode = object.handle.inode();
    const std::uint64_t firstPage = offset / kPageSize;
    // Only whole pages are kept: a short last page (the end of the object) is summed each time.
    const std::size_t whole = offset % kPageSize == 0 ? length / kPageSize : 0;
    const std::size_t pages = pagesOf(length);
    const auto identity = identityOf(attr);
    const std::span<std::uint32_t> out(worker.crcs.data(), pages);
    if (whole > 0 && crcCache.lookup(inode, identity, firstPage, out.first(whole))) {
        if (whole == pages) {
            return {};
        }
        const std::uint64_t done = std::uint64_t{whole} * kPageSize;
        return zeroCopyPageCrcs(worker, object, mapping, offset + done, length - done,
                                out.subspan(whole));
    }
    const auto ticket = crcCache.ticket(inode);
    if (auto status = zeroCopyPageCrcs(worker, object, mapping, offset, length, out); !status) {
        return status;
    }
    if (whole > 0) {
        crcCache.store(inode, identity, ticket, firstPage, out.first(whole));
    }
    return {};
}

// A read served with bulkPutFile: the transport sends straight from the object's page cache.
// Pages of the range not in the page cache are read in first, here (makeResident), so the
// transport's I/O thread never waits for the disk. Where the transport can (tcp), the reply goes
// right behind the data (bulkPutFileThenSend): the client has it as soon as the last byte is in,
// without waking this thread and the I/O thread again; with checksums the page CRCs are then
// summed before the send. Otherwise this thread sums while the transport sends and replies after
// onBulkDone. Either way a write racing the read makes the client see a checksum mismatch, never
// unchecked data. unimplemented: the transport has no file puts (nothing was sent).
Result<TargetServer::Impl::ZeroCopyRead>
TargetServer::Impl::readZeroCopy(Worker &worker, Session &session, const OpenObject &object,
                                 std::uint64_t xid, std::uint64_t offset, std::uint64_t bytes,
                                 const transport::BulkDescriptor &descriptor, bool sums,
                                 std::string_view job, bool &tallied)
{
    // Before any put: a reply behind the data can be with the client before this thread runs on.
    const auto tally = [&](std::uint64_t value) {
        if (!tallied) {
            jobStats.sample(job, JobStats::read_bytes, static_cast<std::int64_t>(value));
            tallied = true;
        }
    };
    auto attr = object.handle.stat();
    if (!attr) {
        return attr.status();
    }
    if (attr->type == ObjectType::directory) {
        return Status(Errc::unimplemented, "a directory is no file to send"); // pread says why
    }
    const std::uint64_t length = offset >= attr->size ? 0 : std::min(bytes, attr->size - offset);
    ZeroCopyRead read;
    ReadReply &reply = read.reply;
    reply.bytesRead = static_cast<std::uint32_t>(length);
    if (sums) {
        reply.flags = kBulkChecksums;
    }
    if (length == 0) {
        tally(0);
        return read;
    }
    // Without a mapping (mmap failed) the send may still read the disk, as it always did.
    auto covered = object.mapping.cover(object.handle.fd(), offset + length);
    const std::shared_ptr<const FileMapping> mapping = covered ? *covered : nullptr;
    if (mapping != nullptr && options.coldReadFill &&
        makeResident(mapping->bytes().subspan(offset, length), worker.residency) ==
            Residency::filled) {
        coldZeroCopyReads.fetch_add(1, std::memory_order_relaxed);
    }
    const transport::FileRange file{object.handle.fd(), offset, length};
    const std::size_t pages = (length + kPageSize - 1) / kPageSize;
    if (!session.noReplyBehindFile) {
        if (sums) {
            if (auto crcs = readCrcs(worker, object, mapping.get(), *attr, offset, length); !crcs) {
                return crcs;
            }
            reply.pageCrcs = Crc32List({worker.crcs.data(), pages});
        }
        auto size = encode(Message{xid, {}, reply, session.version.load()},
                           {worker.reply.get(), kMaxMessageSize});
        if (!size) {
            return size.status().withContext("read reply");
        }
        tally(length);
        Status put = session.connection->bulkPutFileThenSend(
            descriptor, file, {worker.reply.get(), *size}, worker.index,
            transport::deadlineIn(kBulkDeadline));
        if (put.code() != Errc::unimplemented) {
            if (put) {
                // The put uses the fd until onBulkDone; the reply is on its way unless it failed.
                put = waitBulk(worker);
            }
            if (!put) {
                return put.withContext("read " + object.handle.name());
            }
            zeroCopyReads.fetch_add(1, std::memory_order_relaxed);
            read.replied = true;
            return read;
        }
        session.noReplyBehindFile = true;
    }
    tally(length);
    Status put = session.connection->bulkPutFile(descriptor, file, worker.index,
                                                 transport::deadlineIn(kBulkDeadline));
    if (!put) {
        if (put.code() == Errc::unimplemented) {
            return put;
        }
        return put.withContext("read " + object.handle.name());
    }
    Status crcs;
    if (sums) {
        crcs = readCrcs(worker, object, mapping.get(), *attr, offset, length);
    }
    // The put uses the descriptor and the fd until onBulkDone: wait even when the CRCs failed.
    put = waitBulk(worker);
    if (!put) {
        return put.withContext("read " + object.handle.name());
    }
    if (!crcs) {
        return crcs;
    }
    if (sums) {
        reply.pageCrcs = Crc32List({worker.crcs.data(), pages});
    }
    zeroCopyReads.fetch_add(1, std::memory_order_relaxed);
    return read;
}

void TargetServer::Impl::execute(Worker &worker, RequestSlot &slot)
{
    Session &session = *slot.session;
    auto decoded = decode({slot.bytes.get(), slot.length});
    if (!decoded) {
        // Not our protocol, or a broken client: drop the connection, say why, keep serving.
        log::warning(category, session.label() + " sent a malformed message, disconnecting: " +
                                   decoded.status().message());
        session.connection->close();
        return;
    }
    const Message &request = *decoded;
    if (request.isReply()) {
        return; // answers to our blocking callbacks: the cancel that follows is what counts
    }
    {
        std::lock_guard lock(session.mutex);
        if (!session.connected && request.opcode() != Opcode::connect) {
            sendError(session, worker, request,
                      {Errc::failed_precondition, "connect before any other request"});
            return;
        }
    }
    const std::string_view job = request.jobId;
    bool tallied = slot.readTallied; // a read's job_stats sample, taken on the I/O thread

    // Finds an open object of this client (of its export: any of its connections opened it).
    const auto opened = [&session](std::uint64_t handle) -> std::shared_ptr<OpenObject> {
        Session &owner = session.exportSession();
        std::lock_guard lock(owner.mutex);
        const auto it = owner.handles.find(handle);
        return it == owner.handles.end() ? nullptr : it->second;
    };
    const auto badHandle = [](std::uint64_t handle) {
        return Status(Errc::not_found, "handle " + std::to_string(handle) + " is not open");
    };
    const auto remember = [&session](ObjectHandle handle, bool writable) {
        auto object = std::make_shared<OpenObject>();
        object->resource = resourceOf(handle);
        object->handle = std::move(handle);
        object->writable = writable;
        Session &owner = session.exportSession();
        std::lock_guard lock(owner.mutex);
        const std::uint64_t id = owner.nextHandle++;
        owner.handles.emplace(id, std::move(object));
        return id;
    };

    const Outcome outcome = std::visit(
        [&](const auto &body) -> Outcome {
            using T = std::decay_t<decltype(body)>;
            if constexpr (std::is_same_v<T, ConnectRequest>) {
                const std::uint16_t version = std::min(body.maxVersion, options.maxProtocolVersion);
                if (version < body.minVersion || version < kMinVersion) {
                    return Status(Errc::unimplemented,
                                  "no common protocol version: client speaks " +
                                      std::to_string(body.minVersion) + ".." +
                                      std::to_string(body.maxVersion) + ", target " +
                                      std::to_string(kMinVersion) + ".." +
                                      std::to_string(options.maxProtocolVersion));
                }
                const std::uint64_t brw = std::uint64_t{brwSizeMb.load()} << 20;
                ConnectReply reply;
                reply.version = version;
                reply.maxBulkBytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(
                    {body.maxBulkBytes, brw, session.connection->limits().maxBulkSize}));
                reply.maxBulkBytes -= reply.maxBulkBytes % kPageSize;
                reply.maxMessageBytes = static_cast<std::uint32_t>(
                    std::min<std::uint64_t>({body.maxMessageBytes, kMaxMessageSize,
                                             session.connection->limits().maxMessageSize}));
                reply.features = body.features & (kFeatureChecksums | kFeatureBlockingCallbacks |
                                                  kFeatureMultiConnection);
                reply.targetName = options.name;
                if (body.exportCookie != 0) {
                    // A further connection of a client: it joins that client's export.
                    const bool fresh = [&session] {
                        std::lock_guard lock(session.mutex);
                        return !session.connected;
                    }();
                    if (!fresh) {
                        return Status(Errc::failed_precondition,
                                      "connect: only a new connection can join an export");
                    }
                    if (auto joined = joinExport(session, body.exportCookie, body.clientId);
                        !joined) {
                        return joined.withContext("connect");
                    }
                }
                if ((reply.features & kFeatureMultiConnection) != 0) {
                    reply.exportCookie = exportCookieOf(session.exportSession());
                }
                {
                    std::lock_guard lock(session.mutex);
                    session.connected = true;
                    session.clientName = std::string(body.clientId);
                    session.maxBulkBytes = reply.maxBulkBytes;
                    session.features = reply.features;
                }
                session.version.store(version); // the reply itself is framed as version 1
                log::info(category, session.label() + " connected");
                return reply;
            } else if constexpr (std::is_same_v<T, PingRequest>) {
                return PingReply{};
            } else if constexpr (std::is_same_v<T, StatfsRequest>) {
                jobStats.add(job, JobStats::statfs);
                auto fs = store->statfs();
                if (!fs) {
                    return fs.status();
                }
                StatfsReply reply;
                reply.blockSize = kPageSize;
                reply.totalBlocks = fs->totalBytes / kPageSize;
                reply.freeBlocks = fs->freeBytes / kPageSize;
                reply.availBlocks = fs->availableBytes / kPageSize;
                reply.totalObjects = fs->totalFiles;
                reply.freeObjects = fs->freeFiles;
                return reply;
            } else if constexpr (std::is_same_v<T, CreateRequest>) {
                jobStats.add(job, JobStats::create);
                auto created = store->create(body.path, static_cast<mode_t>(body.mode));
                if (!created && created.status().code() == Errc::already_exists &&
                    (body.flags & kCreateExclusive) == 0) {
                    created = store->open(body.path);
                }
                if (!created) {
                    return created.status();
                }
                auto attr = created->stat();
                if (!attr) {
                    return attr.status();
                }
                CreateReply reply;
                reply.attr = toWire(*attr);
                reply.handle = remember(std::move(created).value(), true);
                return reply;
            } else if constexpr (std::is_same_v<T, OpenRequest>) {
                auto object = store->open(body.path);
                if (!object) {
                    return object.status();
                }
                auto attr = object->stat();
                if (!attr) {
                    return attr.status();
                }
                OpenReply reply;
                reply.attr = toWire(*attr);
                reply.handle = remember(std::move(object).value(), (body.flags & kOpenWrite) != 0);
                return reply;
            } else if constexpr (std::is_same_v<T, CloseRequest>) {
                Session &owner = session.exportSession();
                std::lock_guard lock(owner.mutex);
                if (owner.handles.erase(body.handle) == 0) {
                    return badHandle(body.handle);
                }
                return CloseReply{};
            } else if constexpr (std::is_same_v<T, StatRequest>) {
                jobStats.add(job, JobStats::getattr);
                auto attr = store->stat(body.path);
                if (!attr) {
                    return attr.status();
                }
                return StatReply{toWire(*attr)};
            } else if constexpr (std::is_same_v<T, UnlinkRequest>) {
                jobStats.add(job, JobStats::destroy);
                const auto gone = store->stat(body.path);
                if (auto status = store->unlink(body.path); !status) {
                    return status;
                }
                if (gone) {
                    crcCache.forget(gone->inode); // its inode may name a new object next
                }
                return UnlinkReply{};
            } else if constexpr (std::is_same_v<T, TruncateRequest>) {
                jobStats.add(job, JobStats::punch);
                auto object = opened(body.handle);
                if (!object) {
                    return badHandle(body.handle);
                }
                if (!object->writable) {
                    return Status(Errc::permission_denied,
                                  "handle " + std::to_string(body.handle) + " is read-only");
                }
                // As Lustre's OST punch: every client's cached lock on the object is revoked
                // first, so none goes on serving pages or a size from before the truncate
                // (each cancels, marks its size stale and asks again at its next read).
                auto punch = locks->enqueue(object->resource, LockMode::PW, kPunchClient);
                if (!punch) {
                    return punch.status();
                }
                // Every page from the one the new end falls in changes (or goes).
                const std::uint64_t inode = object->handle.inode();
                crcCache.beginChange(inode, body.size / kPageSize, PageCrcCache::kToTheEnd);
                Status status = object->handle.truncate(body.size);
                if (status.ok()) {
                    status = commit->commit(object->handle, 0);
                }
                const auto after = object->handle.stat();
                (void)crcCache.endChange(inode, body.size / kPageSize, PageCrcCache::kToTheEnd,
                                         after ? std::optional(identityOf(*after)) : std::nullopt);
                (void)locks->cancel(*punch);
                if (!status.ok()) {
                    return status;
                }
                return TruncateReply{};
            } else if constexpr (std::is_same_v<T, MkdirRequest>) {
                if (auto status = store->mkdir(body.path, static_cast<mode_t>(body.mode));
                    !status) {
                    return status;
                }
                auto attr = store->stat(body.path);
                if (!attr) {
                    return attr.status();
                }
                return MkdirReply{toWire(*attr)};
            } else if constexpr (std::is_same_v<T, RmdirRequest>) {
                if (auto status = store->rmdir(body.path); !status) {
                    return status;
                }
                return RmdirReply{};
            } else if constexpr (std::is_same_v<T, ReaddirRequest>) {
                const std::size_t wanted =
                    std::min<std::size_t>(body.maxEntries, ObjectStore::kMaxReaddirEntries);
                auto page = store->readdir(body.path, body.cookie, wanted);
                if (!page) {
                    return page.status();
                }
                // Keep the reply within the message size; the rest comes with the next cookie.
                std::size_t room = kMaxMessageSize - kHeaderSize - 64;
                ReaddirReply reply;
                reply.eof = page->end;
                reply.nextCookie = page->nextCookie;
                worker.entries.clear();
                for (const auto &entry : page->entries) {
                    protocol::DirEntry wire{entry.inode,
                                            entry.type == ObjectType::directory
                                                ? ObjectKind::directory
                                                : ObjectKind::file,
                                            entry.name};
                    const std::size_t size = dirEntryWireSize(wire);
                    if (size > room) {
                        reply.eof = false;
                        reply.nextCookie = worker.entries.empty()
                                               ? body.cookie
                                               : page->entries[worker.entries.size() - 1].cookie;
                        break;
                    }
                    room -= size;
                    worker.entries.push_back(wire);
                }
                reply.entries = DirEntryList(worker.entries);
                // `page` owns the names the entries view: encode before it goes away.
                Message message{request.xid, {}, reply, request.version};
                sendReply(session, worker, message);
                return Status{};
            } else if constexpr (std::is_same_v<T, ReadRequest>) {
                auto object = opened(body.io.handle);
                if (!object) {
                    return badHandle(body.io.handle);
                }
                const std::uint64_t bytes = body.io.byteCount();
                if (bytes > session.maxBulkBytes) {
                    return Status(Errc::out_of_range,
                                  "read of " + std::to_string(bytes) +
                                      " bytes exceeds the negotiated bulk size of " +
                                      std::to_string(session.maxBulkBytes));
                }
                auto descriptor = transport::BulkDescriptor::fromBytes(body.io.descriptor.bytes);
                if (!descriptor) {
                    return descriptor.status();
                }
                const bool sums = (body.io.flags & kBulkChecksums) != 0 &&
                                  (session.features & kFeatureChecksums) != 0;
                if (zeroCopyRead && !session.noFileBulk) {
                    auto sent = readZeroCopy(worker, session, *object, request.xid, body.io.offset,
                                             bytes, *descriptor, sums, job, tallied);
                    if (sent || sent.status().code() != Errc::unimplemented) {
                        if (!sent) {
                            return sent.status();
                        }
                        if (sent->replied) {
                            return Status{};
                        }
                        return sent->reply;
                    }
                    session.noFileBulk = true; // this transport reads into memory
                }
                auto got = object->handle.pread({worker.bulk.get(), bytes}, body.io.offset);
                if (!got) {
                    return got.status();
                }
                ReadReply reply;
                reply.bytesRead = static_cast<std::uint32_t>(*got);
                if (*got > 0) {
                    const transport::Segment segment{worker.bulk.get(), *got,
                                                     bulkRegion(worker, *got)};
                    Status put =
                        session.connection->bulkPut(*descriptor, {&segment, 1}, worker.index,
                                                    transport::deadlineIn(kBulkDeadline));
                    if (put) {
                        put = waitBulk(worker);
                    }
                    if (!put) {
                        return put.withContext("read " + object->handle.name());
                    }
                }
                if (sums) {
                    const std::size_t pages = (*got + kPageSize - 1) / kPageSize;
                    if (auto status =
                            computePageCrcs({worker.bulk.get(), *got}, {worker.crcs.data(), pages});
                        !status) {
                        return status;
                    }
                    reply.flags = kBulkChecksums;
                    reply.pageCrcs = Crc32List({worker.crcs.data(), pages});
                }
                if (!tallied) {
                    jobStats.sample(job, JobStats::read_bytes, static_cast<std::int64_t>(*got));
                }
                return reply;
            } else if constexpr (std::is_same_v<T, WriteRequest>) {
                auto object = opened(body.io.handle);
                if (!object) {
                    return badHandle(body.io.handle);
                }
                if (!object->writable) {
                    return Status(Errc::permission_denied,
                                  "handle " + std::to_string(body.io.handle) + " is read-only");
                }
                const std::uint64_t bytes = body.io.byteCount();
                if (bytes > session.maxBulkBytes) {
                    return Status(Errc::out_of_range,
                                  "write of " + std::to_string(bytes) +
                                      " bytes exceeds the negotiated bulk size of " +
                                      std::to_string(session.maxBulkBytes));
                }
                auto descriptor = transport::BulkDescriptor::fromBytes(body.io.descriptor.bytes);
                if (!descriptor) {
                    return descriptor.status();
                }
                // Tell group commit a write is coming, so its batch waits for this one.
                commit->announce();
                struct Withdraw {
                    GroupCommit *commit;
                    ~Withdraw()
                    {
                        if (commit != nullptr) {
                            commit->withdraw();
                        }
                    }
                } pending{commit.get()};
                const transport::Segment segment{worker.bulk.get(), bytes,
                                                 bulkRegion(worker, bytes)};
                Status got = session.connection->bulkGet(*descriptor, {&segment, 1}, worker.index,
                                                         transport::deadlineIn(kBulkDeadline));
                if (got) {
                    got = waitBulk(worker);
                }
                if (!got) {
                    return got.withContext("write " + object->handle.name());
                }
                if ((body.io.flags & kBulkChecksums) != 0) {
                    const std::size_t pages = body.io.pageCount;
                    if (auto status = computePageCrcs({worker.bulk.get(), bytes},
                                                      {worker.crcs.data(), pages});
                        !status) {
                        return status;
                    }
                    for (std::size_t i = 0; i < pages; ++i) {
                        if (worker.crcs[i] != body.pageCrcs[i]) {
                            return Status(Errc::io_error,
                                          "write " + object->handle.name() + " page " +
                                              std::to_string(i) +
                                              ": checksum mismatch, data damaged in transit");
                        }
                    }
                }
                const iovec vector{worker.bulk.get(), bytes};
                pending.commit = nullptr; // writeDurable consumes the announcement
                const std::uint64_t inode = object->handle.inode();
                const std::uint64_t firstPage = body.io.offset / kPageSize;
                const std::uint64_t endPage = pagesOf(body.io.offset + bytes);
                crcCache.beginChange(inode, firstPage, endPage);
                auto written =
                    commit->writeDurable(object->handle, {&vector, 1}, body.io.offset, true);
                const auto after = object->handle.stat();
                // The sums just checked are the pages' CRCs now: the next read need not sum them.
                const bool checked = written && (body.io.flags & kBulkChecksums) != 0 &&
                                     body.io.offset % kPageSize == 0;
                (void)crcCache.endChange(inode, firstPage, endPage,
                                         after ? std::optional(identityOf(*after)) : std::nullopt,
                                         checked ? std::span<const std::uint32_t>(
                                                       worker.crcs.data(), *written / kPageSize)
                                                 : std::span<const std::uint32_t>{});
                if (!written) {
                    return written.status();
                }
                jobStats.sample(job, JobStats::write_bytes, static_cast<std::int64_t>(*written));
                return WriteReply{static_cast<std::uint32_t>(*written)};
            } else if constexpr (std::is_same_v<T, LockEnqueueRequest>) {
                auto object = opened(body.handle);
                if (!object) {
                    return badHandle(body.handle);
                }
                const LockMode mode =
                    body.mode == protocol::LockMode::pw ? LockMode::PW : LockMode::PR;
                // Granted to the export: blocking callbacks go to its first connection.
                Session &owner = session.exportSession();
                auto lock = locks->enqueue(object->resource, mode, owner.id,
                                           (body.flags & kLockNonBlocking) != 0
                                               ? LockManager::OnConflict::refuse
                                               : LockManager::OnConflict::wait);
                if (!lock) {
                    return lock.status();
                }
                {
                    std::lock_guard guard(owner.mutex);
                    owner.locks.insert(*lock);
                }
                // Granted: every conflicting holder wrote back and let go, so the size is what
                // this holder's writes start from.
                const auto attr = object->handle.stat();
                if (!attr) {
                    // Not granted after all: the client hears an error and holds nothing.
                    {
                        std::lock_guard guard(owner.mutex);
                        owner.locks.erase(*lock);
                    }
                    (void)locks->cancel(*lock);
                    return attr.status().withContext("lock enqueue: object size");
                }
                return LockEnqueueReply{*lock, body.mode, attr->size};
            } else if constexpr (std::is_same_v<T, LockCancelRequest>) {
                {
                    Session &owner = session.exportSession();
                    std::lock_guard guard(owner.mutex);
                    if (owner.locks.erase(body.lockHandle) == 0) {
                        return Status(Errc::not_found, "lock " + std::to_string(body.lockHandle) +
                                                           " is not held by this client");
                    }
                }
                if (auto status = locks->cancel(body.lockHandle); !status) {
                    return status;
                }
                return LockCancelReply{};
            } else {
                return Status(Errc::unimplemented, std::string(opcodeName(request.opcode())) +
                                                       " is not a request a target serves");
            }
        },
        request.body);

    if (const auto *status = std::get_if<Status>(&outcome)) {
        if (!status->ok()) {
            sendError(session, worker, request, *status);
        }
        return; // ok: the handler replied itself
    }
    Message reply{request.xid, {}, std::get<Body>(outcome), request.version}; // the request's
    sendReply(session, worker, reply);
}

} // namespace lutra::target
