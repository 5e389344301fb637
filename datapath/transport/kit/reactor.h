#pragma once
// A plugin I/O thread: epoll over the file descriptors of its event sources, an eventfd for
// posted work (level-triggered, read) and a ready list (connections with work to do, e.g. frames
// to write) behind a second eventfd that is edge-triggered and never read. tcp, verbs and
// loopback derive their I/O threads from it and add what they track (connections, listeners).

#include <lutra/status.h>
#include <lutra/transport.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lutra::transport::kit {

// Something with a file descriptor in a reactor's epoll set.
class EventSource {
public:
    virtual ~EventSource() = default;
    virtual void onEvents(std::uint32_t events) noexcept = 0;
};

// Something a reactor calls back on its thread after it was queued with queueReady().
class ReadyItem {
public:
    virtual ~ReadyItem() = default;
    virtual void onReady() noexcept = 0;
};

class Reactor {
public:
    // `owner` names the transport in error texts ("tcp transport") and, by its first word, the
    // thread ("tcp-io"). `tickMs` bounds each sleep
    // (afterBatch() runs at least that often); -1 sleeps until an event.
    Reactor(std::string owner, int tickMs);
    virtual ~Reactor();
    Reactor(const Reactor &) = delete;
    Reactor &operator=(const Reactor &) = delete;

    Status start();
    // Stops the thread after its current batch: onShutdown() runs on it, then it is joined.
    // Derived classes call it in their destructor, while their members are still alive.
    void stop() noexcept;

    // Any thread.
    Status watch(int fd, std::uint32_t events, EventSource *source) noexcept;
    void rewatch(int fd, std::uint32_t events, EventSource *source) noexcept;
    void unwatch(int fd) noexcept;
    // Queues `work` for the thread; false once the thread has stopped.
    [[nodiscard]] bool post(std::function<void()> work);
    // Runs `work` on the thread and waits for it (directly when already on it or stopped).
    void runSync(const std::function<void()> &work);
    // Hot path, any thread, other locks may be held: `item` has work. One eventfd write wakes
    // the thread for every item queued until it runs (none from the thread itself, which
    // flushes the list after each epoll batch). Never allocates once reserveReady() made room.
    void queueReady(std::shared_ptr<ReadyItem> item) noexcept;
    // Room for `count` items on the ready list at once (call as items are adopted).
    void reserveReady(std::size_t count);
    bool onThread() const noexcept { return std::this_thread::get_id() == m_thread.get_id(); }
    const std::string &owner() const noexcept { return m_owner; }

protected:
    // On the thread after every batch of events and ready items (also after a tick).
    virtual void afterBatch() noexcept {}
    // On the thread once it stops: posted work has run; tear down what it tracks.
    virtual void onShutdown() noexcept {}

    // Guards `stopped`, the derived classes' lists, and the posted work; never held while an
    // event source or ready item runs.
    std::mutex m_mutex;
    bool m_stopped = false; // no new work: posting and adopting fail

private:
    void run() noexcept;
    void runPosted() noexcept;
    // Calls every queued ready item; true when more were queued meanwhile.
    bool flushReady() noexcept;

    const std::string m_owner;
    const int m_tickMs;
    int m_epoll = -1;
    int m_wake = -1;      // posted work, level-triggered and read
    int m_readyWake = -1; // the ready list, edge-triggered and never read
    char m_readyTag = 0;  // its epoll data.ptr, an address no EventSource has
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    std::vector<std::function<void()>> m_posted; // guarded by m_mutex

    // Its own mutex: queueReady runs with a connection's lock held, and m_mutex is held while
    // derived classes lock connections, so sharing one would deadlock.
    std::mutex m_readyMutex; // guards the four below; never held while taking another lock
    std::vector<std::shared_ptr<ReadyItem>> m_ready;
    std::size_t m_readyCapacity = 0;
    bool m_wakePending = false;
    bool m_readyStopped = false;
    std::vector<std::shared_ptr<ReadyItem>> m_running; // thread only: the list being flushed
};

} // namespace lutra::transport::kit
