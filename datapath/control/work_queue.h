#pragma once
// One worker thread with a bounded queue: the control channel's blocking work (flushes,
// parameter batches whose actions write back and cancel locks) runs here, never on a gRPC
// callback thread, which must not block.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace lutra::control {

class WorkQueue {
public:
    // A task is told whether it runs (true) or is dropped at stop() (false): either way it must
    // finish its call.
    using Task = std::function<void(bool run)>;
    enum class Push { queued, full, stopping };

    // `name` names the thread (at most 15 characters, as top and gdb show it).
    WorkQueue(std::string name, std::size_t limit);
    ~WorkQueue(); // stop(), then joins the thread
    WorkQueue(const WorkQueue &) = delete;
    WorkQueue &operator=(const WorkQueue &) = delete;

    Push push(Task task);
    // Takes no more work; what is queued is dropped (told run = false), the running task ends.
    void stop();

private:
    void loop();

    std::string m_name;
    std::size_t m_limit;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<Task> m_queue;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace lutra::control
