#pragma once
// The client <-> target wire messages as plain structs. Decoded strings and arrays are views into
// the received buffer (zero copy): a decoded Message is valid only while that buffer lives.
// The byte layout is described in datapath/protocol/README.md.

#include <lutra/status.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <string_view>
#include <variant>

namespace lutra::protocol {

// ---- limits --------------------------------------------------------------------------------

inline constexpr std::uint32_t kMagic = 0x4152544c; // "LTRA" on the wire
// Versions this build speaks. 2: a lock grant carries the object's size (LockEnqueueReply).
inline constexpr std::uint16_t kMinVersion = 1;
inline constexpr std::uint16_t kMaxVersion = 2;
inline constexpr std::size_t kHeaderSize = 24;
inline constexpr std::size_t kMaxMessageSize = 65536; // header included; connect may lower it
inline constexpr std::size_t kMinMessageSize = 8192;  // a peer must accept a max-length path
inline constexpr std::size_t kMaxJobIdLength = 64;
inline constexpr std::size_t kMaxPeerNameLength = 64; // client id, target name
inline constexpr std::size_t kMaxPathLength = 4096;
inline constexpr std::size_t kMaxNameLength = 255; // one path component / directory entry
inline constexpr std::size_t kMaxErrorMessageLength = 1024;
inline constexpr std::uint32_t kPageSize = 4096;
inline constexpr std::uint32_t kMaxBulkPages = 4096; // osc.*.max_pages_per_rpc maximum
inline constexpr std::uint32_t kMaxBulkBytes = kMaxBulkPages * kPageSize;
inline constexpr std::size_t kMaxBulkDescriptorLength = 128;
inline constexpr std::uint32_t kMaxMode = 07777; // permission bits only

// ---- enumerations and flag bits ------------------------------------------------------------

enum class Opcode : std::uint16_t {
    connect = 1,
    ping = 2,
    statfs = 3,
    create = 4,
    open = 5,
    close = 6,
    stat = 7,
    unlink = 8,
    truncate = 9,
    mkdir = 10,
    rmdir = 11,
    readdir = 12,
    read = 13,
    write = 14,
    lock_enqueue = 15,
    lock_cancel = 16,
    blocking_callback = 17,
};
inline constexpr std::uint16_t kMaxOpcode = 17;

// Header flags.
inline constexpr std::uint16_t kFlagReply = 1u << 0;
inline constexpr std::uint16_t kFlagError = 1u << 1; // only with kFlagReply: body is ErrorReply
inline constexpr std::uint16_t kKnownHeaderFlags = kFlagReply | kFlagError;

// Connect feature bits. Unknown bits are legal (that is what negotiation is for): the target
// answers with the intersection of what both sides know.
inline constexpr std::uint64_t kFeatureChecksums = 1u << 0;         // crc32c per bulk page
inline constexpr std::uint64_t kFeatureBlockingCallbacks = 1u << 1; // client serves callbacks
// Several connections of one client share one export (handles, locks): Connect carries the
// export cookie (request: 0 = a new export, else the export to join; reply: the export's).
inline constexpr std::uint64_t kFeatureMultiConnection = 1u << 2;

inline constexpr std::uint32_t kCreateExclusive = 1u << 0; // fail if the object exists
inline constexpr std::uint32_t kOpenRead = 1u << 0;
inline constexpr std::uint32_t kOpenWrite = 1u << 1;
inline constexpr std::uint32_t kBulkChecksums = 1u << 0;   // one crc32c per page travels along
inline constexpr std::uint32_t kLockNonBlocking = 1u << 0; // fail instead of waiting

enum class ObjectKind : std::uint8_t { file = 1, directory = 2 };
enum class LockMode : std::uint8_t { pr = 1, pw = 2 };

std::string_view opcodeName(Opcode opcode) noexcept; // "readdir", "lock_enqueue", ...

// ---- views -----------------------------------------------------------------------------------

// Bytes the protocol carries without interpreting them (the transport's bulk descriptor).
struct OpaqueBytes {
    std::span<const std::byte> bytes;

    bool operator==(const OpaqueBytes &other) const
    {
        return std::ranges::equal(bytes, other.bytes);
    }
};

// A list of crc32c values. Built from native integers by a sender, or a view of the
// little-endian array inside a received message (which may be unaligned, hence not a span).
class Crc32List {
public:
    Crc32List() = default;
    explicit Crc32List(std::span<const std::uint32_t> values) : m_values(values) {}
    // `wire` holds 4 little-endian bytes per value.
    static Crc32List fromWire(std::span<const std::byte> wire) noexcept;

    std::size_t size() const noexcept { return m_wire ? m_bytes.size() / 4 : m_values.size(); }
    bool empty() const noexcept { return size() == 0; }
    std::uint32_t operator[](std::size_t index) const noexcept;

    bool operator==(const Crc32List &other) const noexcept;

private:
    std::span<const std::uint32_t> m_values;
    std::span<const std::byte> m_bytes;
    bool m_wire = false;
};

struct DirEntry {
    std::uint64_t objectId = 0;
    ObjectKind kind = ObjectKind::file;
    std::string_view name; // one component, no '/', not "." or ".."

    bool operator==(const DirEntry &) const = default;
};

// Bytes one entry takes in a readdir reply: lets a target fill a page up to the message size.
std::size_t dirEntryWireSize(const DirEntry &entry) noexcept;

// The entries of a readdir reply: a span of DirEntry on the sending side, or a view of the
// validated entries inside a received message (parsed again lazily while iterating).
class DirEntryList {
public:
    class Iterator {
    public:
        using value_type = DirEntry;
        using difference_type = std::ptrdiff_t;
        using reference = DirEntry;
        using iterator_category = std::input_iterator_tag;

        Iterator() = default;
        DirEntry operator*() const noexcept;
        Iterator &operator++() noexcept;
        Iterator operator++(int) noexcept
        {
            Iterator old = *this;
            ++*this;
            return old;
        }
        bool operator==(const Iterator &other) const noexcept { return m_index == other.m_index; }

    private:
        friend class DirEntryList;
        Iterator(const DirEntryList *list, std::size_t index) : m_list(list), m_index(index) {}

        const DirEntryList *m_list = nullptr;
        std::size_t m_index = 0;
        std::size_t m_offset = 0; // into m_list->m_bytes for a received list
    };

    DirEntryList() = default;
    explicit DirEntryList(std::span<const DirEntry> entries) : m_entries(entries) {}
    // `wire` must already be validated to hold exactly `count` encoded entries (decode does it).
    static DirEntryList fromWire(std::span<const std::byte> wire, std::size_t count) noexcept;

    std::size_t size() const noexcept { return m_wire ? m_count : m_entries.size(); }
    bool empty() const noexcept { return size() == 0; }
    Iterator begin() const noexcept { return {this, 0}; }
    Iterator end() const noexcept { return {this, size()}; }

    bool operator==(const DirEntryList &other) const noexcept;

private:
    std::span<const DirEntry> m_entries;
    std::span<const std::byte> m_bytes;
    std::size_t m_count = 0;
    bool m_wire = false;
};

// ---- shared parts ----------------------------------------------------------------------------

struct ObjectAttr {
    std::uint64_t objectId = 0; // stable for the object's life (an inode number)
    ObjectKind kind = ObjectKind::file;
    std::uint32_t mode = 0; // permission bits, <= 07777
    std::uint64_t size = 0;
    std::uint64_t mtimeNs = 0; // nanoseconds since the Unix epoch

    bool operator==(const ObjectAttr &) const = default;
};

// What a bulk read or write covers: whole pages from a page-aligned offset; the last page may be
// partial (a write that ends a file, a read up to a known size).
struct BulkIo {
    std::uint64_t handle = 0;
    std::uint64_t offset = 0;                // multiple of kPageSize
    std::uint32_t pageCount = 0;             // 1 .. kMaxBulkPages
    std::uint16_t lastPageBytes = kPageSize; // 1 .. kPageSize
    std::uint32_t flags = 0;                 // kBulkChecksums
    OpaqueBytes descriptor;                  // <= kMaxBulkDescriptorLength, filled by the transport

    std::uint64_t byteCount() const noexcept
    {
        return pageCount == 0 ? 0 : std::uint64_t{pageCount - 1} * kPageSize + lastPageBytes;
    }
    bool operator==(const BulkIo &) const = default;
};

// ---- messages --------------------------------------------------------------------------------
// Each has kOpcode and kReply; requests travel with a job id, replies echo the request's xid.
// Objects are named by relative paths ("." is the root) for namespace operations; open/create
// return a u64 handle that data, truncate, lock and close operations use.

#define LUTRA_PROTOCOL_MESSAGE(op, reply)                                                          \
    static constexpr Opcode kOpcode = Opcode::op;                                                  \
    static constexpr bool kReply = reply

struct ConnectRequest {
    LUTRA_PROTOCOL_MESSAGE(connect, false);
    std::uint16_t minVersion = kMinVersion; // the range the client speaks
    std::uint16_t maxVersion = kMaxVersion;
    std::uint32_t maxBulkBytes = kMaxBulkBytes;      // multiple of kPageSize, <= kMaxBulkBytes
    std::uint32_t maxMessageBytes = kMaxMessageSize; // kMinMessageSize .. kMaxMessageSize
    std::uint64_t features = 0;
    std::string_view clientId; // 1 .. kMaxPeerNameLength printable characters
    // Sent only with kFeatureMultiConnection: 0 opens a new export, else joins that export.
    std::uint64_t exportCookie = 0;
    bool operator==(const ConnectRequest &) const = default;
};
struct ConnectReply {
    LUTRA_PROTOCOL_MESSAGE(connect, true);
    std::uint16_t version = kMaxVersion; // chosen; kMinVersion .. kMaxVersion
    std::uint32_t maxBulkBytes = kMaxBulkBytes;
    std::uint32_t maxMessageBytes = kMaxMessageSize;
    std::uint64_t features = 0;  // the intersection
    std::string_view targetName; // "ost0"
    // Sent only with kFeatureMultiConnection (then not 0): the cookie a further connection of
    // this client presents to join the same export.
    std::uint64_t exportCookie = 0;
    bool operator==(const ConnectReply &) const = default;
};

struct PingRequest {
    LUTRA_PROTOCOL_MESSAGE(ping, false);
    bool operator==(const PingRequest &) const = default;
};
struct PingReply {
    LUTRA_PROTOCOL_MESSAGE(ping, true);
    bool operator==(const PingReply &) const = default;
};

struct StatfsRequest {
    LUTRA_PROTOCOL_MESSAGE(statfs, false);
    bool operator==(const StatfsRequest &) const = default;
};
struct StatfsReply {
    LUTRA_PROTOCOL_MESSAGE(statfs, true);
    std::uint32_t blockSize = kPageSize;
    std::uint64_t totalBlocks = 0;
    std::uint64_t freeBlocks = 0;
    std::uint64_t availBlocks = 0;
    std::uint64_t totalObjects = 0;
    std::uint64_t freeObjects = 0;
    bool operator==(const StatfsReply &) const = default;
};

struct CreateRequest {
    LUTRA_PROTOCOL_MESSAGE(create, false);
    std::string_view path;
    std::uint32_t mode = 0644;
    std::uint32_t flags = 0; // kCreateExclusive
    bool operator==(const CreateRequest &) const = default;
};
struct CreateReply {
    LUTRA_PROTOCOL_MESSAGE(create, true);
    std::uint64_t handle = 0; // opened for reading and writing
    ObjectAttr attr;
    bool operator==(const CreateReply &) const = default;
};

struct OpenRequest {
    LUTRA_PROTOCOL_MESSAGE(open, false);
    std::string_view path;
    std::uint32_t flags = kOpenRead; // kOpenRead | kOpenWrite, at least one
    bool operator==(const OpenRequest &) const = default;
};
struct OpenReply {
    LUTRA_PROTOCOL_MESSAGE(open, true);
    std::uint64_t handle = 0;
    ObjectAttr attr;
    bool operator==(const OpenReply &) const = default;
};

struct CloseRequest {
    LUTRA_PROTOCOL_MESSAGE(close, false);
    std::uint64_t handle = 0;
    bool operator==(const CloseRequest &) const = default;
};
struct CloseReply {
    LUTRA_PROTOCOL_MESSAGE(close, true);
    bool operator==(const CloseReply &) const = default;
};

struct StatRequest {
    LUTRA_PROTOCOL_MESSAGE(stat, false);
    std::string_view path;
    bool operator==(const StatRequest &) const = default;
};
struct StatReply {
    LUTRA_PROTOCOL_MESSAGE(stat, true);
    ObjectAttr attr;
    bool operator==(const StatReply &) const = default;
};

struct UnlinkRequest {
    LUTRA_PROTOCOL_MESSAGE(unlink, false);
    std::string_view path;
    bool operator==(const UnlinkRequest &) const = default;
};
struct UnlinkReply {
    LUTRA_PROTOCOL_MESSAGE(unlink, true);
    bool operator==(const UnlinkReply &) const = default;
};

struct TruncateRequest {
    LUTRA_PROTOCOL_MESSAGE(truncate, false);
    std::uint64_t handle = 0;
    std::uint64_t size = 0;
    bool operator==(const TruncateRequest &) const = default;
};
struct TruncateReply {
    LUTRA_PROTOCOL_MESSAGE(truncate, true);
    bool operator==(const TruncateReply &) const = default;
};

struct MkdirRequest {
    LUTRA_PROTOCOL_MESSAGE(mkdir, false);
    std::string_view path;
    std::uint32_t mode = 0755;
    bool operator==(const MkdirRequest &) const = default;
};
struct MkdirReply {
    LUTRA_PROTOCOL_MESSAGE(mkdir, true);
    ObjectAttr attr;
    bool operator==(const MkdirReply &) const = default;
};

struct RmdirRequest {
    LUTRA_PROTOCOL_MESSAGE(rmdir, false);
    std::string_view path;
    bool operator==(const RmdirRequest &) const = default;
};
struct RmdirReply {
    LUTRA_PROTOCOL_MESSAGE(rmdir, true);
    bool operator==(const RmdirReply &) const = default;
};

// Paged: the first request has cookie 0, each next one the reply's nextCookie, until eof. The
// target puts at most maxEntries entries, and no more than fit its message size, in one reply.
struct ReaddirRequest {
    LUTRA_PROTOCOL_MESSAGE(readdir, false);
    std::string_view path;
    std::uint64_t cookie = 0;
    std::uint32_t maxEntries = 1024; // >= 1
    bool operator==(const ReaddirRequest &) const = default;
};
struct ReaddirReply {
    LUTRA_PROTOCOL_MESSAGE(readdir, true);
    std::uint64_t nextCookie = 0;
    bool eof = false;
    DirEntryList entries;
    bool operator==(const ReaddirReply &) const = default;
};

struct ReadRequest {
    LUTRA_PROTOCOL_MESSAGE(read, false);
    BulkIo io; // kBulkChecksums asks the target to send page crcs back
    bool operator==(const ReadRequest &) const = default;
};
struct ReadReply {
    LUTRA_PROTOCOL_MESSAGE(read, true);
    std::uint32_t bytesRead = 0; // short at end of object
    std::uint32_t flags = 0;     // kBulkChecksums
    Crc32List pageCrcs;          // with kBulkChecksums: one per page of bytesRead, else none
    bool operator==(const ReadReply &) const = default;
};

struct WriteRequest {
    LUTRA_PROTOCOL_MESSAGE(write, false);
    BulkIo io;
    Crc32List pageCrcs; // with kBulkChecksums: io.pageCount values, else none
    bool operator==(const WriteRequest &) const = default;
};
struct WriteReply {
    LUTRA_PROTOCOL_MESSAGE(write, true);
    std::uint32_t bytesWritten = 0; // durable when the reply is sent
    bool operator==(const WriteReply &) const = default;
};

struct LockEnqueueRequest {
    LUTRA_PROTOCOL_MESSAGE(lock_enqueue, false);
    std::uint64_t handle = 0; // the object, by open handle
    LockMode mode = LockMode::pr;
    std::uint32_t flags = 0; // kLockNonBlocking
    bool operator==(const LockEnqueueRequest &) const = default;
};
struct LockEnqueueReply {
    LUTRA_PROTOCOL_MESSAGE(lock_enqueue, true);
    std::uint64_t lockHandle = 0;
    LockMode mode = LockMode::pr; // granted
    // The object's size as the lock was granted, every conflicting holder's data written back
    // (Lustre's lock value block): a writer under this lock knows what the target holds.
    // Version 2; a version 1 reply decodes with kSizeUnknown.
    static constexpr std::uint64_t kSizeUnknown = ~std::uint64_t{0};
    std::uint64_t objectSize = 0;
    bool operator==(const LockEnqueueReply &) const = default;
};

struct LockCancelRequest {
    LUTRA_PROTOCOL_MESSAGE(lock_cancel, false);
    std::uint64_t lockHandle = 0;
    bool operator==(const LockCancelRequest &) const = default;
};
struct LockCancelReply {
    LUTRA_PROTOCOL_MESSAGE(lock_cancel, true);
    bool operator==(const LockCancelReply &) const = default;
};

// Target -> client: "please cancel lock H". Its job id is that of the conflicting request.
struct BlockingCallbackRequest {
    LUTRA_PROTOCOL_MESSAGE(blocking_callback, false);
    std::uint64_t lockHandle = 0;
    LockMode conflictingMode = LockMode::pw; // what the other client asked for
    bool operator==(const BlockingCallbackRequest &) const = default;
};
struct BlockingCallbackReply {
    LUTRA_PROTOCOL_MESSAGE(blocking_callback, true);
    bool operator==(const BlockingCallbackReply &) const = default;
};

#undef LUTRA_PROTOCOL_MESSAGE

// The reply to any request that failed: the header keeps the request's opcode and xid and sets
// kFlagReply | kFlagError.
struct ErrorReply {
    Opcode opcode = Opcode::ping; // of the failed request
    Errc code = Errc::internal;   // never ok
    std::string_view message;     // <= kMaxErrorMessageLength, no control characters
    bool operator==(const ErrorReply &) const = default;
};

using Body =
    std::variant<ConnectRequest, ConnectReply, PingRequest, PingReply, StatfsRequest, StatfsReply,
                 CreateRequest, CreateReply, OpenRequest, OpenReply, CloseRequest, CloseReply,
                 StatRequest, StatReply, UnlinkRequest, UnlinkReply, TruncateRequest, TruncateReply,
                 MkdirRequest, MkdirReply, RmdirRequest, RmdirReply, ReaddirRequest, ReaddirReply,
                 ReadRequest, ReadReply, WriteRequest, WriteReply, LockEnqueueRequest,
                 LockEnqueueReply, LockCancelRequest, LockCancelReply, BlockingCallbackRequest,
                 BlockingCallbackReply, ErrorReply>;

struct Message {
    std::uint64_t xid = 0;  // transaction id: chosen by the requester, echoed by the reply
    std::string_view jobId; // requests: 1 .. kMaxJobIdLength printable characters; replies: ""
    Body body;
    // The header's version, which decides the body's layout: the session's negotiated version
    // (connect itself is framed as version 1; a reply has its request's version).
    std::uint16_t version = kMaxVersion;

    Opcode opcode() const noexcept;
    bool isReply() const noexcept;
    bool operator==(const Message &) const = default;
};

} // namespace lutra::protocol
