#include "core/log.h"
#include "core/params/bind.h"
#include "core/params/value.h"
#include "target/page_residency.h"
#include "target/target_internal.h"

#include <algorithm>

namespace lutra::target {

namespace {

constexpr std::size_t kBusyReplyBytes = 512;

} // namespace

std::string Session::label() const
{
    return (clientName.empty() ? std::string("client") : clientName) + " (id " +
           std::to_string(id) +
           (exportOwner ? ", joined id " + std::to_string(exportOwner->id) : std::string()) + ")";
}

// ---- RequestQueue ------------------------------------------------------------------------------

RequestQueue::RequestQueue(std::size_t slots) : m_slots(slots), m_ring(slots)
{
    m_free.reserve(slots);
    for (std::size_t i = 0; i < slots; ++i) {
        m_slots[i].bytes = std::make_unique<std::byte[]>(protocol::kMaxMessageSize);
        m_free.push_back(static_cast<std::uint32_t>(slots - 1 - i));
    }
}

int RequestQueue::acquire()
{
    std::lock_guard lock(m_mutex);
    if (m_stopping || m_free.empty()) {
        return -1;
    }
    const std::uint32_t index = m_free.back();
    m_free.pop_back();
    return static_cast<int>(index);
}

void RequestQueue::push(std::uint32_t index)
{
    {
        std::lock_guard lock(m_mutex);
        m_ring[(m_head + m_count) % m_ring.size()] = index;
        ++m_count;
    }
    m_ready.notify_one();
}

int RequestQueue::pop()
{
    std::unique_lock lock(m_mutex);
    m_ready.wait(lock, [this] { return m_count > 0 || m_stopping; });
    if (m_count == 0) {
        return -1;
    }
    const std::uint32_t index = m_ring[m_head];
    m_head = (m_head + 1) % m_ring.size();
    --m_count;
    return static_cast<int>(index);
}

void RequestQueue::release(std::uint32_t index)
{
    m_slots[index].session.reset();
    {
        std::lock_guard lock(m_mutex);
        m_free.push_back(index);
    }
    m_released.notify_all();
}

bool RequestQueue::waitIdle(std::chrono::milliseconds timeout)
{
    std::unique_lock lock(m_mutex);
    return m_released.wait_for(lock, timeout, [this] { return m_free.size() == m_slots.size(); });
}

void RequestQueue::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_ready.notify_all();
}

// ---- life cycle --------------------------------------------------------------------------------

TargetServer::Impl::Impl(TargetOptions opts)
    : options(std::move(opts)), category("target." + options.name),
      queue(std::max<std::size_t>(options.requestSlots, 1))
{
    inlineReads.resize(kInlineReads);
    for (std::size_t i = kInlineReads; i > 0; --i) {
        inlineFree.push_back(static_cast<std::uint32_t>(i - 1));
    }
}

Status TargetServer::Impl::publish(params::Registry &registry)
{
    static_assert(params::catalog::maxOf(params::catalog::kObdfilter, "brw_size") ==
                      protocol::kMaxBulkBytes >> 20,
                  "brw_size's catalog maximum is the protocol's largest bulk");
    paramGroup = std::make_unique<params::ParamGroup>(registry);
    params::Binding brw;
    brw.read = [this] { return params::Value(std::int64_t{brwSizeMb.load()}); };
    brw.apply = [this](const params::Value &value) {
        brwSizeMb = static_cast<std::uint32_t>(std::get<std::int64_t>(value));
        return Status{};
    };
    params::Binding zeroCopy;
    zeroCopy.read = [this] { return params::Value(std::int64_t{zeroCopyRead.load() ? 1 : 0}); };
    zeroCopy.apply = [this](const params::Value &value) {
        zeroCopyRead = std::get<std::int64_t>(value) != 0;
        return Status{};
    };
    params::Binding zeroCopyCount;
    zeroCopyCount.read = [this] {
        return params::Value(static_cast<std::int64_t>(zeroCopyReads.load()));
    };
    params::Binding coldCount;
    coldCount.read = [this] {
        return params::Value(static_cast<std::int64_t>(coldZeroCopyReads.load()));
    };
    params::Binding exports;
    exports.read = [this] {
        std::lock_guard lock(sessionsMutex);
        return params::Value(static_cast<std::int64_t>(sessions.size()));
    };
    std::vector<params::BindRow> rows;
    rows.push_back({"brw_size", std::move(brw), {}});
    rows.push_back({"read_zero_copy", std::move(zeroCopy), {}});
    rows.push_back({"zero_copy_reads", std::move(zeroCopyCount), {}});
    rows.push_back({"cold_zero_copy_reads", std::move(coldCount), {}});
    rows.push_back({"num_exports", std::move(exports), {}});
    if (auto status = params::bindGroup(*paramGroup, params::catalog::kObdfilter, options.name,
                                        std::move(rows));
        !status) {
        return status;
    }
    if (auto status = jobStats.publish(*paramGroup, "obdfilter." + options.name + ".job_stats");
        !status) {
        return status;
    }
    if (auto status = commit->publish(*paramGroup); !status) {
        return status;
    }
    return locks->publish(*paramGroup);
}

Result<std::unique_ptr<TargetServer>> TargetServer::start(TargetOptions options,
                                                          transport::Transport &transport,
                                                          params::Registry &registry)
{
    if (!params::isValidName(options.name) || options.name.find('.') != std::string::npos) {
        return Status(Errc::invalid_argument,
                      "target name '" + options.name + "' must be letters, digits, '_' or '-'");
    }
    if (options.serviceThreads == 0 || options.serviceThreads > 256) {
        return Status(Errc::out_of_range, "service threads must be 1..256");
    }
    if (options.brwSizeMb == 0 || options.brwSizeMb > (protocol::kMaxBulkBytes >> 20)) {
        return Status(Errc::out_of_range, "brw size must be 1.." +
                                              std::to_string(protocol::kMaxBulkBytes >> 20) +
                                              " MiB");
    }
    auto impl = std::make_unique<Impl>(std::move(options));
    impl->transport = &transport;

    auto store = ObjectStore::openRoot(impl->options.root);
    if (!store) {
        return store.status();
    }
    impl->store = std::make_unique<ObjectStore>(std::move(store).value());
    auto commit = GroupCommit::open(*impl->store, impl->options.name, impl->options.commitMode);
    if (!commit) {
        return commit.status();
    }
    impl->commit = std::move(commit).value();
    Impl *raw = impl.get();
    impl->locks =
        std::make_unique<LockManager>(impl->options.name, *impl, [raw](std::string_view line) {
            log::warning(raw->category, line);
        });
    if (auto status = impl->publish(registry); !status) {
        return status;
    }

    for (unsigned i = 0; i < impl->options.serviceThreads; ++i) {
        auto worker = std::make_unique<Worker>();
        worker->index = i;
        // Not value-initialised: pages are touched only as far as bulk transfers use them.
        worker->bulk.reset(new std::byte[protocol::kMaxBulkBytes]);
        worker->reply = std::make_unique<std::byte[]>(protocol::kMaxMessageSize);
        worker->crcs.resize(protocol::kMaxBulkPages);
        worker->residency.resize(residencyScratchBytes(protocol::kMaxBulkBytes));
        worker->entries.reserve(ObjectStore::kMaxReaddirEntries);
        impl->workers.push_back(std::move(worker));
    }
    for (auto &worker : impl->workers) {
        Worker *w = worker.get();
        w->thread = std::thread([raw, w] { raw->serve(*w); });
    }

    auto listener = transport.listen(impl->options.listen, *impl);
    if (!listener) {
        std::unique_ptr<TargetServer> cleanup(new TargetServer(std::move(impl)));
        return listener.status().withContext("cannot listen");
    }
    impl->listener = std::move(listener).value();
    log::info(impl->category, "serving " + impl->options.root + " on " + impl->listener->uri() +
                                  " with " + std::to_string(impl->options.serviceThreads) +
                                  " service threads");
    return std::unique_ptr<TargetServer>(new TargetServer(std::move(impl)));
}

TargetServer::TargetServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

TargetServer::~TargetServer()
{
    shutdown();
}

std::string TargetServer::listenUri() const
{
    return m_impl->listener ? m_impl->listener->uri() : std::string();
}

void TargetServer::shutdown()
{
    Impl &impl = *m_impl;
    {
        std::lock_guard lock(impl.shutdownMutex);
        if (impl.shutDown) {
            return;
        }
        impl.shutDown = true;
    }
    impl.listener.reset();  // no new clients
    impl.locks->shutdown(); // wake enqueues waiting on callbacks
    impl.queue.stop();      // workers finish what is queued, then exit
    if (!impl.queue.waitIdle(impl.options.drainTimeout)) {
        // A client that takes none of its data holds its requests' bulk transfers open: the
        // transport fails them once their connections are gone.
        log::warning(impl.category, "requests still in service after " +
                                        std::to_string(impl.options.drainTimeout.count()) +
                                        " ms: closing every connection");
        std::vector<std::shared_ptr<Session>> open;
        {
            std::lock_guard lock(impl.sessionsMutex);
            for (auto &[id, session] : impl.sessions) {
                open.push_back(session);
            }
            for (auto &[id, session] : impl.joinedConnections) {
                open.push_back(session);
            }
        }
        for (auto &session : open) {
            session->connection->close();
        }
    }
    for (auto &worker : impl.workers) {
        if (worker->thread.joinable()) {
            worker->thread.join();
        }
    }
    impl.commit->shutdown(); // everything acknowledged is durable by now; this is belt and braces
    std::vector<std::shared_ptr<Session>> sessions;
    {
        std::lock_guard lock(impl.sessionsMutex);
        for (auto &[id, session] : impl.sessions) {
            sessions.push_back(session);
        }
        for (auto &[id, session] : impl.joinedConnections) {
            sessions.push_back(session);
        }
    }
    for (auto &session : sessions) {
        session->connection->close();
    }
    sessions.clear();
    {
        // The transport calls onDisconnected for each closed connection on its own threads; this
        // object is their handler, so it must not go away before the last of those calls.
        std::unique_lock lock(impl.sessionsMutex);
        if (!impl.sessionsGone.wait_for(lock, std::chrono::seconds(10), [&impl] {
                return impl.sessions.empty() && impl.joinedConnections.empty() &&
                       impl.dropsRunning == 0;
            })) {
            log::error(impl.category,
                       std::to_string(impl.sessions.size() + impl.joinedConnections.size()) +
                           " connections did not report their disconnect");
        }
    }
    for (auto &worker : impl.workers) {
        if (worker->region.id != 0) {
            impl.transport->deregisterMemory(worker->region);
            worker->region = {};
        }
    }
    impl.paramGroup.reset();
    log::info(impl.category, "stopped");
}

// ---- transport callbacks
// -------------------------------------------------------------------------

void TargetServer::Impl::onAccepted(const transport::ConnectionPtr &connection) noexcept
{
    auto session = std::make_shared<Session>();
    session->connection = connection;
    {
        std::lock_guard lock(sessionsMutex);
        session->id = nextClientId++;
        sessions.emplace(session->id, session);
    }
    connection->setContext(session.get());
}

void TargetServer::Impl::onMessage(transport::Connection &connection,
                                   std::span<const std::byte> message) noexcept
{
    auto *session = static_cast<Session *>(connection.context());
    if (session == nullptr) {
        return;
    }
    bool readTallied = false;
    if (serveReadInline(connection, *session, message, readTallied)) {
        return;
    }
    const int index = message.size() <= protocol::kMaxMessageSize ? queue.acquire() : -1;
    if (index >= 0) {
        RequestSlot &slot = queue.slot(static_cast<std::uint32_t>(index));
        std::copy(message.begin(), message.end(), slot.bytes.get());
        slot.length = message.size();
        slot.readTallied = readTallied;
        slot.session = session->shared_from_this();
        queue.push(static_cast<std::uint32_t>(index));
        return;
    }
    // No slot (or shutting down): answer "busy" from the stack without waiting for credit.
    auto header = protocol::decodeHeader(message);
    if (!header || header->isReply()) {
        return;
    }
    protocol::Message reply;
    reply.xid = header->xid;
    reply.version = header->version; // a reply has its request's
    const bool stopping = [this] {
        std::lock_guard lock(shutdownMutex);
        return shutDown;
    }();
    reply.body = protocol::ErrorReply{
        header->opcode, stopping ? Errc::unavailable : Errc::resource_exhausted,
        stopping ? "target is shutting down" : "target is busy: every request slot is in use"};
    std::array<std::byte, kBusyReplyBytes> buffer{};
    if (auto size = protocol::encode(reply, buffer)) {
        (void)connection.send({buffer.data(), *size}, transport::noWait());
    }
}

void TargetServer::Impl::onBulkDone(transport::Connection & /*connection*/, std::uint64_t tag,
                                    const Status &status) noexcept
{
    if (tag >= kInlineTagBase) {
        if (tag - kInlineTagBase < kInlineReads) {
            finishInlineRead(static_cast<std::uint32_t>(tag - kInlineTagBase), status);
        }
        return;
    }
    if (tag >= workers.size()) {
        return;
    }
    Worker &worker = *workers[tag];
    {
        std::lock_guard lock(worker.bulkMutex);
        worker.bulkFinished = true;
        worker.bulkStatus = status;
    }
    worker.bulkDone.notify_one();
}

void TargetServer::Impl::onDisconnected(transport::Connection &connection,
                                        const Status &reason) noexcept
{
    auto *session = static_cast<Session *>(connection.context());
    if (session != nullptr) {
        dropSession(*session, reason);
    }
}

void TargetServer::Impl::dropSession(Session &session, const Status &reason)
{
    // Once its session leaves the maps, shutdown may go on and free this object: the call is
    // counted until its last touch of it, which is the notify under the lock (test_param_bind
    // once met UBSan's "invalid vptr" at a notify after the erase, shutdown having returned).
    {
        std::lock_guard lock(sessionsMutex);
        ++dropsRunning;
    }
    struct Done {
        Impl &impl;
        ~Done()
        {
            std::lock_guard lock(impl.sessionsMutex);
            --impl.dropsRunning;
            impl.sessionsGone.notify_all();
        }
    } done{*this};
    std::shared_ptr<Session> keep;
    std::vector<std::shared_ptr<Session>> joined;
    {
        std::lock_guard lock(sessionsMutex);
        auto &map = session.exportOwner ? joinedConnections : sessions;
        const auto it = map.find(session.id);
        if (it == map.end()) {
            return;
        }
        keep = it->second;
        map.erase(it);
        if (session.exportOwner) {
            std::erase_if(session.exportOwner->joined, [&session](const auto &weak) {
                const auto other = weak.lock();
                return !other || other.get() == &session;
            });
        }
        for (const auto &weak : session.joined) {
            if (auto other = weak.lock()) {
                joined.push_back(std::move(other));
            }
        }
        session.joined.clear();
    }
    if (session.exportOwner) {
        // One of several connections: the export (handles, locks) stays with the client's first.
        if (reason.code() != Errc::cancelled) {
            log::info(category, session.label() + " disconnected: " + reason.message());
        }
        return;
    }
    // The export goes: its other connections cannot use it any more, so they go too.
    for (const auto &other : joined) {
        other->connection->close();
    }
    std::vector<LockHandle> held;
    {
        std::lock_guard lock(session.mutex);
        held.assign(session.locks.begin(), session.locks.end());
        session.locks.clear();
        session.handles.clear();
    }
    for (const LockHandle handle : held) {
        (void)locks->cancel(handle); // may already be gone through eviction
    }
    if (reason.code() != Errc::cancelled) {
        log::info(category, session.label() + " disconnected: " + reason.message());
    }
}

Status TargetServer::Impl::joinExport(Session &session, std::uint64_t cookie,
                                      std::string_view clientName)
{
    std::lock_guard lock(sessionsMutex);
    std::shared_ptr<Session> owner;
    for (const auto &[id, candidate] : sessions) {
        if (candidate->exportCookie == cookie && candidate.get() != &session) {
            owner = candidate;
            break;
        }
    }
    if (!owner) {
        return {Errc::not_found, "no export with that cookie on this target (its client's first "
                                 "connection is gone, or the target restarted)"};
    }
    {
        std::lock_guard ownerLock(owner->mutex);
        if (owner->clientName != clientName) {
            return {Errc::permission_denied, "the export belongs to client '" + owner->clientName +
                                                 "', not '" + std::string(clientName) + "'"};
        }
    }
    const auto it = sessions.find(session.id);
    if (it == sessions.end()) {
        return {Errc::unavailable, "this connection is closing"};
    }
    {
        std::lock_guard sessionLock(session.mutex);
        session.exportOwner = owner;
    }
    owner->joined.push_back(it->second);
    joinedConnections.emplace(session.id, it->second);
    sessions.erase(it);
    return {};
}

std::uint64_t TargetServer::Impl::exportCookieOf(Session &session)
{
    std::lock_guard lock(sessionsMutex);
    while (session.exportCookie == 0) {
        session.exportCookie = cookieSource();
    }
    return session.exportCookie;
}

std::shared_ptr<Session> TargetServer::Impl::findSession(ClientId id)
{
    std::lock_guard lock(sessionsMutex);
    const auto it = sessions.find(id);
    return it == sessions.end() ? nullptr : it->second;
}

// ---- lock callbacks
// ------------------------------------------------------------------------------

void TargetServer::Impl::sendBlockingCallback(ClientId client, LockHandle lock,
                                              std::string_view resource)
{
    auto session = findSession(client);
    if (!session) {
        return; // gone: the enqueue's timeout evicts what is left
    }
    protocol::Message callback;
    callback.xid = nextCallbackXid.fetch_add(1);
    callback.jobId = category;
    callback.body = protocol::BlockingCallbackRequest{lock, protocol::LockMode::pw};
    callback.version = session->version.load();
    std::array<std::byte, kBusyReplyBytes> buffer{};
    auto size = protocol::encode(callback, buffer);
    if (!size) {
        log::error(category, "cannot encode a blocking callback: " + size.status().message());
        return;
    }
    const Status sent = session->connection->send({buffer.data(), *size},
                                                  transport::deadlineIn(std::chrono::seconds(1)));
    if (!sent) {
        log::warning(category, "blocking callback for lock " + std::to_string(lock) + " on " +
                                   std::string(resource) + " to " + session->label() +
                                   " not sent: " + sent.message());
    }
}

void TargetServer::Impl::clientEvicted(ClientId client)
{
    if (auto session = findSession(client)) {
        log::warning(category, "evicting " + session->label());
        session->connection->close();
    }
}

} // namespace lutra::target
