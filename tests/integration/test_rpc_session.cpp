// The client RPC session against a small in-test fake target, both on the real tcp plugin loaded
// from LUTRA_PLUGIN_PATH. The fake's behaviour is chosen by the request's job id ("drop",
// "late", "hang", "corrupt-crc"), so each case stays a plain call. Every wait is bounded;
// nothing measures speed.
#include "client/rpc_session.h"
#include "protocol/codec.h"
#include "protocol/crc32c.h"
#include "transport/loader.h"

#include <QTest>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <thread>

using namespace lutra;
using namespace std::chrono_literals;
using client::RpcSession;
using transport::Connection;
using transport::ConnectionPtr;
using transport::deadlineIn;
using transport::Segment;

namespace proto = lutra::protocol;

// Heap allocations made by the current thread while it counts: the calls must make none once
// warm.
namespace {
thread_local bool t_counting = false;
thread_local std::size_t t_allocations = 0;
} // namespace

void *operator new(std::size_t size)
{
    if (t_counting) {
        ++t_allocations;
    }
    if (void *memory = std::malloc(size == 0 ? 1 : size)) {
        return memory;
    }
    throw std::bad_alloc();
}
void operator delete(void *memory) noexcept
{
    std::free(memory);
}
void operator delete(void *memory, std::size_t) noexcept
{
    std::free(memory);
}

namespace {

constexpr auto kWait = 5s;                // upper bound for anything that should happen "soon"
constexpr auto kShort = 150ms;            // deadline of calls that are meant to time out
constexpr std::uint64_t kShortHandle = 7; // an object of kShortSize bytes; others are endless
constexpr std::uint64_t kShortSize = 5000;
constexpr std::uint32_t kTargetMaxBulk = 1u << 20;
constexpr std::uint64_t kUnknownFeature = 1u << 7;
constexpr std::uint64_t kFakeExportCookie = 0xc0ffee; // the fake's one export

// The content of every object of the fake target: a function of handle and position.
std::byte patternByte(std::uint64_t handle, std::uint64_t position)
{
    return static_cast<std::byte>((position * 131 + handle * 7 + (position >> 12)) & 0xff);
}

struct LogCapture {
    std::mutex mutex;
    std::vector<std::string> lines;

    static void write(void *context, transport::LogLevel, std::string_view text)
    {
        auto *self = static_cast<LogCapture *>(context);
        std::lock_guard lock(self->mutex);
        self->lines.emplace_back(text);
    }
    bool has(std::string_view part)
    {
        std::lock_guard lock(mutex);
        for (const auto &line : lines) {
            if (line.find(part) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
};

// A target that speaks just enough of the protocol. Its handler only queues; one service thread
// decodes and answers, and may wait there (for credit, for bulk completion) as a real target's
// service threads do.
class FakeTarget final : public transport::Handler {
public:
    struct ConnectSeen {
        std::uint32_t maxBulkBytes = 0;
        std::uint32_t maxMessageBytes = 0;
        std::uint64_t features = 0;
        std::string clientId;
        std::string jobId;
    };

    FakeTarget() : m_bulk(proto::kMaxBulkBytes), m_out(proto::kMaxMessageSize)
    {
        m_service = std::thread([this] { serve(); });
    }
    ~FakeTarget() override { stop(); }

    void stop()
    {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_changed.notify_all();
        if (m_service.joinable()) {
            m_service.join();
        }
    }

    bool waitFor(const std::function<bool()> &done)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, kWait, done);
    }
    template <typename T> T locked(const std::function<T()> &read)
    {
        std::lock_guard lock(m_mutex);
        return read();
    }

    // Target → client: "cancel your lock". Returns the xid used.
    std::uint64_t sendBlockingCallback(std::uint64_t lockHandle, proto::LockMode mode)
    {
        ConnectionPtr connection = locked<ConnectionPtr>([&] { return m_accepted.back(); });
        const std::uint64_t xid = 900000 + ++m_callbackXids;
        std::array<std::byte, 128> buffer{};
        auto size = proto::encode(
            proto::Message{xid, "job.other", proto::BlockingCallbackRequest{lockHandle, mode}},
            buffer);
        if (!size.ok() ||
            !connection->send(std::span(buffer).first(*size), deadlineIn(kWait)).ok()) {
            return 0;
        }
        return xid;
    }

    void closeAll()
    {
        std::lock_guard lock(m_mutex);
        for (const auto &connection : m_accepted) {
            connection->close();
        }
    }
    // Closes the `index`th connection accepted (connections are accepted in connect order).
    void close(std::size_t index)
    {
        std::lock_guard lock(m_mutex);
        m_accepted.at(index)->close();
    }
    std::size_t acceptedCount()
    {
        std::lock_guard lock(m_mutex);
        return m_accepted.size();
    }
    // Lets the "held" reads waiting for it answer.
    void releaseHeld()
    {
        std::lock_guard lock(m_mutex);
        m_held = false;
        m_changed.notify_all();
    }
    // "hang" reads seen on the `index`th connection accepted.
    int hungOn(std::size_t index)
    {
        std::lock_guard lock(m_mutex);
        const auto it = hungByConnection.find(m_accepted.at(index).get());
        return it == hungByConnection.end() ? 0 : it->second;
    }

    // Filled under m_mutex.
    std::optional<ConnectSeen> connectSeen;
    std::vector<std::uint64_t> callbackAcks;                    // xids of BlockingCallbackReply
    std::vector<std::pair<std::uint64_t, Errc>> callbackErrors; // xid, code of ErrorReply
    std::vector<std::byte> written;                             // data of the last write
    std::uint64_t writtenHandle = 0;
    std::uint64_t writtenOffset = 0;
    std::uint64_t lateXid = 0; // the xid of the late reply once it has been sent
    int hung = 0;              // "hang" requests seen (never answered)
    std::map<const Connection *, int> hungByConnection; // "hang" reads per connection
    bool multiConnection = true;      // answers kFeatureMultiConnection (one export, one cookie)
    std::vector<std::uint64_t> joins; // export cookies presented by joining connections
    std::vector<std::string> errors;

private:
    struct Request {
        Connection *connection = nullptr;
        std::vector<std::byte> bytes;
    };

    void onAccepted(const ConnectionPtr &connection) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_accepted.push_back(connection);
    }
    void onMessage(Connection &connection, std::span<const std::byte> message) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_queue.push_back({&connection, {message.begin(), message.end()}});
        m_changed.notify_all();
    }
    void onBulkDone(Connection &, std::uint64_t tag, const Status &status) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_bulkDone.emplace(tag, status);
        m_changed.notify_all();
    }
    void onDisconnected(Connection &, const Status &) noexcept override {}

    void serve()
    {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_changed.wait(lock, [&] { return m_stop || !m_queue.empty(); });
            if (m_stop) {
                return;
            }
            Request request = std::move(m_queue.front());
            m_queue.pop_front();
            lock.unlock();
            handle(*request.connection, request.bytes);
            lock.lock();
        }
    }

    void fail(std::string text)
    {
        std::lock_guard lock(m_mutex);
        errors.push_back(std::move(text));
        m_changed.notify_all();
    }

    void reply(Connection &connection, std::uint64_t xid, proto::Body body)
    {
        proto::Message message{xid, {}, std::move(body)};
        if (message.opcode() == proto::Opcode::connect) {
            message.version = proto::kMinVersion; // connect is framed as version 1
        }
        auto size = proto::encode(message, m_out);
        if (!size.ok()) {
            fail(size.status().toString());
            return;
        }
        if (Status sent = connection.send(std::span(m_out).first(*size), deadlineIn(kWait));
            !sent.ok() && sent.code() != Errc::unavailable) {
            fail(sent.toString());
        }
    }

    Status waitBulk(std::uint64_t tag)
    {
        std::unique_lock lock(m_mutex);
        if (!m_changed.wait_for(lock, kWait, [&] { return m_bulkDone.contains(tag); })) {
            return {Errc::timeout, "bulk " + std::to_string(tag) + " never finished"};
        }
        return m_bulkDone[tag];
    }

    void handle(Connection &connection, std::span<const std::byte> bytes)
    {
        auto message = proto::decode(bytes);
        if (!message.ok()) {
            fail(message.status().toString());
            return;
        }
        if (const auto *error = std::get_if<proto::ErrorReply>(&message->body)) {
            std::lock_guard lock(m_mutex);
            callbackErrors.emplace_back(message->xid, error->code);
            m_changed.notify_all();
            return;
        }
        if (std::holds_alternative<proto::BlockingCallbackReply>(message->body)) {
            std::lock_guard lock(m_mutex);
            callbackAcks.push_back(message->xid);
            m_changed.notify_all();
            return;
        }
        const std::string_view job = message->jobId;
        // A held-back reply goes out just before the answer to the next request.
        if (m_pendingLate != 0 && job != "late") {
            reply(connection, m_pendingLate, proto::StatfsReply{.totalObjects = m_pendingLate});
            std::lock_guard lock(m_mutex);
            lateXid = std::exchange(m_pendingLate, 0);
        }
        const std::uint64_t xid = message->xid;
        std::visit(
            [&](const auto &body) {
                using T = std::decay_t<decltype(body)>;
                if constexpr (std::is_same_v<T, proto::ConnectRequest>) {
                    {
                        std::lock_guard lock(m_mutex);
                        connectSeen =
                            ConnectSeen{body.maxBulkBytes, body.maxMessageBytes, body.features,
                                        std::string(body.clientId), std::string(job)};
                    }
                    const bool multi = locked<bool>([&] { return multiConnection; });
                    proto::ConnectReply answer;
                    answer.maxBulkBytes = std::min(body.maxBulkBytes, kTargetMaxBulk);
                    answer.maxMessageBytes = body.maxMessageBytes; // the transport is smaller
                    answer.features =
                        body.features &
                        (proto::kFeatureChecksums | proto::kFeatureBlockingCallbacks |
                         kUnknownFeature | (multi ? proto::kFeatureMultiConnection : 0));
                    answer.targetName = "fake-ost0";
                    if ((answer.features & proto::kFeatureMultiConnection) != 0) {
                        if (body.exportCookie != 0) {
                            std::lock_guard lock(m_mutex);
                            joins.push_back(body.exportCookie);
                        }
                        if (body.exportCookie != 0 && body.exportCookie != kFakeExportCookie) {
                            reply(connection, xid,
                                  proto::ErrorReply{proto::Opcode::connect, Errc::not_found,
                                                    "no export with that cookie"});
                            return;
                        }
                        answer.exportCookie = kFakeExportCookie;
                    }
                    reply(connection, xid, answer);
                } else if constexpr (std::is_same_v<T, proto::PingRequest>) {
                    if (job == "hang") {
                        std::lock_guard lock(m_mutex);
                        ++hung;
                        m_changed.notify_all();
                    } else if (job != "drop") {
                        reply(connection, xid, proto::PingReply{});
                    }
                } else if constexpr (std::is_same_v<T, proto::StatRequest>) {
                    // Echo what identifies the call: the caller's number and the xid.
                    proto::StatReply answer;
                    answer.attr.objectId = std::stoull(std::string(body.path));
                    answer.attr.size = xid;
                    reply(connection, xid, answer);
                } else if constexpr (std::is_same_v<T, proto::StatfsRequest>) {
                    if (job == "late") {
                        m_pendingLate = xid;
                    } else {
                        reply(connection, xid, proto::StatfsReply{.totalObjects = xid});
                    }
                } else if constexpr (std::is_same_v<T, proto::UnlinkRequest>) {
                    reply(connection, xid,
                          proto::ErrorReply{proto::Opcode::unlink, Errc::not_found,
                                            "no such object: " + std::string(body.path)});
                } else if constexpr (std::is_same_v<T, proto::ReadRequest>) {
                    serveRead(connection, xid, job, body.io);
                } else if constexpr (std::is_same_v<T, proto::WriteRequest>) {
                    serveWrite(connection, xid, body);
                } else {
                    reply(connection, xid,
                          proto::ErrorReply{message->opcode(), Errc::unimplemented, "fake"});
                }
            },
            message->body);
    }

    void serveRead(Connection &connection, std::uint64_t xid, std::string_view job,
                   const proto::BulkIo &io)
    {
        if (job == "hang") { // never answered
            std::lock_guard lock(m_mutex);
            ++hung;
            ++hungByConnection[&connection];
            m_changed.notify_all();
            return;
        }
        if (job == "held") { // answered once the test releases it
            std::unique_lock lock(m_mutex);
            if (!m_changed.wait_for(lock, kWait, [&] { return !m_held || m_stop; })) {
                lock.unlock();
                fail("a held read was never released");
                return;
            }
        }
        const std::uint64_t size = io.handle == kShortHandle ? kShortSize : UINT64_MAX;
        const std::uint64_t count =
            io.offset >= size ? 0 : std::min(io.byteCount(), size - io.offset);
        for (std::uint64_t i = 0; i < count; ++i) {
            m_bulk[i] = patternByte(io.handle, io.offset + i);
        }
        if (count > 0) {
            auto remote = transport::BulkDescriptor::fromBytes(io.descriptor.bytes);
            const Segment local{m_bulk.data(), count, 0};
            const std::uint64_t tag = ++m_tags;
            Status status = remote.ok()
                                ? connection.bulkPut(*remote, {&local, 1}, tag, deadlineIn(kWait))
                                : remote.status();
            if (status.ok()) {
                status = waitBulk(tag);
            }
            if (!status.ok()) {
                fail("read bulk: " + status.toString());
                reply(connection, xid,
                      proto::ErrorReply{proto::Opcode::read, Errc::io_error, "bulk put failed"});
                return;
            }
        }
        proto::ReadReply answer;
        answer.bytesRead = static_cast<std::uint32_t>(count);
        std::vector<std::uint32_t> crcs((count + proto::kPageSize - 1) / proto::kPageSize);
        if ((io.flags & proto::kBulkChecksums) != 0) {
            (void)proto::computePageCrcs(std::span(m_bulk).first(count), crcs);
            if (job == "corrupt-crc" && !crcs.empty()) {
                crcs.back() ^= 1;
            }
            answer.flags = proto::kBulkChecksums;
            answer.pageCrcs = proto::Crc32List(crcs);
        }
        reply(connection, xid, answer);
    }

    void serveWrite(Connection &connection, std::uint64_t xid, const proto::WriteRequest &request)
    {
        const proto::BulkIo &io = request.io;
        const std::uint64_t count = io.byteCount();
        auto remote = transport::BulkDescriptor::fromBytes(io.descriptor.bytes);
        const Segment local{m_bulk.data(), count, 0};
        const std::uint64_t tag = ++m_tags;
        Status status = remote.ok()
                            ? connection.bulkGet(*remote, {&local, 1}, tag, deadlineIn(kWait))
                            : remote.status();
        if (status.ok()) {
            status = waitBulk(tag);
        }
        if (!status.ok()) {
            fail("write bulk: " + status.toString());
            reply(connection, xid,
                  proto::ErrorReply{proto::Opcode::write, Errc::io_error, "bulk get failed"});
            return;
        }
        if ((io.flags & proto::kBulkChecksums) != 0) {
            std::vector<std::uint32_t> crcs(io.pageCount);
            (void)proto::computePageCrcs(std::span(m_bulk).first(count), crcs);
            for (std::size_t page = 0; page < crcs.size(); ++page) {
                if (crcs[page] != request.pageCrcs[page]) {
                    reply(connection, xid,
                          proto::ErrorReply{proto::Opcode::write, Errc::io_error,
                                            "page " + std::to_string(page) + " checksum mismatch"});
                    return;
                }
            }
        }
        {
            std::lock_guard lock(m_mutex);
            written.assign(m_bulk.begin(), m_bulk.begin() + static_cast<std::ptrdiff_t>(count));
            writtenHandle = io.handle;
            writtenOffset = io.offset;
        }
        reply(connection, xid, proto::WriteReply{static_cast<std::uint32_t>(count)});
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<ConnectionPtr> m_accepted;
    std::deque<Request> m_queue;
    std::map<std::uint64_t, Status> m_bulkDone;
    bool m_stop = false;
    bool m_held = true; // "held" reads wait for releaseHeld()
    // Service thread only.
    std::vector<std::byte> m_bulk;
    std::vector<std::byte> m_out;
    std::uint64_t m_tags = 0;
    std::uint64_t m_pendingLate = 0;
    std::atomic<std::uint64_t> m_callbackXids{0};
    std::thread m_service;
};

// Pieces of `buffer` of `piece` bytes each (the last one shorter), in region `region`.
std::vector<Segment> segmentsOf(std::vector<std::byte> &buffer, std::size_t piece,
                                std::uint64_t region)
{
    std::vector<Segment> out;
    for (std::size_t offset = 0; offset < buffer.size(); offset += piece) {
        out.push_back({buffer.data() + offset, std::min(piece, buffer.size() - offset), region});
    }
    return out;
}

} // namespace

// What an asynchronous RPC reported, and on which thread.
struct AsyncResult {
    std::mutex mutex;
    std::condition_variable changed;
    int calls = 0;
    Status status;
    std::uint32_t bytes = 0;
    std::thread::id thread;

    static void done(void *context, std::uint64_t, const Status &status,
                     std::uint32_t bytes) noexcept
    {
        auto &result = *static_cast<AsyncResult *>(context);
        std::lock_guard lock(result.mutex);
        ++result.calls;
        result.status = status;
        result.bytes = bytes;
        result.thread = std::this_thread::get_id();
        result.changed.notify_all();
    }
    client::BulkCallback callback() { return {&AsyncResult::done, this, 0}; }
    bool wait()
    {
        std::unique_lock lock(mutex);
        return changed.wait_for(lock, kWait, [&] { return calls > 0; });
    }
};

int threadCount()
{
    return int(std::distance(std::filesystem::directory_iterator("/proc/self/task"),
                             std::filesystem::directory_iterator()));
}

class TestRpcSession : public QObject {
    Q_OBJECT

    LogCapture m_log;
    std::unique_ptr<transport::PluginLoader> m_loader;
    std::unique_ptr<FakeTarget> m_target;
    std::unique_ptr<transport::Transport> m_server;
    std::unique_ptr<transport::Listener> m_listener;
    std::unique_ptr<transport::Transport> m_client;
    std::unique_ptr<RpcSession> m_session;

    RpcSession::Options options()
    {
        RpcSession::Options options;
        options.clientId = "test-client";
        options.connectJobId = "test.connect";
        options.connectTimeout = 2000ms;
        options.log = {&LogCapture::write, &m_log};
        return options;
    }

    Result<std::unique_ptr<RpcSession>> connect(RpcSession::Options options)
    {
        return RpcSession::connect(*m_client, m_listener->uri(), std::move(options));
    }

private slots:
    void init()
    {
        m_loader = std::make_unique<transport::PluginLoader>(
            transport::LogSink{&LogCapture::write, &m_log});
        m_target = std::make_unique<FakeTarget>();
        // The client's transport is the smaller one: its limits are what tcp negotiates.
        transport::TransportOptions serverOptions;
        serverOptions.log = {&LogCapture::write, &m_log};
        serverOptions.proposed = {65536, 4u << 20, 32};
        transport::TransportOptions clientOptions = serverOptions;
        clientOptions.proposed = {32768, 2u << 20, 16};
        auto server = m_loader->create("tcp", serverOptions);
        QVERIFY2(server.ok(), server.status().toString().c_str());
        m_server = std::move(*server);
        auto client = m_loader->create("tcp", clientOptions);
        QVERIFY2(client.ok(), client.status().toString().c_str());
        m_client = std::move(*client);
        auto listener = m_server->listen("tcp://127.0.0.1:0", *m_target);
        QVERIFY2(listener.ok(), listener.status().toString().c_str());
        m_listener = std::move(*listener);
        auto session = connect(options());
        QVERIFY2(session.ok(), session.status().toString().c_str());
        m_session = std::move(*session);
    }

    void cleanup()
    {
        // Sessions first (they wait for their transport to let go), the fake's service thread
        // before the transport it uses, the handler after its transport.
        m_session.reset();
        if (m_target) {
            m_target->stop();
            const auto errors =
                m_target->locked<std::vector<std::string>>([&] { return m_target->errors; });
            QVERIFY2(errors.empty(), errors.empty() ? "" : errors.front().c_str());
        }
        m_listener.reset();
        m_server.reset();
        m_target.reset();
        m_client.reset();
        m_loader.reset();
        std::lock_guard lock(m_log.mutex);
        m_log.lines.clear();
    }

    void connectNegotiatesTheMinimum()
    {
        const RpcSession::Negotiated &n = m_session->negotiated();
        QCOMPARE(n.version, proto::kMaxVersion);
        QCOMPARE(n.slotCount, 16u);               // transport: the client's queue depth
        QCOMPARE(n.maxMessageBytes, 32768u);      // transport: the client's message size
        QCOMPARE(n.maxBulkBytes, kTargetMaxBulk); // protocol: the target's bulk limit
        QCOMPARE(n.features, proto::kFeatureChecksums | proto::kFeatureBlockingCallbacks |
                                 proto::kFeatureMultiConnection);
        QCOMPARE(n.targetName, std::string("fake-ost0"));
        QVERIFY(m_session->connected());

        const auto seen =
            m_target->locked<FakeTarget::ConnectSeen>([&] { return *m_target->connectSeen; });
        QCOMPARE(seen.maxBulkBytes, 2u << 20); // the client's transport bulk limit
        QCOMPARE(seen.maxMessageBytes, 32768u);
        QCOMPARE(seen.clientId, std::string("test-client"));
        QCOMPARE(seen.jobId, std::string("test.connect"));

        // The client's own options lower the limits further.
        auto small = options();
        small.maxBulkBytes = 256 << 10;
        small.features = proto::kFeatureChecksums;
        auto second = connect(small);
        QVERIFY2(second.ok(), second.status().toString().c_str());
        QCOMPARE((*second)->negotiated().maxBulkBytes, 256u << 10);
        QCOMPARE((*second)->negotiated().features, proto::kFeatureChecksums);
        QVERIFY((*second)->ping("job.ping", deadlineIn(kWait)).ok());
    }

    void connectFailureNamesTheUri()
    {
        auto refused = RpcSession::connect(*m_client, "tcp://127.0.0.1:1", options());
        QVERIFY(!refused.ok());
        QVERIFY2(refused.status().message().starts_with("connect tcp://127.0.0.1:1: "),
                 refused.status().toString().c_str());
    }

    void concurrentCallsGetTheirOwnReplies()
    {
        QVERIFY(m_session->ping("job.ping", deadlineIn(kWait)).ok());
        constexpr int kThreads = 8;
        constexpr int kCalls = 500;
        std::atomic<int> wrong{0};
        std::mutex firstMutex;
        std::string first;
        {
            std::vector<std::jthread> threads;
            for (int t = 0; t < kThreads; ++t) {
                threads.emplace_back([&, t] {
                    for (int i = 0; i < kCalls; ++i) {
                        const std::string path = std::to_string(t * 100000 + i);
                        auto reply = m_session->call(proto::StatRequest{path}, "job.stat",
                                                     deadlineIn(kWait));
                        std::string problem;
                        if (!reply.ok()) {
                            problem = reply.status().toString();
                        } else if (reply->attr.objectId != std::stoull(path) ||
                                   reply->attr.size != reply->xid()) {
                            problem = "call " + path + " got the reply for object " +
                                      std::to_string(reply->attr.objectId);
                        }
                        if (!problem.empty()) {
                            ++wrong;
                            std::lock_guard lock(firstMutex);
                            if (first.empty()) {
                                first = problem;
                            }
                        }
                    }
                });
            }
        }
        QVERIFY2(wrong.load() == 0, first.c_str());
        const auto counters = m_session->counters();
        QCOMPARE(counters.rpcsSent, std::uint64_t{kThreads * kCalls + 2}); // + connect, ping
        QCOMPARE(counters.replies, counters.rpcsSent);
        QCOMPARE(counters.unsolicited, std::uint64_t{0});
        QCOMPARE(counters.timeouts, std::uint64_t{0});
    }

    void steadyStateCallsDoNotAllocate()
    {
        std::vector<std::byte> buffer(4 * 4096);
        const auto segments = segmentsOf(buffer, 4096, 0);
        const auto round = [&] {
            bool ok = m_session->ping("job.ping", deadlineIn(kWait)).ok();
            ok =
                m_session->call(proto::StatRequest{"42"}, "job.stat", deadlineIn(kWait)).ok() && ok;
            ok = m_session->write(3, 0, 4, 4096, segments, true, "job.write", deadlineIn(kWait))
                     .ok() &&
                 ok;
            return m_session->read(5, 0, 4, 4096, segments, true, "job.read", deadlineIn(kWait))
                       .ok() &&
                   ok;
        };
        QVERIFY(round()); // warm: lazily built statics, first use of everything
        t_allocations = 0;
        t_counting = true;
        bool ok = true;
        for (int i = 0; i < 50; ++i) {
            ok = round() && ok;
        }
        t_counting = false;
        QVERIFY(ok);
        QCOMPARE(t_allocations, std::size_t{0});
    }

    void errorReplyBecomesStatus()
    {
        auto reply = m_session->call(proto::UnlinkRequest{"missing"}, "job.rm", deadlineIn(kWait));
        QVERIFY(!reply.ok());
        QCOMPARE(reply.status().code(), Errc::not_found);
        QCOMPARE(reply.status().message(), std::string("unlink: no such object: missing"));
        QCOMPARE(m_session->counters().errorReplies, std::uint64_t{1});
        QVERIFY(m_session->ping("job.ping", deadlineIn(kWait)).ok());
    }

    void droppedReplyTimesOut()
    {
        const Status status = m_session->ping("drop", deadlineIn(kShort));
        QCOMPARE(status.code(), Errc::timeout);
        QVERIFY2(status.message().starts_with("ping to tcp://127.0.0.1:"),
                 status.toString().c_str());
        QCOMPARE(m_session->counters().timeouts, std::uint64_t{1});
        // The slot came back and works.
        QVERIFY(m_session->ping("job.ping", deadlineIn(kWait)).ok());
        // A deadline already past never waits.
        QCOMPARE(m_session->ping("drop", transport::noWait()).code(), Errc::timeout);
    }

    void lateReplyIsNotDeliveredToTheNextCall()
    {
        auto late = m_session->call(proto::StatfsRequest{}, "late", deadlineIn(kShort));
        QVERIFY(!late.ok());
        QCOMPARE(late.status().code(), Errc::timeout);
        // The next call reuses the same slot; the late reply arrives just before its own.
        auto next = m_session->call(proto::StatfsRequest{}, "job.statfs", deadlineIn(kWait));
        QVERIFY2(next.ok(), next.status().toString().c_str());
        QCOMPARE(next->totalObjects, next->xid());
        const std::uint64_t lateXid =
            m_target->locked<std::uint64_t>([&] { return m_target->lateXid; });
        QVERIFY(lateXid != 0 && lateXid != next->xid());
        QCOMPARE(lateXid % m_session->negotiated().slotCount,
                 next->xid() % m_session->negotiated().slotCount);
        QCOMPARE(m_session->counters().unsolicited, std::uint64_t{1});
        QVERIFY(m_log.has("dropping a reply"));
    }

    void readAndWrite_data()
    {
        QTest::addColumn<int>("pages");
        QTest::addColumn<int>("lastPageBytes");
        QTest::addColumn<int>("segmentBytes");
        QTest::addColumn<bool>("checksums");
        QTest::newRow("one page") << 1 << 4096 << 4096 << true;
        QTest::newRow("one page, no checksums") << 1 << 4096 << 4096 << false;
        QTest::newRow("partial last page") << 3 << 100 << 4096 << true;
        QTest::newRow("odd segments") << 5 << 1234 << 3000 << true;
        QTest::newRow("maximum bulk") << int(kTargetMaxBulk / 4096) << 4096 << 4096 << true;
    }

    void readAndWrite()
    {
        QFETCH(int, pages);
        QFETCH(int, lastPageBytes);
        QFETCH(int, segmentBytes);
        QFETCH(bool, checksums);
        const std::uint64_t bytes = std::uint64_t(pages - 1) * 4096 + std::uint64_t(lastPageBytes);
        // Whole pages plus a tail that must stay untouched.
        std::vector<std::byte> buffer(std::size_t(pages) * 4096 + 512);
        auto region = m_client->registerMemory(buffer.data(), buffer.size());
        QVERIFY(region.ok());
        const auto segments = segmentsOf(buffer, std::size_t(segmentBytes), region->id);

        // Write: the target receives exactly our bytes.
        const std::uint64_t writeOffset = 8 * 4096;
        for (std::size_t i = 0; i < buffer.size(); ++i) {
            buffer[i] = patternByte(3, i);
        }
        auto written =
            m_session->write(3, writeOffset, std::uint32_t(pages), std::uint16_t(lastPageBytes),
                             segments, checksums, "job.write", deadlineIn(kWait));
        QVERIFY2(written.ok(), written.status().toString().c_str());
        QCOMPARE(std::uint64_t(*written), bytes);
        const auto received =
            m_target->locked<std::vector<std::byte>>([&] { return m_target->written; });
        QCOMPARE(received.size(), bytes);
        QVERIFY(std::equal(received.begin(), received.end(), buffer.begin()));
        QCOMPARE(m_target->locked<std::uint64_t>([&] { return m_target->writtenOffset; }),
                 writeOffset);

        // Read: byte-exact, nothing written past the transfer.
        const std::uint64_t readOffset = 10 * 4096;
        std::fill(buffer.begin(), buffer.end(), std::byte{0xee});
        auto read =
            m_session->read(5, readOffset, std::uint32_t(pages), std::uint16_t(lastPageBytes),
                            segments, checksums, "job.read", deadlineIn(kWait));
        QVERIFY2(read.ok(), read.status().toString().c_str());
        QCOMPARE(std::uint64_t(*read), bytes);
        for (std::size_t i = 0; i < buffer.size(); ++i) {
            const std::byte expected = i < bytes ? patternByte(5, readOffset + i) : std::byte{0xee};
            if (buffer[i] != expected) {
                QFAIL(qPrintable(QString("byte %1 differs").arg(i)));
            }
        }
        m_client->deregisterMemory(*region);
    }

    void shortReadAtTheEndOfAnObject()
    {
        std::vector<std::byte> buffer(4 * 4096, std::byte{0xee});
        const auto segments = segmentsOf(buffer, 4096, 0);
        auto read = m_session->read(kShortHandle, 0, 4, 4096, segments, true, "job.read",
                                    deadlineIn(kWait));
        QVERIFY2(read.ok(), read.status().toString().c_str());
        QCOMPARE(std::uint64_t(*read), kShortSize);
        for (std::size_t i = 0; i < buffer.size(); ++i) {
            QCOMPARE(buffer[i], i < kShortSize ? patternByte(kShortHandle, i) : std::byte{0xee});
        }
    }

    void checksumMismatchIsDetected()
    {
        std::vector<std::byte> buffer(3 * 4096);
        const auto segments = segmentsOf(buffer, 4096, 0);
        auto read =
            m_session->read(5, 0, 3, 4096, segments, true, "corrupt-crc", deadlineIn(kWait));
        QVERIFY(!read.ok());
        QCOMPARE(read.status().code(), Errc::io_error);
        QVERIFY2(read.status().message().starts_with("read handle 5 offset 0: page 2 checksum "
                                                     "mismatch"),
                 read.status().toString().c_str());
        QCOMPARE(m_session->counters().checksumErrors, std::uint64_t{1});
        // Without checksums the same corruption goes unnoticed, and the session carries on.
        auto plain =
            m_session->read(5, 0, 3, 4096, segments, false, "corrupt-crc", deadlineIn(kWait));
        QVERIFY2(plain.ok(), plain.status().toString().c_str());
    }

    void bulkArgumentsAreChecked()
    {
        std::vector<std::byte> buffer((kTargetMaxBulk + 4096));
        const auto segments = segmentsOf(buffer, 8192, 0);
        const std::uint32_t tooMany = kTargetMaxBulk / 4096 + 1;
        QCOMPARE(m_session->read(1, 0, tooMany, 4096, segments, false, "j", deadlineIn(kWait))
                     .status()
                     .code(),
                 Errc::out_of_range);
        QCOMPARE(m_session->read(1, 100, 1, 4096, segments, false, "j", deadlineIn(kWait))
                     .status()
                     .code(),
                 Errc::invalid_argument);
        QCOMPARE(
            m_session
                ->write(1, 0, 3, 4096, std::span(segments).first(1), false, "j", deadlineIn(kWait))
                .status()
                .code(),
            Errc::invalid_argument);
        auto plain = options();
        plain.features = 0;
        auto session = connect(plain);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        QCOMPARE(
            (*session)->read(1, 0, 1, 4096, segments, true, "j", deadlineIn(kWait)).status().code(),
            Errc::failed_precondition);
    }

    void blockingCallbackIsDeliveredAndAnswered()
    {
        std::mutex mutex;
        std::condition_variable changed;
        std::vector<std::pair<std::uint64_t, proto::LockMode>> seen;
        m_session->setBlockingCallbackHandler([&](std::uint64_t lock, proto::LockMode mode) {
            std::lock_guard guard(mutex);
            seen.emplace_back(lock, mode);
            changed.notify_all();
        });
        const std::uint64_t xid = m_target->sendBlockingCallback(0x42, proto::LockMode::pw);
        QVERIFY(xid != 0);
        {
            std::unique_lock lock(mutex);
            QVERIFY(changed.wait_for(lock, kWait, [&] { return !seen.empty(); }));
            QCOMPARE(seen.size(), std::size_t{1});
            QCOMPARE(seen[0].first, std::uint64_t{0x42});
            QCOMPARE(seen[0].second, proto::LockMode::pw);
        }
        QVERIFY(m_target->waitFor([&] { return !m_target->callbackAcks.empty(); }));
        QCOMPARE(m_target->locked<std::uint64_t>([&] { return m_target->callbackAcks[0]; }), xid);

        // Nobody to hand it to: the target hears so instead of a false acknowledgement.
        m_session->setBlockingCallbackHandler({});
        const std::uint64_t second = m_target->sendBlockingCallback(0x43, proto::LockMode::pr);
        QVERIFY(m_target->waitFor([&] { return !m_target->callbackErrors.empty(); }));
        const auto error = m_target->locked<std::pair<std::uint64_t, Errc>>(
            [&] { return m_target->callbackErrors[0]; });
        QCOMPARE(error.first, second);
        QCOMPARE(error.second, Errc::failed_precondition);
        QCOMPARE(m_session->counters().callbacks, std::uint64_t{2});
        // Calls still work alongside.
        QVERIFY(m_session->ping("job.ping", deadlineIn(kWait)).ok());
    }

    void asyncReadCompletesOnAnIoThread()
    {
        std::vector<std::byte> buffer(3 * 4096);
        const auto segments = segmentsOf(buffer, 4096, 0);
        AsyncResult result;
        // Answered only after submitRead has returned, so the reply cannot beat the sender
        // back (then the sender completes it, on this thread).
        QVERIFY(m_session
                    ->submitRead(9, 8192, 3, 4096, segments, true, "held", deadlineIn(kWait),
                                 result.callback())
                    .ok());
        m_target->releaseHeld();
        QVERIFY(result.wait());
        QVERIFY2(result.status.ok(), result.status.toString().c_str());
        QCOMPARE(result.bytes, 3u * 4096);
        QVERIFY(result.thread != std::this_thread::get_id());
        for (std::size_t i = 0; i < buffer.size(); ++i) {
            QCOMPARE(buffer[i], patternByte(9, 8192 + i));
        }
        // Exactly once.
        QVERIFY(m_session->ping("job.ping", deadlineIn(kWait)).ok());
        QCOMPARE(result.calls, 1);
    }

    void asyncReadTimesOutWithoutAWaitingThread()
    {
        std::vector<std::byte> buffer(4096);
        const auto segments = segmentsOf(buffer, 4096, 0);
        AsyncResult result;
        QVERIFY(m_session
                    ->submitRead(9, 0, 1, 4096, segments, false, "hang", deadlineIn(kShort),
                                 result.callback())
                    .ok());
        QVERIFY(result.wait()); // the session's timer completes it
        QCOMPARE(result.status.code(), Errc::timeout);
        QVERIFY2(result.status.message().starts_with("read to tcp://127.0.0.1:"),
                 result.status.toString().c_str());
        QCOMPARE(m_session->counters().timeouts, std::uint64_t{1});
        // The slot came back and works.
        QVERIFY(m_session->read(9, 0, 1, 4096, segments, true, "job.read", deadlineIn(kWait)).ok());
        QCOMPARE(result.calls, 1);
    }

    void asyncRpcsInFlightHoldNoThreads()
    {
        const int slotCount = int(m_session->negotiated().slotCount);
        std::vector<std::byte> buffer(std::size_t(slotCount) * 4096);
        std::vector<AsyncResult> results(static_cast<std::size_t>(slotCount));
        QVERIFY(m_session->ping("job.ping", deadlineIn(kWait)).ok()); // every thread started
        const int threadsBefore = threadCount();
        for (int i = 0; i < slotCount; ++i) {
            const Segment segment{buffer.data() + std::size_t(i) * 4096, 4096, 0};
            QVERIFY(m_session
                        ->submitRead(9, 0, 1, 4096, {&segment, 1}, false, "hang", deadlineIn(kWait),
                                     results[std::size_t(i)].callback())
                        .ok());
        }
        QVERIFY(m_target->waitFor([&] { return m_target->hung == slotCount; }));
        QCOMPARE(threadCount(), threadsBefore);
        // Every slot is busy: one more is refused at once, and its callback never runs.
        const Segment one{buffer.data(), 4096, 0};
        AsyncResult refused;
        QCOMPARE(m_session
                     ->submitRead(9, 0, 1, 4096, {&one, 1}, false, "job.read", deadlineIn(kWait),
                                  refused.callback())
                     .code(),
                 Errc::resource_exhausted);
        // A disconnect completes every RPC in flight, once each.
        m_target->closeAll();
        for (AsyncResult &result : results) {
            QVERIFY(result.wait());
            QCOMPARE(result.calls, 1);
            QCOMPARE(result.status.code(), Errc::unavailable);
        }
        QCOMPARE(refused.calls, 0);
    }

    void targetClosingFailsCallsInFlight()
    {
        const int slotCount = int(m_session->negotiated().slotCount);
        std::vector<Status> results(std::size_t(slotCount), Status::success());
        {
            std::vector<std::jthread> threads;
            for (int t = 0; t < slotCount; ++t) {
                threads.emplace_back([&, t] {
                    results[std::size_t(t)] = m_session->ping("hang", deadlineIn(kWait));
                });
            }
            const bool allHung = m_target->waitFor([&] { return m_target->hung == slotCount; });
            // Every slot is busy: one more call gives up at its deadline.
            const Status busy = m_session->ping("job.ping", deadlineIn(kShort));
            m_target->closeAll();
            QVERIFY(allHung);
            QCOMPARE(busy.code(), Errc::resource_exhausted);
        }
        for (const Status &status : results) {
            QCOMPARE(status.code(), Errc::unavailable);
            QVERIFY2(status.message().find("lost") != std::string::npos, status.toString().c_str());
        }
        QVERIFY(!m_session->connected());
        QCOMPARE(m_session->ping("job.ping", deadlineIn(kWait)).code(), Errc::unavailable);
    }

    // Several connections: the further ones join the first's export with its cookie, and bulk
    // RPCs go to the least loaded. Reads that never get an answer pile up their bytes, so three
    // of them land on three different connections.
    void bulkRpcsSpreadOverTheConnections()
    {
        auto three = options();
        three.connections = 3;
        auto session = connect(three);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        QCOMPARE((*session)->connections(), 3u);
        QCOMPARE((*session)->liveConnections(), 3u);
        QCOMPARE(m_target->acceptedCount(), std::size_t{4}); // init's session + these three
        QCOMPARE(m_target->locked<std::vector<std::uint64_t>>([&] { return m_target->joins; }),
                 (std::vector<std::uint64_t>{kFakeExportCookie, kFakeExportCookie}));

        std::vector<std::byte> buffer(3 * 4096);
        std::vector<AsyncResult> hung(3);
        for (std::size_t i = 0; i < hung.size(); ++i) {
            const Segment segment{buffer.data() + i * 4096, 4096, 0};
            QVERIFY((*session)
                        ->submitRead(9, 0, 1, 4096, {&segment, 1}, false, "hang", deadlineIn(kWait),
                                     hung[i].callback())
                        .ok());
        }
        QVERIFY(m_target->waitFor([&] { return m_target->hung == 3; }));
        for (std::size_t connection = 1; connection <= 3; ++connection) {
            QCOMPARE(m_target->hungOn(connection), 1);
        }

        // Losing the second connection fails exactly the RPC on it; the session goes on.
        m_target->close(2);
        const auto completed = [&] {
            int calls = 0;
            for (AsyncResult &result : hung) {
                std::lock_guard lock(result.mutex);
                calls += result.calls;
            }
            return calls;
        };
        QTRY_COMPARE_WITH_TIMEOUT(completed(), 1, 5000);
        QTRY_COMPARE_WITH_TIMEOUT((*session)->liveConnections(), 2u, 5000);
        int failed = 0;
        for (AsyncResult &result : hung) {
            std::lock_guard lock(result.mutex);
            if (result.calls > 0) {
                ++failed;
                QCOMPARE(result.calls, 1);
                QCOMPARE(result.status.code(), Errc::unavailable);
                QVERIFY2(result.status.message().find("connection 2 to tcp://") !=
                             std::string::npos,
                         result.status.toString().c_str());
            }
        }
        QCOMPARE(failed, 1);
        QVERIFY((*session)->connected());
        // New bulk RPCs use the connections left; control calls the first.
        std::vector<std::byte> data(2 * 4096);
        for (int i = 0; i < 4; ++i) {
            auto read = (*session)->read(9, 4096, 2, 4096, segmentsOf(data, 4096, 0), true,
                                         "job.read", deadlineIn(kWait));
            QVERIFY2(read.ok(), read.status().toString().c_str());
            QCOMPARE(*read, 2u * 4096);
            QCOMPARE(data[5], patternByte(9, 4096 + 5));
        }
        QVERIFY((*session)->ping("job.ping", deadlineIn(kWait)).ok());
        QVERIFY(m_log.has("connection 2 to tcp://"));

        // The first connection lost: the session is, and so is every RPC still in flight.
        m_target->close(1);
        for (AsyncResult &result : hung) {
            QVERIFY(result.wait());
            QCOMPARE(result.calls, 1);
            QCOMPARE(result.status.code(), Errc::unavailable);
        }
        QTRY_VERIFY_WITH_TIMEOUT(!(*session)->connected(), 5000);
        QTRY_COMPARE_WITH_TIMEOUT((*session)->liveConnections(), 0u, 5000);
        QCOMPARE((*session)->ping("job.ping", deadlineIn(kWait)).code(), Errc::unavailable);
    }

    // conns_per_target's engine: raising opens and joins, lowering closes the rest once idle, a
    // lost connection is opened again by the next call, and a wrong count changes nothing.
    void setConnectionsChangesWhereBulkGoes()
    {
        QCOMPARE(m_session->connections(), 1u);
        QCOMPARE(m_session->setConnections(0).code(), Errc::invalid_argument);
        QCOMPARE(m_session->setConnections(RpcSession::kMaxConnections + 1).code(),
                 Errc::invalid_argument);
        QCOMPARE(m_session->connections(), 1u);
        QCOMPARE(m_target->acceptedCount(), std::size_t{1});

        QVERIFY(m_session->setConnections(3).ok());
        QCOMPARE(m_session->connections(), 3u);
        QCOMPARE(m_session->liveConnections(), 3u);
        QCOMPARE(m_target->acceptedCount(), std::size_t{3});

        // Lowered to one: the others close (they were idle), every bulk RPC goes to the first.
        QVERIFY(m_session->setConnections(1).ok());
        QCOMPARE(m_session->liveConnections(), 1u);
        QVERIFY(m_log.has("connection 3 to tcp://"));
        std::vector<std::byte> buffer(3 * 4096);
        std::vector<AsyncResult> hung(3);
        for (std::size_t i = 0; i < hung.size(); ++i) {
            const Segment segment{buffer.data() + i * 4096, 4096, 0};
            QVERIFY(m_session
                        ->submitRead(9, 0, 1, 4096, {&segment, 1}, false, "hang",
                                     deadlineIn(kShort), hung[i].callback())
                        .ok());
        }
        QVERIFY(m_target->waitFor([&] { return m_target->hung == 3; }));
        QCOMPARE(m_target->hungOn(0), 3);
        for (AsyncResult &result : hung) {
            QVERIFY(result.wait()); // timed out
            QCOMPARE(result.status.code(), Errc::timeout);
        }

        // Raised again: closed connections are opened anew; one the target drops comes back
        // with the next setConnections that wants it.
        QVERIFY(m_session->setConnections(3).ok());
        QCOMPARE(m_session->liveConnections(), 3u);
        QCOMPARE(m_target->acceptedCount(), std::size_t{5});
        m_target->close(4);
        QTRY_COMPARE_WITH_TIMEOUT(m_session->liveConnections(), 2u, 5000);
        QVERIFY(m_session->setConnections(3).ok());
        QCOMPARE(m_session->liveConnections(), 3u);
        QCOMPARE(m_target->acceptedCount(), std::size_t{6});
        std::vector<std::byte> data(4096);
        for (int i = 0; i < 6; ++i) {
            QVERIFY(m_session
                        ->read(9, 0, 1, 4096, segmentsOf(data, 4096, 0), true, "job.read",
                               deadlineIn(kWait))
                        .ok());
        }
    }

    // A target without the feature: one connection, and asking for more says why.
    void withoutTheFeatureOneConnectionIsUsed()
    {
        m_target->locked<bool>([&] { return m_target->multiConnection = false; });
        auto two = options();
        two.connections = 2;
        auto session = connect(two);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        QCOMPARE((*session)->connections(), 1u);
        QCOMPARE((*session)->liveConnections(), 1u);
        QVERIFY(m_log.has("using 1 of 2 connections"));
        const Status refused = (*session)->setConnections(2);
        QCOMPARE(refused.code(), Errc::failed_precondition);
        QVERIFY2(refused.message().find("multi-connection") != std::string::npos,
                 refused.toString().c_str());
        QCOMPARE((*session)->connections(), 1u);
        QVERIFY((*session)->ping("job.ping", deadlineIn(kWait)).ok());
    }
};

QTEST_GUILESS_MAIN(TestRpcSession)
#include "test_rpc_session.moc"
