#pragma once
// The transport plugin SDK. A transport moves opaque small messages both ways (requests,
// replies, target→client callbacks) and bulk data described by memory descriptors, modelled on
// LNet. Each plugin is a shared object liblutra-transport-<name>.so exporting
// lutra_transport_entry(); the host loads it by name (datapath/transport/loader.h).
//
// Rules every plugin follows so that a verbs plugin fits the same interface:
// * The receiver of bulk data always provides the destination buffers. A side exposes memory
//   (exposeBulk) and gets a small opaque descriptor to send inside a protocol message; the peer
//   then bulkPut()s into it (verbs: RDMA WRITE) or bulkGet()s from it (verbs: RDMA READ).
// * Memory is registered once (registerMemory) and segments name their region, so a verbs
//   plugin can find the memory key without a lookup per page.
// * Everything marked noexcept below is the hot path: it neither allocates in steady state nor
//   throws. Errors come back as Status (whose text may allocate: errors are not the hot path).
// * Flow control is bounded: a sender that has no credit waits until its deadline and then gets
//   Errc::resource_exhausted. Nothing queues without bound.

#include <lutra/status.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace lutra::transport {

// Bumped whenever anything in this header changes layout or meaning. The loader refuses a plugin
// built against another version.
// 2: Connection::bulkPutFile; 3: exposeBulkSummed (ArrivalSums), bulkPutFileThenSend.
inline constexpr std::uint32_t kAbiVersion = 3;
inline constexpr std::size_t kMaxBulkDescriptorBytes = 128;
// Segments in one bulk transfer (LNet's LNET_MAX_IOV).
inline constexpr std::size_t kMaxBulkSegments = 256;

using Clock = std::chrono::steady_clock;
using Deadline = Clock::time_point;

// A deadline that has already passed: "try once, never wait".
inline Deadline noWait() noexcept
{
    return Deadline::min();
}
inline Deadline deadlineIn(std::chrono::milliseconds timeout) noexcept
{
    return Clock::now() + timeout;
}

enum class LogLevel : int { debug, info, warning, error };

// Where a plugin writes its log lines. Plain function pointer + context so it crosses the
// shared-object boundary without any host type; `text` is valid only during the call. May be
// called from any thread, concurrently. A null `write` discards.
struct LogSink {
    void (*write)(void *context, LogLevel level, std::string_view text) = nullptr;
    void *context = nullptr;

    void operator()(LogLevel level, std::string_view text) const
    {
        if (write != nullptr) {
            write(context, level, text);
        }
    }
};

// What the two ends of a connection agree on at connect time: the minimum of both proposals.
struct Limits {
    std::uint32_t maxMessageSize = 8192;  // bytes of one message
    std::uint64_t maxBulkSize = 4u << 20; // bytes of one bulk transfer
    std::uint32_t queueDepth = 32;        // messages + bulk operations in flight per direction
};

struct TransportOptions {
    LogSink log;
    Limits proposed; // this side's offer; each connection negotiates down
    // Plugin I/O threads (handlers run on them). 0: PluginLoader::create picks one per two CPUs
    // this process may run on, 1 to 2 (automaticIoThreads in transport/loader.h).
    std::uint32_t ioThreads = 0;
    std::chrono::milliseconds connectTimeout{5000};
};

// Registered memory. tcp needs none (registration is a no-op); verbs pins it (ibv_reg_mr).
struct MemoryRegion {
    std::uint64_t id = 0; // 0: not registered
    void *base = nullptr;
    std::size_t length = 0;
};

// One contiguous piece of a bulk buffer, inside a registered region (tcp accepts region 0).
struct Segment {
    void *address = nullptr;
    std::size_t length = 0;
    std::uint64_t region = 0;
};

// Bytes of an open file, for a bulk put the transport may send without copying them through
// user memory (tcp: sendfile). Bytes past the end of the file are sent as zeros.
struct FileRange {
    int fd = -1;
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
};

// Checksums a transport computes while a peer's bulk put arrives (exposeBulkSummed), so the
// host need not read the data back from memory to verify it: crc32c (Castagnoli, as iSCSI) of
// each `pageBytes` piece of the put, counted from the start of the exposed memory; a short last
// piece is summed over its bytes. The transport writes both arrays on its I/O thread; they are
// complete for the put when a message the peer sent after it is delivered.
struct ArrivalSums {
    std::uint32_t *pageCrcs = nullptr;    // one per `pageBytes` of the exposed memory
    std::uint64_t *summedBytes = nullptr; // bytes of the last put summed (0 until data arrives)
    std::uint32_t pageBytes = 4096;
};

// Which operation the peer may perform on exposed memory.
enum class BulkAccess : std::uint8_t {
    putInto = 1, // the peer writes into it (e.g. a read: the client exposes page-cache pages)
    getFrom = 2, // the peer reads from it (e.g. a write: the client exposes dirty pages)
};

// Opaque bytes that name exposed memory; travels inside protocol messages.
struct BulkDescriptor {
    std::uint8_t size = 0;
    std::array<std::byte, kMaxBulkDescriptorBytes> bytes{};

    std::span<const std::byte> view() const noexcept { return {bytes.data(), size}; }
    static Result<BulkDescriptor> fromBytes(std::span<const std::byte> data)
    {
        if (data.size() > kMaxBulkDescriptorBytes) {
            return Status(Errc::invalid_argument, "bulk descriptor longer than 128 bytes");
        }
        BulkDescriptor descriptor;
        descriptor.size = static_cast<std::uint8_t>(data.size());
        for (std::size_t i = 0; i < data.size(); ++i) {
            descriptor.bytes[i] = data[i];
        }
        return descriptor;
    }
};

class Connection;
using ConnectionPtr = std::shared_ptr<Connection>;

// Supplied by the host; called on plugin I/O threads. Handlers must be quick and must not block:
// while one runs, the connections of that I/O thread make no progress. They may call send(),
// bulkPut() and bulkGet() with noWait(); they must not throw (noexcept) nor destroy the
// transport. A handler must outlive every connection that uses it.
class Handler {
public:
    virtual ~Handler() = default;

    // A listener accepted and negotiated a connection. Set its context here: messages for it
    // are delivered only after this returns.
    virtual void onAccepted(const ConnectionPtr &connection) noexcept { (void)connection; }
    // One whole message; `message` points into the plugin's receive buffer and is valid only
    // during the call.
    virtual void onMessage(Connection &connection, std::span<const std::byte> message) noexcept = 0;
    // A bulkPut/bulkGet started on this side finished (ok) or failed. Exactly once per operation
    // that was accepted, before onDisconnected.
    virtual void onBulkDone(Connection &connection, std::uint64_t tag,
                            const Status &status) noexcept
    {
        (void)connection;
        (void)tag;
        (void)status;
    }
    // Exactly once per connection that was handed to the host, with the reason (a local close
    // gives Errc::cancelled). No callback for this connection follows.
    virtual void onDisconnected(Connection &connection, const Status &reason) noexcept = 0;
};

class Connection {
public:
    virtual ~Connection() = default;

    virtual const Limits &limits() const noexcept = 0;  // negotiated
    virtual std::string_view peer() const noexcept = 0; // the peer's endpoint URI
    virtual bool connected() const noexcept = 0;

    // Host context, e.g. the session object, so handlers find it without a lookup.
    virtual void setContext(void *context) noexcept = 0;
    virtual void *context() const noexcept = 0;

    // Queues one message (copied; the caller's buffer is free on return). Waits for a credit until
    // `deadline`, then resource_exhausted. unavailable once disconnected; out_of_range when larger
    // than limits().maxMessageSize. Messages and bulk data are delivered in order per direction.
    virtual Status send(std::span<const std::byte> message, Deadline deadline) noexcept = 0;

    // Exposes local memory to the peer of this connection. The memory must stay valid until
    // unexposeBulk(), which the host calls once the transfer is known to be over (the reply
    // arrived) or the connection is gone. resource_exhausted when all exposure slots are in use.
    virtual Result<BulkDescriptor> exposeBulk(std::span<const Segment> segments,
                                              BulkAccess access) noexcept = 0;
    virtual void unexposeBulk(const BulkDescriptor &descriptor) noexcept = 0;
    // exposeBulk(segments, putInto) that also sums the data as it arrives into `sums` (which
    // must stay valid until unexposeBulk). A transport whose data lands without passing its CPU
    // (verbs: RDMA) answers unimplemented without side effects; the host then sums it itself.
    virtual Result<BulkDescriptor> exposeBulkSummed(std::span<const Segment> segments,
                                                    const ArrivalSums &sums) noexcept
    {
        (void)segments;
        (void)sums;
        return Status(Errc::unimplemented, "this transport does not sum bulk data on arrival");
    }

    // Writes `local` into the peer's exposed memory (peer exposed with putInto). Data put before
    // a message is visible to the peer when that message is delivered. `local` must stay valid
    // until onBulkDone(tag).
    virtual Status bulkPut(const BulkDescriptor &remote, std::span<const Segment> local,
                           std::uint64_t tag, Deadline deadline) noexcept = 0;
    // bulkPut of a file's bytes (a target serving a read from its page cache). `file.fd` must stay
    // open until onBulkDone(tag). A transport that cannot do better than reading into memory
    // answers unimplemented without side effects, and the host reads and calls bulkPut instead.
    virtual Status bulkPutFile(const BulkDescriptor &remote, const FileRange &file,
                               std::uint64_t tag, Deadline deadline) noexcept
    {
        (void)remote;
        (void)file;
        (void)tag;
        (void)deadline;
        return {Errc::unimplemented, "this transport has no file bulk put"};
    }
    // bulkPutFile, then `message` right behind the data, with no further wake-up of the sender
    // (a target's reply to the read). The message goes only if the file's bytes went in full:
    // when reading the file fails, onBulkDone(tag) carries the error and the message is dropped,
    // so the host answers otherwise. `message` is copied; it counts as a send (its credit is
    // taken here, its size checked against maxMessageSize). A transport without it answers
    // unimplemented without side effects.
    virtual Status bulkPutFileThenSend(const BulkDescriptor &remote, const FileRange &file,
                                       std::span<const std::byte> message, std::uint64_t tag,
                                       Deadline deadline) noexcept
    {
        (void)remote;
        (void)file;
        (void)message;
        (void)tag;
        (void)deadline;
        return {Errc::unimplemented, "this transport has no file bulk put with a message"};
    }
    // Reads the peer's exposed memory (exposed with getFrom) into `local`: the first
    // sum(local.length) bytes. `local` must stay valid until onBulkDone(tag).
    virtual Status bulkGet(const BulkDescriptor &remote, std::span<const Segment> local,
                           std::uint64_t tag, Deadline deadline) noexcept = 0;

    // Starts teardown; onDisconnected(cancelled) follows on an I/O thread. Idempotent.
    virtual void close() noexcept = 0;
};

// Accepts connections while it exists.
class Listener {
public:
    virtual ~Listener() = default;
    // The bound endpoint, with the real port when the URI asked for port 0.
    virtual std::string uri() const = 0;
};

// One instance of a plugin, with its own I/O threads. Destroying it closes every connection
// (each gets onDisconnected) and joins its threads; Connection handles held by the host stay
// safe to call and return unavailable.
class Transport {
public:
    virtual ~Transport() = default;

    virtual std::string_view name() const noexcept = 0;

    // Endpoints are URIs: tcp://host:port, verbs://device/ip:port.
    virtual Result<std::unique_ptr<Listener>> listen(std::string_view uri, Handler &handler) = 0;
    // Connects and negotiates limits, waiting up to options.connectTimeout. `context` is set
    // before any callback can run.
    virtual Result<ConnectionPtr> connect(std::string_view uri, Handler &handler,
                                          void *context = nullptr) = 0;

    // Register a page pool once; segments then carry region.id.
    virtual Result<MemoryRegion> registerMemory(void *base, std::size_t length) = 0;
    virtual void deregisterMemory(const MemoryRegion &region) noexcept = 0;
};

// What lutra_transport_entry() returns. abiVersion comes first and never moves, so the loader can
// check it before trusting anything else.
struct PluginEntry {
    std::uint32_t abiVersion = kAbiVersion;
    const char *name = nullptr;        // "tcp", as in liblutra-transport-tcp.so; unique
    const char *description = nullptr; // one line for listings
    Result<std::unique_ptr<Transport>> (*create)(const TransportOptions &options) = nullptr;
};

using EntryFunction = const PluginEntry *(*)();
inline constexpr const char *kEntrySymbol = "lutra_transport_entry";

} // namespace lutra::transport

// Each plugin defines this, exported, returning a pointer to a static PluginEntry.
extern "C" const lutra::transport::PluginEntry *lutra_transport_entry();
