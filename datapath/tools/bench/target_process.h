#pragma once
// A lutra-target started as a child process on a directory, as lutra-bench and the end-to-end
// tests use it: a real process, reached over a real transport.

#include <lutra/status.h>

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace lutra::tools {

class TargetProcess {
public:
    struct Options {
        std::string binary; // empty: lutra-target next to the running program
        std::string root;   // backing directory (must exist)
        std::string name = "ost0";
        std::string listen = "tcp://127.0.0.1:0";
        bool rawBaseline = false; // also serve the plain-TCP baseline endpoint
        std::string runDir;       // LUTRA_RUN_DIR for its control socket; empty: --no-control
        std::vector<std::string> extraArgs;
        std::chrono::milliseconds startTimeout{10000};
    };

    // Starts it and waits until it prints where it listens.
    static Result<std::unique_ptr<TargetProcess>> spawn(Options options);
    ~TargetProcess(); // SIGTERM, then SIGKILL if it does not exit within 10 s

    TargetProcess(const TargetProcess &) = delete;
    TargetProcess &operator=(const TargetProcess &) = delete;

    const std::string &uri() const noexcept { return m_uri; }
    const std::string &rawBaselineUri() const noexcept { return m_rawUri; }
    const std::string &controlSocket() const noexcept { return m_controlSocket; }
    pid_t pid() const noexcept { return m_pid; }

    // Sends `signal` and waits up to `timeout` for the exit; returns the exit code (128 + signal
    // number when killed by one).
    Result<int> stop(int signal, std::chrono::milliseconds timeout = std::chrono::seconds(10));

    // The lutra-target installed or built next to the running program.
    static std::string defaultBinary();
    // The CPUs every target spawned from now on runs on (empty: wherever its parent may); set
    // once, before any spawn (lutra-bench --split-cpus).
    static void runOnCpus(std::vector<int> cpus);

private:
    TargetProcess() = default;

    pid_t m_pid = -1;
    int m_stdout = -1;
    std::string m_uri;
    std::string m_rawUri;
    std::string m_controlSocket;
};

// Sends `signal` to the child `pid` (and SIGCONT, so a stopped one acts on it), waits up to
// `timeout` for its exit and reaps it (pid becomes -1); returns the exit code (128 + signal
// number when killed by one). `name` is for the error.
Result<int> stopChild(pid_t &pid, int signal, std::chrono::milliseconds timeout,
                      const std::string &name);

// `count` lutra-targets named ost0, ost1, ... serving <dir>/ost0, <dir>/ost1, ... (created);
// `base` gives everything else (binary, raw baseline, run dir).
Result<std::vector<std::unique_ptr<TargetProcess>>>
spawnTargets(const std::string &dir, unsigned count, const TargetProcess::Options &base);

// A fresh private directory under $TMPDIR (or /tmp), removed with everything in it on
// destruction.
class TempDir {
public:
    static Result<TempDir> create(const std::string &prefix);
    TempDir(TempDir &&other) noexcept;
    TempDir &operator=(TempDir &&) = delete;
    TempDir(const TempDir &) = delete;
    ~TempDir();
    const std::string &path() const noexcept { return m_path; }

private:
    explicit TempDir(std::string path) : m_path(std::move(path)) {}
    std::string m_path;
};

} // namespace lutra::tools
