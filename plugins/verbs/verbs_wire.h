#pragma once
// The verbs plugin's wire formats (see README.md): the rdmacm private data that negotiates
// limits, the 8-byte header of every SEND, the exposure table entry a peer reads with RDMA READ,
// and the bulk descriptor that names it.

#include <lutra/transport.h>

#include "transport/kit/wire_codec.h"

#include <cstddef>
#include <cstdint>

namespace lutra::transport::verbs {

using kit::decode;
using kit::encode;

static constexpr std::uint16_t kHelloMagic = 0x564c; // "LV"
static constexpr std::uint8_t kWireVersion = 1;

// Connector → acceptor in the rdmacm connect request (private data, at most 56 bytes);
// acceptor → connector in the accept with the minimum of both.
struct Hello {
    std::uint16_t magic = kHelloMagic;
    std::uint8_t version = kWireVersion;
    std::uint8_t reserved = 0;
    std::uint32_t maxMessageSize = 0;
    std::uint32_t queueDepth = 0;
    std::uint32_t reserved2 = 0;
    std::uint64_t maxBulkSize = 0;
};
static_assert(sizeof(Hello) == 24 && sizeof(Hello) <= 56, "fits a RC connect's private data");

enum class MessageType : std::uint8_t {
    message = 1, // payload: one host message; costs a data credit
    credits = 2, // no payload: returns credits; costs a control credit
};

// In front of every SEND's payload.
struct MessageHeader {
    MessageType type = MessageType::message;
    std::uint8_t reserved = 0;
    std::uint16_t returnedData = 0;    // receives reposted for the peer's data messages
    std::uint16_t returnedControl = 0; // receives reposted for the peer's credit messages
    std::uint16_t reserved2 = 0;
};
static constexpr std::size_t kHeaderBytes = sizeof(MessageHeader);
static_assert(kHeaderBytes == 8);

// One exposure table entry: a header and the exposed memory as remote extents. The peer reads
// header + count extents with one RDMA READ, checks the generation (an unexposed entry has
// generation 0), then moves the data with RDMA WRITE/READ straight to/from the extents.
struct ExposureHeader {
    std::uint32_t generation = 0; // 0: not exposed
    std::uint8_t access = 0;      // BulkAccess
    std::uint8_t reserved = 0;
    std::uint16_t count = 0;
    std::uint64_t total = 0;
};
struct RemoteExtent {
    std::uint64_t address = 0;
    std::uint32_t rkey = 0;
    std::uint32_t length = 0;
};
static_assert(sizeof(ExposureHeader) == 16 && sizeof(RemoteExtent) == 16);
static constexpr std::size_t kExposureEntryBytes =
    sizeof(ExposureHeader) + kMaxBulkSegments * sizeof(RemoteExtent);
static_assert(kMaxBulkSegments <= UINT16_MAX, "extent count travels as u16");

constexpr std::size_t exposureReadBytes(std::uint16_t count)
{
    return sizeof(ExposureHeader) + std::size_t{count} * sizeof(RemoteExtent);
}

// What a verbs bulk descriptor holds: where the exposing side's table entry is.
struct WireDescriptor {
    static constexpr std::uint8_t kFormat = 'V';
    std::uint8_t format = kFormat;
    std::uint8_t access = 0;
    std::uint16_t count = 0; // extents in the entry
    std::uint32_t generation = 0;
    std::uint64_t entryAddress = 0;
    std::uint32_t entryRkey = 0;
    std::uint32_t slot = 0;
    std::uint64_t total = 0;
};
static_assert(sizeof(WireDescriptor) == 32 && sizeof(WireDescriptor) <= kMaxBulkDescriptorBytes);

} // namespace lutra::transport::verbs
