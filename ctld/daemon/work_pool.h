#pragma once
// A few threads for blocking work handed over by gRPC reactions (calls to datapath processes,
// SQLite): reactions return at once and Finish when the work is done.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lutra::ctld {

class WorkPool {
public:
    WorkPool(std::size_t threads, std::size_t maxQueued);
    ~WorkPool(); // runs what is queued, then joins
    WorkPool(const WorkPool &) = delete;
    WorkPool &operator=(const WorkPool &) = delete;

    // false when the queue is full or the pool is stopping: the caller answers "busy".
    bool submit(std::function<void()> work);
    void stop();

private:
    void run();

    std::size_t m_maxQueued;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<std::function<void()>> m_queue;
    bool m_stopping = false;
    std::vector<std::thread> m_threads;
};

} // namespace lutra::ctld
