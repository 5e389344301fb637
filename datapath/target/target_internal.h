#pragma once
// TargetServer's insides, shared by target_server.cpp (life cycle, transport callbacks) and
// target_ops.cpp (executing requests).

#include "protocol/codec.h"
#include "target/mapped_crcs.h"
#include "target/page_crc_cache.h"
#include "target/target_server.h"

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace lutra::target {

// The owner of the lock a truncate takes to revoke clients' cached locks: the target itself,
// never a session's id (those start at 1), so no blocking callback is sent for it.
inline constexpr ClientId kPunchClient = 0;

// An object a client opened: the fd and the lock resource it maps to.
struct OpenObject {
    ObjectHandle handle;
    std::string resource; // "ino:<n>": two names of one file share locks
    bool writable = false;
    // Zero-copy reads check residency and sum the pages through it (no copy).
    ObjectMapping mapping;
};

// One connected client. The connection's context points here; requests hold a shared_ptr so a
// disconnect never frees a session under a service thread.
struct Session : std::enable_shared_from_this<Session> {
    ClientId id = 0;
    transport::ConnectionPtr connection;

    std::mutex mutex;       // guards everything below
    bool connected = false; // protocol connect done
    std::string clientName;
    std::uint32_t maxBulkBytes = 0;
    std::uint64_t features = 0;
    // The protocol version agreed at connect: every message after it is framed with it.
    std::atomic<std::uint16_t> version{protocol::kMinVersion};
    std::uint64_t nextHandle = 1;
    std::unordered_map<std::uint64_t, std::shared_ptr<OpenObject>> handles;
    std::unordered_set<LockHandle> locks;
    // The transport answered bulkPutFile with unimplemented: read into the buffer from now on.
    std::atomic<bool> noFileBulk{false};
    // The transport answered bulkPutFileThenSend with unimplemented: reply after onBulkDone.
    std::atomic<bool> noReplyBehindFile{false};

    // kFeatureMultiConnection. A client's first connection holds its export (handles, locks
    // above) and the cookie its further connections present to join it; a joined connection
    // points at that session (set before `connected`, never changed after) and uses its export.
    std::uint64_t exportCookie = 0;             // first connections: 0 until asked for
    std::shared_ptr<Session> exportOwner;       // joined connections only
    std::vector<std::weak_ptr<Session>> joined; // first connections; under Impl::sessionsMutex

    // The session whose handles and locks this connection uses.
    Session &exportSession() noexcept { return exportOwner ? *exportOwner : *this; }
    std::string label() const; // "client-name (id 3)"
};

// A request copied off the I/O thread into preallocated memory.
struct RequestSlot {
    std::shared_ptr<Session> session;
    std::size_t length = 0;
    std::unique_ptr<std::byte[]> bytes; // protocol::kMaxMessageSize
    // A read the I/O thread tried to serve inline and tallied in job_stats before its put, which
    // sent nothing: the service thread serves it without tallying it again.
    bool readTallied = false;
};

// A fixed pool of request slots: a free list and a ready ring, both bounded by the pool size,
// so a flood of requests gets "busy" answers instead of unbounded memory.
class RequestQueue {
public:
    explicit RequestQueue(std::size_t slots);

    RequestSlot &slot(std::uint32_t index) { return m_slots[index]; }
    // A free slot, or -1 at once when all are taken or the queue is stopping.
    int acquire();
    void push(std::uint32_t index);
    // The next ready slot; -1 when stopping and nothing is left.
    int pop();
    void release(std::uint32_t index);
    void stop();
    // Waits until no request is queued or in service; false when `timeout` passed first.
    bool waitIdle(std::chrono::milliseconds timeout);

private:
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::condition_variable m_released;
    std::vector<RequestSlot> m_slots;
    std::vector<std::uint32_t> m_free;
    std::vector<std::uint32_t> m_ring;
    std::size_t m_head = 0;
    std::size_t m_count = 0;
    bool m_stopping = false;
};

// A service thread's own memory, allocated once.
struct Worker {
    unsigned index = 0;
    std::unique_ptr<std::byte[]> bulk; // kMaxBulkBytes, touched only as far as used
    // `bulk` registered with the transport (verbs pins it) once, on the first transfer, for
    // its first `registered` bytes; again only when a larger bulk size is negotiated.
    transport::MemoryRegion region;
    bool registrationFailed = false;
    std::unique_ptr<std::byte[]> reply;   // kMaxMessageSize
    std::vector<std::uint32_t> crcs;      // one per page of the largest bulk
    std::vector<unsigned char> residency; // mincore's answer for the largest bulk (makeResident)
    std::vector<protocol::DirEntry> entries;

    // Completion of this worker's bulkPut/bulkGet (tag = index).
    std::mutex bulkMutex;
    std::condition_variable bulkDone;
    bool bulkFinished = false;
    Status bulkStatus;

    std::thread thread;
};

// An error reply's text as the protocol allows it: at most kMaxErrorMessageLength bytes, control
// characters as spaces.
inline std::string errorReplyText(std::string text)
{
    if (text.size() > protocol::kMaxErrorMessageLength) {
        text.resize(protocol::kMaxErrorMessageLength);
    }
    for (char &c : text) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
            c = ' ';
        }
    }
    return text;
}

// What the kept page CRCs of an object are valid for: its mtime and size (ObjectHandle::stat).
inline PageCrcCache::Identity identityOf(const ObjectAttr &attr)
{
    return {
        std::chrono::duration_cast<std::chrono::nanoseconds>(attr.mtime.time_since_epoch()).count(),
        attr.size};
}

// A read served on the transport's I/O thread (serveReadInline), held until its onBulkDone:
// the object's fd must stay open while the transport sends from it.
struct InlineRead {
    std::shared_ptr<Session> session;
    std::shared_ptr<OpenObject> object;
    std::uint64_t xid = 0;
};

struct TargetServer::Impl final : transport::Handler, LockCallbacks {
    // onBulkDone tags from here on are inline reads (below them: service threads' indexes).
    static constexpr std::uint64_t kInlineTagBase = std::uint64_t{1} << 32;
    static constexpr std::size_t kInlineReads = 256; // in flight at once, over all connections

    TargetOptions options;
    std::string category; // log category "target.<name>"

    transport::Transport *transport = nullptr;
    std::atomic<bool> zeroCopyRead{options.zeroCopyRead};
    std::atomic<std::uint64_t> zeroCopyReads{0}; // reads served with bulkPutFile
    // Of those, the ones whose range was not all cached and was read in before the send.
    std::atomic<std::uint64_t> coldZeroCopyReads{0};
    std::unique_ptr<ObjectStore> store;
    std::unique_ptr<GroupCommit> commit;
    std::unique_ptr<LockManager> locks;
    jobs::JobStats jobStats;
    std::atomic<std::uint32_t> brwSizeMb{options.brwSizeMb};
    PageCrcCache crcCache; // page CRCs of objects read or written, until they change
    // Reads served on I/O threads: a fixed table and its free list.
    std::mutex inlineMutex;
    std::vector<InlineRead> inlineReads;
    std::vector<std::uint32_t> inlineFree;
    std::atomic<std::uint64_t> inlineReadCount{0};

    RequestQueue queue;
    std::vector<std::unique_ptr<Worker>> workers;

    std::mutex sessionsMutex;
    std::condition_variable sessionsGone; // shutdown waits for every onDisconnected
    // dropSession calls still running: shutdown must not free this object under one of them.
    std::size_t dropsRunning = 0;
    std::map<ClientId, std::shared_ptr<Session>> sessions; // exports and unconnected connections
    std::map<ClientId, std::shared_ptr<Session>> joinedConnections; // joined an export
    std::mt19937_64 cookieSource{std::random_device{}()};           // export cookies
    ClientId nextClientId = 1;                                      // 0 is kPunchClient
    std::atomic<std::uint64_t> nextCallbackXid{1};

    std::unique_ptr<transport::Listener> listener;
    std::mutex shutdownMutex;
    bool shutDown = false;

    std::unique_ptr<params::ParamGroup> paramGroup; // destroyed first: bindings point here

    explicit Impl(TargetOptions opts);

    Status publish(params::Registry &registry);
    void serve(Worker &worker);
    void execute(Worker &worker, RequestSlot &slot);
    void sendReply(Session &session, Worker &worker, const protocol::Message &reply);
    void sendError(Session &session, Worker &worker, const protocol::Message &request,
                   const Status &status);
    // Waits for the worker's bulk operation; the transport reports it through onBulkDone.
    Status waitBulk(Worker &worker);
    // A read served from the object's page cache with bulkPutFile. `replied`: the reply went
    // right behind the data (bulkPutFileThenSend), nothing is left to send.
    struct ZeroCopyRead {
        protocol::ReadReply reply;
        bool replied = false;
    };
    // Tallies the read in job_stats for `job` before its first put, unless `tallied` (then sets
    // it), so that no client has a reply its job_stats do not show yet.
    Result<ZeroCopyRead> readZeroCopy(Worker &worker, Session &session, const OpenObject &object,
                                      std::uint64_t xid, std::uint64_t offset, std::uint64_t bytes,
                                      const transport::BulkDescriptor &descriptor, bool sums,
                                      std::string_view job, bool &tallied);
    // On the I/O thread that received it: a read whose pages are all in the page cache (and whose
    // CRCs, with checksums, are all kept) goes out at once with bulkPutFileThenSend, with no
    // service thread. False: not such a read, or no room; the caller queues it as any request,
    // with `tallied` set when the read is in job_stats already (tallied before a put that failed).
    bool serveReadInline(transport::Connection &connection, Session &session,
                         std::span<const std::byte> message, bool &tallied) noexcept;
    // Its onBulkDone: the table entry back; on failure the error reply its data could not carry.
    void finishInlineRead(std::uint32_t index, const Status &status) noexcept;
    // A zero-copy read's page CRCs into worker.crcs: whole pages kept in crcCache, the rest
    // summed from the page cache (and kept).
    Status readCrcs(Worker &worker, const OpenObject &object, const FileMapping *mapping,
                    const ObjectAttr &attr, std::uint64_t offset, std::uint64_t length);
    // The region of the worker's first `bytes` of bulk buffer (0: unregistered, if that failed).
    std::uint64_t bulkRegion(Worker &worker, std::size_t bytes);
    std::shared_ptr<Session> findSession(ClientId id);
    void dropSession(Session &session, const Status &reason);
    // The Connect of a client's further connection: `session` joins the export `cookie` names.
    Status joinExport(Session &session, std::uint64_t cookie, std::string_view clientName);
    // The cookie of `session`'s export, made on first use (never 0).
    std::uint64_t exportCookieOf(Session &session);

    // transport::Handler (plugin I/O threads: quick, never blocking)
    void onAccepted(const transport::ConnectionPtr &connection) noexcept override;
    void onMessage(transport::Connection &connection,
                   std::span<const std::byte> message) noexcept override;
    void onBulkDone(transport::Connection &connection, std::uint64_t tag,
                    const Status &status) noexcept override;
    void onDisconnected(transport::Connection &connection, const Status &reason) noexcept override;

    // LockCallbacks (service threads)
    void sendBlockingCallback(ClientId client, LockHandle lock, std::string_view resource) override;
    void clientEvicted(ClientId client) override;
};

} // namespace lutra::target
