#include "protocol/codec.h"

#include "protocol/wire_io.h"

#include <algorithm>
#include <charconv>
#include <concepts>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace lutra::protocol {

namespace {

// Header field offsets (the table in README.md).
constexpr std::size_t kOffVersion = 4;
constexpr std::size_t kOffOpcode = 6;
constexpr std::size_t kOffFlags = 8;
constexpr std::size_t kOffJobIdLength = 10;
constexpr std::size_t kOffReserved = 11;
constexpr std::size_t kOffBodyLength = 12;
constexpr std::size_t kOffXid = 16;
static_assert(kOffXid + 8 == kHeaderSize);

// ---- error text helpers (allocation happens only on these failure paths) ----------------------

Status protocolError(std::string message)
{
    return {Errc::protocol_error, std::move(message)};
}

std::string hex(std::uint64_t value)
{
    char digits[16];
    const auto end = std::to_chars(digits, digits + sizeof digits, value, 16).ptr;
    return "0x" + std::string(digits, end);
}

std::string octal(std::uint64_t value)
{
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value, 8).ptr;
    return "0" + std::string(digits, end);
}

std::string num(std::uint64_t value)
{
    return std::to_string(value);
}

// ---- field checks shared by encode (the sender's bug) and decode (the peer's) ----------------

Status checkPrintable(std::string_view text, std::string_view field, std::size_t maxLength)
{
    if (text.empty()) {
        return protocolError(std::string(field) + " is empty");
    }
    if (text.size() > maxLength) {
        return protocolError(std::string(field) + " length " + num(text.size()) +
                             " exceeds the maximum " + num(maxLength));
    }
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto c = static_cast<unsigned char>(text[i]);
        if (c < 0x21 || c > 0x7e) {
            return protocolError(std::string(field) + ": byte " + num(i) + " is " + hex(c) +
                                 ", not a printable character");
        }
    }
    return {};
}

// One path component or directory entry name. `field()` names it in errors; it is only called
// on failure, so valid names cost no allocation.
template <typename Field> Status checkName(std::string_view name, const Field &field)
{
    if (name.empty()) {
        return protocolError(field() + " is empty");
    }
    if (name.size() > kMaxNameLength) {
        return protocolError(field() + " length " + num(name.size()) + " exceeds the maximum " +
                             num(kMaxNameLength));
    }
    if (name == "." || name == "..") {
        return protocolError(field() + " '" + std::string(name) + "' is not allowed");
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        if (name[i] == '/' || name[i] == '\0') {
            return protocolError(field() + ": byte " + num(i) + " is " +
                                 (name[i] == '/' ? "'/'" : "NUL") + ", not allowed in a name");
        }
    }
    return {};
}

// Relative, normalised paths: "a/b/c", or "." for the root. Nothing can name a parent.
Status checkPath(std::string_view path)
{
    if (path.empty()) {
        return protocolError("path is empty");
    }
    if (path.size() > kMaxPathLength) {
        return protocolError("path length " + num(path.size()) + " exceeds the maximum " +
                             num(kMaxPathLength));
    }
    if (path == ".") {
        return {};
    }
    if (path.front() == '/') {
        return protocolError("path is absolute; paths are relative to the target's root");
    }
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t slash = std::min(path.find('/', start), path.size());
        const auto component = path.substr(start, slash - start);
        const auto field = [start] { return "path component at byte " + num(start); };
        if (auto status = checkName(component, field); !status.ok()) {
            return status;
        }
        start = slash + 1;
    }
    return {};
}

Status checkFlags(std::uint64_t flags, std::uint64_t known, std::string_view field)
{
    if ((flags & ~known) != 0) {
        return protocolError(std::string(field) + " " + hex(flags) + " has unknown bits " +
                             hex(flags & ~known));
    }
    return {};
}

Status checkMode(std::uint32_t mode)
{
    if (mode > kMaxMode) {
        return protocolError("mode " + octal(mode) + " has bits outside " + octal(kMaxMode));
    }
    return {};
}

Status checkKind(ObjectKind kind)
{
    if (kind != ObjectKind::file && kind != ObjectKind::directory) {
        return protocolError("object kind " + num(static_cast<std::uint8_t>(kind)) +
                             " is not 1 (file) or 2 (directory)");
    }
    return {};
}

Status checkLockMode(LockMode mode, std::string_view field)
{
    if (mode != LockMode::pr && mode != LockMode::pw) {
        return protocolError(std::string(field) + " " + num(static_cast<std::uint8_t>(mode)) +
                             " is not 1 (PR) or 2 (PW)");
    }
    return {};
}

Status checkAttr(const ObjectAttr &attr)
{
    if (auto status = checkKind(attr.kind); !status.ok()) {
        return status;
    }
    return checkMode(attr.mode);
}

Status checkLimits(std::uint32_t maxBulkBytes, std::uint32_t maxMessageBytes)
{
    if (maxBulkBytes < kPageSize || maxBulkBytes > kMaxBulkBytes || maxBulkBytes % kPageSize) {
        return protocolError("max bulk size " + num(maxBulkBytes) + " is not a multiple of " +
                             num(kPageSize) + " in " + num(kPageSize) + ".." + num(kMaxBulkBytes));
    }
    if (maxMessageBytes < kMinMessageSize || maxMessageBytes > kMaxMessageSize) {
        return protocolError("max message size " + num(maxMessageBytes) + " is outside " +
                             num(kMinMessageSize) + ".." + num(kMaxMessageSize));
    }
    return {};
}

Status checkBulk(const BulkIo &io)
{
    if (io.pageCount < 1 || io.pageCount > kMaxBulkPages) {
        return protocolError("page count " + num(io.pageCount) + " is outside 1.." +
                             num(kMaxBulkPages));
    }
    if (io.lastPageBytes < 1 || io.lastPageBytes > kPageSize) {
        return protocolError("last page bytes " + num(io.lastPageBytes) + " is outside 1.." +
                             num(kPageSize));
    }
    if (io.offset % kPageSize != 0) {
        return protocolError("offset " + num(io.offset) + " is not a multiple of " +
                             num(kPageSize));
    }
    if (io.offset > UINT64_MAX - io.byteCount()) {
        return protocolError("offset " + num(io.offset) + " + " + num(io.byteCount()) +
                             " bytes overflows");
    }
    if (io.descriptor.bytes.size() > kMaxBulkDescriptorLength) {
        return protocolError("bulk descriptor length " + num(io.descriptor.bytes.size()) +
                             " exceeds the maximum " + num(kMaxBulkDescriptorLength));
    }
    return checkFlags(io.flags, kBulkChecksums, "bulk flags");
}

Status checkCrcCount(const Crc32List &crcs, std::uint64_t expected, std::string_view why)
{
    if (crcs.size() != expected) {
        return protocolError(num(crcs.size()) + " page crcs, expected " + num(expected) + " " +
                             std::string(why));
    }
    return {};
}

std::uint64_t pagesFor(std::uint64_t bytes)
{
    return (bytes + kPageSize - 1) / kPageSize;
}

// Bodies with no rule beyond their layout.
template <typename T> Status check(const T &)
{
    return {};
}

Status check(const ConnectRequest &m)
{
    if (m.minVersion < 1 || m.minVersion > m.maxVersion) {
        return protocolError("version range " + num(m.minVersion) + ".." + num(m.maxVersion) +
                             " is empty or starts below 1");
    }
    if (auto status = checkLimits(m.maxBulkBytes, m.maxMessageBytes); !status.ok()) {
        return status;
    }
    if (m.exportCookie != 0 && (m.features & kFeatureMultiConnection) == 0) {
        return protocolError("an export cookie needs the multi-connection feature bit");
    }
    return checkPrintable(m.clientId, "client id", kMaxPeerNameLength);
}

Status check(const ConnectReply &m)
{
    if (m.version < kMinVersion || m.version > kMaxVersion) {
        return protocolError("chosen version " + num(m.version) + " is outside " +
                             num(kMinVersion) + ".." + num(kMaxVersion));
    }
    if (auto status = checkLimits(m.maxBulkBytes, m.maxMessageBytes); !status.ok()) {
        return status;
    }
    if ((m.exportCookie != 0) != ((m.features & kFeatureMultiConnection) != 0)) {
        return protocolError("the export cookie must be set exactly with the multi-connection "
                             "feature bit");
    }
    return checkPrintable(m.targetName, "target name", kMaxPeerNameLength);
}

Status check(const CreateRequest &m)
{
    if (auto status = checkPath(m.path); !status.ok()) {
        return status;
    }
    if (auto status = checkMode(m.mode); !status.ok()) {
        return status;
    }
    return checkFlags(m.flags, kCreateExclusive, "create flags");
}

Status check(const CreateReply &m)
{
    return checkAttr(m.attr);
}

Status check(const OpenRequest &m)
{
    if (auto status = checkPath(m.path); !status.ok()) {
        return status;
    }
    if (auto status = checkFlags(m.flags, kOpenRead | kOpenWrite, "open flags"); !status.ok()) {
        return status;
    }
    if (m.flags == 0) {
        return protocolError("open flags ask for neither reading nor writing");
    }
    return {};
}

Status check(const OpenReply &m)
{
    return checkAttr(m.attr);
}

Status check(const StatRequest &m)
{
    return checkPath(m.path);
}

Status check(const StatReply &m)
{
    return checkAttr(m.attr);
}

Status check(const UnlinkRequest &m)
{
    return checkPath(m.path);
}

Status check(const MkdirRequest &m)
{
    if (auto status = checkPath(m.path); !status.ok()) {
        return status;
    }
    return checkMode(m.mode);
}

Status check(const MkdirReply &m)
{
    return checkAttr(m.attr);
}

Status check(const RmdirRequest &m)
{
    return checkPath(m.path);
}

Status check(const ReaddirRequest &m)
{
    if (auto status = checkPath(m.path); !status.ok()) {
        return status;
    }
    if (m.maxEntries == 0) {
        return protocolError("max entries is 0");
    }
    return {};
}

Status check(const ReaddirReply &m)
{
    std::size_t index = 0;
    for (const DirEntry entry : m.entries) {
        Status status = checkKind(entry.kind);
        if (status.ok()) {
            status = checkName(entry.name, [] { return std::string("name"); });
        }
        if (!status.ok()) {
            return status.withContext("entry " + num(index));
        }
        ++index;
    }
    return {};
}

Status check(const ReadRequest &m)
{
    return checkBulk(m.io);
}

Status check(const ReadReply &m)
{
    if (m.bytesRead > kMaxBulkBytes) {
        return protocolError("bytes read " + num(m.bytesRead) + " exceeds the maximum " +
                             num(kMaxBulkBytes));
    }
    if (auto status = checkFlags(m.flags, kBulkChecksums, "bulk flags"); !status.ok()) {
        return status;
    }
    const bool sums = (m.flags & kBulkChecksums) != 0;
    return checkCrcCount(m.pageCrcs, sums ? pagesFor(m.bytesRead) : 0,
                         sums ? "(one per page read)" : "(checksums are off)");
}

Status check(const WriteRequest &m)
{
    if (auto status = checkBulk(m.io); !status.ok()) {
        return status;
    }
    const bool sums = (m.io.flags & kBulkChecksums) != 0;
    return checkCrcCount(m.pageCrcs, sums ? m.io.pageCount : 0,
                         sums ? "(one per page)" : "(checksums are off)");
}

Status check(const WriteReply &m)
{
    if (m.bytesWritten > kMaxBulkBytes) {
        return protocolError("bytes written " + num(m.bytesWritten) + " exceeds the maximum " +
                             num(kMaxBulkBytes));
    }
    return {};
}

Status check(const LockEnqueueRequest &m)
{
    if (auto status = checkLockMode(m.mode, "lock mode"); !status.ok()) {
        return status;
    }
    return checkFlags(m.flags, kLockNonBlocking, "lock flags");
}

Status check(const LockEnqueueReply &m)
{
    return checkLockMode(m.mode, "granted lock mode");
}

Status check(const BlockingCallbackRequest &m)
{
    return checkLockMode(m.conflictingMode, "conflicting lock mode");
}

Status check(const ErrorReply &m)
{
    const auto op = static_cast<std::uint16_t>(m.opcode);
    if (op < 1 || op > kMaxOpcode) {
        return protocolError("opcode " + num(op) + " is unknown");
    }
    const auto code = static_cast<int>(m.code);
    if (code <= 0 || code > static_cast<int>(Errc::internal)) {
        return protocolError("status code " + std::to_string(code) + " is not an error code");
    }
    if (m.message.size() > kMaxErrorMessageLength) {
        return protocolError("message length " + num(m.message.size()) + " exceeds the maximum " +
                             num(kMaxErrorMessageLength));
    }
    for (std::size_t i = 0; i < m.message.size(); ++i) {
        const auto c = static_cast<unsigned char>(m.message[i]);
        if (c < 0x20 || c == 0x7f) {
            return protocolError("message: byte " + num(i) + " is the control character " + hex(c));
        }
    }
    return {};
}

// ---- layouts: one function per body, used by both directions --------------------------------

template <typename M, typename T>
concept Is = std::same_as<std::remove_const_t<M>, T>;

template <typename IO, Is<ObjectAttr> M> void transfer(IO &io, M &m)
{
    io.u64(m.objectId, "object id");
    io.enum8(m.kind, "kind");
    io.u32(m.mode, "mode");
    io.u64(m.size, "size");
    io.u64(m.mtimeNs, "mtime");
}

template <typename IO, Is<BulkIo> M> void transfer(IO &io, M &m)
{
    io.u64(m.handle, "handle");
    io.u64(m.offset, "offset");
    io.u32(m.pageCount, "page count");
    io.u16(m.lastPageBytes, "last page bytes");
    io.u32(m.flags, "bulk flags");
    io.blob8(m.descriptor, "bulk descriptor");
}

template <typename IO, typename M>
requires std::is_empty_v<std::remove_const_t<M>>
void transfer(IO &, M &) {}

template <typename IO, Is<ConnectRequest> M> void transfer(IO &io, M &m)
{
    io.u16(m.minVersion, "min version");
    io.u16(m.maxVersion, "max version");
    io.u32(m.maxBulkBytes, "max bulk size");
    io.u32(m.maxMessageBytes, "max message size");
    io.u64(m.features, "features");
    io.str8(m.clientId, "client id");
    if ((m.features & kFeatureMultiConnection) != 0) {
        io.u64(m.exportCookie, "export cookie");
    }
}

template <typename IO, Is<ConnectReply> M> void transfer(IO &io, M &m)
{
    io.u16(m.version, "version");
    io.u32(m.maxBulkBytes, "max bulk size");
    io.u32(m.maxMessageBytes, "max message size");
    io.u64(m.features, "features");
    io.str8(m.targetName, "target name");
    if ((m.features & kFeatureMultiConnection) != 0) {
        io.u64(m.exportCookie, "export cookie");
    }
}

template <typename IO, Is<StatfsReply> M> void transfer(IO &io, M &m)
{
    io.u32(m.blockSize, "block size");
    io.u64(m.totalBlocks, "total blocks");
    io.u64(m.freeBlocks, "free blocks");
    io.u64(m.availBlocks, "available blocks");
    io.u64(m.totalObjects, "total objects");
    io.u64(m.freeObjects, "free objects");
}

template <typename IO, Is<CreateRequest> M> void transfer(IO &io, M &m)
{
    io.str16(m.path, "path");
    io.u32(m.mode, "mode");
    io.u32(m.flags, "create flags");
}

template <typename IO, typename M>
requires Is<M, CreateReply> || Is<M, OpenReply>
void transfer(IO &io, M &m)
{
    io.u64(m.handle, "handle");
    transfer(io, m.attr);
}

template <typename IO, Is<OpenRequest> M> void transfer(IO &io, M &m)
{
    io.str16(m.path, "path");
    io.u32(m.flags, "open flags");
}

template <typename IO, typename M>
requires Is<M, StatRequest> || Is<M, UnlinkRequest> || Is<M, RmdirRequest>
void transfer(IO &io, M &m)
{
    io.str16(m.path, "path");
}

template <typename IO, typename M>
requires Is<M, StatReply> || Is<M, MkdirReply>
void transfer(IO &io, M &m)
{
    transfer(io, m.attr);
}

template <typename IO, Is<CloseRequest> M> void transfer(IO &io, M &m)
{
    io.u64(m.handle, "handle");
}

template <typename IO, Is<TruncateRequest> M> void transfer(IO &io, M &m)
{
    io.u64(m.handle, "handle");
    io.u64(m.size, "size");
}

template <typename IO, Is<MkdirRequest> M> void transfer(IO &io, M &m)
{
    io.str16(m.path, "path");
    io.u32(m.mode, "mode");
}

template <typename IO, Is<ReaddirRequest> M> void transfer(IO &io, M &m)
{
    io.str16(m.path, "path");
    io.u64(m.cookie, "cookie");
    io.u32(m.maxEntries, "max entries");
}

template <typename IO, Is<ReaddirReply> M> void transfer(IO &io, M &m)
{
    io.u64(m.nextCookie, "next cookie");
    io.boolean(m.eof, "eof flag");
    io.dirEntries(m.entries);
}

template <typename IO, Is<ReadRequest> M> void transfer(IO &io, M &m)
{
    transfer(io, m.io);
}

template <typename IO, Is<ReadReply> M> void transfer(IO &io, M &m)
{
    io.u32(m.bytesRead, "bytes read");
    io.u32(m.flags, "bulk flags");
    const bool sums = (m.flags & kBulkChecksums) != 0;
    io.crcs(m.pageCrcs, sums ? pagesFor(m.bytesRead) : 0, "page crcs");
}

template <typename IO, Is<WriteRequest> M> void transfer(IO &io, M &m)
{
    transfer(io, m.io);
    const bool sums = (m.io.flags & kBulkChecksums) != 0;
    io.crcs(m.pageCrcs, sums ? m.io.pageCount : 0, "page crcs");
}

template <typename IO, Is<WriteReply> M> void transfer(IO &io, M &m)
{
    io.u32(m.bytesWritten, "bytes written");
}

template <typename IO, Is<LockEnqueueRequest> M> void transfer(IO &io, M &m)
{
    io.u64(m.handle, "handle");
    io.enum8(m.mode, "lock mode");
    io.u32(m.flags, "lock flags");
}

template <typename IO, Is<LockEnqueueReply> M> void transfer(IO &io, M &m)
{
    io.u64(m.lockHandle, "lock handle");
    io.enum8(m.mode, "granted lock mode");
    if (io.version >= 2) {
        io.u64(m.objectSize, "object size");
    } else if constexpr (!std::is_const_v<M>) {
        m.objectSize = LockEnqueueReply::kSizeUnknown; // a version 1 target does not send it
    }
}

template <typename IO, Is<LockCancelRequest> M> void transfer(IO &io, M &m)
{
    io.u64(m.lockHandle, "lock handle");
}

template <typename IO, Is<BlockingCallbackRequest> M> void transfer(IO &io, M &m)
{
    io.u64(m.lockHandle, "lock handle");
    io.enum8(m.conflictingMode, "conflicting lock mode");
}

// The failed request's opcode travels in the header.
template <typename IO, Is<ErrorReply> M> void transfer(IO &io, M &m)
{
    io.enum16(m.code, "status code");
    io.str16(m.message, "message");
}

// ---- message level ---------------------------------------------------------------------------

std::string_view kindOf(bool reply, bool error)
{
    return error ? "error reply" : reply ? "reply" : "request";
}

template <typename T>
Result<Message> decodeBody(std::span<const std::byte> bytes, const Header &header,
                           std::string_view jobId)
{
    Message message{header.xid, jobId, T{}, header.version};
    T &body = std::get<T>(message.body);
    if constexpr (std::is_same_v<T, ErrorReply>) {
        body.opcode = header.opcode;
    }
    WireReader reader(bytes, kHeaderSize + header.jobIdLength, header.opcode,
                      kindOf(header.isReply(), header.isError()), header.version);
    transfer(reader, body);
    reader.expectEnd();
    if (!reader.ok()) {
        return reader.status();
    }
    if (auto status = check(body); !status.ok()) {
        return status.withContext(std::string(opcodeName(header.opcode)) + " " +
                                  std::string(kindOf(header.isReply(), header.isError())));
    }
    return message;
}

// Finds the body type for (opcode, reply) among the alternatives of Body.
template <std::size_t... I>
Result<Message> decodeDispatch(std::index_sequence<I...>, std::span<const std::byte> bytes,
                               const Header &header, std::string_view jobId)
{
    std::optional<Result<Message>> result;
    const auto tryOne = [&]<typename T>(std::type_identity<T>) {
        if constexpr (!std::is_same_v<T, ErrorReply>) {
            if (!result && T::kOpcode == header.opcode && T::kReply == header.isReply()) {
                result.emplace(decodeBody<T>(bytes, header, jobId));
            }
        }
    };
    (tryOne(std::type_identity<std::variant_alternative_t<I, Body>>{}), ...);
    if (!result) {
        return protocolError("header: unknown opcode " + num(static_cast<int>(header.opcode)));
    }
    return std::move(*result);
}

} // namespace

Result<Header> decodeHeader(std::span<const std::byte> bytes)
{
    if (bytes.size() < kHeaderSize) {
        return protocolError("header: " + num(bytes.size()) + " bytes, fewer than the " +
                             num(kHeaderSize) + "-byte header");
    }
    const std::byte *p = bytes.data();
    const auto magic = loadLe<std::uint32_t>(p);
    if (magic != kMagic) {
        return protocolError("header: bad magic " + hex(magic) + " (expected " + hex(kMagic) + ")");
    }
    Header header;
    header.version = loadLe<std::uint16_t>(p + kOffVersion);
    const auto opcode = loadLe<std::uint16_t>(p + kOffOpcode);
    header.opcode = static_cast<Opcode>(opcode);
    header.flags = loadLe<std::uint16_t>(p + kOffFlags);
    header.jobIdLength = loadLe<std::uint8_t>(p + kOffJobIdLength);
    const auto reserved = loadLe<std::uint8_t>(p + kOffReserved);
    header.bodyLength = loadLe<std::uint32_t>(p + kOffBodyLength);
    header.xid = loadLe<std::uint64_t>(p + kOffXid);

    if (header.version < kMinVersion || header.version > kMaxVersion) {
        return protocolError("header: unsupported protocol version " + num(header.version) +
                             " (this build speaks " + num(kMinVersion) + ".." + num(kMaxVersion) +
                             ")");
    }
    if (opcode < 1 || opcode > kMaxOpcode) {
        return protocolError("header: unknown opcode " + num(opcode));
    }
    if (header.opcode == Opcode::connect && header.version != kMinVersion) {
        return protocolError("header: connect is framed as version " + num(kMinVersion) + ", not " +
                             num(header.version));
    }
    if ((header.flags & ~kKnownHeaderFlags) != 0) {
        return protocolError("header: reserved flag bits " +
                             hex(header.flags & ~kKnownHeaderFlags) + " set in flags " +
                             hex(header.flags));
    }
    if (header.isError() && !header.isReply()) {
        return protocolError("header: error flag set on a request");
    }
    if (reserved != 0) {
        return protocolError("header: reserved byte at offset " + num(kOffReserved) + " is " +
                             hex(reserved) + ", must be 0");
    }
    if (header.isReply() && header.jobIdLength != 0) {
        return protocolError("header: reply carries a job id of " + num(header.jobIdLength) +
                             " bytes");
    }
    if (!header.isReply() && header.jobIdLength == 0) {
        return protocolError("header: request without a job id");
    }
    if (header.jobIdLength > kMaxJobIdLength) {
        return protocolError("header: job id length " + num(header.jobIdLength) +
                             " exceeds the maximum " + num(kMaxJobIdLength));
    }
    if (header.bodyLength > kMaxMessageSize - kHeaderSize) {
        return protocolError("header: body length " + num(header.bodyLength) +
                             " exceeds the maximum " + num(kMaxMessageSize - kHeaderSize));
    }
    if (header.bodyLength < header.jobIdLength) {
        return protocolError("header: body length " + num(header.bodyLength) +
                             " is shorter than the " + num(header.jobIdLength) + "-byte job id");
    }
    return header;
}

Result<Message> decode(std::span<const std::byte> bytes)
{
    auto header = decodeHeader(bytes);
    if (!header) {
        return header.status();
    }
    if (bytes.size() - kHeaderSize != header->bodyLength) {
        return protocolError("header: body length " + num(header->bodyLength) +
                             " disagrees with the " + num(bytes.size() - kHeaderSize) +
                             " bytes after the header");
    }
    const std::string_view jobId(reinterpret_cast<const char *>(bytes.data() + kHeaderSize),
                                 header->jobIdLength);
    if (!header->isReply()) {
        if (auto status = checkPrintable(jobId, "job id", kMaxJobIdLength); !status.ok()) {
            return status.withContext(std::string(opcodeName(header->opcode)) + " request");
        }
    }
    if (header->isError()) {
        return decodeBody<ErrorReply>(bytes, *header, jobId);
    }
    return decodeDispatch(std::make_index_sequence<std::variant_size_v<Body>>{}, bytes, *header,
                          jobId);
}

namespace {

void writeMessage(WireWriter &writer, const Message &message)
{
    const bool error = std::holds_alternative<ErrorReply>(message.body);
    const bool reply = message.isReply();
    writer.u32(kMagic);
    writer.u16(message.version);
    writer.u16(static_cast<std::uint16_t>(message.opcode()));
    writer.u16(static_cast<std::uint16_t>((reply ? kFlagReply : 0) | (error ? kFlagError : 0)));
    writer.u8(static_cast<std::uint8_t>(message.jobId.size()));
    writer.u8(0);
    writer.u32(0); // body length, patched once known
    writer.u64(message.xid);
    writer.bytes(std::as_bytes(std::span(message.jobId)));
    std::visit([&writer](const auto &body) { transfer(writer, body); }, message.body);
}

} // namespace

Result<std::size_t> encode(const Message &message, std::span<std::byte> out)
{
    const Opcode opcode = message.opcode();
    const bool reply = message.isReply();
    const auto what = [&] {
        return std::string(opcodeName(opcode)) + " " +
               std::string(kindOf(reply, std::holds_alternative<ErrorReply>(message.body)));
    };
    Status status;
    if (reply && !message.jobId.empty()) {
        status = Status(Errc::protocol_error, "replies carry no job id");
    } else if (!reply) {
        status = checkPrintable(message.jobId, "job id", kMaxJobIdLength);
    }
    if (message.version < kMinVersion || message.version > kMaxVersion) {
        status = Status(Errc::protocol_error, "version " + num(message.version) + " is outside " +
                                                  num(kMinVersion) + ".." + num(kMaxVersion));
    } else if (opcode == Opcode::connect && message.version != kMinVersion) {
        status = Status(Errc::protocol_error, "connect is framed as version " + num(kMinVersion) +
                                                  ", not " + num(message.version));
    }
    if (status.ok()) {
        status = std::visit([](const auto &body) { return check(body); }, message.body);
    }
    if (!status.ok()) {
        return Status(Errc::invalid_argument, what() + ": " + status.message());
    }

    WireWriter writer(out, message.version);
    writeMessage(writer, message);
    const std::size_t size = writer.position();
    if (size > kMaxMessageSize) {
        return Status(Errc::out_of_range, what() + ": encodes to " + num(size) +
                                              " bytes, more than the maximum " +
                                              num(kMaxMessageSize));
    }
    if (!writer.fits()) {
        return Status(Errc::resource_exhausted, what() + ": needs " + num(size) +
                                                    " bytes, the buffer has " + num(out.size()));
    }
    storeLe(out.data() + kOffBodyLength, static_cast<std::uint32_t>(size - kHeaderSize));
    return size;
}

std::size_t encodedSize(const Message &message) noexcept
{
    WireWriter writer({}, message.version);
    writeMessage(writer, message);
    return writer.position();
}

} // namespace lutra::protocol
