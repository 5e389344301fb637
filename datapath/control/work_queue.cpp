#include "control/work_queue.h"

#include <pthread.h>

namespace lutra::control {

WorkQueue::WorkQueue(std::string name, std::size_t limit)
    : m_name(std::move(name)), m_limit(limit), m_thread([this] { loop(); })
{
}

WorkQueue::~WorkQueue()
{
    stop();
    m_thread.join();
}

WorkQueue::Push WorkQueue::push(Task task)
{
    {
        std::lock_guard lock(m_mutex);
        if (m_stopping) {
            return Push::stopping;
        }
        if (m_queue.size() >= m_limit) {
            return Push::full;
        }
        m_queue.push_back(std::move(task));
    }
    m_ready.notify_one();
    return Push::queued;
}

void WorkQueue::stop()
{
    std::deque<Task> dropped;
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        dropped.swap(m_queue);
    }
    m_ready.notify_all();
    for (auto &task : dropped) {
        task(false);
    }
}

void WorkQueue::loop()
{
    ::pthread_setname_np(::pthread_self(), m_name.substr(0, 15).c_str());
    for (;;) {
        Task task;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
            if (m_queue.empty()) {
                return;
            }
            task = std::move(m_queue.front());
            m_queue.pop_front();
        }
        task(true);
    }
}

} // namespace lutra::control
