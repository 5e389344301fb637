// Transport conformance: every plugin that can run on this machine is loaded for real from
// LUTRA_PLUGIN_PATH and must pass the same cases. Every wait is bounded; nothing measures speed.
// LUTRA_CONFORMANCE_TRANSPORTS (comma-separated, default "tcp,loopback") and
// LUTRA_CONFORMANCE_HOST (the IPv4 address to listen on, default 127.0.0.1) choose what runs: the
// vm tests run verbs on the VM's soft-RoCE address (tests/vm). loopback is the in-process
// transport, registered through the loader's seam instead of loaded from a file.
#include "protocol/crc32c.h"
#include "tcp/tcp_frame.h"
#include "tcp/tcp_internal.h"
#include "transport/loader.h"
#include "transport/loopback/loopback.h"

#include <QProcess>
#include <QScopeGuard>
#include <QTest>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

using namespace lutra;
using namespace lutra::transport;
using namespace std::chrono_literals;

namespace {

constexpr auto kWait = 5s; // upper bound for anything that should happen "soon"

// The plugins under test (LUTRA_CONFORMANCE_TRANSPORTS, default tcp and loopback). Every case runs
// against each; a plugin that answers `unimplemented` or cannot start (no RDMA device) fails every
// case: a plugin this machine cannot run is left out of the list by name (verbs runs in the
// soft-RoCE VM, tests/vm), never skipped into a green run.
std::vector<std::string> plugins()
{
    const char *env = std::getenv("LUTRA_CONFORMANCE_TRANSPORTS");
    std::string list = env != nullptr && *env != '\0' ? env : "tcp,loopback";
    std::vector<std::string> out;
    for (std::size_t start = 0; start <= list.size();) {
        const auto comma = std::min(list.find(',', start), list.size());
        if (comma > start) {
            out.push_back(list.substr(start, comma - start));
        }
        start = comma + 1;
    }
    return out;
}

std::string host()
{
    const char *env = std::getenv("LUTRA_CONFORMANCE_HOST");
    return env != nullptr && *env != '\0' ? env : "127.0.0.1";
}

std::string listenUri(const std::string &plugin)
{
    return plugin + "://" + host() + ":0";
}

// Log lines of warning and above, shared by all transports of a test.
struct LogCapture {
    std::mutex mutex;
    std::vector<std::string> lines;

    static void write(void *context, LogLevel level, std::string_view text)
    {
        auto *self = static_cast<LogCapture *>(context);
        if (level >= LogLevel::warning) {
            std::lock_guard lock(self->mutex);
            self->lines.emplace_back(text);
        }
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

std::span<const std::byte> bytes(std::string_view text)
{
    return std::as_bytes(std::span(text));
}
std::string text(std::span<const std::byte> data)
{
    return {reinterpret_cast<const char *>(data.data()), data.size()};
}

// A host handler that records everything and can answer or stall.
class Recorder final : public Handler {
public:
    std::function<void(Connection &, std::span<const std::byte>)> onMessageHook;

    void onAccepted(const ConnectionPtr &connection) noexcept override
    {
        std::lock_guard lock(m_mutex);
        accepted.push_back(connection);
        m_changed.notify_all();
    }
    void onMessage(Connection &connection, std::span<const std::byte> message) noexcept override
    {
        if (onMessageHook) {
            onMessageHook(connection, message);
        }
        std::lock_guard lock(m_mutex);
        messages.push_back(text(message));
        m_changed.notify_all();
    }
    void onBulkDone(Connection &, std::uint64_t tag, const Status &status) noexcept override
    {
        std::lock_guard lock(m_mutex);
        bulkDone.emplace_back(tag, status);
        m_changed.notify_all();
    }
    void onDisconnected(Connection &, const Status &reason) noexcept override
    {
        std::lock_guard lock(m_mutex);
        disconnects.push_back(reason);
        m_changed.notify_all();
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

    std::vector<ConnectionPtr> accepted;
    std::vector<std::string> messages;
    std::vector<std::pair<std::uint64_t, Status>> bulkDone;
    std::vector<Status> disconnects;

private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
};

// A file of its own for file puts, already unlinked (gone when closed); -1 on failure.
int unlinkedTempFile()
{
    char path[] = "/tmp/lutra-conformance-XXXXXX";
    const int fd = ::mkstemp(path);
    if (fd >= 0) {
        ::unlink(path);
    }
    return fd;
}

// The same, opened write-only: a file put from it fails reading (EBADF); -1 on failure.
int unlinkedWriteOnlyFile()
{
    char path[] = "/tmp/lutra-conformance-XXXXXX";
    const int scratch = ::mkstemp(path);
    if (scratch < 0) {
        return -1;
    }
    ::close(scratch);
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    ::unlink(path);
    return fd;
}

// Pages of a buffer as segments: 4 KiB each while that fits kMaxBulkSegments, else larger.
std::vector<Segment> segmentsOf(std::span<std::byte> buffer, std::uint64_t region)
{
    const std::size_t piece =
        std::max<std::size_t>(4096, (buffer.size() + kMaxBulkSegments - 1) / kMaxBulkSegments);
    std::vector<Segment> out;
    for (std::size_t offset = 0; offset < buffer.size(); offset += piece) {
        out.push_back({buffer.data() + offset, std::min(piece, buffer.size() - offset), region});
    }
    return out;
}

void fillPattern(std::span<std::byte> buffer, unsigned seed)
{
    for (std::size_t i = 0; i < buffer.size(); ++i) {
        buffer[i] = static_cast<std::byte>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
    }
}

std::string encodeDescriptor(const BulkDescriptor &descriptor)
{
    return "desc:" + text(descriptor.view());
}

int rawConnect(const std::string &uri)
{
    const auto colon = uri.rfind(':');
    const int port = std::stoi(uri.substr(colon + 1));
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    timeval timeout{5, 0}; // bounded: a missing drop fails the test instead of hanging it
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    if (::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// The server closed the socket (EOF, or a reset when our bytes were left unread).
bool droppedByPeer(int fd)
{
    char sink[64];
    const ssize_t n = ::recv(fd, sink, sizeof(sink), 0);
    return n == 0 || (n < 0 && errno == ECONNRESET);
}

bool rawSend(int fd, const void *data, std::size_t size)
{
    return ::send(fd, data, size, MSG_NOSIGNAL) == static_cast<ssize_t>(size);
}

// A raw tcp-plugin handshake, so a test can then misbehave on a negotiated connection.
bool rawHandshake(int fd)
{
    namespace tcp = lutra::transport::tcp;
    std::array<std::byte, tcp::kHeaderSize + sizeof(tcp::Hello)> frame{};
    tcp::FrameHeader header;
    header.type = static_cast<std::uint8_t>(tcp::FrameType::hello);
    header.length = sizeof(tcp::Hello);
    tcp::encode(header, frame.data());
    tcp::encode(tcp::Hello{8192, 32, 4u << 20}, frame.data() + tcp::kHeaderSize);
    if (!rawSend(fd, frame.data(), frame.size())) {
        return false;
    }
    return ::recv(fd, frame.data(), frame.size(), MSG_WAITALL) ==
           static_cast<ssize_t>(frame.size());
}

// The header of a raw putData frame of `length` bytes into `exposed`; nothing when the
// descriptor is not the tcp plugin's.
std::optional<std::array<std::byte, lutra::transport::tcp::kHeaderSize>>
rawPutHeader(const BulkDescriptor &exposed, std::uint64_t length)
{
    namespace tcp = lutra::transport::tcp;
    const auto wire = lutra::transport::kit::peekDescriptor<tcp::WireDescriptor>(exposed);
    if (!wire) {
        return std::nullopt;
    }
    tcp::FrameHeader header;
    header.type = static_cast<std::uint8_t>(tcp::FrameType::putData);
    header.length = length;
    header.cookie = tcp::cookieOf(wire->slot, wire->generation);
    std::array<std::byte, tcp::kHeaderSize> raw{};
    tcp::encode(header, raw.data());
    return raw;
}

} // namespace

class TestTransportConformance : public QObject {
    Q_OBJECT

    std::string m_plugin;
    LogCapture m_log;
    std::unique_ptr<PluginLoader> m_loader;
    std::unique_ptr<Transport> m_server;
    std::unique_ptr<Transport> m_client;
    std::unique_ptr<Listener> m_listener;
    Recorder m_serverHandler;
    Recorder m_clientHandler;
    std::atomic<bool> m_stall{false};

    // Listens on the server transport and connects one client; returns both ends.
    std::pair<ConnectionPtr, ConnectionPtr> connectPair(Recorder &serverHandler,
                                                        Recorder &clientHandler)
    {
        const std::size_t before =
            serverHandler.locked<std::size_t>([&] { return serverHandler.accepted.size(); });
        auto client = m_client->connect(m_listener->uri(), clientHandler);
        if (!client.ok()) {
            qWarning("%s", client.status().toString().c_str());
            return {};
        }
        if (!serverHandler.waitFor([&] { return serverHandler.accepted.size() > before; })) {
            return {};
        }
        return {serverHandler.locked<ConnectionPtr>([&] { return serverHandler.accepted.back(); }),
                *client};
    }

private slots:
    void initTestCase_data()
    {
        QTest::addColumn<QString>("plugin");
        for (const auto &name : plugins()) {
            QTest::newRow(name.c_str()) << QString::fromStdString(name);
        }
    }

    void init()
    {
        QFETCH_GLOBAL(QString, plugin);
        m_plugin = plugin.toStdString();
        m_loader = std::make_unique<PluginLoader>(LogSink{&LogCapture::write, &m_log});
        QVERIFY(m_loader->registerPlugin(loopback::plugin()).ok());
        TransportOptions options;
        options.log = {&LogCapture::write, &m_log};
        options.connectTimeout = 2000ms;
        auto server = m_loader->create(m_plugin, options);
        if (!server.ok() && server.status().code() == Errc::unimplemented) {
            QFAIL(("plugin '" + m_plugin + "' answers unimplemented, so this case checked " +
                   "nothing: " + server.status().toString())
                      .c_str());
        }
        QVERIFY2(server.ok(), server.status().toString().c_str());
        auto client = m_loader->create(m_plugin, options);
        QVERIFY2(client.ok(), client.status().toString().c_str());
        m_server = std::move(*server);
        m_client = std::move(*client);
        auto listener = m_server->listen(listenUri(m_plugin), m_serverHandler);
        QVERIFY2(listener.ok(), listener.status().toString().c_str());
        m_listener = std::move(*listener);
    }

    void cleanup()
    {
        m_stall = false;
        m_listener.reset();
        m_client.reset();
        m_server.reset();
        m_serverHandler.accepted.clear();
        m_serverHandler.messages.clear();
        m_serverHandler.bulkDone.clear();
        m_serverHandler.disconnects.clear();
        m_serverHandler.onMessageHook = nullptr;
        m_clientHandler.accepted.clear();
        m_clientHandler.messages.clear();
        m_clientHandler.bulkDone.clear();
        m_clientHandler.disconnects.clear();
        m_clientHandler.onMessageHook = nullptr;
        std::lock_guard lock(m_log.mutex);
        m_log.lines.clear();
    }

    void connectAndAccept()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(server && client);
        QVERIFY(server->connected() && client->connected());
        QCOMPARE(server->limits().maxMessageSize, client->limits().maxMessageSize);
        QCOMPARE(server->limits().maxBulkSize, client->limits().maxBulkSize);
        QCOMPARE(server->limits().queueDepth, client->limits().queueDepth);
        QVERIFY(client->peer().starts_with(m_plugin + "://" + host() + ":"));

        client->close();
        QVERIFY(m_clientHandler.waitFor([&] { return m_clientHandler.disconnects.size() == 1; }));
        QCOMPARE(m_clientHandler.disconnects[0].code(), Errc::cancelled);
        QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.disconnects.size() == 1; }));
        QVERIFY(!m_serverHandler.disconnects[0].ok());
        QCOMPARE(client->send(bytes("late"), noWait()).code(), Errc::unavailable);
    }

    void pingPong()
    {
        m_serverHandler.onMessageHook = [](Connection &connection, std::span<const std::byte> m) {
            (void)connection.send(m, noWait());
        };
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(client);
        for (int i = 0; i < 200; ++i) {
            const std::string ping = "ping " + std::to_string(i);
            QVERIFY(client->send(bytes(ping), deadlineIn(kWait)).ok());
            QVERIFY(m_clientHandler.waitFor(
                [&] { return m_clientHandler.messages.size() == std::size_t(i + 1); }));
            QCOMPARE(m_clientHandler.messages.back(), ping);
        }
        // Limits are enforced on the sending side.
        std::string huge(client->limits().maxMessageSize + 1, 'x');
        QCOMPARE(client->send(bytes(huge), noWait()).code(), Errc::out_of_range);
    }

    void concurrentRequestsFromThreads()
    {
        // As a target does: the handler only queues the request; a service thread replies, and
        // may wait for credit there (a handler must not: its I/O thread is what frees credit).
        std::mutex queueMutex;
        std::condition_variable queued;
        std::vector<std::string> requests;
        bool stop = false;
        Connection *replyTo = nullptr;
        m_serverHandler.onMessageHook = [&](Connection &connection, std::span<const std::byte> m) {
            std::lock_guard lock(queueMutex);
            replyTo = &connection;
            requests.push_back(text(m));
            queued.notify_one();
        };
        std::atomic<int> failures{0};
        std::thread service([&] {
            std::unique_lock lock(queueMutex);
            for (;;) {
                queued.wait(lock, [&] { return stop || !requests.empty(); });
                if (requests.empty()) {
                    return;
                }
                auto batch = std::move(requests);
                requests.clear();
                lock.unlock();
                for (const auto &request : batch) {
                    if (!replyTo->send(bytes(request), deadlineIn(kWait)).ok()) {
                        ++failures;
                    }
                }
                lock.lock();
            }
        });
        auto stopService = qScopeGuard([&] {
            {
                std::lock_guard lock(queueMutex);
                stop = true;
            }
            queued.notify_one();
            service.join();
        });
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(client);
        constexpr int kThreads = 4;
        constexpr int kRequests = 300;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < kRequests; ++i) {
                    const std::string request = std::to_string(t) + ":" + std::to_string(i) +
                                                std::string(static_cast<std::size_t>(i % 97), '.');
                    if (!client->send(bytes(request), deadlineIn(kWait)).ok()) {
                        ++failures;
                    }
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        QCOMPARE(failures.load(), 0);
        QVERIFY(m_clientHandler.waitFor(
            [&] { return m_clientHandler.messages.size() == kThreads * kRequests; }));
        // Every reply arrived once, in per-thread order.
        std::map<int, int> next;
        for (const auto &reply : m_clientHandler.messages) {
            const int t = std::stoi(reply.substr(0, reply.find(':')));
            const int i = std::stoi(reply.substr(reply.find(':') + 1));
            QCOMPARE(i, next[t]++);
        }
    }

    void bulkPutAndGet()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(client);
        const std::uint64_t maxBulk = client->limits().maxBulkSize;
        // Registered once, like a page pool: the buffers of each size are slices of these.
        std::vector<std::byte> clientPages(2 * maxBulk);
        std::vector<std::byte> serverPages(2 * maxBulk);
        auto clientRegion = m_client->registerMemory(clientPages.data(), clientPages.size());
        auto serverRegion = m_server->registerMemory(serverPages.data(), serverPages.size());
        QVERIFY(clientRegion.ok() && serverRegion.ok());

        std::uint64_t tag = 0;
        for (const std::uint64_t size : {std::uint64_t{4096}, std::uint64_t{8192},
                                         std::uint64_t{65536}, std::uint64_t{1} << 20, maxBulk}) {
            // Read: the client exposes its pages, the server puts into them.
            const std::span<std::byte> destination(clientPages.data(), size);
            auto destinationSegments = segmentsOf(destination, clientRegion->id);
            auto exposed = client->exposeBulk(destinationSegments, BulkAccess::putInto);
            QVERIFY2(exposed.ok(), exposed.status().toString().c_str());
            QVERIFY(exposed->size <= kMaxBulkDescriptorBytes);
            QVERIFY(client->send(bytes(encodeDescriptor(*exposed)), deadlineIn(kWait)).ok());
            QVERIFY(m_serverHandler.waitFor([&] { return !m_serverHandler.messages.empty(); }));
            const std::string wire = m_serverHandler.locked<std::string>([&] {
                auto message = m_serverHandler.messages.back();
                m_serverHandler.messages.clear();
                return message;
            });
            auto remote = BulkDescriptor::fromBytes(bytes(std::string_view(wire).substr(5)));
            QVERIFY(remote.ok());

            const std::span<std::byte> source(serverPages.data(), size);
            fillPattern(source, static_cast<unsigned>(size));
            auto sourceSegments = segmentsOf(source, serverRegion->id);
            ++tag;
            QVERIFY(server->bulkPut(*remote, sourceSegments, tag, deadlineIn(kWait)).ok());
            QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; }));
            QCOMPARE(m_serverHandler.bulkDone[0].first, tag);
            QVERIFY(m_serverHandler.bulkDone[0].second.ok());
            m_serverHandler.locked<int>([&] {
                m_serverHandler.bulkDone.clear();
                return 0;
            });
            // The reply after the put: when it is delivered, the data is there.
            QVERIFY(server->send(bytes("read done"), deadlineIn(kWait)).ok());
            QVERIFY(m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); }));
            m_clientHandler.locked<int>([&] {
                m_clientHandler.messages.clear();
                return 0;
            });
            QVERIFY(std::equal(destination.begin(), destination.end(), source.begin()));
            client->unexposeBulk(*exposed);

            // Write: the client exposes dirty pages, the server gets from them.
            const std::span<std::byte> dirty(clientPages.data() + maxBulk, size);
            fillPattern(dirty, static_cast<unsigned>(size) + 1);
            auto dirtySegments = segmentsOf(dirty, clientRegion->id);
            auto toGet = client->exposeBulk(dirtySegments, BulkAccess::getFrom);
            QVERIFY(toGet.ok());
            const std::span<std::byte> landing(serverPages.data() + maxBulk, size);
            auto landingSegments = segmentsOf(landing, serverRegion->id);
            ++tag;
            // A put into memory exposed for get is refused locally.
            QCOMPARE(server->bulkPut(*toGet, landingSegments, tag, noWait()).code(),
                     Errc::permission_denied);
            QVERIFY(server->bulkGet(*toGet, landingSegments, tag, deadlineIn(kWait)).ok());
            QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; }));
            QCOMPARE(m_serverHandler.bulkDone[0].first, tag);
            QVERIFY(m_serverHandler.bulkDone[0].second.ok());
            m_serverHandler.locked<int>([&] {
                m_serverHandler.bulkDone.clear();
                return 0;
            });
            QVERIFY(std::equal(landing.begin(), landing.end(), dirty.begin()));
            client->unexposeBulk(*toGet);

            // A get on memory no longer exposed fails cleanly; the connection stays up.
            ++tag;
            QVERIFY(server->bulkGet(*toGet, landingSegments, tag, deadlineIn(kWait)).ok());
            QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; }));
            QVERIFY(!m_serverHandler.bulkDone[0].second.ok());
            m_serverHandler.locked<int>([&] {
                m_serverHandler.bulkDone.clear();
                return 0;
            });
            QVERIFY(client->connected());
        }

        // Beyond the negotiated maximum: refused before anything is sent.
        std::vector<std::byte> tooBig(maxBulk + 4096);
        auto tooBigSegments = segmentsOf(tooBig, clientRegion->id);
        QCOMPARE(client->exposeBulk(tooBigSegments, BulkAccess::putInto).status().code(),
                 Errc::out_of_range);
        m_client->deregisterMemory(*clientRegion);
        m_server->deregisterMemory(*serverRegion);
    }

    // bulkPutFile: the file's bytes land in the peer's pages (past the end of file: zeros), in
    // order with the messages around it; a file that cannot be read fails only that operation.
    // A plugin without it answers unimplemented and the connection carries on.
    void bulkPutFromFile()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(client);
        const std::uint64_t maxBulk = client->limits().maxBulkSize;
        const int fd = unlinkedTempFile();
        QVERIFY(fd >= 0);
        const auto closeFile = qScopeGuard([fd] { ::close(fd); });
        std::vector<std::byte> content(maxBulk + 12345);
        fillPattern(content, 3);
        QCOMPARE(::pwrite(fd, content.data(), content.size(), 0),
                 static_cast<ssize_t>(content.size()));
        std::vector<std::byte> pages(maxBulk);
        auto region = m_client->registerMemory(pages.data(), pages.size());
        QVERIFY(region.ok());

        // The client exposes its pages and tells the server; the server answers `reply` after
        // its put; returns the put's outcome.
        std::uint64_t tag = 100;
        const auto putFile = [&](const FileRange &file, std::uint64_t size) -> Status {
            std::fill(pages.begin(), pages.end(), std::byte{0xee});
            auto segments = segmentsOf({pages.data(), size}, region->id);
            auto exposed = client->exposeBulk(segments, BulkAccess::putInto);
            if (!exposed.ok()) {
                return exposed.status();
            }
            const auto unexpose = qScopeGuard([&] { client->unexposeBulk(*exposed); });
            auto remote = BulkDescriptor::fromBytes(exposed->view());
            const Status started = server->bulkPutFile(*remote, file, ++tag, deadlineIn(kWait));
            if (!started.ok()) {
                return started;
            }
            if (!m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; })) {
                return {Errc::timeout, "no onBulkDone"};
            }
            const auto done = m_serverHandler.locked<std::pair<std::uint64_t, Status>>([&] {
                auto first = m_serverHandler.bulkDone[0];
                m_serverHandler.bulkDone.clear();
                return first;
            });
            if (done.first != tag) {
                return {Errc::internal, "onBulkDone for another tag"};
            }
            // The message after the put: when it is delivered, the data is there.
            if (auto sent = server->send(bytes("put done"), deadlineIn(kWait)); !sent.ok()) {
                return sent;
            }
            if (!m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); })) {
                return {Errc::timeout, "no message after the put"};
            }
            m_clientHandler.locked<int>([&] {
                m_clientHandler.messages.clear();
                return 0;
            });
            return done.second;
        };

        const Status first = putFile({fd, 4096, maxBulk}, maxBulk);
        if (first.code() == Errc::unimplemented) {
            QVERIFY(client->connected() && server->connected());
            QVERIFY(server->send(bytes("still up"), deadlineIn(kWait)).ok());
            QVERIFY(m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); }));
            m_client->deregisterMemory(*region);
            return;
        }
        QVERIFY2(first.ok(), first.toString().c_str());
        QVERIFY(std::equal(pages.begin(), pages.end(), content.begin() + 4096));

        // Across the end of the file: the file's tail, then zeros.
        const std::uint64_t tailStart = content.size() - 5000;
        QVERIFY(putFile({fd, tailStart, 65536}, 65536).ok());
        QVERIFY(std::equal(pages.begin(), pages.begin() + 5000, content.begin() + tailStart));
        QVERIFY(std::all_of(pages.begin() + 5000, pages.begin() + 65536,
                            [](std::byte b) { return b == std::byte{0}; }));
        QVERIFY(std::all_of(pages.begin() + 65536, pages.end(),
                            [](std::byte b) { return b == std::byte{0xee}; }));

        // A file that cannot be read (opened write-only) fails that operation, promised bytes
        // arrive as zeros, and the connection stays up for the next put.
        const int writeOnly = unlinkedWriteOnlyFile();
        QVERIFY(writeOnly >= 0);
        const auto closeWriteOnly = qScopeGuard([writeOnly] { ::close(writeOnly); });
        const Status unreadable = putFile({writeOnly, 0, 8192}, 8192);
        QCOMPARE(unreadable.code(), Errc::io_error);
        QVERIFY(client->connected() && server->connected());
        QVERIFY(putFile({fd, 0, 8192}, 8192).ok());
        QVERIFY(std::equal(pages.begin(), pages.begin() + 8192, content.begin()));

        // Refused before anything is sent: no file, nothing to send, more than exposed.
        auto segments = segmentsOf({pages.data(), 4096}, region->id);
        auto exposed = client->exposeBulk(segments, BulkAccess::putInto);
        QVERIFY(exposed.ok());
        QCOMPARE(server->bulkPutFile(*exposed, {-1, 0, 4096}, 1, noWait()).code(),
                 Errc::invalid_argument);
        QCOMPARE(server->bulkPutFile(*exposed, {fd, 0, 0}, 1, noWait()).code(),
                 Errc::invalid_argument);
        QCOMPARE(server->bulkPutFile(*exposed, {fd, 0, 8192}, 1, noWait()).code(),
                 Errc::out_of_range);
        client->unexposeBulk(*exposed);
        QVERIFY(m_serverHandler.locked<bool>([&] { return m_serverHandler.bulkDone.empty(); }));
        m_client->deregisterMemory(*region);
    }

    // exposeBulkSummed: the transport sums each page of a put as it arrives, so the sums equal
    // the protocol's page CRCs of the data (pages straddling segments, a short last page, a put
    // shorter than the exposure) when the message behind the put is delivered. A plugin without
    // it answers unimplemented and the connection carries on.
    void bulkPutSummedOnArrival()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(server && client);
        const std::uint64_t maxBulk = client->limits().maxBulkSize;
        std::vector<std::byte> destination(maxBulk);
        std::vector<std::byte> source(maxBulk);
        const int fd = unlinkedTempFile();
        QVERIFY(fd >= 0);
        const auto closeFile = qScopeGuard([fd] { ::close(fd); });
        fillPattern(source, 11);
        QCOMPARE(::pwrite(fd, source.data(), source.size(), 0), static_cast<ssize_t>(maxBulk));
        std::vector<std::uint32_t> sums(maxBulk / 4096 + 1); // one past: untouched
        std::uint64_t summed = 0;
        std::uint64_t tag = 300;
        struct Case {
            std::uint64_t exposed;
            std::uint64_t put;
            bool fromFile;
        };
        for (const Case &c : {Case{4096, 4096, false}, Case{5000, 5000, false},
                              Case{65536 + 123, 65536 + 123, true}, Case{65536 + 123, 5000, false},
                              Case{maxBulk, maxBulk, false}, Case{maxBulk, maxBulk, true}}) {
            std::fill(destination.begin(), destination.end(), std::byte{0xee});
            std::fill(sums.begin(), sums.end(), 0xdeadbeef);
            summed = 999;
            // 3000-byte segments, so pages straddle them, while 256 segments hold the exposure.
            const std::size_t piece =
                std::max<std::size_t>(3000, (c.exposed + kMaxBulkSegments - 1) / kMaxBulkSegments);
            std::vector<Segment> segments;
            for (std::uint64_t at = 0; at < c.exposed; at += piece) {
                segments.push_back({destination.data() + at, std::min(piece, c.exposed - at), 0});
            }
            auto exposed = client->exposeBulkSummed(segments, {sums.data(), &summed, 4096});
            if (exposed.status().code() == Errc::unimplemented) {
                QCOMPARE(summed, std::uint64_t{999}); // no side effect
                QVERIFY(server->send(bytes("still up"), deadlineIn(kWait)).ok());
                QVERIFY(m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); }));
                return;
            }
            QVERIFY2(exposed.ok(), exposed.status().toString().c_str());
            QCOMPARE(summed, std::uint64_t{0});
            const auto unexpose = qScopeGuard([&] { client->unexposeBulk(*exposed); });
            ++tag;
            if (c.fromFile) {
                QVERIFY(server->bulkPutFile(*exposed, {fd, 0, c.put}, tag, deadlineIn(kWait)).ok());
            } else {
                const Segment whole{source.data(), c.put, 0};
                QVERIFY(server->bulkPut(*exposed, {&whole, 1}, tag, deadlineIn(kWait)).ok());
            }
            QVERIFY(server->send(bytes("put done"), deadlineIn(kWait)).ok());
            QVERIFY(m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); }));
            m_clientHandler.locked<int>([&] {
                m_clientHandler.messages.clear();
                return 0;
            });
            QVERIFY(std::equal(destination.begin(), destination.begin() + c.put, source.begin()));
            QCOMPARE(summed, c.put);
            const std::size_t pages = (c.put + 4095) / 4096;
            std::vector<std::uint32_t> expected(pages);
            QVERIFY(protocol::computePageCrcs({source.data(), c.put}, expected).ok());
            for (std::size_t page = 0; page < pages; ++page) {
                QCOMPARE(sums[page], expected[page]);
            }
            QCOMPARE(sums[pages], 0xdeadbeef); // nothing past the put
            QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; }));
            m_serverHandler.locked<int>([&] {
                m_serverHandler.bulkDone.clear();
                return 0;
            });
        }
        // No crc array or no page size: refused.
        const Segment one{destination.data(), 4096, 0};
        QCOMPARE(client->exposeBulkSummed({&one, 1}, {nullptr, &summed, 4096}).status().code(),
                 Errc::invalid_argument);
        QCOMPARE(client->exposeBulkSummed({&one, 1}, {sums.data(), &summed, 0}).status().code(),
                 Errc::invalid_argument);
    }

    // bulkPutFileThenSend: the message arrives right behind the file's bytes (they are in place
    // when it is delivered); when the file cannot be read the put fails and its message is
    // dropped, never delivered, and its send credit comes back (more failures than the queue
    // depth, then messages still go). A plugin without it answers unimplemented and the
    // connection carries on.
    void bulkPutFileThenSend()
    {
        std::atomic<bool> dataInPlace{false};
        std::vector<std::byte> pages;
        std::vector<std::byte> content;
        std::atomic<std::uint64_t> checkBytes{0};
        m_clientHandler.onMessageHook = [&](Connection &, std::span<const std::byte> message) {
            if (text(message) == "read reply") {
                const std::uint64_t n = checkBytes.load();
                dataInPlace = std::equal(pages.begin(), pages.begin() + n, content.begin() + 4096);
            }
        };
        const auto unhook = qScopeGuard([this] { m_clientHandler.onMessageHook = nullptr; });
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(server && client);
        const std::uint64_t maxBulk = client->limits().maxBulkSize;
        const int fd = unlinkedTempFile();
        QVERIFY(fd >= 0);
        const auto closeFile = qScopeGuard([fd] { ::close(fd); });
        content.resize(maxBulk + 4096);
        fillPattern(content, 5);
        QCOMPARE(::pwrite(fd, content.data(), content.size(), 0),
                 static_cast<ssize_t>(content.size()));
        pages.resize(maxBulk);
        auto exposed = client->exposeBulk(segmentsOf(pages, 0), BulkAccess::putInto);
        QVERIFY(exposed.ok());
        const auto unexpose = qScopeGuard([&] { client->unexposeBulk(*exposed); });

        std::uint64_t tag = 400;
        for (const std::uint64_t size : {std::uint64_t{4096}, std::uint64_t{70000}, maxBulk}) {
            std::fill(pages.begin(), pages.end(), std::byte{0xee});
            checkBytes = size;
            dataInPlace = false;
            const Status started = server->bulkPutFileThenSend(
                *exposed, {fd, 4096, size}, bytes("read reply"), ++tag, deadlineIn(kWait));
            if (started.code() == Errc::unimplemented) {
                QVERIFY(server->send(bytes("still up"), deadlineIn(kWait)).ok());
                QVERIFY(m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); }));
                return;
            }
            QVERIFY2(started.ok(), started.toString().c_str());
            QVERIFY(m_clientHandler.waitFor([&] { return !m_clientHandler.messages.empty(); }));
            QCOMPARE(m_clientHandler.messages.front(), std::string("read reply"));
            QVERIFY(dataInPlace.load());
            m_clientHandler.locked<int>([&] {
                m_clientHandler.messages.clear();
                return 0;
            });
            QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; }));
            QCOMPARE(m_serverHandler.bulkDone[0].first, tag);
            QVERIFY(m_serverHandler.bulkDone[0].second.ok());
            m_serverHandler.locked<int>([&] {
                m_serverHandler.bulkDone.clear();
                return 0;
            });
        }

        // A file that cannot be read: each put fails, its message never arrives.
        const int writeOnly = unlinkedWriteOnlyFile();
        QVERIFY(writeOnly >= 0);
        const auto closeWriteOnly = qScopeGuard([writeOnly] { ::close(writeOnly); });
        const std::uint32_t failures = server->limits().queueDepth + 8;
        for (std::uint32_t i = 0; i < failures; ++i) {
            QVERIFY(server
                        ->bulkPutFileThenSend(*exposed, {writeOnly, 0, 8192}, bytes("never"), ++tag,
                                              deadlineIn(kWait))
                        .ok());
            QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.bulkDone.size() == 1; }));
            QCOMPARE(m_serverHandler.bulkDone[0].second.code(), Errc::io_error);
            m_serverHandler.locked<int>([&] {
                m_serverHandler.bulkDone.clear();
                return 0;
            });
        }
        // Every credit is back: a queue depth of messages goes at once, in order, after the
        // dropped ones (none of which arrived).
        for (std::uint32_t i = 0; i < server->limits().queueDepth; ++i) {
            QVERIFY(server->send(bytes("after " + std::to_string(i)), noWait()).ok());
        }
        QVERIFY(m_clientHandler.waitFor(
            [&] { return m_clientHandler.messages.size() == server->limits().queueDepth; }));
        QCOMPARE(m_clientHandler.messages.front(), std::string("after 0"));
        QVERIFY(client->connected() && server->connected());

        // Refused before anything is sent: no file, a message over the negotiated size.
        QCOMPARE(
            server->bulkPutFileThenSend(*exposed, {-1, 0, 4096}, bytes("x"), 1, noWait()).code(),
            Errc::invalid_argument);
        const std::string huge(server->limits().maxMessageSize + 1, 'h');
        QCOMPARE(
            server->bulkPutFileThenSend(*exposed, {fd, 0, 4096}, bytes(huge), 1, noWait()).code(),
            Errc::out_of_range);
        QVERIFY(m_serverHandler.locked<bool>([&] { return m_serverHandler.bulkDone.empty(); }));
    }

    void targetToClientCallbacks()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(server && client);
        for (int i = 0; i < 50; ++i) {
            QVERIFY(
                server->send(bytes("blocking ast " + std::to_string(i)), deadlineIn(kWait)).ok());
        }
        QVERIFY(m_clientHandler.waitFor([&] { return m_clientHandler.messages.size() == 50; }));
        QCOMPARE(m_clientHandler.messages.front(), std::string("blocking ast 0"));
        QCOMPARE(m_clientHandler.messages.back(), std::string("blocking ast 49"));
    }

    void backpressureNotUnboundedQueue()
    {
        // A member, not a local: the server may still deliver queued messages after this
        // function returns, until cleanup() stops the transports.
        m_stall = true;
        m_serverHandler.onMessageHook = [this](Connection &, std::span<const std::byte>) {
            for (int i = 0; i < 500 && m_stall.load(); ++i) {
                std::this_thread::sleep_for(10ms);
            }
        };
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(client);
        const std::string message(client->limits().maxMessageSize, 'b');
        Status last;
        for (int i = 0; i < 100000 && last.ok(); ++i) {
            last = client->send(bytes(message), noWait());
        }
        QCOMPARE(last.code(), Errc::resource_exhausted);
        m_stall = false;
        QVERIFY(client->send(bytes(message), deadlineIn(kWait)).ok());
    }

    void peerClosesMidTransfer()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(server && client);
        std::vector<std::byte> destination(client->limits().maxBulkSize);
        auto segments = segmentsOf(destination, 0);
        auto exposed = client->exposeBulk(segments, BulkAccess::putInto);
        QVERIFY(exposed.ok());
        std::vector<std::byte> source(destination.size());
        auto sourceSegments = segmentsOf(source, 0);
        constexpr int kPuts = 4;
        for (int i = 0; i < kPuts; ++i) {
            QVERIFY(server->bulkPut(*exposed, sourceSegments, 100 + i, deadlineIn(kWait)).ok());
        }
        client->close();
        // Every accepted operation completes exactly once (done or failed), then the disconnect.
        QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.disconnects.size() == 1; }));
        QCOMPARE(m_serverHandler.bulkDone.size(), std::size_t(kPuts));
        std::set<std::uint64_t> tags;
        for (const auto &[tag, status] : m_serverHandler.bulkDone) {
            tags.insert(tag);
        }
        QCOMPARE(tags.size(), std::size_t(kPuts));
        QVERIFY(!m_serverHandler.disconnects[0].ok());
        QVERIFY(!m_serverHandler.disconnects[0].message().empty());
        QCOMPARE(server->bulkPut(*exposed, sourceSegments, 1, noWait()).code(), Errc::unavailable);
    }

    // A peer that closes while file puts are being sent: sendfile has no MSG_NOSIGNAL, so the
    // sending I/O thread meets SIGPIPE, whose default would end this whole process (a
    // lutra-target whose client died mid-read). The puts fail, the connection goes, the process
    // stays.
    void peerClosesMidFilePut()
    {
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(server && client);
        const std::uint64_t maxBulk = client->limits().maxBulkSize;
        const int fd = unlinkedTempFile();
        QVERIFY(fd >= 0);
        const auto closeFile = qScopeGuard([fd] { ::close(fd); });
        constexpr int kPuts = 8; // far more than a socket's buffers hold
        QCOMPARE(::ftruncate(fd, static_cast<off_t>(maxBulk * kPuts)), 0);
        std::vector<std::byte> destination(maxBulk);
        auto region = m_client->registerMemory(destination.data(), destination.size());
        QVERIFY(region.ok());
        auto exposed = client->exposeBulk(segmentsOf(destination, region->id), BulkAccess::putInto);
        QVERIFY(exposed.ok());
        auto remote = BulkDescriptor::fromBytes(exposed->view());
        QVERIFY(remote.ok());
        int accepted = 0;
        for (int i = 0; i < kPuts; ++i) {
            const Status started = server->bulkPutFile(*remote, {fd, i * maxBulk, maxBulk}, 200 + i,
                                                       deadlineIn(kWait));
            if (started.code() == Errc::unimplemented) {
                break; // a transport without file puts: nothing is sent from a file
            }
            QVERIFY2(started.ok(), started.message().c_str());
            ++accepted;
        }
        client->close();
        QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.disconnects.size() == 1; }));
        QVERIFY(m_serverHandler.waitFor(
            [&] { return m_serverHandler.bulkDone.size() == std::size_t(accepted); }));
        // Still serving: a new connection works.
        const auto again = connectPair(m_serverHandler, m_clientHandler);
        QVERIFY(again.first && again.second);
        QVERIFY(again.second->send(bytes("still up"), deadlineIn(kWait)).ok());
    }

    void peerProcessKilled()
    {
        // In-process transports have no peer process: the peer is a transport of its own,
        // destroyed without closing its connection.
        Recorder inProcessPeerHandler;
        std::unique_ptr<Transport> inProcessPeer;
        QProcess peer;
        if (m_plugin == "loopback") {
            auto created = m_loader->create(m_plugin, {});
            QVERIFY2(created.ok(), created.status().toString().c_str());
            inProcessPeer = std::move(*created);
            auto connection = inProcessPeer->connect(m_listener->uri(), inProcessPeerHandler);
            QVERIFY2(connection.ok(), connection.status().toString().c_str());
            QVERIFY((*connection)->send(bytes("ready"), deadlineIn(kWait)).ok());
        } else {
            peer.setProcessChannelMode(QProcess::ForwardedErrorChannel);
            peer.start(LUTRA_TRANSPORT_PEER, {QString::fromStdString(m_plugin),
                                              QString::fromStdString(m_listener->uri())});
            QVERIFY(peer.waitForStarted(5000));
        }
        QVERIFY(m_serverHandler.waitFor([&] { return !m_serverHandler.messages.empty(); }));
        QCOMPARE(m_serverHandler.messages[0], std::string("ready"));
        const ConnectionPtr connection = m_serverHandler.accepted.at(0);
        if (inProcessPeer) {
            inProcessPeer.reset(); // no goodbye from the host
        } else {
            peer.kill(); // SIGKILL: no goodbye
            QVERIFY(peer.waitForFinished(5000));
        }
        QVERIFY(m_serverHandler.waitFor([&] { return m_serverHandler.disconnects.size() == 1; }));
        const Status reason = m_serverHandler.disconnects[0];
        QCOMPARE(reason.code(), Errc::unavailable);
        QVERIFY2(!reason.message().empty(), reason.toString().c_str());
        QVERIFY(!connection->connected());
        QCOMPARE(connection->send(bytes("anyone?"), noWait()).code(), Errc::unavailable);
    }

    void garbageAndOversizeFramesDropOnlyThatConnection()
    {
        if (m_plugin != "tcp") {
            QSKIP("raw-socket framing cases are tcp-specific");
        }
        m_serverHandler.onMessageHook = [](Connection &connection, std::span<const std::byte> m) {
            (void)connection.send(m, noWait());
        };
        const auto ends = connectPair(m_serverHandler, m_clientHandler);
        const ConnectionPtr server = ends.first;
        const ConnectionPtr client = ends.second;
        QVERIFY(client);

        // Garbage before any handshake.
        int fd = rawConnect(m_listener->uri());
        QVERIFY(fd >= 0);
        const char junk[] = "GET / HTTP/1.1\r\nHost: example\r\n\r\n";
        QVERIFY(rawSend(fd, junk, sizeof(junk)));
        QVERIFY(droppedByPeer(fd));
        ::close(fd);
        QVERIFY(m_log.has("garbage frame"));

        // Oversize message after a real handshake.
        fd = rawConnect(m_listener->uri());
        QVERIFY(rawHandshake(fd));
        namespace tcp = lutra::transport::tcp;
        tcp::FrameHeader header;
        header.type = static_cast<std::uint8_t>(tcp::FrameType::message);
        header.length = std::uint64_t{1} << 40;
        std::array<std::byte, tcp::kHeaderSize> raw{};
        tcp::encode(header, raw.data());
        QVERIFY(rawSend(fd, raw.data(), raw.size()));
        QVERIFY(droppedByPeer(fd));
        ::close(fd);
        QVERIFY(m_log.has("oversize message frame"));

        // A frame cut short by the peer.
        fd = rawConnect(m_listener->uri());
        QVERIFY(rawHandshake(fd));
        header.length = 100;
        tcp::encode(header, raw.data());
        QVERIFY(rawSend(fd, raw.data(), raw.size()));
        QVERIFY(rawSend(fd, "0123456789", 10));
        ::close(fd);
        QVERIFY(m_serverHandler.waitFor([&] {
            for (const auto &reason : m_serverHandler.disconnects) {
                if (reason.message().find("middle of a frame") != std::string::npos) {
                    return true;
                }
            }
            return false;
        }));
        QVERIFY(std::any_of(m_serverHandler.disconnects.begin(), m_serverHandler.disconnects.end(),
                            [](const Status &s) {
                                return s.code() == Errc::protocol_error &&
                                       s.message().find("oversize") != std::string::npos;
                            }));

        // The good connection never noticed.
        QVERIFY(client->send(bytes("still here"), deadlineIn(kWait)).ok());
        QVERIFY(m_clientHandler.waitFor([&] {
            return !m_clientHandler.messages.empty() &&
                   m_clientHandler.messages.back() == "still here";
        }));
        QVERIFY(client->connected());
    }

    // A raw message frame sent on `fd` reaches the server's handler.
    bool rawMessageArrives(int fd, std::string_view text)
    {
        namespace tcp = lutra::transport::tcp;
        tcp::FrameHeader header;
        header.type = static_cast<std::uint8_t>(tcp::FrameType::message);
        header.length = text.size();
        std::array<std::byte, tcp::kHeaderSize> raw{};
        tcp::encode(header, raw.data());
        return rawSend(fd, raw.data(), raw.size()) && rawSend(fd, text.data(), text.size()) &&
               m_serverHandler.waitFor([&] {
                   return std::find(m_serverHandler.messages.begin(),
                                    m_serverHandler.messages.end(),
                                    text) != m_serverHandler.messages.end();
               });
    }

    // A put still arriving when the host takes its memory back (a request that timed out): once
    // unexposeBulk returns, not one more byte lands there; the rest of the frame is skipped and
    // the connection goes on.
    void unexposeStopsAPutStillArriving()
    {
        if (m_plugin != "tcp") {
            QSKIP("raw-socket framing cases are tcp-specific");
        }
        namespace tcp = lutra::transport::tcp;
        const int fd = rawConnect(m_listener->uri());
        QVERIFY(fd >= 0);
        const auto closeRaw = qScopeGuard([fd] { ::close(fd); });
        QVERIFY(rawHandshake(fd));
        QVERIFY(m_serverHandler.waitFor([&] { return !m_serverHandler.accepted.empty(); }));
        const ConnectionPtr server = m_serverHandler.accepted.back();

        // Below the wake threshold, so each part is read as it comes (in
        // putArrivingInPiecesLandsWhole below, arrival and reading part).
        constexpr std::size_t kSize = 48 * 1024;
        constexpr std::size_t kFirst = 16 * 1024;
        static_assert(kSize < lutra::transport::tcp::kWakeLowatMin);
        std::vector<std::byte> memory(kSize, std::byte{0xAA});
        const Segment segment{memory.data(), memory.size(), 0};
        const auto exposed = server->exposeBulk({&segment, 1}, BulkAccess::putInto);
        QVERIFY2(exposed.ok(), exposed.status().toString().c_str());
        const auto header = rawPutHeader(*exposed, kSize);
        QVERIFY(header.has_value());
        QVERIFY(rawSend(fd, header->data(), header->size()));
        const std::vector<std::byte> first(kFirst, std::byte{0x11});
        QVERIFY(rawSend(fd, first.data(), first.size()));
        // The first part landed (the I/O thread writes it; the test only reads).
        QTRY_VERIFY_WITH_TIMEOUT(
            std::atomic_ref<std::byte>(memory[kFirst - 1]).load() == std::byte{0x11}, 5000);

        server->unexposeBulk(*exposed);
        std::fill(memory.begin(), memory.end(), std::byte{0xAA});
        const std::vector<std::byte> rest(kSize - kFirst, std::byte{0x22});
        QVERIFY(rawSend(fd, rest.data(), rest.size()));
        // A message behind the data: once it is delivered, the rest was read (and skipped).
        QVERIFY(rawMessageArrives(fd, "after the put"));
        const auto written = std::find_if(memory.begin(), memory.end(),
                                          [](std::byte b) { return b != std::byte{0xAA}; });
        QVERIFY2(written == memory.end(),
                 qPrintable(QString("byte %1 written after unexposeBulk returned")
                                .arg(written - memory.begin())));
        QVERIFY(m_log.has("taken back meanwhile"));
        QVERIFY(server->connected());
    }

    // A large put arriving in uneven pieces while the socket wakes its reader only at a
    // threshold (SO_RCVLOWAT): the header alone, a piece below the threshold, most of the rest,
    // and a tail far below it with nothing behind it. Every byte lands; a threshold above what
    // the frame still needs would leave the tail unread and fail here.
    void putArrivingInPiecesLandsWhole()
    {
        if (m_plugin != "tcp") {
            QSKIP("raw-socket framing cases are tcp-specific");
        }
        namespace tcp = lutra::transport::tcp;
        const int fd = rawConnect(m_listener->uri());
        QVERIFY(fd >= 0);
        const auto closeRaw = qScopeGuard([fd] { ::close(fd); });
        timeval timeout{5, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
        QVERIFY(rawHandshake(fd));
        QVERIFY(m_serverHandler.waitFor([&] { return !m_serverHandler.accepted.empty(); }));
        const ConnectionPtr server = m_serverHandler.accepted.back();

        constexpr std::size_t kSize = 3 * tcp::kWakeLowatMax + 10;
        constexpr std::size_t kBelow = tcp::kWakeLowatMax / 2;
        constexpr std::size_t kTail = 10;
        std::vector<std::byte> memory(kSize, std::byte{0xAA});
        const Segment segment{memory.data(), memory.size(), 0};
        const auto exposed = server->exposeBulk({&segment, 1}, BulkAccess::putInto);
        QVERIFY2(exposed.ok(), exposed.status().toString().c_str());
        const auto header = rawPutHeader(*exposed, kSize);
        QVERIFY(header.has_value());
        std::vector<std::byte> data(kSize);
        for (std::size_t i = 0; i < kSize; ++i) {
            data[i] = static_cast<std::byte>(i * 7 + 1);
        }
        const auto pause = [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); };
        QVERIFY(rawSend(fd, header->data(), header->size()));
        pause(); // the reader sees the header alone and waits for the payload
        QVERIFY(rawSend(fd, data.data(), kBelow));
        pause();
        QVERIFY(rawSend(fd, data.data() + kBelow, kSize - kBelow - kTail));
        pause();
        QVERIFY(rawSend(fd, data.data() + kSize - kTail, kTail));
        QTRY_VERIFY_WITH_TIMEOUT(
            std::atomic_ref<std::byte>(memory[kSize - 1]).load() == data[kSize - 1], 5000);
        QVERIFY(memory == data);

        // The threshold is back at one byte: a small message right behind still arrives.
        QVERIFY(rawMessageArrives(fd, "after the put"));
        server->unexposeBulk(*exposed);
        QVERIFY(server->connected());
    }

    void connectToClosedPort()
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)), 0);
        socklen_t len = sizeof(addr);
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len);
        ::close(fd); // bound, never listening, now closed: nothing answers on this port
        const std::string uri =
            m_plugin + "://" + host() + ":" + std::to_string(ntohs(addr.sin_port));
        auto connection = m_client->connect(uri, m_clientHandler);
        QCOMPARE(connection.status().code(), Errc::unavailable);
        QVERIFY2(connection.status().message().find("refused") != std::string::npos,
                 connection.status().message().c_str());
        QCOMPARE(m_client->connect("nonsense", m_clientHandler).status().code(),
                 Errc::invalid_argument);
    }
};

QTEST_GUILESS_MAIN(TestTransportConformance)
#include "test_transport_conformance.moc"
