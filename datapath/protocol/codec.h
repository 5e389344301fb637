#pragma once
// Encoding and decoding wire messages. No heap allocation on success: encode writes into the
// caller's buffer, decode returns views into the caller's buffer. Errors are Status values:
// decode fails with Errc::protocol_error naming what is wrong and where; encode fails with
// invalid_argument (a field breaks a protocol rule), out_of_range (the message would exceed
// kMaxMessageSize) or resource_exhausted (the buffer is too small; the message says how much
// is needed, encodedSize tells it up front).

#include <lutra/status.h>

#include "protocol/messages.h"

#include <cstddef>
#include <cstdint>
#include <span>

namespace lutra::protocol {

// The fixed 24-byte header, as decoded.
struct Header {
    std::uint16_t version = kMaxVersion;
    Opcode opcode = Opcode::ping;
    std::uint16_t flags = 0;
    std::uint8_t jobIdLength = 0;
    std::uint32_t bodyLength = 0; // bytes after the header, job id included
    std::uint64_t xid = 0;

    bool isReply() const noexcept { return (flags & kFlagReply) != 0; }
    bool isError() const noexcept { return (flags & kFlagError) != 0; }
    std::size_t messageSize() const noexcept { return kHeaderSize + bodyLength; }
};

// Decodes and checks the header in the first kHeaderSize bytes of `bytes` (anything after them
// is ignored): a stream transport reads kHeaderSize bytes, then messageSize() - kHeaderSize more.
Result<Header> decodeHeader(std::span<const std::byte> bytes);

// Decodes exactly one whole message; `bytes` must be exactly messageSize() long.
Result<Message> decode(std::span<const std::byte> bytes);

// Encodes `message` at the start of `out`; returns the number of bytes written.
Result<std::size_t> encode(const Message &message, std::span<std::byte> out);

// Bytes encode would write (whether or not the message is valid).
std::size_t encodedSize(const Message &message) noexcept;

} // namespace lutra::protocol
