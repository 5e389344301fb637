// The tcp plugin's control path: the entry point, listen, connect, accept, limit negotiation,
// I/O threads and teardown. Allocation and blocking are allowed here; they are not in
// tcp_datapath.cpp.
#include "tcp_internal.h"
#include "transport/kit/deadline.h"
#include "transport/kit/endpoint.h"
#include "transport/kit/limits.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <future>

namespace lutra::transport::tcp {

namespace {

using kit::remainingMs;

constexpr std::string_view kScheme = "tcp://";

std::string uriOf(const sockaddr_in &addr)
{
    return kit::uriOf(kScheme, addr);
}

struct Address {
    sockaddr_in addr{};
};

// tcp://host:port (IPv4 literal or a resolvable name).
Result<Address> parseUri(std::string_view uri)
{
    constexpr std::string_view expected = "expected tcp://host:port";
    if (!uri.starts_with(kScheme)) {
        return Status(Errc::invalid_argument,
                      "'" + std::string(uri) + "': " + std::string(expected));
    }
    auto endpoint = kit::splitHostPort(uri, uri.substr(kScheme.size()), expected);
    if (!endpoint.ok()) {
        return endpoint.status();
    }
    auto address = kit::resolveIpv4(uri, *endpoint);
    if (!address.ok()) {
        return address.status();
    }
    return Address{*address};
}

void setNoDelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

class FdGuard {
public:
    explicit FdGuard(int fd) : m_fd(fd) {}
    FdGuard(const FdGuard &) = delete;
    FdGuard &operator=(const FdGuard &) = delete;
    ~FdGuard()
    {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    int get() const { return m_fd; }
    int release() { return std::exchange(m_fd, -1); }

private:
    int m_fd;
};

// Blocking (with a deadline) transfer of exactly `size` bytes on a nonblocking socket; used only
// for the handshake on the connecting thread.
Status transferAll(int fd, std::byte *data, std::size_t size, bool sending, Deadline deadline,
                   std::string_view peer)
{
    std::size_t done = 0;
    while (done < size) {
        const ssize_t n = sending ? ::send(fd, data + done, size - done, MSG_NOSIGNAL)
                                  : ::recv(fd, data + done, size - done, 0);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n == 0) {
            return {Errc::unavailable,
                    std::string(peer) + ": peer closed the connection during the handshake"};
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            return {Errc::unavailable,
                    std::string(peer) + ": handshake failed: " + errnoText(errno)};
        }
        pollfd pfd{fd, static_cast<short>(sending ? POLLOUT : POLLIN), 0};
        const int ms = remainingMs(deadline);
        if (ms == 0 || ::poll(&pfd, 1, ms) == 0) {
            return {Errc::timeout, std::string(peer) + ": no handshake answer in time"};
        }
    }
    return {};
}

Limits limitsOf(const Hello &hello) noexcept
{
    return {hello.maxMessageSize, hello.maxBulkSize, hello.queueDepth};
}

Hello helloOf(const Limits &limits) noexcept
{
    return {limits.maxMessageSize, limits.queueDepth, limits.maxBulkSize};
}

Status checkLimits(const Hello &hello)
{
    return kit::checkLimits(limitsOf(hello), kBounds);
}

class ListenSocket final : public Pollable {
public:
    ListenSocket(std::shared_ptr<Engine> engine, int fd, Handler &handler, std::string uri)
        : m_engine(std::move(engine)), m_fd(fd), m_handler(handler), m_uri(std::move(uri))
    {
    }
    ~ListenSocket() override { ::close(m_fd); }

    void onEvents(std::uint32_t) noexcept override
    {
        for (;;) {
            sockaddr_in addr{};
            socklen_t len = sizeof(addr);
            const int fd = ::accept4(m_fd, reinterpret_cast<sockaddr *>(&addr), &len,
                                     SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) {
                    continue;
                }
                if (errno != EAGAIN && errno != EWOULDBLOCK) {
                    m_engine->log(LogLevel::warning,
                                  m_uri + ": accept failed: " + errnoText(errno));
                }
                return;
            }
            setNoDelay(fd);
            const Status adopted = m_engine->placeConnection({}, [&](IoThread &thread) {
                return thread.adopt(std::make_shared<TcpConnection>(m_engine, thread, fd, m_handler,
                                                                    uriOf(addr), true));
            });
            if (!adopted.ok()) {
                m_engine->log(LogLevel::warning, m_uri + ": " + adopted.toString());
            }
        }
    }

    int fd() const { return m_fd; }

private:
    std::shared_ptr<Engine> m_engine;
    int m_fd;
    Handler &m_handler;
    std::string m_uri;
};

class TcpListener final : public Listener {
public:
    TcpListener(IoThread &thread, std::shared_ptr<ListenSocket> socket, std::string uri)
        : m_thread(thread), m_socket(std::move(socket)), m_uri(std::move(uri))
    {
    }
    ~TcpListener() override
    {
        // Synchronous, so the handler is never called after the listener is gone.
        m_thread.runSync([this] { m_thread.removePollable(m_socket.get(), m_socket->fd()); });
    }
    std::string uri() const override { return m_uri; }

private:
    IoThread &m_thread;
    std::shared_ptr<ListenSocket> m_socket;
    std::string m_uri;
};

// Sockets need no pinning (registerMemory: kit::UnpinnedTransport).
class TcpTransport final : public kit::UnpinnedTransport {
public:
    explicit TcpTransport(std::shared_ptr<Engine> engine) : m_engine(std::move(engine)) {}
    ~TcpTransport() override { m_engine->stopThreads(); }

    std::string_view name() const noexcept override { return "tcp"; }

    Result<std::unique_ptr<Listener>> listen(std::string_view uri, Handler &handler) override
    {
        auto address = parseUri(uri);
        if (!address.ok()) {
            return address.status();
        }
        FdGuard fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (fd.get() < 0) {
            return Status(Errc::io_error, "socket: " + errnoText(errno));
        }
        int one = 1;
        setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&address->addr),
                   sizeof(sockaddr_in)) != 0) {
            const int error = errno;
            return Status(error == EADDRINUSE ? Errc::already_exists : Errc::io_error,
                          "listen on " + std::string(uri) + ": " + errnoText(error));
        }
        if (::listen(fd.get(), SOMAXCONN) != 0) {
            return Status(Errc::io_error,
                          "listen on " + std::string(uri) + ": " + errnoText(errno));
        }
        sockaddr_in bound{};
        socklen_t len = sizeof(bound);
        getsockname(fd.get(), reinterpret_cast<sockaddr *>(&bound), &len);
        const std::string boundUri = uriOf(bound);
        auto socket = std::make_shared<ListenSocket>(m_engine, fd.release(), handler, boundUri);
        IoThread &thread = m_engine->thread(0);
        if (auto status = thread.addPollable(socket, socket->fd()); !status.ok()) {
            return status;
        }
        m_engine->log(LogLevel::info, "listening on " + boundUri);
        return std::unique_ptr<Listener>(std::make_unique<TcpListener>(thread, socket, boundUri));
    }

    Result<ConnectionPtr> connect(std::string_view uri, Handler &handler, void *context) override
    {
        auto address = parseUri(uri);
        if (!address.ok()) {
            return address.status();
        }
        const std::string peer = uriOf(address->addr);
        const Deadline deadline = Clock::now() + m_engine->options().connectTimeout;
        FdGuard fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
        if (fd.get() < 0) {
            return Status(Errc::io_error, "socket: " + errnoText(errno));
        }
        setNoDelay(fd.get());
        if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address->addr),
                      sizeof(sockaddr_in)) != 0) {
            if (errno != EINPROGRESS) {
                return Status(Errc::unavailable, "connect to " + peer + ": " + errnoText(errno));
            }
            pollfd pfd{fd.get(), POLLOUT, 0};
            if (::poll(&pfd, 1, remainingMs(deadline)) <= 0) {
                return Status(Errc::timeout, "connect to " + peer + ": timed out");
            }
            int error = 0;
            socklen_t len = sizeof(error);
            getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &len);
            if (error != 0) {
                return Status(Errc::unavailable, "connect to " + peer + ": " + errnoText(error));
            }
        }

        // Negotiation: we propose, the acceptor answers with the minimum of both.
        const Limits &own = m_engine->options().proposed;
        std::array<std::byte, kHeaderSize + sizeof(Hello)> frame{};
        FrameHeader header;
        header.type = static_cast<std::uint8_t>(FrameType::hello);
        header.length = sizeof(Hello);
        encode(header, frame.data());
        encode(helloOf(own), frame.data() + kHeaderSize);
        if (auto status = transferAll(fd.get(), frame.data(), frame.size(), true, deadline, peer);
            !status.ok()) {
            return status;
        }
        if (auto status = transferAll(fd.get(), frame.data(), frame.size(), false, deadline, peer);
            !status.ok()) {
            return status;
        }
        const auto answer = decode<FrameHeader>(frame.data());
        const auto hello = decode<Hello>(frame.data() + kHeaderSize);
        if (answer.magic != kMagic || answer.version != kWireVersion ||
            answer.type != static_cast<std::uint8_t>(FrameType::helloAck) ||
            answer.length != sizeof(Hello)) {
            return Status(Errc::protocol_error, peer + ": not a lutra tcp peer (bad handshake)");
        }
        if (auto status = checkLimits(hello);
            !status.ok() || !kit::fitsWithin(limitsOf(hello), own)) {
            return Status(Errc::protocol_error, peer + ": peer answered bad limits");
        }

        auto placed =
            m_engine->placeConnection(peer, [&](IoThread &thread) -> Result<ConnectionPtr> {
                auto connection = std::make_shared<TcpConnection>(m_engine, thread, fd.release(),
                                                                  handler, peer, false);
                connection->setContext(context);
                connection->establish(limitsOf(hello));
                connection->markAnnounced();
                if (auto status = thread.adopt(connection); !status.ok()) {
                    return status;
                }
                return ConnectionPtr(connection);
            });
        if (placed.ok()) {
            m_engine->log(LogLevel::debug, "connected to " + peer);
        }
        return placed;
    }

private:
    std::shared_ptr<Engine> m_engine;
};

Result<std::unique_ptr<Transport>> createTcp(const TransportOptions &options)
{
    return kit::createTransport<Engine, TcpTransport>(options, kBounds, "tcp transport");
}

const PluginEntry kEntry{kAbiVersion, "tcp", "TCP sockets with epoll; bulk streamed inline",
                         &createTcp};

} // namespace

// ---- I/O threads

IoThread::IoThread()
    : kit::ConnectionThread<TcpConnection>("tcp transport", kEpollTimeoutMs),
      m_scratch(kScratchSize)
{
}

IoThread::~IoThread()
{
    stop();
}

Status IoThread::adopt(const std::shared_ptr<TcpConnection> &connection)
{
    std::lock_guard lock(m_mutex);
    if (m_stopped) {
        return {Errc::unavailable, owner() + " is shutting down"};
    }
    if (auto status = watch(connection->fd(), EPOLLIN, static_cast<Pollable *>(connection.get()));
        !status.ok()) {
        return status;
    }
    return adoptLocked(connection);
}

Status IoThread::addPollable(const std::shared_ptr<Pollable> &pollable, int fd)
{
    std::lock_guard lock(m_mutex);
    if (m_stopped) {
        return {Errc::unavailable, owner() + " is shutting down"};
    }
    if (auto status = watch(fd, EPOLLIN, pollable.get()); !status.ok()) {
        return status;
    }
    m_pollables.push_back(pollable);
    return {};
}

void IoThread::removePollable(Pollable *pollable, int fd) noexcept
{
    unwatch(fd);
    std::lock_guard lock(m_mutex);
    const auto it = std::find_if(m_pollables.begin(), m_pollables.end(),
                                 [pollable](const auto &p) { return p.get() == pollable; });
    if (it != m_pollables.end()) {
        m_retiredPollables.push_back(std::move(*it));
        m_pollables.erase(it);
    }
}

void IoThread::afterBatch() noexcept
{
    const auto now = Clock::now();
    if (now - m_lastSweep >= std::chrono::milliseconds(kEpollTimeoutMs)) {
        m_lastSweep = now;
        forEachConnection([&](const std::shared_ptr<TcpConnection> &connection) {
            if (connection->handshakeExpired(now)) {
                m_expired.push_back(connection);
            }
        });
        for (const auto &connection : m_expired) {
            connection->teardown({Errc::timeout, "no hello from the peer in time"});
        }
        m_expired.clear();
    }
    kit::ConnectionThread<TcpConnection>::afterBatch();
    std::lock_guard lock(m_mutex);
    m_retiredPollables.clear();
}

void IoThread::onShutdown() noexcept
{
    kit::ConnectionThread<TcpConnection>::onShutdown();
    std::lock_guard lock(m_mutex);
    m_pollables.clear();
    m_retiredPollables.clear();
}

// ---- Connection setup and teardown

TcpConnection::TcpConnection(std::shared_ptr<Engine> engine, IoThread &thread, int fd,
                             Handler &handler, std::string peer, bool accepted)
    : kit::ConnectionBase(handler, std::move(peer)), m_engine(std::move(engine)), m_thread(thread),
      m_accepted(accepted), m_handshakeDeadline(Clock::now() + m_engine->options().connectTimeout),
      m_fd(fd)
{
}

TcpConnection::~TcpConnection()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

void TcpConnection::establish(const Limits &limits)
{
    std::lock_guard lock(m_mutex);
    m_limits = limits;
    const std::size_t depth = limits.queueDepth;
    // Callers' messages + callers' bulk ops + answers to the peer's gets + the hello answer.
    m_tx.resize(3 * depth + 1);
    m_messageBuffers.resize(depth * limits.maxMessageSize);
    m_messageIov.resize(depth);
    m_ops.resize(depth);
    m_opIov.resize(depth * kMaxBulkSegments);
    m_exposures.resize(depth);
    m_exposureIov.resize(depth * kMaxBulkSegments);
    m_rxMessage.resize(limits.maxMessageSize);
    m_done.reserve(depth);
    for (std::size_t i = depth; i-- > 0;) {
        const auto slot = static_cast<std::uint32_t>(i);
        m_messageIov[i].iov_base = m_messageBuffers.data() + i * limits.maxMessageSize;
        m_ops[slot].value.iov = &m_opIov[i * kMaxBulkSegments];
        m_exposures[slot].value.iov = &m_exposureIov[i * kMaxBulkSegments];
        m_freeMessages.push_back(slot);
    }
    m_state = State::established;
    m_connected.store(true);
}

// The acceptor's half of the negotiation: answer with the minimum of both proposals, then hand
// the connection to the host.
void TcpConnection::onHello() noexcept
{
    m_rxPhase = RxPhase::header;
    m_rxHave = 0;
    const auto hello = decode<Hello>(m_helloBytes.data());
    if (auto status = checkLimits(hello); !status.ok()) {
        protocolError("bad hello: " + status.message());
        return;
    }
    const Limits agreed = kit::agree(m_engine->options().proposed, limitsOf(hello));
    establish(agreed);
    encode(helloOf(agreed), m_helloBytes.data());
    m_helloIov = {m_helloBytes.data(), m_helloBytes.size()};
    FrameHeader header;
    header.type = static_cast<std::uint8_t>(FrameType::helloAck);
    header.length = sizeof(Hello);
    {
        std::lock_guard lock(m_mutex);
        pushTxLocked(header, &m_helloIov, 1, sizeof(Hello), TxKind::control, 0);
    }
    m_announced = true;
    m_engine->log(LogLevel::debug, "accepted " + m_peer);
    m_handler.onAccepted(shared_from_this());
}

bool TcpConnection::handshakeExpired(Clock::time_point now) const noexcept
{
    std::lock_guard lock(m_mutex);
    return m_state == State::opening && now >= m_handshakeDeadline;
}

void TcpConnection::close() noexcept
{
    {
        std::lock_guard lock(m_mutex);
        if (!beginCloseLocked()) {
            return;
        }
    }
    m_space.notify_all();
    // Teardown runs on the I/O thread, which alone touches the socket. If that thread has already
    // stopped, its shutdown tore this connection down.
    auto self = shared_from_this();
    (void)m_thread.post([self] { self->teardown({Errc::cancelled, "connection closed locally"}); });
}

void TcpConnection::teardown(const Status &reason) noexcept
{
    {
        std::lock_guard lock(m_mutex);
        if (m_state == State::closed) {
            return;
        }
    }
    // Logged before the socket closes, so whoever sees the close can also find the reason.
    const bool local = reason.code() == Errc::cancelled;
    m_engine->log(local ? LogLevel::debug : LogLevel::warning,
                  "connection " + m_peer + " dropped: " + reason.toString());
    m_done.clear();
    {
        std::lock_guard lock(m_mutex);
        m_state = State::closed;
        m_connected.store(false);
        m_closeReason = reason;
        for (std::uint32_t slot = 0; slot < m_ops.size(); ++slot) {
            if (m_ops[slot].active) {
                m_done.push_back({m_ops[slot].value.tag, 0});
                m_ops.release(slot);
            }
        }
        if (m_fd >= 0) {
            m_thread.unwatch(m_fd);
            ::close(m_fd);
            m_fd = -1;
        }
        m_txCount = 0;
    }
    m_space.notify_all();
    // Before the handlers hear of it: whoever sees the disconnect and connects again finds this
    // thread one connection lighter (retired, it lives until the batch ends).
    m_thread.retire(this);
    for (const auto &done : m_done) {
        m_handler.onBulkDone(*this, done.tag, reason);
    }
    if (m_announced) {
        m_handler.onDisconnected(*this, reason);
    }
}

} // namespace lutra::transport::tcp

extern "C" __attribute__((visibility("default"))) const lutra::transport::PluginEntry *
lutra_transport_entry()
{
    return &lutra::transport::tcp::kEntry;
}
