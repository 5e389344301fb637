#pragma once
// The per-target bulk RPC engine ("osc", after Lustre's object storage client): the page cache,
// readahead and write-back hand it runs of pages; it turns each into one asynchronous bulk read
// or write RPC on an RpcSession, keeps at most max_rpcs_in_flight of them in flight, queues the
// rest, and reports each through a completion that runs on the transport's I/O thread that
// received the reply. No thread waits for an RPC. Publishes osc.<t>.* and osc.<t>.rpc_stats.
// See datapath/client/README.md ("The asynchronous RPC engine").

#include <lutra/status.h>
#include <lutra/transport.h>

#include "client/osc_rpc_stats.h"
#include "client/rpc_session.h"
#include "core/params/catalog.h"
#include "core/params/registry.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace lutra::client {

class OscCompletion;
inline constexpr std::size_t kOscCompletionCapacity = 48;

// A callable that an OscCompletion holds inline.
template <typename F>
concept FitsOscCompletion =
    !std::same_as<std::remove_cvref_t<F>, OscCompletion> &&
    std::invocable<std::remove_cvref_t<F> &, const Status &, std::uint32_t> &&
    sizeof(std::remove_cvref_t<F>) <= kOscCompletionCapacity &&
    alignof(std::remove_cvref_t<F>) <= alignof(std::max_align_t) &&
    std::is_nothrow_move_constructible_v<std::remove_cvref_t<F>>;

// What a submission reports, exactly once: the Status and the bytes moved (read: short at the
// end of the object; 0 on error). A callable stored inline (up to kCapacity bytes, nothrow
// movable), so submitting allocates nothing.
class OscCompletion {
public:
    static constexpr std::size_t kCapacity = kOscCompletionCapacity;

    OscCompletion() noexcept = default;
    // Implicit on purpose: any fitting lambda is a completion.
    template <FitsOscCompletion F> OscCompletion(F &&function) noexcept
    {
        using Fn = std::remove_cvref_t<F>;
        ::new (static_cast<void *>(m_storage)) Fn(std::forward<F>(function));
        m_ops = &kOps<Fn>;
    }
    OscCompletion(OscCompletion &&other) noexcept { moveFrom(other); }
    OscCompletion &operator=(OscCompletion &&other) noexcept
    {
        if (this != &other) {
            reset();
            moveFrom(other);
        }
        return *this;
    }
    OscCompletion(const OscCompletion &) = delete;
    OscCompletion &operator=(const OscCompletion &) = delete;
    ~OscCompletion() { reset(); }

    explicit operator bool() const noexcept { return m_ops != nullptr; }
    void operator()(const Status &status, std::uint32_t bytes)
    {
        m_ops->invoke(m_storage, status, bytes);
    }
    void reset() noexcept
    {
        if (m_ops != nullptr) {
            m_ops->destroy(m_storage);
            m_ops = nullptr;
        }
    }

private:
    struct Ops {
        void (*invoke)(void *storage, const Status &status, std::uint32_t bytes);
        void (*move)(void *to, void *from) noexcept;
        void (*destroy)(void *storage) noexcept;
    };
    template <typename Fn>
    static constexpr Ops kOps{
        [](void *storage, const Status &status, std::uint32_t bytes) {
            (*static_cast<Fn *>(storage))(status, bytes);
        },
        [](void *to, void *from) noexcept {
            ::new (to) Fn(std::move(*static_cast<Fn *>(from)));
            static_cast<Fn *>(from)->~Fn();
        },
        [](void *storage) noexcept { static_cast<Fn *>(storage)->~Fn(); },
    };

    void moveFrom(OscCompletion &other) noexcept
    {
        if (other.m_ops != nullptr) {
            other.m_ops->move(m_storage, other.m_storage);
            m_ops = std::exchange(other.m_ops, nullptr);
        }
    }

    alignas(std::max_align_t) std::byte m_storage[kCapacity];
    const Ops *m_ops = nullptr;
};

// A run of object pages: `pageCount` pages from `firstPage`, the last one `lastPageBytes` long.
struct PageRun {
    std::uint64_t firstPage = 0;
    std::uint32_t pageCount = 0;
    std::uint16_t lastPageBytes = 4096;
};

// Cuts `run` into RPC-sized pieces of at most `maxPages` pages, in order, calling
// fn(piece, byteOffsetInRun) for each; only the last piece may have a short last page. Read
// maxPagesPerRpc() once and split with it.
template <std::invocable<const PageRun &, std::uint64_t> F>
void forEachRpc(const PageRun &run, std::uint32_t maxPages, F &&fn)
{
    constexpr std::uint64_t kPage = 4096;
    if (maxPages == 0) {
        maxPages = 1;
    }
    std::uint32_t done = 0;
    while (done < run.pageCount) {
        const std::uint32_t count = std::min(maxPages, run.pageCount - done);
        PageRun piece;
        piece.firstPage = run.firstPage + done;
        piece.pageCount = count;
        piece.lastPageBytes =
            done + count == run.pageCount ? run.lastPageBytes : static_cast<std::uint16_t>(kPage);
        fn(static_cast<const PageRun &>(piece), std::uint64_t{done} * kPage);
        done += count;
    }
}

class Osc {
public:
    struct Options {
        std::string target; // <t> in osc.<t>.*; empty: the target name the session negotiated
        // Submissions outstanding at once (queued + in flight): one preallocated record each.
        // A submitter finding none free waits (backpressure), at least 256.
        std::uint32_t requestSlots = 512;
        std::chrono::milliseconds rpcTimeout{60000}; // deadline of each RPC once it is sent
    };

    static constexpr std::uint32_t kMaxRpcsInFlight =
        params::catalog::maxOf(params::catalog::kOsc, "max_rpcs_in_flight");
    static constexpr std::uint32_t kPageBytes = 4096;

    // Publishes osc.<t>.{max_pages_per_rpc,max_rpcs_in_flight,max_dirty_mb,checksums,
    // checksum_type,rpc_stats} in `group`. `session` must outlive the Osc; `group` must be
    // destroyed before it (its bindings point into the Osc).
    static Result<std::unique_ptr<Osc>> create(RpcSession &session, params::ParamGroup &group,
                                               Options options);
    // Fails what is still queued with cancelled (on this thread), waits for the RPCs in flight
    // to complete (their completions run). No submit may run concurrently.
    ~Osc();
    Osc(const Osc &) = delete;
    Osc &operator=(const Osc &) = delete;

    // Queues one bulk RPC of `pageCount` pages from object page `firstPage` of `handle` (the
    // last page `lastPageBytes` long), into (read) or from (write) `segments`: registered
    // memory, at most 256 segments reached by the transfer. The segment array, the memory it
    // names and `jobId` must stay valid until the completion runs.
    //
    // ok: accepted; `completion` will run exactly once: on the transport I/O thread that got
    // the reply (or a disconnect), on the session's timer thread (the RPC timed out), on the
    // thread that submitted or freed a slot when sending failed, or in the destructor with
    // cancelled. It must be quick and must not block: it holds an I/O thread.
    // Not ok: rejected, the completion never runs: invalid_argument (malformed run, too few or
    // too many segments), out_of_range (more than max_pages_per_rpc pages: split with
    // forEachRpc), unavailable (session lost, shutting down), resource_exhausted (all
    // requestSlots records busy until `admission`; inside a completion the Osc never waits).
    // `deadline` is the caller's end (a flush's timeout): a request still queued then fails with
    // timeout unsent, and one sent is timed out at it if that comes before rpc_timeout.
    // `send`: Send::afterInFlight is for pages nobody waits for yet (readahead): while an RPC
    // to this target is in flight the request stays queued, and that RPC's completion — on the
    // transport's I/O thread, which runs then anyway — sends it, instead of this thread waking
    // the I/O thread for it now. A completion always comes (reply, error or timeout), so the
    // request is never left behind.
    enum class Send : bool { now, afterInFlight };
    Status submitRead(std::uint64_t handle, std::uint64_t firstPage, std::uint32_t pageCount,
                      std::uint16_t lastPageBytes, std::span<const transport::Segment> segments,
                      std::string_view jobId, OscCompletion completion,
                      transport::Deadline admission = transport::Deadline::max(),
                      transport::Deadline deadline = transport::Deadline::max(),
                      Send send = Send::now);
    Status submitWrite(std::uint64_t handle, std::uint64_t firstPage, std::uint32_t pageCount,
                       std::uint16_t lastPageBytes, std::span<const transport::Segment> segments,
                       std::string_view jobId, OscCompletion completion,
                       transport::Deadline admission = transport::Deadline::max(),
                       transport::Deadline deadline = transport::Deadline::max());

    // Waits until every accepted submission's completion has returned; false at `deadline`.
    bool waitIdle(transport::Deadline deadline);

    // Tunables as the hot path reads them.
    std::uint32_t maxPagesPerRpc() const noexcept
    {
        return m_maxPagesPerRpc.load(std::memory_order_relaxed);
    }
    std::uint32_t maxRpcsInFlight() const noexcept
    {
        return m_maxRpcsInFlight.load(std::memory_order_relaxed);
    }
    // osc.<t>.checksums and the session negotiated kFeatureChecksums.
    bool checksumsEffective() const noexcept;
    // osc.<t>.max_dirty_mb, for write-back to enforce (the Osc itself does not).
    const std::atomic<std::uint64_t> &maxDirtyMb() const noexcept { return m_maxDirtyMb; }

    const std::string &target() const noexcept { return m_target; }
    RpcSession &session() noexcept { return m_session; }
    const OscRpcStats &rpcStats() const noexcept { return m_stats; }
    OscRpcStats &rpcStats() noexcept { return m_stats; }

    // osc.<t>.stats, in params::catalog::kOscStats' order.
    enum Counter : std::size_t { req_waittime, ost_read, ost_write, counter_count };
    const params::CounterBlock &rpcTimes() const noexcept { return m_times; }

private:
    enum class Op : std::uint8_t { read, write };

    // A preallocated request record; queued through `next` (intrusive FIFO / free list).
    struct Request {
        Request *next = nullptr;
        Op op = Op::read;
        std::uint64_t handle = 0;
        std::uint64_t firstPage = 0;
        std::uint32_t pageCount = 0;
        std::uint16_t lastPageBytes = 0;
        std::span<const transport::Segment> segments;
        std::string_view jobId;
        OscCompletion completion;
        transport::Deadline deadline = transport::Deadline::max(); // the caller's end
        transport::Clock::time_point sent{}; // when it left; {} while it has not
    };

    Osc(RpcSession &session, Options options, std::string target);

    Status publish(params::ParamGroup &group);
    Status submit(Op op, std::uint64_t handle, std::uint64_t firstPage, std::uint32_t pageCount,
                  std::uint16_t lastPageBytes, std::span<const transport::Segment> segments,
                  std::string_view jobId, OscCompletion &completion, transport::Deadline admission,
                  transport::Deadline deadline, Send send);
    Status validate(Op op, std::uint64_t firstPage, std::uint32_t pageCount,
                    std::uint16_t lastPageBytes,
                    std::span<const transport::Segment> segments) const;
    // Sends queued requests while fewer than max_rpcs_in_flight are in flight and the session
    // has a free slot. Runs on whichever thread queued work or freed room; takes m_mutex.
    void dispatch() noexcept;
    // The session's callbacks: an RPC is over / a slot was freed after none was free.
    static void rpcDone(void *context, std::uint64_t tag, const Status &status,
                        std::uint32_t bytes) noexcept;
    static void slotFreed(void *context) noexcept;
    // An RPC is over: counts, frees its record, runs its completion, then (unless called from
    // dispatch's own loop) dispatches what was queued behind it.
    enum class Redispatch : bool { no, yes };
    void finishRpc(Request *request, const Status &status, std::uint32_t bytes,
                   Redispatch redispatch = Redispatch::yes) noexcept;
    // Fails every request of the list `head` with `status` and returns their records.
    void failAll(Request *head, const Status &status);
    void releaseLocked(Request *request) noexcept;
    // `count` completions have returned.
    void finished(std::uint32_t count) noexcept;
    Request *takeQueueLocked() noexcept;
    void runCompletion(OscCompletion &completion, const Status &status,
                       std::uint32_t bytes) noexcept;

    RpcSession &m_session;
    const Options m_options;
    const std::string m_target;
    const std::uint32_t m_pagesLimit; // negotiated max bulk / 4096

    std::atomic<std::uint32_t> m_maxPagesPerRpc;
    std::atomic<std::uint32_t> m_maxRpcsInFlight{
        params::catalog::defaultOf(params::catalog::kOsc, "max_rpcs_in_flight")};
    std::atomic<bool> m_checksums{params::catalog::defaultOf(params::catalog::kOsc, "checksums") !=
                                  0};
    std::atomic<std::uint64_t> m_maxDirtyMb{
        params::catalog::defaultOf(params::catalog::kOsc, "max_dirty_mb")};
    OscRpcStats m_stats;
    params::CounterBlock m_times; // osc.<t>.stats

    std::mutex m_mutex;                    // everything below
    std::condition_variable m_recordFreed; // submitters waiting for a record
    std::condition_variable m_idle;        // waitIdle and the destructor
    std::unique_ptr<Request[]> m_records;
    Request *m_free = nullptr;
    Request *m_queueHead = nullptr;
    Request *m_queueTail = nullptr;
    std::uint32_t m_queued = 0;
    std::uint32_t m_inFlight = 0;
    std::uint32_t m_outstanding = 0; // accepted, completion not yet returned
    std::uint32_t m_inFlightByOp[2] = {0, 0};
    std::uint32_t m_callbacksRunning = 0; // finishRpc calls that still use this Osc
    bool m_stopping = false;
    std::string m_lostReason; // non-empty once the session is gone: every submission fails
};

} // namespace lutra::client
