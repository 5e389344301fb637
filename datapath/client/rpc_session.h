#pragma once
// The client side of one object target: the Connect exchange, asynchronous bulk RPCs completed on
// the transport's I/O threads (submitRead/submitWrite), synchronous RPCs from any number of
// threads (call, and read/write as thin wrappers) and target→client blocking callbacks. Bulk RPCs
// are spread over several transport connections (each on its own I/O thread, sharing one export
// on the target, like Lustre socklnd's conns_per_peer); control calls use the first. Steady-state
// calls allocate nothing: every RPC in flight owns one of a fixed pool of slots with preallocated
// buffers; an asynchronous one holds no thread. See datapath/client/README.md.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "protocol/messages.h"

#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace lutra::client {

using transport::Deadline;

// A wire message struct: it has an opcode and says whether it is a reply. (Unformatted: this
// clang-format misreads `bool>` in a concept.)
// clang-format off
template <typename T>
concept WireMessage = std::same_as<std::remove_cv_t<decltype(T::kOpcode)>, protocol::Opcode> &&
                      std::same_as<std::remove_cv_t<decltype(T::kReply)>, bool>;
// clang-format on

// A request the client may send (connect included; blocking callbacks travel the other way).
template <typename T>
concept RpcRequest =
    WireMessage<T> && !T::kReply && T::kOpcode != protocol::Opcode::blocking_callback;

namespace detail {
template <typename Request, typename Variant> struct ReplyOf;
template <typename Request> struct ReplyOf<Request, std::variant<>> {
    using type = void;
};
template <typename Request, typename First, typename... Rest>
struct ReplyOf<Request, std::variant<First, Rest...>> {
    static constexpr bool matches()
    {
        if constexpr (WireMessage<First>) {
            return First::kReply && First::kOpcode == Request::kOpcode;
        } else {
            return false;
        }
    }
    using type = std::conditional_t<matches(), First,
                                    typename ReplyOf<Request, std::variant<Rest...>>::type>;
};
} // namespace detail

// The reply struct that answers `Request` (PingRequest → PingReply).
template <RpcRequest Request>
using ReplyOf = typename detail::ReplyOf<Request, protocol::Body>::type;

class RpcSession;

// How an asynchronous bulk RPC reports, exactly once: a plain function, its context and a tag, so
// submitting allocates nothing. `bytes` is the bytes moved (read: short at the end of the object;
// 0 on error).
struct BulkCallback {
    void (*function)(void *context, std::uint64_t tag, const Status &status,
                     std::uint32_t bytes) noexcept = nullptr;
    void *context = nullptr;
    std::uint64_t tag = 0;
};

// Owns one slot of a session; returns it to the free list when destroyed.
class SlotLease {
public:
    SlotLease() = default;
    SlotLease(SlotLease &&other) noexcept
        : m_session(std::exchange(other.m_session, nullptr)), m_index(other.m_index)
    {
    }
    SlotLease &operator=(SlotLease &&other) noexcept;
    SlotLease(const SlotLease &) = delete;
    SlotLease &operator=(const SlotLease &) = delete;
    ~SlotLease() { release(); }

    void release() noexcept;
    std::uint32_t index() const noexcept { return m_index; }
    // Lets go of the slot without returning it (an asynchronous RPC frees it when it completes).
    std::uint32_t detach() noexcept
    {
        m_session = nullptr;
        return m_index;
    }

private:
    friend class RpcSession;
    SlotLease(RpcSession *session, std::uint32_t index) : m_session(session), m_index(index) {}

    RpcSession *m_session = nullptr;
    std::uint32_t m_index = 0;
};

// A decoded reply (it is the reply struct, so `result->field` reads it) and the slot whose
// buffer its views (string_view, Crc32List, DirEntryList) point into. The views are valid while
// this object lives; it must not outlive the session.
template <typename T> class Reply : public T {
public:
    Reply(SlotLease lease, const T &body, std::uint64_t xid)
        : T(body), m_lease(std::move(lease)), m_xid(xid)
    {
    }

    const T &body() const noexcept { return *this; }
    // The transaction id the request went out with (diagnostics and tests).
    std::uint64_t xid() const noexcept { return m_xid; }

private:
    SlotLease m_lease;
    std::uint64_t m_xid = 0;
};

class RpcSession final : private transport::Handler {
public:
    struct Options {
        std::string clientId = "lutra-client"; // 1..64 printable characters
        std::uint64_t features = protocol::kFeatureChecksums | protocol::kFeatureBlockingCallbacks |
                                 protocol::kFeatureMultiConnection;
        // Upper bounds this side offers; the transport's negotiated limits lower them further.
        std::uint32_t maxBulkBytes = protocol::kMaxBulkBytes;
        std::uint32_t maxMessageBytes = protocol::kMaxMessageSize;
        std::string connectJobId = "lutra.connect";     // job id of the Connect request
        std::chrono::milliseconds connectTimeout{5000}; // for the Connect exchange
        // Transport connections opened by connect (1..kMaxConnections; see setConnections). An
        // extra one that fails to open is logged and left out; the first must open. One is
        // osc.<t>.conns_per_target's default: the targets' connections spread over the client's
        // I/O threads, and a second one to the same target costs more than it brings on every
        // host measured (client README, "How many connections").
        std::uint32_t connections = 1;
        // The newest protocol version offered at connect (kMinVersion..kMaxVersion): lower, the
        // client acts as an older build (mixed-version tests).
        std::uint16_t maxVersion = protocol::kMaxVersion;
        transport::LogSink log;
    };

    static constexpr std::uint32_t kMaxConnections = 8;

    // What both sides agreed on.
    struct Negotiated {
        std::uint16_t version = 0;
        std::uint32_t maxBulkBytes = 0;    // min of the Connect reply and the transport limit
        std::uint32_t maxMessageBytes = 0; // same
        std::uint64_t features = 0;
        std::string targetName;
        std::uint32_t slotCount = 0; // calls in flight per connection: the transport's queue depth
        std::uint64_t exportCookie = 0; // kFeatureMultiConnection: what further connections present
    };

    // Plain numbers for later publication in the parameter registry.
    struct Counters {
        std::uint64_t rpcsSent = 0;
        std::uint64_t replies = 0;      // replies delivered to a waiting call
        std::uint64_t errorReplies = 0; // of which ErrorReply
        std::uint64_t timeouts = 0;
        std::uint64_t unsolicited = 0; // replies for no waiting call (late, unknown): dropped
        std::uint64_t callbacks = 0;   // blocking callbacks received
        std::uint64_t checksumErrors = 0;
    };

    // Called on a transport I/O thread: must be quick and must not block nor call back into
    // the session (queue the cancel work elsewhere). The session answers the target itself.
    using BlockingCallbackHandler =
        std::function<void(std::uint64_t lockHandle, protocol::LockMode conflicting)>;

    // Connects to `uri` and performs the Connect exchange. The transport must stay alive while
    // calls are made; the session may outlive it (calls then fail with unavailable).
    static Result<std::unique_ptr<RpcSession>> connect(transport::Transport &transport,
                                                       std::string_view uri, Options options);

    // Closes the connection and waits for the transport to let go of the session. No call may
    // be running and no Reply may be alive.
    ~RpcSession() override;
    RpcSession(const RpcSession &) = delete;
    RpcSession &operator=(const RpcSession &) = delete;

    const Negotiated &negotiated() const noexcept { return m_negotiated; }
    const std::string &uri() const noexcept { return m_uri; }
    // The first connection (control calls, blocking callbacks) is up: the session lives.
    bool connected() const noexcept { return !m_disconnected.load(std::memory_order_acquire); }
    Counters counters() const noexcept;

    // Bulk RPCs go to the connection in use with the fewest bytes in flight. Raising the count
    // opens the missing connections (each a Connect exchange joining this session's export on
    // the target: needs kFeatureMultiConnection); lowering it stops placing new RPCs on the
    // others and closes each once its RPCs are done (one still busy after the connect timeout
    // stays open, unused). A connection that is lost fails exactly its own RPCs; the session
    // carries on over the rest, and the next setConnections that wants it opens it again. Not
    // ok: the count in use is unchanged (connections it opened stay, unused). Not from a
    // completion or handler (it waits).
    Status setConnections(std::uint32_t count);
    std::uint32_t connections() const noexcept
    {
        return m_connectionsInUse.load(std::memory_order_relaxed);
    }
    // Connections of the session that are up (in use or not).
    std::uint32_t liveConnections() const noexcept;

    // One synchronous RPC. An ErrorReply becomes its Errc with "<opcode>: <message>"; no reply
    // by `deadline` gives Errc::timeout; a lost connection Errc::unavailable. Thread-safe.
    template <RpcRequest Request>
    Result<Reply<ReplyOf<Request>>> call(const Request &request, std::string_view jobId,
                                         Deadline deadline)
    {
        return callOn(0, request, jobId, deadline);
    }

    Status ping(std::string_view jobId, Deadline deadline);

    // Reads `pageCount` pages from `offset` of object `handle` (the last page `lastPageBytes`
    // long) straight into `destination` (registered memory, at least that many bytes). With
    // `checksums` (needs kFeatureChecksums) each page's crc32c is verified. Returns the bytes
    // read: short at the end of the object.
    Result<std::uint32_t> read(std::uint64_t handle, std::uint64_t offset, std::uint32_t pageCount,
                               std::uint16_t lastPageBytes,
                               std::span<const transport::Segment> destination, bool checksums,
                               std::string_view jobId, Deadline deadline);
    // Writes the same shape of range from `source`. Returns when the target has made it durable.
    Result<std::uint32_t> write(std::uint64_t handle, std::uint64_t offset, std::uint32_t pageCount,
                                std::uint16_t lastPageBytes,
                                std::span<const transport::Segment> source, bool checksums,
                                std::string_view jobId, Deadline deadline);

    // Asynchronous bulk RPCs: the same shape and checks as read/write, but the call never waits.
    // ok: sent (or queued to be sent); `done` runs exactly once — on a transport I/O thread (the
    // reply, a disconnect), on the session's timer thread (the deadline passed) or inside this
    // call (the send itself failed, or the reply arrived before send() returned). It must be quick
    // and must not block. The segments, the memory they name and `jobId` must stay valid until it
    // runs. Not ok: nothing was sent and `done` never runs; resource_exhausted means every slot is
    // busy (see setSlotWaiter).
    Status submitRead(std::uint64_t handle, std::uint64_t offset, std::uint32_t pageCount,
                      std::uint16_t lastPageBytes, std::span<const transport::Segment> destination,
                      bool checksums, std::string_view jobId, Deadline deadline, BulkCallback done);
    Status submitWrite(std::uint64_t handle, std::uint64_t offset, std::uint32_t pageCount,
                       std::uint16_t lastPageBytes, std::span<const transport::Segment> source,
                       bool checksums, std::string_view jobId, Deadline deadline,
                       BulkCallback done);

    // One submitter of asynchronous RPCs (the Osc) may register `wake`: after a submit found no
    // free slot, the next slot freed calls wake(context) once, on the thread freeing it (no lock
    // of the session held). Clearing it (nullptr) waits for a wake that is running.
    void setSlotWaiter(void (*wake)(void *context) noexcept, void *context);
    // After a submit found no free slot: true when one is free now (submit again); false when
    // none is, and the next one freed calls the slot waiter.
    bool armSlotWaiter() noexcept;

    // Replaces the handler (an empty one: callbacks are refused with an ErrorReply).
    void setBlockingCallbackHandler(BlockingCallbackHandler handler);

private:
    struct Slot;
    struct Lane;
    friend class SlotLease;

    RpcSession(std::string uri, Options options);

    Status negotiate();
    // Opens connection `index` and joins the export (m_laneMutex held).
    Status openLane(std::uint32_t index);
    // Allocates lane `index`'s slots for a connection with `limits`.
    void allocateLane(std::uint32_t index, const transport::Limits &limits);
    Slot &slotAt(std::uint32_t index) const noexcept;
    Lane &laneOf(std::uint32_t index) const noexcept;
    // A control slot (on the first connection, or on `lane`), waiting up to `deadline`.
    Result<SlotLease> acquireSlot(protocol::Opcode opcode, Deadline deadline,
                                  std::uint32_t lane = 0);
    // A bulk slot on the least loaded connection in use, waiting up to `deadline`.
    Result<SlotLease> acquireBulkSlot(protocol::Opcode opcode, std::uint64_t bytes,
                                      Deadline deadline);
    std::uint32_t pickBulkSlotLocked(std::uint64_t bytes) noexcept; // kNoSlot when none is free
    bool bulkSlotFreeLocked() const noexcept;
    void releaseSlot(std::uint32_t index) noexcept;
    template <RpcRequest Request>
    Result<Reply<ReplyOf<Request>>> callOn(std::uint32_t lane, const Request &request,
                                           std::string_view jobId, Deadline deadline)
    {
        using ReplyType = ReplyOf<Request>;
        auto lease = acquireSlot(Request::kOpcode, deadline, lane);
        if (!lease.ok()) {
            return lease.status();
        }
        auto reply = exchange(lease->index(), protocol::Body{request}, jobId, deadline);
        if (!reply.ok()) {
            return reply.status();
        }
        const auto *body = std::get_if<ReplyType>(&reply->body);
        if (body == nullptr) {
            return unexpectedReply(Request::kOpcode);
        }
        return Reply<ReplyType>(std::move(*lease), *body, reply->xid);
    }
    // Sends `body` from slot `index` and waits for its reply; the result's views point into the
    // slot's reply buffer.
    Result<protocol::Message> exchange(std::uint32_t index, const protocol::Body &body,
                                       std::string_view jobId, Deadline deadline);
    // The synchronous wrapper: a slot (waiting for one until `deadline`), startBulk, and a wait
    // for the callback.
    Result<std::uint32_t> bulk(protocol::Opcode opcode, std::uint64_t handle, std::uint64_t offset,
                               std::uint32_t pageCount, std::uint16_t lastPageBytes,
                               std::span<const transport::Segment> segments, bool checksums,
                               std::string_view jobId, Deadline deadline);
    // Checks a bulk request's shape; the transfer's byte count and the segments it reaches.
    Result<std::uint64_t> checkBulk(protocol::Opcode opcode, std::uint64_t handle,
                                    std::uint64_t offset, std::uint32_t pageCount,
                                    std::uint16_t lastPageBytes,
                                    std::span<const transport::Segment> segments,
                                    bool checksums) const;
    Status submitBulk(protocol::Opcode opcode, std::uint64_t handle, std::uint64_t offset,
                      std::uint32_t pageCount, std::uint16_t lastPageBytes,
                      std::span<const transport::Segment> segments, bool checksums,
                      std::string_view jobId, Deadline deadline, BulkCallback done);
    // Sends a checked bulk request from slot `index` (owned by the caller, handed over here on
    // ok). Not ok: nothing sent, the slot is still the caller's, `done` never runs.
    Status startBulk(std::uint32_t index, protocol::Opcode opcode, std::uint64_t handle,
                     std::uint64_t offset, std::uint32_t pageCount, std::uint16_t lastPageBytes,
                     std::uint64_t bytes, std::span<const transport::Segment> segments,
                     bool checksums, std::string_view jobId, Deadline deadline, BulkCallback done);
    // Sends slot `index`'s request; a send that fails completes the RPC (sendWait: whether the
    // send may wait for a credit; if not, a full queue hands it to the timer thread).
    void sendAsync(std::uint32_t index, bool sendWait) noexcept;
    // The slot's asynchronous RPC is over (claimed from `waiting` by the caller): decode the
    // reply (empty: failed with `failure`), unexpose, free the slot, run the callback.
    void completeAsync(std::uint32_t index, std::span<const std::byte> reply,
                       Status failure) noexcept;
    Result<std::uint32_t> decodeBulkReply(Slot &slot, std::span<const std::byte> message);
    // Lowers the timer's next wake to `deadline` if it is earlier.
    void armTimer(Deadline deadline) noexcept;
    void timerLoop() noexcept;
    // Fails every asynchronous RPC past its deadline; returns the earliest deadline left.
    Deadline expireAsync(Deadline now) noexcept;
    std::uint32_t tryAcquireSlot(std::uint64_t bytes) noexcept; // kNoSlot when none is free
    static constexpr std::uint32_t kNoSlot = ~std::uint32_t{0};
    Status unexpectedReply(protocol::Opcode opcode) const;
    Status disconnectedStatus() const; // the session's (first connection's) loss
    Status lostStatus(const Lane &lane) const;

    void onMessage(transport::Connection &connection,
                   std::span<const std::byte> message) noexcept override;
    void onDisconnected(transport::Connection &connection, const Status &reason) noexcept override;
    void onTargetRequest(transport::Connection &connection,
                         std::span<const std::byte> message) noexcept;
    void dropUnsolicited(std::uint64_t xid, std::string_view why) noexcept;

    const std::string m_uri;
    const Options m_options;
    transport::Transport *m_transport = nullptr; // opens further connections
    Negotiated m_negotiated;
    std::uint64_t m_exportCookie = 0; // the target's name for this session's export (0: none)

    // One transport connection and its slots. Slot numbers are global: connection k owns
    // k·m_slotsPerLane .. +slotCount, and xid % (kMaxConnections·m_slotsPerLane) finds the slot.
    // A lane's slots are published (slotCount, release) once complete, so an I/O thread sees 0
    // or all of them; m_laneCount likewise publishes `connection`.
    std::unique_ptr<Lane[]> m_lanes;
    std::uint32_t m_slotsPerLane = 0; // the first connection's queue depth
    std::uint64_t m_xidStride = 0;    // kMaxConnections · m_slotsPerLane
    std::atomic<std::uint32_t> m_laneCount{0};
    std::atomic<std::uint32_t> m_connectionsInUse{1};
    std::mutex m_laneMutex;                   // setConnections: one opener at a time
    std::atomic<std::uint32_t> m_nextLane{0}; // rotates ties between equally loaded connections

    mutable std::mutex m_freeMutex; // the lanes' free slots, bytes in flight and readiness
    std::condition_variable m_freeChanged;
    void (*m_slotWaiter)(void *) noexcept = nullptr;
    void *m_slotWaiterContext = nullptr;
    bool m_slotWanted = false; // an asynchronous submit found no free slot
    std::uint32_t m_wakesRunning = 0;

    // The timer thread: deadlines of asynchronous RPCs and sends that found the queue full.
    std::mutex m_timerMutex;
    std::condition_variable m_timerWake;
    std::atomic<Deadline::rep> m_timerNext{Deadline::max().time_since_epoch().count()};
    std::vector<std::uint32_t> m_deferredSends; // reserved for every slot: never grows
    bool m_timerStop = false;
    std::thread m_timer;

    std::atomic<bool> m_disconnected{false}; // the first connection is gone
    mutable std::mutex m_stateMutex;         // each lane's lostReason and released
    std::condition_variable m_gone;

    std::mutex m_callbackMutex;
    BlockingCallbackHandler m_callbackHandler;

    std::atomic<std::uint64_t> m_rpcsSent{0};
    std::atomic<std::uint64_t> m_replies{0};
    std::atomic<std::uint64_t> m_errorReplies{0};
    std::atomic<std::uint64_t> m_timeouts{0};
    std::atomic<std::uint64_t> m_unsolicited{0};
    std::atomic<std::uint64_t> m_callbacks{0};
    std::atomic<std::uint64_t> m_checksumErrors{0};
};

} // namespace lutra::client
