// The verbs plugin's threads: the engine that owns them, the I/O threads that sleep on the
// completion channels (no spinning core when idle) and the CM thread that reads rdmacm events.
#include "verbs_internal.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lutra::transport::verbs {

std::string errnoText(int error)
{
    char buffer[128];
    // GNU strerror_r returns the text, which may not be in buffer.
    return strerror_r(error, buffer, sizeof(buffer));
}

namespace {

bool setNonBlocking(int fd)
{
    const int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
}

void wake(int fd) noexcept
{
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd, &one, sizeof(one));
}

} // namespace

// ---- Engine

Result<std::shared_ptr<Engine>> Engine::create(const TransportOptions &options)
{
    auto devices = openDevices();
    if (!devices) {
        return devices.status();
    }
    auto engine = std::make_shared<Engine>(options);
    engine->m_channel.reset(rdma_create_event_channel());
    if (!engine->m_channel) {
        return Status(Errc::unavailable,
                      "verbs transport: rdma_create_event_channel: " + errnoText(errno) +
                          " (is /dev/infiniband/rdma_cm there? `modprobe rdma_ucm`)");
    }
    if (!setNonBlocking(engine->m_channel->fd)) {
        return Status(Errc::io_error, "verbs transport: rdmacm channel: " + errnoText(errno));
    }
    engine->m_devices = std::move(devices).value();
    engine->m_regions = std::make_unique<RegionTable>(engine->m_devices);
    for (std::size_t i = 0; i < options.ioThreads; ++i) {
        engine->m_threads.push_back(std::make_unique<IoThread>());
        if (auto status = engine->m_threads.back()->start(engine->m_devices); !status.ok()) {
            engine->stop();
            return status;
        }
    }
    engine->m_cm = std::make_unique<CmThread>(*engine);
    if (auto status = engine->m_cm->start(); !status.ok()) {
        engine->stop();
        return status;
    }
    std::string names;
    for (const auto &device : engine->m_devices) {
        names += (names.empty() ? "" : ", ") + device->name;
    }
    engine->log(LogLevel::info, "verbs transport on " + names);
    return engine;
}

Engine::~Engine()
{
    stop();
}

void Engine::stop() noexcept
{
    if (m_cm) {
        m_cm->stop();
    }
    for (auto &thread : m_threads) {
        thread->stop();
    }
}

Device *Engine::deviceOf(const ibv_context *context) const noexcept
{
    for (const auto &device : m_devices) {
        if (device->context == context) {
            return device.get();
        }
    }
    return nullptr;
}

IoThread &Engine::pickThread() noexcept
{
    return *m_threads[m_next.fetch_add(1) % m_threads.size()];
}

// ---- I/O threads

IoThread::~IoThread()
{
    stop();
    if (m_epoll >= 0) {
        ::close(m_epoll);
    }
    if (m_wake >= 0) {
        ::close(m_wake);
    }
}

Status IoThread::start(const std::vector<std::unique_ptr<Device>> &devices)
{
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    m_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_epoll < 0 || m_wake < 0) {
        return {Errc::io_error, "verbs transport: epoll/eventfd: " + errnoText(errno)};
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = nullptr; // the wake-up fd
    epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wake, &event);
    for (const auto &device : devices) {
        CompletionChannel channel(ibv_create_comp_channel(device->context));
        if (!channel || !setNonBlocking(channel->fd)) {
            return {Errc::io_error, "verbs transport: ibv_create_comp_channel(" + device->name +
                                        "): " + errnoText(errno)};
        }
        event.data.ptr = channel.get();
        if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, channel->fd, &event) != 0) {
            return {Errc::io_error, "verbs transport: epoll_ctl: " + errnoText(errno)};
        }
        m_channels.push_back(std::move(channel));
    }
    m_thread = std::thread([this] { run(); });
    return {};
}

void IoThread::stop() noexcept
{
    if (m_thread.joinable()) {
        m_stop.store(true);
        wake(m_wake);
        m_thread.join();
    }
}

Status IoThread::adopt(const std::shared_ptr<VerbsConnection> &connection)
{
    std::lock_guard lock(m_mutex);
    if (m_stopped) {
        return {Errc::unavailable, "verbs transport is shutting down"};
    }
    m_connections.push_back(connection);
    return {};
}

bool IoThread::post(std::function<void()> work)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopped) {
            return false;
        }
        m_commands.push_back(std::move(work));
    }
    wake(m_wake);
    return true;
}

void IoThread::retire(VerbsConnection *connection) noexcept
{
    std::lock_guard lock(m_mutex);
    const auto it = std::find_if(m_connections.begin(), m_connections.end(),
                                 [connection](const auto &c) { return c.get() == connection; });
    if (it != m_connections.end()) {
        m_retired.push_back(std::move(*it));
        m_connections.erase(it);
    }
}

void IoThread::runCommands() noexcept
{
    std::vector<std::function<void()>> commands;
    {
        std::lock_guard lock(m_mutex);
        commands.swap(m_commands);
    }
    for (auto &command : commands) {
        command();
    }
}

void IoThread::drainChannel(ibv_comp_channel *channel) noexcept
{
    ibv_cq *cq = nullptr;
    void *context = nullptr;
    // The fd is nonblocking: this stops with EAGAIN once every event is taken.
    while (ibv_get_cq_event(channel, &cq, &context) == 0) {
        // The CQ exists, so its connection is still held here (resources go after the batch).
        static_cast<VerbsConnection *>(context)->onCompletionEvent();
    }
}

// Resources of connections torn down during a batch go after it, so that no later event of the
// same batch sees a destroyed CQ.
void IoThread::releaseRetired() noexcept
{
    std::vector<std::shared_ptr<VerbsConnection>> retired;
    {
        std::lock_guard lock(m_mutex);
        retired.swap(m_retired);
    }
    for (const auto &connection : retired) {
        connection->releaseResources();
    }
}

void IoThread::run() noexcept
{
    std::array<epoll_event, kEpollBatch> events{};
    while (!m_stop.load()) {
        const int n = epoll_wait(m_epoll, events.data(), kEpollBatch, -1);
        for (int i = 0; i < n; ++i) {
            if (events[i].data.ptr == nullptr) {
                std::uint64_t count = 0;
                [[maybe_unused]] auto r = ::read(m_wake, &count, sizeof(count));
                runCommands();
                continue;
            }
            drainChannel(static_cast<ibv_comp_channel *>(events[i].data.ptr));
        }
        releaseRetired();
    }

    // Shutdown: no new work, then every connection is told and closed.
    std::vector<std::shared_ptr<VerbsConnection>> connections;
    {
        std::lock_guard lock(m_mutex);
        m_stopped = true;
        connections = m_connections;
    }
    runCommands();
    for (const auto &connection : connections) {
        connection->teardown({Errc::cancelled, "transport shutting down"});
    }
    releaseRetired();
    std::lock_guard lock(m_mutex);
    m_connections.clear();
}

// ---- CM thread

CmThread::~CmThread()
{
    stop();
    if (m_wake >= 0) {
        ::close(m_wake);
    }
}

Status CmThread::start()
{
    m_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_wake < 0) {
        return {Errc::io_error, "verbs transport: eventfd: " + errnoText(errno)};
    }
    m_thread = std::thread([this] { run(); });
    return {};
}

void CmThread::stop() noexcept
{
    if (m_thread.joinable()) {
        m_stop.store(true);
        wake(m_wake);
        m_thread.join();
    }
}

void CmThread::run() noexcept
{
    rdma_event_channel *channel = m_engine.channel();
    std::array<pollfd, 2> fds{pollfd{channel->fd, POLLIN, 0}, pollfd{m_wake, POLLIN, 0}};
    while (!m_stop.load()) {
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            continue;
        }
        rdma_cm_event *event = nullptr;
        while (!m_stop.load() && rdma_get_cm_event(channel, &event) == 0) {
            // A connect request names the listener; everything else the connection. Either
            // stays alive until the event is acknowledged (rdma_destroy_id waits for that).
            void *context = event->event == RDMA_CM_EVENT_CONNECT_REQUEST
                                ? event->listen_id->context
                                : event->id->context;
            if (context != nullptr) {
                static_cast<CmEndpoint *>(context)->onCmEvent(*event);
            }
            rdma_ack_cm_event(event);
        }
    }
}

} // namespace lutra::transport::verbs
