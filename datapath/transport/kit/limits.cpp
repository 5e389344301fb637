#include "transport/kit/limits.h"

#include <algorithm>
#include <string>

namespace lutra::transport::kit {

Status checkLimits(const Limits &limits, const LimitBounds &bounds)
{
    if (limits.maxMessageSize < bounds.minMessageSize ||
        limits.maxMessageSize > bounds.maxMessageSize || limits.maxBulkSize < bounds.minBulkSize ||
        limits.maxBulkSize > bounds.maxBulkSize || limits.queueDepth == 0 ||
        limits.queueDepth > bounds.maxQueueDepth) {
        return {Errc::protocol_error, "limits out of range (message " +
                                          std::to_string(limits.maxMessageSize) + ", bulk " +
                                          std::to_string(limits.maxBulkSize) + ", depth " +
                                          std::to_string(limits.queueDepth) + ")"};
    }
    return {};
}

Limits agree(const Limits &own, const Limits &peer) noexcept
{
    return {std::min(own.maxMessageSize, peer.maxMessageSize),
            std::min(own.maxBulkSize, peer.maxBulkSize), std::min(own.queueDepth, peer.queueDepth)};
}

bool fitsWithin(const Limits &answer, const Limits &own) noexcept
{
    return answer.maxMessageSize <= own.maxMessageSize && answer.maxBulkSize <= own.maxBulkSize &&
           answer.queueDepth <= own.queueDepth;
}

Status checkMessageSize(std::size_t size, const Limits &limits)
{
    if (size > limits.maxMessageSize) {
        return {Errc::out_of_range, "message of " + std::to_string(size) +
                                        " bytes exceeds the negotiated maximum " +
                                        std::to_string(limits.maxMessageSize)};
    }
    return {};
}

Status checkBulkSize(std::uint64_t total, const Limits &limits)
{
    if (total > limits.maxBulkSize) {
        return {Errc::out_of_range, "bulk of " + std::to_string(total) +
                                        " bytes exceeds the negotiated maximum " +
                                        std::to_string(limits.maxBulkSize)};
    }
    return {};
}

Result<std::uint64_t> bulkBytes(std::span<const Segment> segments)
{
    if (segments.empty() || segments.size() > kMaxBulkSegments) {
        return Status(Errc::invalid_argument, "a bulk transfer has 1…256 segments");
    }
    std::uint64_t total = 0;
    for (const auto &segment : segments) {
        total += segment.length;
    }
    return total;
}

Status checkAgainstExposed(std::uint64_t total, std::uint64_t exposed)
{
    if (total > exposed) {
        return {Errc::out_of_range, "bulk of " + std::to_string(total) + " bytes exceeds the " +
                                        std::to_string(exposed) + " bytes the peer exposed"};
    }
    return {};
}

Status checkOptions(const TransportOptions &options, const LimitBounds &bounds,
                    std::string_view transport)
{
    if (auto status = checkLimits(options.proposed, bounds); !status.ok()) {
        return {Errc::out_of_range, std::string(transport) + ": proposed " + status.message()};
    }
    if (options.ioThreads == 0 || options.ioThreads > 64) {
        return {Errc::out_of_range, std::string(transport) + ": ioThreads must be 1…64"};
    }
    return {};
}

} // namespace lutra::transport::kit
