#include "daemon/work_pool.h"

namespace lutra::ctld {

WorkPool::WorkPool(std::size_t threads, std::size_t maxQueued) : m_maxQueued(maxQueued)
{
    for (std::size_t i = 0; i < threads; ++i) {
        m_threads.emplace_back([this] { run(); });
    }
}

WorkPool::~WorkPool()
{
    stop();
}

bool WorkPool::submit(std::function<void()> work)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping || m_queue.size() >= m_maxQueued) {
            return false;
        }
        m_queue.push_back(std::move(work));
    }
    m_ready.notify_one();
    return true;
}

void WorkPool::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_ready.notify_all();
    for (auto &thread : m_threads) {
        if (thread.joinable()) {
            thread.join();
        }
    }
}

void WorkPool::run()
{
    for (;;) {
        std::function<void()> work;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty()) {
                return; // stopping, and everything accepted has run
            }
            work = std::move(m_queue.front());
            m_queue.pop_front();
        }
        work();
    }
}

} // namespace lutra::ctld
