#pragma once
// The tcp plugin's objects. Control path (setup, teardown) in tcp_transport.cpp, hot path
// (framing, send/recv, bulk) in tcp_datapath.cpp.

#include <lutra/transport.h>

#include "tcp_arrival_sums.h"
#include "tcp_frame.h"
#include "transport/kit/connection_base.h"
#include "transport/kit/connection_thread.h"
#include "transport/kit/engine_base.h"
#include "transport/kit/errno_text.h"
#include "transport/kit/slot_table.h"

#include <sys/uio.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lutra::transport::tcp {

// I/O thread tuning, in one place.
static constexpr int kEpollBatch = 64;
static constexpr int kEpollTimeoutMs = 100;            // also the handshake sweep period
static constexpr std::size_t kIovBatch = 64;           // iovecs per sendmsg/readv call
static constexpr std::size_t kReadBudget = 1u << 20;   // bytes read per wakeup before yielding
static constexpr std::size_t kWriteBudget = 4u << 20;  // bytes written per wakeup before yielding
static constexpr std::size_t kScratchSize = 64u << 10; // discard buffer for stale bulk data
// A put summed on arrival is read this much at a time: summed while it is still in L2.
static constexpr std::size_t kSummedReadSize = 256u << 10;
// Bytes one recv takes for the small parts of frames (headers, hellos, messages), so a frame's
// header and its message, and the frames behind them, cost one syscall instead of one each; the
// start of a bulk payload that lands here is copied to its pages.
static constexpr std::size_t kRxStageSize = 16u << 10;
// While a bulk payload of at least kWakeLowatMin is still arriving, the socket wakes its I/O
// thread only once this much of it (or all that is left) has come (SO_RCVLOWAT), instead of once
// per arriving segment. On loopback each wake-up is the sender's cost (its softirq wakes the
// reader): one stream read at 1.8-2.1 GB/s with ~18 k wake-ups/s, 6.7 GB/s with 256 KiB (README).
static constexpr std::size_t kWakeLowatMax = 256u << 10;
static constexpr std::size_t kWakeLowatMin = 64u << 10;
static_assert(kSummedReadSize <= kReadBudget);
static_assert(kIovBatch >= 2, "a header and at least one payload piece per call");
static_assert(kIovBatch <= 1024, "IOV_MAX");

class Engine;
class IoThread;

using Pollable = kit::EventSource;

class TcpConnection final : public kit::ConnectionBase,
                            public kit::EventSource,
                            public kit::ReadyItem,
                            public std::enable_shared_from_this<TcpConnection> {
public:
    TcpConnection(std::shared_ptr<Engine> engine, IoThread &thread, int fd, Handler &handler,
                  std::string peer, bool accepted);
    ~TcpConnection() override;

    // Connection (limits, peer, context, bulkPut/bulkGet: kit::ConnectionBase)
    Status send(std::span<const std::byte> message, Deadline deadline) noexcept override;
    Result<BulkDescriptor> exposeBulk(std::span<const Segment> segments,
                                      BulkAccess access) noexcept override;
    Result<BulkDescriptor> exposeBulkSummed(std::span<const Segment> segments,
                                            const ArrivalSums &sums) noexcept override;
    void unexposeBulk(const BulkDescriptor &descriptor) noexcept override;
    Status bulkPutFile(const BulkDescriptor &remote, const FileRange &file, std::uint64_t tag,
                       Deadline deadline) noexcept override;
    Status bulkPutFileThenSend(const BulkDescriptor &remote, const FileRange &file,
                               std::span<const std::byte> message, std::uint64_t tag,
                               Deadline deadline) noexcept override;
    void close() noexcept override;

    // EventSource (I/O thread)
    void onEvents(std::uint32_t events) noexcept override;
    // ReadyItem (I/O thread): taken off its thread's write list; write what is queued.
    void onReady() noexcept override;

    // Control path.
    // Allocates every buffer for the negotiated limits; after this the hot path allocates nothing.
    void establish(const Limits &limits);
    void markAnnounced() noexcept { m_announced = true; }
    // Fails pending operations, closes the socket, reports the disconnect. I/O thread only.
    void teardown(const Status &reason) noexcept;
    bool handshakeExpired(Clock::time_point now) const noexcept;
    int fd() const noexcept { return m_fd; }

private:
    enum class RxPhase { header, hello, message, bulk, discard };
    enum class TxKind : std::uint8_t { control, message, put, getRequest, getData };

    struct TxEntry {
        std::array<std::byte, kHeaderSize> header;
        const iovec *payload = nullptr;
        std::uint32_t payloadCount = 0;
        std::uint64_t payloadBytes = 0;
        std::uint64_t sent = 0; // header + payload bytes already written
        TxKind kind = TxKind::control;
        std::uint32_t slot = 0; // message slot or op slot
        // A put from a file (bulkPutFile): the payload goes with sendfile from fileFd at
        // fileOffset. At end of file, or on a read error, the rest is zeros (the frame length is
        // already promised) and a read error fails the operation.
        int fileFd = -1;
        std::uint64_t fileOffset = 0;
        bool fileEnd = false;
        int fileError = 0;
        // A message queued behind a file put (bulkPutFileThenSend): dropped, never written, when
        // reading the file failed.
        bool afterFilePut = false;
    };
    struct Done {
        std::uint64_t tag = 0;
        int fileError = 0;
    };
    struct Op {
        bool isGet = false;
        std::uint32_t count = 0;
        std::uint64_t total = 0;
        std::uint64_t tag = 0;
        iovec *iov = nullptr; // kMaxBulkSegments entries in m_opIov
    };
    struct Exposure {
        BulkAccess access = BulkAccess::putInto;
        std::uint32_t count = 0;
        std::uint64_t total = 0;
        iovec *iov = nullptr; // kMaxBulkSegments entries in m_exposureIov
        ArrivalSums sums;     // pageCrcs null: not summed on arrival
    };

    // tcp_datapath.cpp
    void onReadable() noexcept;
    void onWritable() noexcept;
    bool dispatchHeader() noexcept; // false: connection torn down
    bool finishFrame() noexcept;
    void protocolError(std::string_view what) noexcept;
    bool pushTxLocked(const FrameHeader &header, const iovec *payload, std::uint32_t count,
                      std::uint64_t bytes, TxKind kind, std::uint32_t slot,
                      const FileRange *file = nullptr) noexcept;
    // Copies `message` into its taken message slot and queues it as a message frame.
    void pushMessageLocked(std::span<const std::byte> message, std::uint32_t slot) noexcept;
    // Makes sure the I/O thread will write what was queued: nothing when EPOLLOUT is armed or the
    // connection is already on its thread's write list; otherwise onto that list.
    void wakeWriterLocked() noexcept;
    void setEpollOutLocked(bool on) noexcept;
    // Writes the head entry's file payload with sendfile: bytes written, -1 to stop for now.
    std::int64_t sendFilePayload(int fd) noexcept;
    ssize_t receiveSmall(int fd, std::byte *to, std::size_t want) noexcept;
    ssize_t receiveScattered(int fd, const iovec *iov, std::size_t count) noexcept;
    // Before going back to epoll: the socket's wake threshold for what the current frame still
    // needs (never more than the rest of a bulk payload, else its tail would never wake us).
    void setWakeThreshold(int fd) noexcept;
    bool completeWritten(std::uint64_t written) noexcept;
    Status startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                     const FileRange *file, std::uint64_t tag, Deadline deadline,
                     bool isGet) noexcept override;
    void onHello() noexcept;
    Result<BulkDescriptor> expose(std::span<const Segment> segments, BulkAccess access,
                                  const ArrivalSums &sums) noexcept;
    Status startFilePut(const BulkDescriptor &remote, const FileRange &file,
                        std::span<const std::byte> message, std::uint64_t tag,
                        Deadline deadline) noexcept;
    // Retires head entries with nothing left to write (messages dropped behind a failed file
    // put), giving back their message slots. True when it freed any.
    bool retireEmptyHeadLocked() noexcept;

    std::shared_ptr<Engine> m_engine;
    IoThread &m_thread;
    const bool m_accepted;
    Clock::time_point m_handshakeDeadline;
    bool m_announced = false; // the host knows this connection: report its disconnect

    // Guarded by m_mutex.
    mutable std::mutex m_mutex;
    int m_fd = -1;
    bool m_writeArmed = false;  // EPOLLOUT in the epoll mask: the socket was full
    bool m_writeQueued = false; // on the I/O thread's write list
    std::vector<TxEntry> m_tx;  // ring
    std::size_t m_txHead = 0;
    std::size_t m_txCount = 0;
    std::vector<std::byte> m_messageBuffers; // queueDepth × maxMessageSize
    std::vector<iovec> m_messageIov;         // one per message slot
    std::vector<std::uint32_t> m_freeMessages;
    kit::SlotTable<Op> m_ops;
    std::vector<iovec> m_opIov;
    kit::SlotTable<Exposure> m_exposures;
    std::vector<iovec> m_exposureIov;
    std::uint32_t m_pendingGetData = 0; // answers queued for the peer's get requests

    // The exposure a put is landing in, so that unexposeBulk can stop a frame that is still
    // arriving from writing into memory the host took back (a request that timed out): the I/O
    // thread reads into (and sums) exposed memory only while holding m_rxMemoryMutex and after
    // checking m_rxRevoked; unexposeBulk sets it under the same mutex, so once it returns nothing
    // more lands. Set with m_mutex held too (lock order: m_mutex, then m_rxMemoryMutex).
    std::mutex m_rxMemoryMutex;
    std::uint32_t m_rxExposureSlot = UINT32_MAX; // UINT32_MAX: the frame lands in no exposure
    std::uint32_t m_rxExposureGeneration = 0;
    bool m_rxRevoked = false;

    // I/O thread only.
    RxPhase m_rxPhase = RxPhase::header;
    std::array<std::byte, kHeaderSize> m_rxHeaderBytes{};
    // Bytes received and not consumed yet (see kRxStageSize): m_rxStage[m_rxStageBegin,
    // m_rxStageEnd). I/O thread only.
    std::unique_ptr<std::byte[]> m_rxStage{new std::byte[kRxStageSize]};
    std::size_t m_rxStageBegin = 0;
    std::size_t m_rxStageEnd = 0;
    FrameHeader m_rxHeader;
    std::size_t m_rxHave = 0;
    std::array<std::byte, sizeof(Hello)> m_helloBytes{}; // received hello, then our answer
    iovec m_helloIov{};
    std::vector<std::byte> m_rxMessage;
    const iovec *m_rxIov = nullptr; // bulk destination
    std::size_t m_rxIovIndex = 0;
    std::size_t m_rxIovOffset = 0;
    std::uint64_t m_rxRemaining = 0;
    std::uint32_t m_rxOp = UINT32_MAX; // the get op completed by this frame
    ArrivalSummer m_rxSummer;          // the current put's exposure asked for sums
    int m_rxLowat = 1;                 // the socket's SO_RCVLOWAT (see kWakeLowatMax)
    std::vector<Done> m_done;          // put completions gathered under the lock
    std::array<iovec, kIovBatch> m_txIov{};
};

// One I/O thread: the kit's reactor (epoll, posted work, the write list as its ready list) with
// the connections it owns, plus the listeners and the handshake sweep.
class IoThread final : public kit::ConnectionThread<TcpConnection> {
public:
    IoThread();
    ~IoThread() override;

    // Control path, any thread.
    Status adopt(const std::shared_ptr<TcpConnection> &connection);
    Status addPollable(const std::shared_ptr<Pollable> &pollable, int fd);
    // Hot path, any thread, with the connection's mutex held: the connection has frames to
    // write (the reactor's ready list: one eventfd write wakes the thread for every connection
    // queued until it runs, none from the I/O thread itself).
    void queueWrite(std::shared_ptr<TcpConnection> connection) noexcept
    {
        queueReady(std::move(connection));
    }

    // I/O thread only.
    void removePollable(Pollable *pollable, int fd) noexcept;
    std::byte *scratch() noexcept { return m_scratch.data(); }

private:
    void afterBatch() noexcept override; // handshake sweep, then the retired objects
    void onShutdown() noexcept override; // every connection is told and closed

    std::vector<std::byte> m_scratch;
    Clock::time_point m_lastSweep = Clock::now();
    std::vector<std::shared_ptr<TcpConnection>> m_expired; // I/O thread only: the sweep's finds

    std::vector<std::shared_ptr<Pollable>> m_pollables; // guarded by m_mutex
    // I/O thread only: listeners removed during an epoll batch, released after it.
    std::vector<std::shared_ptr<Pollable>> m_retiredPollables;
};

class Engine final : public kit::EngineBase<IoThread> {
public:
    using EngineBase::EngineBase;
};

using kit::errnoText;

} // namespace lutra::transport::tcp
