#pragma once
// Every queue depth, credit and batch size of the verbs plugin, in one place and tied together
// by static_asserts (see README.md, "Queues and credits").

#include <lutra/transport.h>

#include "transport/kit/limits.h"

#include <cstddef>
#include <cstdint>

namespace lutra::transport::verbs {

// Sanity bounds on what a peer may propose (as the tcp plugin's).
static constexpr std::uint32_t kMinMessageSize = 64;
static constexpr std::uint32_t kMaxMessageSize = 1u << 20; // every receive buffer is this big
static constexpr std::uint64_t kMinBulkSize = 4096;
static constexpr std::uint64_t kMaxBulkSize = 1u << 30; // one WR's length must fit the port
static_assert(kMaxBulkSize <= UINT32_MAX, "an extent's length travels as u32");
static constexpr std::uint32_t kMaxQueueDepth = 256;
static constexpr kit::LimitBounds kBounds{kMinMessageSize, kMaxMessageSize, kMinBulkSize,
                                          kMaxBulkSize, kMaxQueueDepth};

// Credits. Each side posts queueDepth + kControlCredits receives. A data message costs the
// sender one of queueDepth data credits; a credit-only message one of kControlCredits control
// credits. Credits come back piggybacked on every message; a credit-only message is sent only
// when at least max(1, queueDepth / kCreditReturnDivisor) data credits are owed, never just to
// return control credits (which would echo forever).
static constexpr std::uint32_t kControlCredits = 2;
static constexpr std::uint32_t kCreditReturnDivisor = 4;
static_assert(kControlCredits >= 1, "a blocked sender is only ever unblocked by a credit message");
static_assert(kMaxQueueDepth + kControlCredits <= UINT16_MAX, "credits travel as u16");

// Send queue. Signal one send in kSignalEvery (fewer when queueDepth is smaller, so the trailing
// unsignalled sends can never hold every send buffer). Bulk data WRs are chained kBulkBatch per
// ibv_post_send, the last one signalled; at most kBulkWindow of them are in the send queue at
// once per connection. Each bulk operation also posts one signalled RDMA READ of the peer's
// extent list. The send queue holds all of it:
//   (queueDepth + kControlCredits + kSignalEvery) message WRs
//   + queueDepth extent-list READs + kBulkWindow data WRs.
static constexpr std::uint32_t kSignalEvery = 16;
static constexpr std::uint32_t kBulkBatch = 32;
static constexpr std::uint32_t kBulkWindow = 256;
static_assert(kSignalEvery >= 1);
static_assert(kBulkBatch >= 1 && kBulkBatch <= kBulkWindow, "a batch must fit in the window");
static_assert(kBulkWindow >= 2 * kBulkBatch, "two batches in flight keep the wire busy");
static_assert(kSignalEvery <= kMaxQueueDepth + kControlCredits);

constexpr std::uint32_t sendQueueDepth(std::uint32_t queueDepth)
{
    return (queueDepth + kControlCredits + kSignalEvery) + queueDepth + kBulkWindow;
}
constexpr std::uint32_t receiveQueueDepth(std::uint32_t queueDepth)
{
    return queueDepth + kControlCredits;
}
static_assert(sendQueueDepth(kMaxQueueDepth) >= 2 * kSignalEvery,
              "send queue depth at least twice the unsignalled batch");

// Receives are reposted kRepostBatch at a time (chained), and whatever is left when the
// completion queue runs dry, so credits are never held back by an idle batch.
static constexpr std::uint32_t kRepostBatch = 16;
static constexpr std::uint32_t kPollBatch = 32; // work completions per ibv_poll_cq
static_assert(kRepostBatch >= 1 && kRepostBatch <= kControlCredits + 1 + kMaxQueueDepth);

// Inline sends: asked for at QP creation; the device's real max_inline_data is read back.
static constexpr std::uint32_t kWantedInline = 256;
// Scatter/gather entries per WR (bounded by the device's max_sge).
static constexpr std::uint32_t kWantedSge = 16;
static constexpr std::size_t kMaxDevices = 8;
static constexpr std::size_t kMaxRegions = 1024; // registered regions per transport
static_assert(kMaxRegions < (1u << 16), "region ids keep the slot in 16 bits");

// I/O threads.
static constexpr unsigned kAckEventsEvery = 16; // ibv_ack_cq_events batching
static constexpr int kRdmaRetryCount = 7;
static constexpr int kRnrRetryCount = 7; // credits prevent RNR; 7 = retry forever if it happens

} // namespace lutra::transport::verbs
