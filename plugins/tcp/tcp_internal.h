#pragma once
// The tcp plugin's objects. Control path (setup, teardown) in tcp_transport.cpp, hot path
// (framing, send/recv, bulk) in tcp_datapath.cpp.

#include <lutra/transport.h>

#include "tcp_frame.h"

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
static_assert(kIovBatch >= 2, "a header and at least one payload piece per call");
static_assert(kIovBatch <= 1024, "IOV_MAX");

class Engine;
class IoThread;

// Something with a file descriptor in an I/O thread's epoll set.
class Pollable {
public:
    virtual ~Pollable() = default;
    virtual void onEvents(std::uint32_t events) noexcept = 0;
};

class TcpConnection final : public Connection,
                            public Pollable,
                            public std::enable_shared_from_this<TcpConnection> {
public:
    TcpConnection(std::shared_ptr<Engine> engine, IoThread &thread, int fd, Handler &handler,
                  std::string peer, bool accepted);
    ~TcpConnection() override;

    // Connection
    const Limits &limits() const noexcept override { return m_limits; }
    std::string_view peer() const noexcept override { return m_peer; }
    bool connected() const noexcept override { return m_connected.load(); }
    void setContext(void *context) noexcept override { m_context.store(context); }
    void *context() const noexcept override { return m_context.load(); }
    Status send(std::span<const std::byte> message, Deadline deadline) noexcept override;
    Result<BulkDescriptor> exposeBulk(std::span<const Segment> segments,
                                      BulkAccess access) noexcept override;
    void unexposeBulk(const BulkDescriptor &descriptor) noexcept override;
    Status bulkPut(const BulkDescriptor &remote, std::span<const Segment> local, std::uint64_t tag,
                   Deadline deadline) noexcept override;
    Status bulkGet(const BulkDescriptor &remote, std::span<const Segment> local, std::uint64_t tag,
                   Deadline deadline) noexcept override;
    Status bulkPutFile(const BulkDescriptor &remote, const FileRange &file, std::uint64_t tag,
                       Deadline deadline) noexcept override;
    void close() noexcept override;

    // Pollable (I/O thread)
    void onEvents(std::uint32_t events) noexcept override;
    // I/O thread: the connection was taken off its thread's write list; write what is queued.
    void onWriteQueued() noexcept;

    // Control path.
    // Allocates every buffer for the negotiated limits; after this the hot path allocates nothing.
    void establish(const Limits &limits);
    void markAnnounced() noexcept { m_announced = true; }
    // Fails pending operations, closes the socket, reports the disconnect. I/O thread only.
    void teardown(const Status &reason) noexcept;
    bool handshakeExpired(Clock::time_point now) const noexcept;
    int fd() const noexcept { return m_fd; }

private:
    enum class State { handshake, established, closing, closed };
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
    };
    struct Done {
        std::uint64_t tag = 0;
        int fileError = 0;
    };
    struct Op {
        bool active = false;
        bool isGet = false;
        std::uint32_t generation = 0;
        std::uint32_t count = 0;
        std::uint64_t total = 0;
        std::uint64_t tag = 0;
        iovec *iov = nullptr; // kMaxBulkSegments entries in m_opIov
    };
    struct Exposure {
        bool active = false;
        BulkAccess access = BulkAccess::putInto;
        std::uint32_t generation = 0;
        std::uint32_t count = 0;
        std::uint64_t total = 0;
        iovec *iov = nullptr; // kMaxBulkSegments entries in m_exposureIov
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
    // Makes sure the I/O thread will write what was queued: nothing when EPOLLOUT is armed or the
    // connection is already on its thread's write list; otherwise onto that list.
    void wakeWriterLocked() noexcept;
    void setEpollOutLocked(bool on) noexcept;
    // Writes the head entry's file payload with sendfile: bytes written, -1 to stop for now.
    std::int64_t sendFilePayload(int fd) noexcept;
    bool completeWritten(std::uint64_t written) noexcept;
    bool waitLocked(std::unique_lock<std::mutex> &lock, Deadline deadline,
                    const std::vector<std::uint32_t> &freeList) noexcept;
    Status closedStatusLocked() const;
    Result<WireDescriptor> decodeDescriptor(const BulkDescriptor &descriptor,
                                            BulkAccess expected) const noexcept;
    Status startBulk(const BulkDescriptor &remote, std::span<const Segment> local,
                     const FileRange *file, std::uint64_t tag, Deadline deadline,
                     bool isGet) noexcept;
    void onHello() noexcept;

    std::shared_ptr<Engine> m_engine;
    IoThread &m_thread;
    Handler &m_handler;
    const std::string m_peer;
    const bool m_accepted;
    std::atomic<void *> m_context{nullptr};
    std::atomic<bool> m_connected{false};
    Limits m_limits;
    Clock::time_point m_handshakeDeadline;
    bool m_announced = false; // the host knows this connection: report its disconnect

    // Guarded by m_mutex.
    mutable std::mutex m_mutex;
    std::condition_variable m_space; // a message or op slot freed, or the connection closed
    int m_fd = -1;
    State m_state = State::handshake;
    Status m_closeReason;
    bool m_writeArmed = false;  // EPOLLOUT in the epoll mask: the socket was full
    bool m_writeQueued = false; // on the I/O thread's write list
    std::vector<TxEntry> m_tx;  // ring
    std::size_t m_txHead = 0;
    std::size_t m_txCount = 0;
    std::vector<std::byte> m_messageBuffers; // queueDepth × maxMessageSize
    std::vector<iovec> m_messageIov;         // one per message slot
    std::vector<std::uint32_t> m_freeMessages;
    std::vector<Op> m_ops;
    std::vector<iovec> m_opIov;
    std::vector<std::uint32_t> m_freeOps;
    std::vector<Exposure> m_exposures;
    std::vector<iovec> m_exposureIov;
    std::vector<std::uint32_t> m_freeExposures;
    std::uint32_t m_pendingGetData = 0; // answers queued for the peer's get requests

    // I/O thread only.
    RxPhase m_rxPhase = RxPhase::header;
    std::array<std::byte, kHeaderSize> m_rxHeaderBytes{};
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
    std::vector<Done> m_done;          // put completions gathered under the lock
    std::array<iovec, kIovBatch> m_txIov{};
};

class IoThread {
public:
    IoThread(Engine &engine, std::size_t index);
    ~IoThread();
    IoThread(const IoThread &) = delete;
    IoThread &operator=(const IoThread &) = delete;

    Status start();
    void stop() noexcept; // tears down every connection and joins

    // Control path, any thread.
    Status adopt(const std::shared_ptr<TcpConnection> &connection);
    Status addPollable(const std::shared_ptr<Pollable> &pollable, int fd);
    // Runs `work` on this I/O thread and waits for it (directly when already on it).
    void runSync(const std::function<void()> &work);
    // Queues `work` for the I/O thread; false once the thread has stopped.
    [[nodiscard]] bool post(std::function<void()> work);
    // Hot path, any thread, with the connection's mutex held: the connection has frames to
    // write. One eventfd write wakes the thread for every connection queued until it runs (none
    // from the I/O thread itself, which flushes the list after each epoll batch).
    void queueWrite(std::shared_ptr<TcpConnection> connection) noexcept;

    // I/O thread only.
    void retire(TcpConnection *connection) noexcept;
    void removePollable(Pollable *pollable, int fd) noexcept;
    bool onThread() const noexcept { return std::this_thread::get_id() == m_thread.get_id(); }
    int epollFd() const noexcept { return m_epoll; }
    std::byte *scratch() noexcept { return m_scratch.data(); }

private:
    void run() noexcept;
    void runCommands() noexcept;
    // Writes for every connection on the write list; true when more were queued meanwhile.
    bool flushWrites() noexcept;

    Engine &m_engine;
    std::size_t m_index;
    int m_epoll = -1;
    int m_wake = -1;         // commands (post), level-triggered and read
    int m_writeWake = -1;    // the write list (queueWrite), edge-triggered and never read
    char m_writeWakeTag = 0; // its epoll data.ptr, an address no Pollable has
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::vector<std::byte> m_scratch;

    std::mutex m_mutex; // guards the members below
    std::vector<std::shared_ptr<TcpConnection>> m_connections;
    std::vector<std::shared_ptr<Pollable>> m_pollables;
    std::vector<std::function<void()>> m_commands;
    bool m_stopped = false;

    // I/O thread only: objects retired during an epoll batch, released after it so that a later
    // event in the same batch never sees a destroyed object.
    std::vector<std::shared_ptr<TcpConnection>> m_graveyard;
    std::vector<std::shared_ptr<Pollable>> m_retiredPollables;
    std::vector<std::shared_ptr<TcpConnection>> m_writing; // the write list being flushed

    // Its own mutex: queueWrite runs with a connection's mutex held, and the thread's m_mutex is
    // held while connections are locked (the handshake sweep), so sharing it would deadlock.
    std::mutex m_writeMutex; // guards the four below; never held while taking another lock
    // Connections with frames to write (capacity reserved per adopted connection, so queueing
    // does not allocate) and whether the eventfd was written since the thread last took them.
    std::vector<std::shared_ptr<TcpConnection>> m_writeList;
    std::size_t m_writeCapacity = 0; // connections adopted so far
    bool m_wakePending = false;
    bool m_writesStopped = false;
};

class Engine {
public:
    explicit Engine(const TransportOptions &options) : m_options(options) {}

    void log(LogLevel level, std::string_view text) const { m_options.log(level, text); }
    const TransportOptions &options() const noexcept { return m_options; }
    IoThread &pickThread() noexcept;
    IoThread &thread(std::size_t index) noexcept { return *m_threads[index]; }
    std::vector<std::unique_ptr<IoThread>> &threads() noexcept { return m_threads; }

private:
    TransportOptions m_options;
    std::vector<std::unique_ptr<IoThread>> m_threads;
    std::atomic<std::uint32_t> m_next{0};
};

std::string errnoText(int error);

} // namespace lutra::transport::tcp
