#pragma once
// Freezing a process for a test step: SIGSTOP, then wait until every thread has stopped.
// kill() only starts the group stop (each thread stops when it next runs), so a thread already
// on its way could still answer an RPC after kill() returned.

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <thread>

namespace lutra::testing {

inline bool allThreadsStopped(pid_t pid)
{
    std::error_code error;
    for (const auto &task :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
        std::ifstream stat(task.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto close = line.rfind(')'); // the name may hold spaces and parentheses
        if (close == std::string::npos || close + 2 >= line.size() || line[close + 2] != 'T') {
            return false;
        }
    }
    return !error;
}

// True once every thread of `pid` is stopped (at most 10 s).
inline bool freeze(pid_t pid)
{
    if (::kill(pid, SIGSTOP) != 0) {
        return false;
    }
    for (int i = 0; i < 10000; ++i) {
        if (allThreadsStopped(pid)) {
            return true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
}

// Freezes a process for the scope of a test step; SIGCONT on the way out, whatever happens.
class Frozen {
public:
    explicit Frozen(pid_t pid) : m_pid(pid) { m_frozen = freeze(pid); }
    ~Frozen() { resume(); }
    Frozen(const Frozen &) = delete;
    Frozen &operator=(const Frozen &) = delete;
    bool frozen() const noexcept { return m_frozen; }
    void resume()
    {
        if (m_pid > 0) {
            ::kill(m_pid, SIGCONT);
            m_pid = -1;
        }
    }

private:
    pid_t m_pid;
    bool m_frozen = false;
};

} // namespace lutra::testing
