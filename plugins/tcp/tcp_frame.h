#pragma once
// The tcp plugin's wire format (see README.md). Shared with the conformance tests, which speak
// it on raw sockets to send garbage and oversize frames.

#include <lutra/transport.h>

#include "transport/kit/limits.h"
#include "transport/kit/wire_codec.h"

#include <cstddef>
#include <cstdint>

namespace lutra::transport::tcp {

using kit::decode;
using kit::encode;

static constexpr std::uint16_t kMagic = 0x544c; // "LT" on the wire
static constexpr std::uint8_t kWireVersion = 1;
static constexpr std::size_t kHeaderSize = 32;

// Sanity bounds on what a peer may propose.
static constexpr kit::LimitBounds kBounds{
    .minMessageSize = 64,
    .maxMessageSize = 16u << 20,
    .minBulkSize = 4096,
    .maxBulkSize = 1u << 30, // fits the u32 size of a get request
    .maxQueueDepth = 1024,
};
static_assert(kBounds.maxBulkSize <= UINT32_MAX);

enum class FrameType : std::uint8_t {
    hello = 1,      // connector -> acceptor, payload Hello
    helloAck = 2,   // acceptor -> connector, payload Hello with the negotiated limits
    message = 3,    // payload: one opaque message
    putData = 4,    // payload: bulk bytes for the receiver's exposure `cookie`
    getRequest = 5, // no payload: send `aux` bytes of exposure `cookie`, answer with op `tag`
    getData = 6,    // payload: the bytes asked for by op `cookie`; aux != 0: refused (an Errc)
};

struct FrameHeader {
    std::uint16_t magic = kMagic;
    std::uint8_t version = kWireVersion;
    std::uint8_t type = 0;
    std::uint32_t aux = 0;
    std::uint64_t length = 0; // payload bytes after the header
    std::uint64_t cookie = 0;
    std::uint64_t tag = 0;
};
static_assert(sizeof(FrameHeader) == kHeaderSize);

struct Hello {
    std::uint32_t maxMessageSize = 0;
    std::uint32_t queueDepth = 0;
    std::uint64_t maxBulkSize = 0;
};
static_assert(sizeof(Hello) == 16);

// What a tcp bulk descriptor holds: the exposing side's slot and generation, and the size.
using WireDescriptor = kit::SlotDescriptor<'T'>;
static_assert(sizeof(WireDescriptor) == 24 && sizeof(WireDescriptor) <= kMaxBulkDescriptorBytes);

inline std::uint64_t cookieOf(std::uint32_t slot, std::uint32_t generation) noexcept
{
    return (std::uint64_t{generation} << 32) | slot;
}
inline std::uint32_t slotOf(std::uint64_t cookie) noexcept
{
    return static_cast<std::uint32_t>(cookie);
}
inline std::uint32_t generationOf(std::uint64_t cookie) noexcept
{
    return static_cast<std::uint32_t>(cookie >> 32);
}

} // namespace lutra::transport::tcp
