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

namespace {

bool setNonBlocking(int fd)
{
    const int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0;
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
}

Status IoThread::start(const std::vector<std::unique_ptr<Device>> &devices)
{
    if (auto status = kit::Reactor::start(); !status.ok()) {
        return status;
    }
    // Every source is in place before one is watched: epoll holds their addresses.
    m_channels.resize(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
        const auto &device = devices[i];
        m_channels[i].channel.reset(ibv_create_comp_channel(device->context));
        if (!m_channels[i].channel || !setNonBlocking(m_channels[i].channel->fd)) {
            return {Errc::io_error, "verbs transport: ibv_create_comp_channel(" + device->name +
                                        "): " + errnoText(errno)};
        }
    }
    for (auto &source : m_channels) {
        if (auto status = watch(source.channel->fd, EPOLLIN, &source); !status.ok()) {
            return status;
        }
    }
    return {};
}

void IoThread::ChannelSource::onEvents(std::uint32_t) noexcept
{
    ibv_cq *cq = nullptr;
    void *context = nullptr;
    // The fd is nonblocking: this stops with EAGAIN once every event is taken.
    while (ibv_get_cq_event(channel.get(), &cq, &context) == 0) {
        // The CQ exists, so its connection is still held here (resources go after the batch).
        static_cast<VerbsConnection *>(context)->onCompletionEvent();
    }
}

// Resources of connections torn down during a batch go after it, so that no later event of the
// same batch sees a destroyed CQ.
void IoThread::afterBatch() noexcept
{
    for (const auto &connection : takeRetired()) {
        connection->releaseResources();
    }
}

// ---- CM thread

CmThread::~CmThread()
{
    stop();
}

Status CmThread::start()
{
    if (auto status = kit::Reactor::start(); !status.ok()) {
        return status;
    }
    return watch(m_engine.channel()->fd, EPOLLIN, this);
}

void CmThread::onEvents(std::uint32_t) noexcept
{
    rdma_event_channel *channel = m_engine.channel();
    rdma_cm_event *event = nullptr;
    // The channel is nonblocking: this stops with EAGAIN once every event is taken.
    while (rdma_get_cm_event(channel, &event) == 0) {
        // A connect request names the listener; everything else the connection. Either stays
        // alive until the event is acknowledged (rdma_destroy_id waits for that).
        void *context = event->event == RDMA_CM_EVENT_CONNECT_REQUEST ? event->listen_id->context
                                                                      : event->id->context;
        if (context != nullptr) {
            static_cast<CmEndpoint *>(context)->onCmEvent(*event);
        }
        rdma_ack_cm_event(event);
    }
}

} // namespace lutra::transport::verbs
