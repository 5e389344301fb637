// The loopback plugin's control path: the entry point, the process-wide switchboard of
// listeners, listen, connect (limit negotiation), I/O threads and teardown. Allocation and
// blocking are allowed here; they are not in loopback_datapath.cpp.
#include "transport/kit/endpoint.h"
#include "transport/kit/limits.h"
#include "transport/loopback/loopback.h"
#include "transport/loopback/loopback_internal.h"

#include <algorithm>
#include <map>
#include <optional>

namespace lutra::transport::loopback {

namespace {

constexpr std::uint32_t kFirstPort = 1024; // ports are names here; kept below the kernel's
constexpr std::uint32_t kLastPort = 32767; // ephemeral range so a test's free port is free here

using Address = kit::HostPort;

// loopback://host:port (any host name; port 0 picks one when listening).
Result<Address> parseUri(std::string_view uri)
{
    constexpr std::string_view scheme = "loopback://";
    constexpr std::string_view expected = "expected loopback://host:port";
    if (!uri.starts_with(scheme)) {
        return Status(Errc::invalid_argument,
                      "'" + std::string(uri) + "': " + std::string(expected));
    }
    return kit::splitHostPort(uri, uri.substr(scheme.size()), expected);
}

std::string uriOf(const std::string &host, std::uint32_t port)
{
    return "loopback://" + host + ":" + std::to_string(port);
}

// Every loopback listener of the process, by URI, and the port names handed out.
class Switchboard {
public:
    struct Listening {
        std::weak_ptr<Engine> engine;
        Handler *handler = nullptr;
    };

    static Switchboard &instance()
    {
        static Switchboard board;
        return board;
    }

    // The bound URI; already_exists when another listener has it.
    Result<std::string> bind(const Address &address, const std::shared_ptr<Engine> &engine,
                             Handler &handler)
    {
        std::lock_guard lock(m_mutex);
        std::uint32_t port = address.port;
        if (port == 0) {
            auto picked = pickLocked(address.host);
            if (!picked) {
                return Status(Errc::resource_exhausted, "loopback transport: no free port name");
            }
            port = *picked;
        }
        const std::string uri = uriOf(address.host, port);
        if (m_listening.contains(uri)) {
            return Status(Errc::already_exists, "listen on " + uri + ": address already in use");
        }
        m_listening[uri] = {engine, &handler};
        return uri;
    }
    void unbind(const std::string &uri)
    {
        std::lock_guard lock(m_mutex);
        m_listening.erase(uri);
    }
    std::optional<Listening> find(const std::string &uri)
    {
        std::lock_guard lock(m_mutex);
        const auto it = m_listening.find(uri);
        if (it == m_listening.end()) {
            return std::nullopt;
        }
        return it->second;
    }
    // A port name for a connecting end (its peer URI), never one a listener has.
    std::uint32_t connectorPort(const std::string &host)
    {
        std::lock_guard lock(m_mutex);
        return pickLocked(host).value_or(0);
    }

private:
    std::optional<std::uint32_t> pickLocked(const std::string &host)
    {
        for (std::uint32_t tries = 0; tries <= kLastPort - kFirstPort; ++tries) {
            const std::uint32_t port = m_next;
            m_next = m_next == kLastPort ? kFirstPort : m_next + 1;
            if (!m_listening.contains(uriOf(host, port))) {
                return port;
            }
        }
        return std::nullopt;
    }

    std::mutex m_mutex;
    std::map<std::string, Listening> m_listening;
    std::uint32_t m_next = kFirstPort;
};

class LoopbackListener final : public Listener {
public:
    explicit LoopbackListener(std::string uri) : m_uri(std::move(uri)) {}
    ~LoopbackListener() override { Switchboard::instance().unbind(m_uri); }
    std::string uri() const override { return m_uri; }

private:
    std::string m_uri;
};

// memcpy needs no pinning (registerMemory: kit::UnpinnedTransport).
class LoopbackTransport final : public kit::UnpinnedTransport {
public:
    explicit LoopbackTransport(std::shared_ptr<Engine> engine) : m_engine(std::move(engine)) {}
    ~LoopbackTransport() override { m_engine->stopThreads(); }

    std::string_view name() const noexcept override { return "loopback"; }

    Result<std::unique_ptr<Listener>> listen(std::string_view uri, Handler &handler) override
    {
        auto address = parseUri(uri);
        if (!address.ok()) {
            return address.status();
        }
        auto bound = Switchboard::instance().bind(*address, m_engine, handler);
        if (!bound.ok()) {
            return bound.status();
        }
        m_engine->log(LogLevel::info, "listening on " + *bound);
        return std::unique_ptr<Listener>(std::make_unique<LoopbackListener>(*bound));
    }

    Result<ConnectionPtr> connect(std::string_view uri, Handler &handler, void *context) override
    {
        auto address = parseUri(uri);
        if (!address.ok()) {
            return address.status();
        }
        const std::string peer = uriOf(address->host, address->port);
        const auto listening = Switchboard::instance().find(peer);
        const auto server = listening ? listening->engine.lock() : nullptr;
        if (!server) {
            return Status(Errc::unavailable,
                          "connect to " + peer + ": connection refused (no loopback listener)");
        }
        // Negotiation: the minimum of both proposals, as tcp's handshake gives.
        const Limits agreed = kit::agree(m_engine->options().proposed, server->options().proposed);
        const std::string connector =
            uriOf(address->host, Switchboard::instance().connectorPort(address->host));
        auto link = std::make_shared<Link>();
        IoThread &clientThread = m_engine->pickThread();
        IoThread &serverThread = server->pickThread();
        auto client =
            std::make_shared<LoopbackConnection>(m_engine, clientThread, link, handler, peer);
        auto accepted = std::make_shared<LoopbackConnection>(server, serverThread, link,
                                                             *listening->handler, connector);
        client->setContext(context);
        client->establish(agreed);
        accepted->establish(agreed);
        LoopbackConnection::join(client, accepted);
        if (auto status = serverThread.adopt(accepted); !status.ok()) {
            return Status(Errc::unavailable, "connect to " + peer + ": " + status.message());
        }
        if (auto status = clientThread.adopt(client); !status.ok()) {
            accepted->close();
            return status;
        }
        client->markAnnounced();
        {
            std::lock_guard lock(accepted->linkMutex());
            accepted->deliverLocked({EventKind::accepted});
        }
        m_engine->log(LogLevel::debug, "connected to " + peer);
        return ConnectionPtr(client);
    }

private:
    std::shared_ptr<Engine> m_engine;
};

Result<std::unique_ptr<Transport>> createLoopback(const TransportOptions &options)
{
    return kit::createTransport<Engine, LoopbackTransport>(options, kit::LimitBounds{},
                                                           "loopback transport");
}

const PluginEntry kEntry{kAbiVersion, "loopback",
                         "in-process: listeners and connections inside one process, memcpy",
                         &createLoopback};

} // namespace

const PluginEntry &plugin() noexcept
{
    return kEntry;
}

// ---- Connection setup and teardown

LoopbackConnection::LoopbackConnection(std::shared_ptr<Engine> engine, IoThread &thread,
                                       std::shared_ptr<Link> link, Handler &handler,
                                       std::string peer)
    : kit::ConnectionBase(handler, std::move(peer)), m_engine(std::move(engine)), m_thread(thread),
      m_link(std::move(link))
{
}

void LoopbackConnection::establish(const Limits &limits)
{
    std::lock_guard lock(m_link->mutex);
    m_limits = limits;
    const std::size_t depth = limits.queueDepth;
    m_messageBuffers.resize(depth * limits.maxMessageSize);
    m_messageLength.resize(depth);
    m_freeMessages.reserve(depth);
    m_ops.resize(depth);
    m_opSegments.resize(depth * kMaxBulkSegments);
    m_exposures.resize(depth);
    m_exposureSegments.resize(depth * kMaxBulkSegments);
    // The peer's messages and operations, our completions, accepted and peerGone.
    m_inbox.resize(3 * depth + 2);
    m_failing.reserve(depth);
    for (std::size_t i = depth; i-- > 0;) {
        const auto slot = static_cast<std::uint32_t>(i);
        m_freeMessages.push_back(slot);
        m_ops[slot].value.local = &m_opSegments[i * kMaxBulkSegments];
        m_exposures[slot].value.segments = &m_exposureSegments[i * kMaxBulkSegments];
    }
    m_state = State::established;
    m_connected.store(true);
}

void LoopbackConnection::join(const std::shared_ptr<LoopbackConnection> &a,
                              const std::shared_ptr<LoopbackConnection> &b)
{
    std::lock_guard lock(a->m_link->mutex);
    a->m_peerEnd = b;
    b->m_peerEnd = a;
}

void LoopbackConnection::close() noexcept
{
    {
        std::lock_guard lock(m_link->mutex);
        if (!beginCloseLocked()) {
            return;
        }
    }
    m_space.notify_all();
    // Teardown runs on the I/O thread, where the handlers run. If that thread has already
    // stopped, its shutdown tore this connection down.
    auto self = shared_from_this();
    (void)m_thread.post([self] { self->teardown({Errc::cancelled, "connection closed locally"}); });
}

void LoopbackConnection::teardown(const Status &reason) noexcept
{
    const auto self = shared_from_this();
    std::shared_ptr<LoopbackConnection> peer;
    m_failing.clear();
    {
        std::lock_guard lock(m_link->mutex);
        if (m_state == State::closed) {
            return;
        }
        m_state = State::closed;
        m_connected.store(false);
        m_closeReason = reason;
        for (std::uint32_t slot = 0; slot < m_ops.size(); ++slot) {
            if (m_ops[slot].active) {
                m_failing.push_back(m_ops[slot].value.tag);
                m_ops.release(slot);
            }
        }
        m_inboxCount = 0;
        // The peer keeps this end alive until it has handled what this end sent it.
        peer = std::move(m_peerEnd);
        if (peer) {
            peer->deliverLocked({EventKind::peerGone});
        }
    }
    m_space.notify_all();
    const bool local = reason.code() == Errc::cancelled;
    m_engine->log(local ? LogLevel::debug : LogLevel::warning,
                  "connection " + m_peer + " dropped: " + reason.toString());
    for (const std::uint64_t tag : m_failing) {
        m_handler.onBulkDone(*this, tag, reason);
    }
    if (m_announced) {
        m_handler.onDisconnected(*this, reason);
    }
    m_thread.retire(this);
}

} // namespace lutra::transport::loopback
