// The verbs plugin's control path: the entry point, listen and accept, connect, limit
// negotiation in the rdmacm private data, connection setup and teardown. Allocation and
// blocking are allowed here; they are not in verbs_datapath.cpp.
#include "transport/kit/deadline.h"
#include "transport/kit/limits.h"
#include "verbs_internal.h"
#include "verbs_uri.h"

#include <fcntl.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lutra::transport::verbs {

namespace {

using kit::remainingMs;

Status checkLimits(const Limits &limits)
{
    return kit::checkLimits(limits, kBounds);
}

Result<Limits> limitsOf(const void *data, std::size_t size)
{
    if (data == nullptr || size < sizeof(Hello)) {
        return Status(Errc::protocol_error, "not a lutra verbs peer (no hello)");
    }
    const auto hello = decode<Hello>(static_cast<const std::byte *>(data));
    if (hello.magic != kHelloMagic || hello.version != kWireVersion) {
        return Status(Errc::protocol_error, "not a lutra verbs peer (bad hello)");
    }
    const Limits limits{hello.maxMessageSize, hello.maxBulkSize, hello.queueDepth};
    if (auto status = checkLimits(limits); !status.ok()) {
        return status;
    }
    return limits;
}

Hello helloOf(const Limits &limits)
{
    Hello hello;
    hello.maxMessageSize = limits.maxMessageSize;
    hello.queueDepth = limits.queueDepth;
    hello.maxBulkSize = limits.maxBulkSize;
    return hello;
}

std::string peerUriOf(rdma_cm_id *id)
{
    const sockaddr *address = rdma_get_peer_addr(id);
    if (address == nullptr || address->sa_family != AF_INET) {
        return "verbs://(unknown peer)";
    }
    sockaddr_in in{};
    std::memcpy(&in, address, sizeof(in));
    return uriOf(in);
}

// rejectReason → text for a connector that was turned away.
std::string rejectText(const rdma_cm_event &event)
{
    std::string text =
        "connection refused by the peer (reject reason " + std::to_string(event.status);
    if (event.status == 8) {
        text += ": no listener on that port";
    }
    if (event.param.conn.private_data != nullptr && event.param.conn.private_data_len > 0) {
        const auto *data = static_cast<const char *>(event.param.conn.private_data);
        const std::size_t length =
            strnlen(data, std::min<std::size_t>(event.param.conn.private_data_len, 64));
        if (length > 0) {
            text += ": " + std::string(data, length);
        }
    }
    return text + ")";
}

// The next rdmacm event of a private channel, waiting until `deadline`.
Result<CmEvent> awaitEvent(rdma_event_channel *channel, Deadline deadline, std::string_view what)
{
    for (;;) {
        rdma_cm_event *event = nullptr;
        if (rdma_get_cm_event(channel, &event) == 0) {
            return CmEvent(event);
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
            return Status(Errc::io_error,
                          std::string(what) + ": rdma_get_cm_event: " + errnoText(errno));
        }
        pollfd pfd{channel->fd, POLLIN, 0};
        const int ms = remainingMs(deadline);
        if (ms == 0 || ::poll(&pfd, 1, ms) == 0) {
            return Status(Errc::timeout, std::string(what) + ": no answer in time");
        }
    }
}

// Waits for `expected`; any other event is the failure it names.
Status expectEvent(rdma_event_channel *channel, rdma_cm_event_type expected, Deadline deadline,
                   const std::string &what)
{
    auto event = awaitEvent(channel, deadline, what);
    if (!event) {
        return event.status();
    }
    if ((*event)->event != expected) {
        return {Errc::unavailable, what + ": " + rdma_event_str((*event)->event) + " (status " +
                                       std::to_string((*event)->status) + ")"};
    }
    return {};
}

class ListenerEndpoint final : public CmEndpoint {
public:
    ListenerEndpoint(std::shared_ptr<Engine> engine, Handler &handler)
        : m_engine(std::move(engine)), m_handler(handler)
    {
    }

    void onCmEvent(rdma_cm_event &event) noexcept override
    {
        if (event.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
            accept(event);
        }
    }

    CmId id;
    std::string uri;

private:
    void reject(CmId &child, std::string_view why) noexcept
    {
        m_engine->log(LogLevel::warning, uri + ": refused a connection: " + std::string(why));
        const std::string text(why.substr(0, 64));
        (void)rdma_reject(child.get(), text.c_str(), static_cast<std::uint8_t>(text.size() + 1));
    }

    void accept(rdma_cm_event &event) noexcept
    {
        CmId child(event.id); // ours from here; destroyed on every failure path
        auto proposed = limitsOf(event.param.conn.private_data, event.param.conn.private_data_len);
        if (!proposed) {
            reject(child, proposed.status().message());
            return;
        }
        const Limits &own = m_engine->options().proposed;
        const Limits agreed = kit::agree(own, *proposed);
        Device *device = m_engine->deviceOf(child->verbs);
        if (device == nullptr) {
            reject(child, "no such device");
            return;
        }
        rdma_cm_id *raw = child.get();
        IoThread &thread = m_engine->pickThread();
        auto connection = std::make_shared<VerbsConnection>(m_engine, thread, *device, m_handler,
                                                            peerUriOf(raw), true);
        if (auto status = connection->create(std::move(child), agreed); !status.ok()) {
            m_engine->log(LogLevel::warning, uri + ": " + status.toString());
            (void)rdma_reject(raw, nullptr, 0);
            return;
        }
        connection->establish(agreed);
        raw->context = static_cast<CmEndpoint *>(connection.get());
        if (auto status = thread.adopt(connection); !status.ok()) {
            (void)rdma_reject(raw, nullptr, 0);
            return;
        }
        const Hello hello = helloOf(agreed);
        rdma_conn_param param{};
        param.private_data = &hello;
        param.private_data_len = sizeof(hello);
        param.responder_resources =
            std::min(connection->responderResources(), event.param.conn.initiator_depth);
        param.initiator_depth =
            std::min(connection->initiatorDepth(), event.param.conn.responder_resources);
        param.rnr_retry_count = kRnrRetryCount;
        if (rdma_accept(raw, &param) != 0) {
            connection->requestTeardown(
                {Errc::unavailable,
                 "rdma_accept from " + std::string(connection->peer()) + ": " + errnoText(errno)});
            return;
        }
        m_engine->log(LogLevel::debug, uri + ": accepting " + std::string(connection->peer()));
    }

    std::shared_ptr<Engine> m_engine;
    Handler &m_handler;
};

class VerbsListener final : public Listener {
public:
    explicit VerbsListener(std::unique_ptr<ListenerEndpoint> endpoint)
        : m_endpoint(std::move(endpoint))
    {
    }
    ~VerbsListener() override
    {
        // Waits until the CM thread has acknowledged every event of this id: no connect
        // request reaches the endpoint after this.
        m_endpoint->id.reset();
    }
    std::string uri() const override { return m_endpoint->uri; }

private:
    std::unique_ptr<ListenerEndpoint> m_endpoint;
};

class VerbsTransport final : public Transport {
public:
    explicit VerbsTransport(std::shared_ptr<Engine> engine) : m_engine(std::move(engine)) {}
    ~VerbsTransport() override { m_engine->stop(); }

    std::string_view name() const noexcept override { return "verbs"; }

    Result<std::unique_ptr<Listener>> listen(std::string_view uri, Handler &handler) override
    {
        auto endpoint = parseUri(uri);
        if (!endpoint) {
            return endpoint.status();
        }
        auto listener = std::make_unique<ListenerEndpoint>(m_engine, handler);
        rdma_cm_id *raw = nullptr;
        if (rdma_create_id(m_engine->channel(), &raw, static_cast<CmEndpoint *>(listener.get()),
                           RDMA_PS_TCP) != 0) {
            return Status(Errc::io_error, "listen on " + std::string(uri) +
                                              ": rdma_create_id: " + errnoText(errno));
        }
        listener->id.reset(raw);
        if (rdma_bind_addr(raw, reinterpret_cast<sockaddr *>(&endpoint->address)) != 0) {
            const int error = errno;
            if (error == EADDRINUSE) {
                return Status(Errc::already_exists,
                              "listen on " + std::string(uri) + ": " + errnoText(error));
            }
            return Status(Errc::unavailable,
                          "listen on " + std::string(uri) +
                              ": rdma_bind_addr: " + errnoText(error) +
                              " (no RDMA device has that address? see `rdma link show`)");
        }
        if (auto status = checkDevice(raw, endpoint->device, uri); !status.ok()) {
            return status;
        }
        sockaddr_in bound = endpoint->address;
        bound.sin_port = rdma_get_src_port(raw);
        listener->uri = uriOf(bound);
        if (rdma_listen(raw, 128) != 0) {
            return Status(Errc::io_error,
                          "listen on " + std::string(uri) + ": rdma_listen: " + errnoText(errno));
        }
        m_engine->log(LogLevel::info, "listening on " + listener->uri);
        return std::unique_ptr<Listener>(std::make_unique<VerbsListener>(std::move(listener)));
    }

    Result<ConnectionPtr> connect(std::string_view uri, Handler &handler, void *context) override
    {
        auto endpoint = parseUri(uri);
        if (!endpoint) {
            return endpoint.status();
        }
        const std::string peer = uriOf(endpoint->address);
        const std::string what = "connect to " + peer;
        const Deadline deadline = Clock::now() + m_engine->options().connectTimeout;
        // A private channel for the handshake; the id moves to the transport's channel after.
        EventChannel channel(rdma_create_event_channel());
        if (!channel) {
            return Status(Errc::io_error,
                          what + ": rdma_create_event_channel: " + errnoText(errno));
        }
        const int flags = fcntl(channel->fd, F_GETFL);
        fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK);
        rdma_cm_id *raw = nullptr;
        if (rdma_create_id(channel.get(), &raw, nullptr, RDMA_PS_TCP) != 0) {
            return Status(Errc::io_error, what + ": rdma_create_id: " + errnoText(errno));
        }
        CmId id(raw);
        if (rdma_resolve_addr(raw, nullptr, reinterpret_cast<sockaddr *>(&endpoint->address),
                              std::max(1, remainingMs(deadline))) != 0) {
            return Status(Errc::unavailable, what + ": rdma_resolve_addr: " + errnoText(errno));
        }
        if (auto status = expectEvent(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED, deadline,
                                      what + ": resolving the address");
            !status.ok()) {
            return status;
        }
        if (auto status = checkDevice(raw, endpoint->device, uri); !status.ok()) {
            return status;
        }
        if (rdma_resolve_route(raw, std::max(1, remainingMs(deadline))) != 0) {
            return Status(Errc::unavailable, what + ": rdma_resolve_route: " + errnoText(errno));
        }
        if (auto status = expectEvent(channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED, deadline,
                                      what + ": resolving the route");
            !status.ok()) {
            return status;
        }
        Device *device = m_engine->deviceOf(raw->verbs);
        if (device == nullptr) {
            return Status(Errc::internal, what + ": rdmacm chose a device this transport did "
                                                 "not open");
        }
        IoThread &thread = m_engine->pickThread();
        auto connection =
            std::make_shared<VerbsConnection>(m_engine, thread, *device, handler, peer, false);
        const Limits &own = m_engine->options().proposed;
        if (auto status = connection->create(std::move(id), own); !status.ok()) {
            return status.withContext(what);
        }
        const Hello hello = helloOf(own);
        rdma_conn_param param{};
        param.private_data = &hello;
        param.private_data_len = sizeof(hello);
        param.responder_resources = connection->responderResources();
        param.initiator_depth = connection->initiatorDepth();
        param.retry_count = kRdmaRetryCount;
        param.rnr_retry_count = kRnrRetryCount;
        if (rdma_connect(raw, &param) != 0) {
            return Status(Errc::unavailable, what + ": rdma_connect: " + errnoText(errno));
        }
        auto answer = awaitEvent(channel.get(), deadline, what);
        if (!answer) {
            return answer.status();
        }
        const rdma_cm_event &event = **answer;
        if (event.event == RDMA_CM_EVENT_REJECTED) {
            return Status(Errc::unavailable, what + ": " + rejectText(event));
        }
        if (event.event != RDMA_CM_EVENT_ESTABLISHED) {
            return Status(Errc::unavailable, what + ": " + rdma_event_str(event.event) +
                                                 " (status " + std::to_string(event.status) + ")");
        }
        auto agreed = limitsOf(event.param.conn.private_data, event.param.conn.private_data_len);
        answer->reset();
        if (!agreed || !kit::fitsWithin(*agreed, own)) {
            return Status(Errc::protocol_error, what + ": peer answered bad limits");
        }
        connection->establish(*agreed);
        connection->setContext(context);
        // Announced before its id reaches the CM thread: a disconnect from then on is reported.
        connection->setAnnounced(true);
        raw->context = static_cast<CmEndpoint *>(connection.get());
        if (auto status = thread.adopt(connection); !status.ok()) {
            return status;
        }
        if (rdma_migrate_id(raw, m_engine->channel()) != 0) {
            const int error = errno;
            connection->setAnnounced(false); // never handed to the host
            connection->requestTeardown({Errc::io_error, "rdma_migrate_id failed"});
            return Status(Errc::io_error, what + ": rdma_migrate_id: " + errnoText(error));
        }
        if (!thread.post([connection] { connection->startPolling(); })) {
            return Status(Errc::unavailable, "verbs transport is shutting down");
        }
        m_engine->log(LogLevel::debug, "connected to " + peer + " over " + device->name);
        return ConnectionPtr(connection);
    }

    Result<MemoryRegion> registerMemory(void *base, std::size_t length) override
    {
        return m_engine->regions().add(base, length);
    }
    void deregisterMemory(const MemoryRegion &region) noexcept override
    {
        m_engine->regions().remove(region);
    }

private:
    // verbs://device/host:port: the address must be on that device.
    static Status checkDevice(rdma_cm_id *id, const std::string &wanted, std::string_view uri)
    {
        if (wanted.empty()) {
            return {};
        }
        const char *actual = id->verbs != nullptr ? ibv_get_device_name(id->verbs->device)
                                                  : "(no device: a wildcard address)";
        if (wanted != actual) {
            return {Errc::invalid_argument,
                    "'" + std::string(uri) + "': the address is on " + actual + ", not " + wanted};
        }
        return {};
    }

    std::shared_ptr<Engine> m_engine;
};

Result<std::unique_ptr<Transport>> createVerbs(const TransportOptions &options)
{
    if (auto status = kit::checkOptions(options, kBounds, "verbs transport"); !status.ok()) {
        return status;
    }
    auto engine = Engine::create(options);
    if (!engine) {
        return engine.status();
    }
    return std::unique_ptr<Transport>(std::make_unique<VerbsTransport>(std::move(engine).value()));
}

const PluginEntry kEntry{kAbiVersion, "verbs",
                         "RDMA verbs: rdmacm, RC queue pairs, SEND/RECV messages with credits, "
                         "bulk by RDMA WRITE/READ",
                         &createVerbs};

} // namespace

// ---- Connection setup and teardown

VerbsConnection::VerbsConnection(std::shared_ptr<Engine> engine, IoThread &thread, Device &device,
                                 Handler &handler, std::string peer, bool accepted)
    : kit::ConnectionBase(handler, std::move(peer)), m_engine(std::move(engine)), m_thread(thread),
      m_device(device), m_accepted(accepted)
{
}

VerbsConnection::~VerbsConnection()
{
    releaseResources();
    for (auto &registration : m_transient) {
        registration.reset();
    }
}

std::uint8_t VerbsConnection::responderResources() const noexcept
{
    return static_cast<std::uint8_t>(std::clamp(m_device.attributes.max_qp_rd_atom, 1, 255));
}

std::uint8_t VerbsConnection::initiatorDepth() const noexcept
{
    return static_cast<std::uint8_t>(std::clamp(m_device.attributes.max_qp_init_rd_atom, 1, 255));
}

Status VerbsConnection::create(CmId id, const Limits &sizing)
{
    m_id = std::move(id);
    m_sizing = sizing;
    const ibv_device_attr &attributes = m_device.attributes;
    const std::uint32_t depth = sizing.queueDepth;
    const std::uint32_t sendDepth = sendQueueDepth(depth);
    const std::uint32_t receiveDepth = receiveQueueDepth(depth);
    if (sendDepth > static_cast<std::uint32_t>(attributes.max_qp_wr) ||
        sendDepth + receiveDepth > static_cast<std::uint32_t>(attributes.max_cqe)) {
        return {Errc::out_of_range, m_device.name + " cannot hold queue depth " +
                                        std::to_string(depth) + " (" + std::to_string(sendDepth) +
                                        " send WRs, device maximum " +
                                        std::to_string(attributes.max_qp_wr) + ")"};
    }
    m_maxSge = static_cast<std::uint32_t>(
        std::max(1, std::min({static_cast<int>(kWantedSge), attributes.max_sge,
                              attributes.max_sge_rd > 0 ? attributes.max_sge_rd : 1})));
    m_slotBytes = kHeaderBytes + sizing.maxMessageSize;

    m_receiveBuffers.resize(std::size_t{receiveDepth} * m_slotBytes);
    m_sendBuffers.resize(std::size_t{depth + kControlCredits} * m_slotBytes);
    m_table.resize(std::size_t{depth} * kExposureEntryBytes);
    m_lists.resize(std::size_t{depth} * kExposureEntryBytes);
    m_pieces.resize(std::size_t{2} * depth * kMaxBulkSegments);
    m_transient.resize(std::size_t{2} * depth * kMaxBulkSegments);
    m_ring.resize(sendDepth);
    m_ops.resize(depth);
    m_exposures.resize(depth);
    for (std::uint32_t i = 0; i < depth; ++i) {
        m_ops[i].local = &m_pieces[std::size_t{i} * kMaxBulkSegments];
        m_ops[i].transient.items = &m_transient[std::size_t{i} * kMaxBulkSegments];
        m_exposures[i].value.pieces = &m_pieces[std::size_t{depth + i} * kMaxBulkSegments];
        m_exposures[i].value.transient.items =
            &m_transient[std::size_t{depth + i} * kMaxBulkSegments];
    }
    m_bulkQueue.resize(depth);
    m_bulkWrList.resize(kBulkBatch);
    m_bulkSges.resize(std::size_t{kBulkBatch} * m_maxSge);
    m_done.reserve(depth);
    m_reporting.reserve(depth);
    m_receiveWrs.resize(receiveDepth);
    m_receiveSges.resize(receiveDepth);
    m_repost.reserve(receiveDepth);

    ibv_pd *pd = m_device.pd.get();
    const auto registration = [&](std::vector<std::byte> &buffer, int access,
                                  MemoryRegistration &out) -> Status {
        out.reset(ibv_reg_mr(pd, buffer.data(), buffer.size(), access));
        if (!out) {
            return {Errc::resource_exhausted, "ibv_reg_mr of " + std::to_string(buffer.size()) +
                                                  " connection bytes: " + errnoText(errno) +
                                                  " (locked-memory limit? see ulimit -l)"};
        }
        return {};
    };
    for (auto status : {registration(m_receiveBuffers, IBV_ACCESS_LOCAL_WRITE, m_receiveMr),
                        registration(m_sendBuffers, 0, m_sendMr),
                        registration(m_table, IBV_ACCESS_REMOTE_READ, m_tableMr),
                        registration(m_lists, IBV_ACCESS_LOCAL_WRITE, m_listsMr)}) {
        if (!status.ok()) {
            return status;
        }
    }

    m_cq =
        CompletionQueue(ibv_create_cq(m_device.context, static_cast<int>(sendDepth + receiveDepth),
                                      this, m_thread.completionChannel(m_device.index), 0));
    if (!m_cq) {
        return {Errc::io_error, "ibv_create_cq on " + m_device.name + ": " + errnoText(errno)};
    }
    // Ask for generous inline data; the device may cap it, and may refuse the attribute
    // altogether, so step down until it accepts.
    int lastError = 0;
    for (const std::uint32_t inlineBytes : {kWantedInline, 64u, 0u}) {
        ibv_qp_init_attr attributesQp{};
        attributesQp.send_cq = m_cq.get();
        attributesQp.recv_cq = m_cq.get();
        attributesQp.qp_type = IBV_QPT_RC;
        attributesQp.sq_sig_all = 0;
        attributesQp.cap.max_send_wr = sendDepth;
        attributesQp.cap.max_recv_wr = receiveDepth;
        attributesQp.cap.max_send_sge = m_maxSge;
        attributesQp.cap.max_recv_sge = 1;
        attributesQp.cap.max_inline_data = inlineBytes;
        if (rdma_create_qp(m_id.get(), pd, &attributesQp) == 0) {
            // Read back what the device really gives.
            m_maxInline = attributesQp.cap.max_inline_data;
            m_qp = QueuePair(m_id.get());
            break;
        }
        lastError = errno;
    }
    if (m_qp.get() == nullptr) {
        return {Errc::io_error, "rdma_create_qp on " + m_device.name + ": " + errnoText(lastError)};
    }
    // Every receive posted up front, chained.
    for (std::uint32_t i = 0; i < receiveDepth; ++i) {
        m_receiveSges[i] = {reinterpret_cast<std::uintptr_t>(&m_receiveBuffers[i * m_slotBytes]),
                            static_cast<std::uint32_t>(m_slotBytes), m_receiveMr->lkey};
        m_receiveWrs[i] = {};
        m_receiveWrs[i].wr_id = kReceiveBit | i;
        m_receiveWrs[i].sg_list = &m_receiveSges[i];
        m_receiveWrs[i].num_sge = 1;
        m_receiveWrs[i].next = i + 1 < receiveDepth ? &m_receiveWrs[i + 1] : nullptr;
    }
    ibv_recv_wr *bad = nullptr;
    if (ibv_post_recv(m_qp.get(), m_receiveWrs.data(), &bad) != 0) {
        return {Errc::io_error, "ibv_post_recv: " + errnoText(errno)};
    }
    return {};
}

void VerbsConnection::establish(const Limits &agreed)
{
    std::lock_guard lock(m_mutex);
    m_limits = agreed;
    const std::uint32_t depth = agreed.queueDepth;
    m_dataCredits = depth;
    m_controlCredits = kControlCredits;
    m_creditThreshold = std::max<std::uint32_t>(1, depth / kCreditReturnDivisor);
    // Fewer unsignalled sends than send buffers, so a covering signalled send always comes.
    m_signalInterval = std::min(kSignalEvery, depth);
    m_messageWrCapacity = depth + kControlCredits + kSignalEvery;
    for (std::uint32_t i = depth; i-- > 0;) {
        m_freeSendSlots.push_back(i);
        m_freeOps.push_back(i);
    }
    for (std::uint32_t i = kControlCredits; i-- > 0;) {
        m_freeControlSlots.push_back(m_sizing.queueDepth + i);
    }
    m_state = State::established;
    m_connected.store(true);
}

void VerbsConnection::onCmEvent(rdma_cm_event &event) noexcept
{
    const auto self = weak_from_this().lock();
    if (!self) {
        return; // being destroyed: its id goes once this event is acknowledged
    }
    switch (event.event) {
    case RDMA_CM_EVENT_ESTABLISHED:
        if (m_accepted) {
            (void)m_thread.post([self] { self->announce(); });
        }
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
        requestTeardown({Errc::unavailable, "peer " + m_peer + " disconnected"});
        break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
        requestTeardown({Errc::unavailable, "RDMA device " + m_device.name + " removed"});
        break;
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
        requestTeardown({Errc::unavailable,
                         "connection with " + m_peer + " failed: " + rdma_event_str(event.event)});
        break;
    default: break;
    }
}

void VerbsConnection::requestTeardown(Status reason) noexcept
{
    auto self = shared_from_this();
    // If the I/O thread has already stopped, its shutdown tore this connection down.
    (void)m_thread.post([self, reason = std::move(reason)] { self->teardown(reason); });
}

void VerbsConnection::close() noexcept
{
    {
        std::lock_guard lock(m_mutex);
        if (!beginCloseLocked()) {
            return;
        }
    }
    m_space.notify_all();
    requestTeardown({Errc::cancelled, "connection closed locally"});
}

void VerbsConnection::announce() noexcept
{
    {
        std::lock_guard lock(m_mutex);
        if (m_state != State::established) {
            return;
        }
    }
    m_announced = true;
    m_engine->log(LogLevel::debug, "accepted " + m_peer + " over " + m_device.name);
    m_handler.onAccepted(shared_from_this());
    startPolling();
}

void VerbsConnection::startPolling() noexcept
{
    {
        std::lock_guard lock(m_mutex);
        if (m_state == State::closed) {
            return;
        }
    }
    // Armed before the first poll: whatever arrives after the poll raises an event.
    ibv_req_notify_cq(m_cq.get(), 0);
    drain();
}

void VerbsConnection::teardown(const Status &reason) noexcept
{
    std::vector<std::uint64_t> failed;
    {
        std::lock_guard lock(m_mutex);
        if (m_state == State::closed) {
            return;
        }
        m_state = State::closed;
        m_connected.store(false);
        m_closeReason = reason;
        for (auto &op : m_ops) {
            // A `preparing` op belongs to its caller, who sees the close and gives it back.
            if (op.phase != OpPhase::free && op.phase != OpPhase::preparing) {
                failed.push_back(op.tag);
                op.phase = OpPhase::free;
            }
        }
        m_bulkCount = 0;
    }
    m_tornDown = true;
    m_space.notify_all();
    if (m_id && m_qp.get() != nullptr) {
        (void)rdma_disconnect(m_id.get()); // the QP goes to error; the peer hears of it
    }
    const bool local = reason.code() == Errc::cancelled;
    m_engine->log(local ? LogLevel::debug : LogLevel::warning,
                  "connection " + m_peer + " dropped: " + reason.toString());
    for (const auto tag : failed) {
        m_handler.onBulkDone(*this, tag, reason);
    }
    if (m_announced) {
        m_handler.onDisconnected(*this, reason);
    }
    m_thread.retire(this);
}

void VerbsConnection::releaseResources() noexcept
{
    m_qp.reset();
    m_cq.reset();
    m_id.reset();
}

} // namespace lutra::transport::verbs

extern "C" __attribute__((visibility("default"))) const lutra::transport::PluginEntry *
lutra_transport_entry()
{
    return &lutra::transport::verbs::kEntry;
}
