#pragma once
// The loopback plugin's objects. Control path (switchboard, listen, connect, threads, teardown)
// in loopback_transport.cpp, hot path (send, expose, bulk, delivery) in loopback_datapath.cpp.

#include <lutra/transport.h>

#include "transport/kit/connection_base.h"
#include "transport/kit/connection_thread.h"
#include "transport/kit/engine_base.h"
#include "transport/kit/slot_table.h"
#include "transport/kit/wire_codec.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace lutra::transport::loopback {

// What a loopback bulk descriptor holds: the exposing end's slot and generation, and the size.
using WireDescriptor = kit::SlotDescriptor<'L'>;

class Engine;
class IoThread;

// Shared by the two ends of a connection: one mutex guards the state of both, so moving bytes
// from one end's memory to the other's never takes two locks.
struct Link {
    std::mutex mutex;
};

// What one end hands the other, in order: the inbox of each end holds what its peer did.
enum class EventKind : std::uint8_t {
    accepted, // the acceptor's first: onAccepted
    message,  // the peer's message slot `slot`
    put,      // the peer's operation (slot, generation) puts into our exposure
    get,      // the peer's operation (slot, generation) gets from our exposure
    bulkDone, // our operation (slot, generation) finished with `code`
    peerGone, // the peer was torn down
};
struct Event {
    EventKind kind = EventKind::message;
    Errc code = Errc::ok;
    std::uint32_t slot = 0;
    std::uint32_t generation = 0;
};

class LoopbackConnection final : public kit::ConnectionBase,
                                 public kit::ReadyItem,
                                 public std::enable_shared_from_this<LoopbackConnection> {
public:
    LoopbackConnection(std::shared_ptr<Engine> engine, IoThread &thread, std::shared_ptr<Link> link,
                       Handler &handler, std::string peer);

    // Connection (limits, peer, context, bulkPut/bulkGet: kit::ConnectionBase)
    Status send(std::span<const std::byte> message, Deadline deadline) noexcept override;
    Result<BulkDescriptor> exposeBulk(std::span<const Segment> segments,
                                      BulkAccess access) noexcept override;
    void unexposeBulk(const BulkDescriptor &descriptor) noexcept override;
    void close() noexcept override;

    // ReadyItem (I/O thread): handles what the peer queued in the inbox.
    void onReady() noexcept override;

    // Control path.
    // Every buffer for the negotiated limits; after this the hot path allocates nothing.
    void establish(const Limits &limits);
    // Joins the two ends (link mutex held by neither caller).
    static void join(const std::shared_ptr<LoopbackConnection> &a,
                     const std::shared_ptr<LoopbackConnection> &b);
    void markAnnounced() noexcept { m_announced = true; }
    // With the link's mutex held: queue `event` for this end's I/O thread.
    void deliverLocked(const Event &event) noexcept;
    std::mutex &linkMutex() noexcept { return m_link->mutex; }
    // Fails pending operations, tells the peer, reports the disconnect. I/O thread only.
    void teardown(const Status &reason) noexcept;

private:
    struct Op {
        bool isGet = false;
        std::uint32_t count = 0;
        std::uint64_t total = 0;
        std::uint64_t tag = 0;
        WireDescriptor remote;
        Segment *local = nullptr; // kMaxBulkSegments entries in m_opSegments
    };
    struct Exposure {
        BulkAccess access = BulkAccess::putInto;
        std::uint32_t count = 0;
        std::uint64_t total = 0;
        Segment *segments = nullptr; // kMaxBulkSegments entries in m_exposureSegments
    };

    Status startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                     const FileRange *file, std::uint64_t tag, Deadline deadline,
                     bool isGet) noexcept override;
    // The peer's operation moves its bytes to or from our exposure; its result goes back.
    void serveBulkLocked(const Event &event) noexcept;

    std::shared_ptr<Engine> m_engine;
    IoThread &m_thread;
    const std::shared_ptr<Link> m_link;
    bool m_announced = false; // the host knows this connection: report its disconnect

    // Guarded by m_link->mutex.
    std::shared_ptr<LoopbackConnection> m_peerEnd; // until teardown
    std::vector<std::byte> m_messageBuffers;       // queueDepth × maxMessageSize
    std::vector<std::uint32_t> m_messageLength;    // per message slot
    std::vector<std::uint32_t> m_freeMessages;
    kit::SlotTable<Op> m_ops;
    std::vector<Segment> m_opSegments;
    kit::SlotTable<Exposure> m_exposures;
    std::vector<Segment> m_exposureSegments;
    std::vector<Event> m_inbox; // ring: the peer's messages and operations, our completions
    std::size_t m_inboxHead = 0;
    std::size_t m_inboxCount = 0;
    bool m_readyQueued = false;

    // I/O thread only.
    std::vector<std::uint64_t> m_failing; // tags failed by teardown
};

// One I/O thread: the kit's reactor (posted work, the ready list) with its connections.
class IoThread final : public kit::ConnectionThread<LoopbackConnection> {
public:
    IoThread() : kit::ConnectionThread<LoopbackConnection>("loopback transport", 100) {}
    ~IoThread() override { stop(); }
};

class Engine final : public kit::EngineBase<IoThread> {
public:
    using EngineBase::EngineBase;
};

} // namespace lutra::transport::loopback
