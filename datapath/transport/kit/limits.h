#pragma once
// The checks every plugin makes on limits and sizes, with the same error codes and texts:
// what a peer may propose (protocol_error), what was negotiated (the minimum of both), and a
// caller's message, segments and bulk against the negotiated limits (out_of_range,
// invalid_argument).

#include <lutra/status.h>
#include <lutra/transport.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace lutra::transport::kit {

// What a plugin accepts from a peer (its buffers are sized from these).
struct LimitBounds {
    std::uint32_t minMessageSize = 64;
    std::uint32_t maxMessageSize = 16u << 20;
    std::uint64_t minBulkSize = 4096;
    std::uint64_t maxBulkSize = 1u << 30;
    std::uint32_t maxQueueDepth = 1024;
};

// protocol_error "limits out of range (message M, bulk B, depth D)" when outside `bounds`.
Status checkLimits(const Limits &limits, const LimitBounds &bounds);
// out_of_range "<transport>: proposed limits out of range (...)" or "<transport>: ioThreads must
// be 1…64": what a plugin's create() refuses before it starts anything.
Status checkOptions(const TransportOptions &options, const LimitBounds &bounds,
                    std::string_view transport);
// The minimum of both proposals, field by field.
Limits agree(const Limits &own, const Limits &peer) noexcept;
// An answer to our proposal is at most what we proposed.
bool fitsWithin(const Limits &answer, const Limits &own) noexcept;

// out_of_range when `size` exceeds limits.maxMessageSize.
Status checkMessageSize(std::size_t size, const Limits &limits);
// out_of_range when a bulk of `total` bytes exceeds limits.maxBulkSize.
Status checkBulkSize(std::uint64_t total, const Limits &limits);
// The bytes of `segments`; invalid_argument unless there are 1…kMaxBulkSegments.
Result<std::uint64_t> bulkBytes(std::span<const Segment> segments);
// out_of_range when `total` is more than the `exposed` bytes the peer's descriptor names.
Status checkAgainstExposed(std::uint64_t total, std::uint64_t exposed);

} // namespace lutra::transport::kit
