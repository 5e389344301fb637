// The I/O thread every plugin shares: see reactor.h. The ready list is tcp's write list, tuned
// so that a wake-up costs exactly the waker's one eventfd write (plugins/tcp/README.md).
#include "transport/kit/reactor.h"

#include "transport/kit/errno_text.h"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <csignal>
#include <future>

namespace lutra::transport::kit {

namespace {

constexpr int kEpollBatch = 64;

void wake(int fd) noexcept
{
    const std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd, &one, sizeof(one));
}

} // namespace

Reactor::Reactor(std::string owner, int tickMs) : m_owner(std::move(owner)), m_tickMs(tickMs) {}

Reactor::~Reactor()
{
    stop();
    for (const int fd : {m_epoll, m_wake, m_readyWake}) {
        if (fd >= 0) {
            ::close(fd);
        }
    }
}

Status Reactor::start()
{
    m_epoll = epoll_create1(EPOLL_CLOEXEC);
    m_wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    m_readyWake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (m_epoll < 0 || m_wake < 0 || m_readyWake < 0) {
        return {Errc::io_error, m_owner + ": epoll/eventfd: " + errnoText(errno)};
    }
    epoll_event event{};
    event.events = EPOLLIN;
    event.data.ptr = nullptr; // posted work
    epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_wake, &event);
    // Edge-triggered: every write is an event, so the thread never reads it (one syscall per
    // wake-up, the writer's). The counter would need 2^64 - 1 wake-ups to fill.
    event.events = EPOLLIN | EPOLLET;
    event.data.ptr = &m_readyTag;
    epoll_ctl(m_epoll, EPOLL_CTL_ADD, m_readyWake, &event);
    m_thread = std::thread([this] { run(); });
    return {};
}

void Reactor::stop() noexcept
{
    if (m_thread.joinable()) {
        m_stop.store(true);
        wake(m_wake);
        m_thread.join();
    }
}

Status Reactor::watch(int fd, std::uint32_t events, EventSource *source) noexcept
{
    epoll_event event{};
    event.events = events;
    event.data.ptr = source;
    if (epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event) != 0) {
        return {Errc::io_error, m_owner + ": epoll_ctl: " + errnoText(errno)};
    }
    return {};
}

void Reactor::rewatch(int fd, std::uint32_t events, EventSource *source) noexcept
{
    epoll_event event{};
    event.events = events;
    event.data.ptr = source;
    epoll_ctl(m_epoll, EPOLL_CTL_MOD, fd, &event);
}

void Reactor::unwatch(int fd) noexcept
{
    epoll_ctl(m_epoll, EPOLL_CTL_DEL, fd, nullptr);
}

bool Reactor::post(std::function<void()> work)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopped) {
            return false;
        }
        m_posted.push_back(std::move(work));
    }
    wake(m_wake);
    return true;
}

void Reactor::runSync(const std::function<void()> &work)
{
    if (onThread() || !m_thread.joinable()) {
        work();
        return;
    }
    std::promise<void> done;
    auto future = done.get_future();
    const bool posted = post([&work, &done] {
        work();
        done.set_value();
    });
    if (!posted) {
        work(); // the thread has stopped: nothing else touches its objects
        return;
    }
    future.wait();
}

void Reactor::queueReady(std::shared_ptr<ReadyItem> item) noexcept
{
    bool wakeThread = false;
    {
        std::lock_guard lock(m_readyMutex);
        if (m_readyStopped) {
            return;
        }
        m_ready.push_back(std::move(item));
        if (!m_wakePending && !onThread()) {
            m_wakePending = true;
            wakeThread = true;
        }
    }
    if (wakeThread) {
        wake(m_readyWake);
    }
}

void Reactor::reserveReady(std::size_t count)
{
    std::lock_guard lock(m_readyMutex);
    m_readyCapacity = std::max(m_readyCapacity, count);
    m_ready.reserve(m_readyCapacity);
}

bool Reactor::flushReady() noexcept
{
    {
        std::lock_guard lock(m_readyMutex);
        m_running.swap(m_ready);
        m_ready.reserve(m_readyCapacity); // allocates only when items were added
        m_wakePending = false;
    }
    for (const auto &item : m_running) {
        item->onReady();
    }
    m_running.clear();
    std::lock_guard lock(m_readyMutex);
    return !m_ready.empty();
}

void Reactor::runPosted() noexcept
{
    std::vector<std::function<void()>> posted;
    {
        std::lock_guard lock(m_mutex);
        posted.swap(m_posted);
    }
    for (auto &work : posted) {
        work();
    }
}

void Reactor::run() noexcept
{
    // A peer gone mid-sendfile (a zero-copy bulk put) raises SIGPIPE in the sending thread, as
    // sendfile has no MSG_NOSIGNAL, and SIGPIPE's default ends the process (lutra-target): blocked
    // on the I/O thread, the send fails with EPIPE and only that connection is lost.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    // "tcp-io", "verbs-io": what top -H, perf and /proc/<pid>/task/*/comm show for the thread.
    const std::string name = m_owner.substr(0, m_owner.find(' ')) + "-io";
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    std::array<epoll_event, kEpollBatch> events{};
    bool readyLeft = false;
    while (!m_stop.load()) {
        // Ready items left over from the last round (budget spent): look for events, no sleep.
        const int n = epoll_wait(m_epoll, events.data(), kEpollBatch, readyLeft ? 0 : m_tickMs);
        for (int i = 0; i < n; ++i) {
            if (events[i].data.ptr == &m_readyTag) {
                continue; // flushReady below does the work
            }
            if (events[i].data.ptr == nullptr) {
                std::uint64_t count = 0;
                [[maybe_unused]] auto r = ::read(m_wake, &count, sizeof(count));
                runPosted();
                continue;
            }
            static_cast<EventSource *>(events[i].data.ptr)->onEvents(events[i].events);
        }
        // Items queued by other threads (the eventfd woke us) and by this batch's handlers.
        readyLeft = flushReady();
        afterBatch();
    }

    // Shutdown: no new work, posted work runs, then the derived class tears down what it holds.
    {
        std::lock_guard lock(m_mutex);
        m_stopped = true;
    }
    runPosted();
    onShutdown();
    std::lock_guard lock(m_readyMutex);
    m_readyStopped = true;
    m_ready.clear();
}

} // namespace lutra::transport::kit
