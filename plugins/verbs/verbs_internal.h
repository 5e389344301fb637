#pragma once
// The verbs plugin's objects. Control path (setup, teardown, rdmacm events) in
// verbs_transport.cpp and verbs_threads.cpp; hot path (send, bulk, completions) in
// verbs_datapath.cpp.

#include <lutra/transport.h>

#include "transport/kit/connection_base.h"
#include "transport/kit/connection_thread.h"
#include "transport/kit/errno_text.h"
#include "transport/kit/slot_table.h"
#include "verbs_config.h"
#include "verbs_device.h"
#include "verbs_handles.h"
#include "verbs_memory.h"
#include "verbs_wire.h"

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lutra::transport::verbs {

class Engine;
class IoThread;

using kit::errnoText;

// Something that receives the rdmacm events of its id on the CM thread.
class CmEndpoint {
public:
    virtual ~CmEndpoint() = default;
    virtual void onCmEvent(rdma_cm_event &event) noexcept = 0;
};

// A piece of local memory with its keys on the connection's device.
struct Piece {
    std::uint64_t address = 0;
    std::uint32_t length = 0;
    std::uint32_t lkey = 0;
    std::uint32_t rkey = 0;
};

// Registrations of region-0 memory held for one operation or exposure.
struct TransientSet {
    MemoryRegistration *items = nullptr; // kMaxBulkSegments of them
    std::uint32_t count = 0;

    void clear() noexcept
    {
        for (std::uint32_t i = 0; i < count; ++i) {
            items[i].reset();
        }
        count = 0;
    }
};

class VerbsConnection final : public kit::ConnectionBase,
                              public CmEndpoint,
                              public std::enable_shared_from_this<VerbsConnection> {
public:
    VerbsConnection(std::shared_ptr<Engine> engine, IoThread &thread, Device &device,
                    Handler &handler, std::string peer, bool accepted);
    ~VerbsConnection() override;

    // Connection (any thread; limits, peer, context, bulkPut/bulkGet: kit::ConnectionBase)
    Status send(std::span<const std::byte> message, Deadline deadline) noexcept override;
    Result<BulkDescriptor> exposeBulk(std::span<const Segment> segments,
                                      BulkAccess access) noexcept override;
    void unexposeBulk(const BulkDescriptor &descriptor) noexcept override;
    void close() noexcept override;

    // CmEndpoint (CM thread): established, disconnected, errors.
    void onCmEvent(rdma_cm_event &event) noexcept override;

    // Control path (verbs_transport.cpp).
    // Takes the id; creates the CQ, the QP and every buffer for `sizing`, posts the receives.
    Status create(CmId id, const Limits &sizing);
    // The negotiated limits (at most `sizing`) and the initial credits.
    void establish(const Limits &agreed);
    rdma_cm_id *cmId() const noexcept { return m_id.get(); }
    void setAnnounced(bool announced) noexcept { m_announced = announced; }
    std::uint8_t responderResources() const noexcept;
    std::uint8_t initiatorDepth() const noexcept;
    // Any thread: queue a teardown on the I/O thread.
    void requestTeardown(Status reason) noexcept;
    // I/O thread.
    void announce() noexcept; // the acceptor's onAccepted, then completions flow
    void startPolling() noexcept;
    void onCompletionEvent() noexcept;
    // Fails what is pending, disconnects, reports; resources go at releaseResources().
    void teardown(const Status &reason) noexcept;
    void releaseResources() noexcept;

private:
    enum class WrKind : std::uint8_t { message, control, listRead, bulkData };
    static constexpr std::uint32_t kNoSlot = UINT32_MAX;
    static constexpr std::uint64_t kReceiveBit = std::uint64_t{1} << 63;

    struct RingEntry {
        WrKind kind = WrKind::message;
        bool lastOfOp = false;
        std::uint32_t index = kNoSlot; // send slot, or op
    };
    enum class OpPhase : std::uint8_t { free, preparing, readingList, queued, posted };
    struct Op {
        OpPhase phase = OpPhase::free;
        bool isGet = false;
        std::uint64_t tag = 0;
        std::uint64_t total = 0;
        WireDescriptor remote;
        Piece *local = nullptr; // kMaxBulkSegments
        std::uint32_t localCount = 0;
        TransientSet transient;
        std::uint32_t localIndex = 0;
        std::uint32_t remoteIndex = 0;
        std::uint64_t localOffset = 0;
        std::uint64_t remoteOffset = 0;
        std::uint64_t remaining = 0;
    };
    // A slot of the exposure table is taken (kit::SlotTable) from `preparing` to `releasing`.
    enum class ExposurePhase : std::uint8_t { preparing, exposed, releasing };
    struct Exposure {
        ExposurePhase phase = ExposurePhase::preparing;
        TransientSet transient;
        Piece *pieces = nullptr; // kMaxBulkSegments, resolved before publishing
    };
    struct Done {
        std::uint64_t tag = 0;
        Errc code = Errc::ok;
    };

    // verbs_datapath.cpp
    Result<std::uint32_t> resolve(std::span<const Segment> segments, Piece *out,
                                  TransientSet &transient) noexcept;
    Result<WireDescriptor> decodeDescriptor(const BulkDescriptor &descriptor,
                                            BulkAccess expected) const noexcept;
    Status startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                     const FileRange *file, std::uint64_t tag, Deadline deadline,
                     bool isGet) noexcept override;
    std::uint64_t reserveLocked(WrKind kind, std::uint32_t index, bool lastOfOp) noexcept;
    bool postLocked(ibv_send_wr &first) noexcept;
    bool postMessageLocked(MessageType type, std::span<const std::byte> payload) noexcept;
    void maybeReturnCreditsLocked() noexcept;
    void pumpBulkLocked() noexcept;
    void checkListLocked(std::uint32_t opIndex) noexcept;
    void finishOpLocked(std::uint32_t opIndex, Errc code) noexcept;
    void drain() noexcept;
    void onReceive(const ibv_wc &wc) noexcept;
    void onSendCompletion(const ibv_wc &wc) noexcept;
    void repostReceives() noexcept;
    void reportDone() noexcept;
    void fail(Status reason) noexcept; // teardown from the I/O thread with a logged reason

    std::shared_ptr<Engine> m_engine;
    IoThread &m_thread;
    Device &m_device;
    const bool m_accepted;
    Limits m_sizing;
    bool m_announced = false; // the host knows this connection: report its disconnect

    // Registered buffers (destroyed after the QP and the CQ).
    std::size_t m_slotBytes = 0; // header + maxMessageSize of `sizing`
    std::vector<std::byte> m_receiveBuffers;
    std::vector<std::byte> m_sendBuffers; // data slots, then control slots
    std::vector<std::byte> m_table;       // exposure table, read by the peer
    std::vector<std::byte> m_lists;       // the peer's extent lists, one per op
    MemoryRegistration m_receiveMr;
    MemoryRegistration m_sendMr;
    MemoryRegistration m_tableMr;
    MemoryRegistration m_listsMr;
    std::vector<Piece> m_pieces; // ops' local pieces, then exposures' pieces
    std::vector<MemoryRegistration> m_transient;
    CompletionQueue m_cq;
    CmId m_id;
    QueuePair m_qp;
    std::uint32_t m_maxInline = 0;
    std::uint32_t m_maxSge = 1;

    // Guarded by m_mutex.
    mutable std::mutex m_mutex;
    std::uint32_t m_dataCredits = 0;
    std::uint32_t m_controlCredits = 0;
    std::uint32_t m_owedData = 0;
    std::uint32_t m_owedControl = 0;
    std::uint32_t m_creditThreshold = 1;
    std::uint32_t m_signalInterval = 1;
    std::uint32_t m_unsignaled = 0;
    std::uint32_t m_messageWrs = 0;
    std::uint32_t m_messageWrCapacity = 0;
    std::uint32_t m_bulkWrs = 0;
    std::uint64_t m_postedSeq = 0;
    std::uint64_t m_completedSeq = 0;
    std::vector<RingEntry> m_ring;
    std::vector<std::uint32_t> m_freeSendSlots;
    std::vector<std::uint32_t> m_freeControlSlots;
    std::vector<Op> m_ops;
    std::vector<std::uint32_t> m_freeOps;
    kit::SlotTable<Exposure> m_exposures;
    std::vector<std::uint32_t> m_bulkQueue; // ring of op indices waiting to post data WRs
    std::size_t m_bulkHead = 0;
    std::size_t m_bulkCount = 0;
    std::vector<ibv_send_wr> m_bulkWrList; // kBulkBatch, built under the lock
    std::vector<ibv_sge> m_bulkSges;       // kBulkBatch × m_maxSge
    std::vector<Done> m_done;              // finished ops, reported after unlocking

    // I/O thread only.
    bool m_tornDown = false;
    std::array<ibv_wc, kPollBatch> m_completions{};
    std::vector<ibv_recv_wr> m_receiveWrs;
    std::vector<ibv_sge> m_receiveSges;
    std::vector<std::uint32_t> m_repost; // receive buffers to post again
    std::uint32_t m_repostData = 0;      // of them, consumed by data messages
    std::uint32_t m_repostControl = 0;   // by credit messages
    std::uint32_t m_arrivedData = 0;     // credits the peer returned, applied after reposting
    std::uint32_t m_arrivedControl = 0;
    std::vector<Done> m_reporting;
};

// The I/O thread a connection belongs to: the kit's reactor, sleeping in epoll on the completion
// channel of each device (no spinning core when idle) and on its eventfd for posted work;
// handlers run here.
class IoThread final : public kit::ConnectionThread<VerbsConnection> {
public:
    IoThread() : kit::ConnectionThread<VerbsConnection>("verbs transport", -1) {}
    ~IoThread() override;

    // Opens a completion channel per device and starts the thread.
    Status start(const std::vector<std::unique_ptr<Device>> &devices);

    ibv_comp_channel *completionChannel(std::size_t device) const noexcept
    {
        return m_channels[device].channel.get();
    }
    // adopt (any thread) and retire (I/O thread): kit::ConnectionThread. A retired connection's
    // resources go after the current batch, then the thread's reference.

private:
    // A device's completion channel in the epoll set: its events go to their connections.
    struct ChannelSource final : kit::EventSource {
        CompletionChannel channel;
        void onEvents(std::uint32_t events) noexcept override;
    };

    void afterBatch() noexcept override; // releases the retired connections' resources

    std::vector<ChannelSource> m_channels; // one per device; sized before they are watched
};

// Reads the transport's rdmacm event channel and hands each event to its endpoint: the kit's
// reactor with that channel as its one event source.
class CmThread final : public kit::Reactor, private kit::EventSource {
public:
    explicit CmThread(Engine &engine) : kit::Reactor("verbs transport", -1), m_engine(engine) {}
    ~CmThread() override;

    Status start();

private:
    void onEvents(std::uint32_t events) noexcept override;

    Engine &m_engine;
};

// What a transport instance shares with its connections and listeners, which keep it alive:
// the devices and their PDs, registered regions, the rdmacm event channel, the threads.
class Engine {
public:
    static Result<std::shared_ptr<Engine>> create(const TransportOptions &options);
    explicit Engine(const TransportOptions &options) : m_options(options) {}
    ~Engine();

    void log(LogLevel level, std::string_view text) const { m_options.log(level, text); }
    const TransportOptions &options() const noexcept { return m_options; }
    rdma_event_channel *channel() const noexcept { return m_channel.get(); }
    const std::vector<std::unique_ptr<Device>> &devices() const noexcept { return m_devices; }
    Device *deviceOf(const ibv_context *context) const noexcept;
    RegionTable &regions() noexcept { return *m_regions; }
    IoThread &pickThread() noexcept;
    // Stops the CM thread, then the I/O threads (every connection is torn down).
    void stop() noexcept;

private:
    TransportOptions m_options;
    EventChannel m_channel; // destroyed last: every id is gone by then
    std::vector<std::unique_ptr<Device>> m_devices;
    std::unique_ptr<RegionTable> m_regions;
    std::vector<std::unique_ptr<IoThread>> m_threads;
    std::unique_ptr<CmThread> m_cm;
    std::atomic<std::uint32_t> m_next{0};
};

} // namespace lutra::transport::verbs
