#pragma once
// lutra-ctld started as a child process for the control-plane modes (ctl, fanout): a real
// daemon on a private run dir and database.

#include <lutra/status.h>

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>

namespace lutra::tools {

class CtldProcess {
public:
    struct Options {
        std::string node;      // node name
        std::string runDir;    // its run dir (datapath sockets and ctld.sock)
        std::string db;        // its SQLite file
        std::string tokenFile; // an admin token for TCP callers ("" for none)
        std::chrono::milliseconds startTimeout{30000};
        bool waitForReady = true; // false: return once started (to kill it while it starts)
    };

    static Result<std::unique_ptr<CtldProcess>> spawn(const Options &options);
    ~CtldProcess(); // SIGTERM, then SIGKILL after 10 s

    CtldProcess(const CtldProcess &) = delete;
    CtldProcess &operator=(const CtldProcess &) = delete;

    const std::string &grpcAddress() const noexcept { return m_grpc; } // 127.0.0.1:port
    const std::string &socket() const noexcept { return m_socket; }
    pid_t pid() const noexcept { return m_pid; }

    // Sends `signal` and waits up to `timeout` for the exit (the fault soak's kill -9); returns
    // the exit code (128 + signal number when killed by one).
    Result<int> stop(int signal, std::chrono::milliseconds timeout = std::chrono::seconds(10));
    // Sends `signal` without waiting (SIGSTOP / SIGCONT).
    void signal(int signal) const noexcept;

    // lutra-ctld / lutractl built next to the running program, or installed (bin/ or sbin/).
    static std::string siblingBinary(const std::string &name);

private:
    CtldProcess() = default;

    pid_t m_pid = -1;
    int m_stdout = -1;
    std::string m_grpc;
    std::string m_socket;
};

} // namespace lutra::tools
