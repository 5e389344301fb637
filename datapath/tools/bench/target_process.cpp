#include "target_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

extern char **environ;

namespace lutra::tools {

namespace {

// TargetProcess::runOnCpus's set: written once before any spawn, read by each spawn.
std::vector<int> &spawnCpus()
{
    static std::vector<int> cpus;
    return cpus;
}

// Reads lines until `done` says so or the deadline passes.
template <typename Done>
Status readLines(int fd, std::chrono::steady_clock::time_point deadline, std::string &pending,
                 Done done)
{
    char buffer[4096];
    for (;;) {
        std::size_t newline;
        while ((newline = pending.find('\n')) != std::string::npos) {
            const std::string line = pending.substr(0, newline);
            pending.erase(0, newline + 1);
            if (done(line)) {
                return {};
            }
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            return {Errc::timeout, "lutra-target did not report its endpoint in time"};
        }
        pollfd pfd{fd, POLLIN, 0};
        const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno != EINTR) {
            return {Errc::io_error, std::string("poll: ") + std::strerror(errno)};
        }
        if (ready <= 0) {
            continue;
        }
        const ssize_t got = ::read(fd, buffer, sizeof buffer);
        if (got <= 0) {
            return {Errc::unavailable, "lutra-target exited before it was ready (see its stderr)"};
        }
        pending.append(buffer, static_cast<std::size_t>(got));
    }
}

std::string wordAfter(const std::string &line, const std::string &marker)
{
    const auto at = line.find(marker);
    if (at == std::string::npos) {
        return {};
    }
    const auto start = at + marker.size();
    const auto end = line.find(' ', start);
    return line.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

} // namespace

std::string TargetProcess::defaultBinary()
{
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    return error ? std::string("lutra-target") : (self.parent_path() / "lutra-target").string();
}

void TargetProcess::runOnCpus(std::vector<int> cpus)
{
    spawnCpus() = std::move(cpus);
}

Result<std::unique_ptr<TargetProcess>> TargetProcess::spawn(Options options)
{
    if (options.binary.empty()) {
        options.binary = defaultBinary();
    }
    std::vector<std::string> args{options.binary, "--name",   options.name,  "--root",
                                  options.root,   "--listen", options.listen};
    if (options.rawBaseline) {
        args.insert(args.end(), {"--raw-baseline", "tcp://127.0.0.1:0"});
    }
    if (options.runDir.empty()) {
        args.emplace_back("--no-control");
    }
    args.insert(args.end(), options.extraArgs.begin(), options.extraArgs.end());
    std::vector<char *> argv;
    for (auto &arg : args) {
        argv.push_back(arg.data());
    }
    argv.push_back(nullptr);

    std::vector<std::string> envStrings;
    for (char **e = environ; *e != nullptr; ++e) {
        if (std::strncmp(*e, "LUTRA_RUN_DIR=", 14) != 0) {
            envStrings.emplace_back(*e);
        }
    }
    if (!options.runDir.empty()) {
        envStrings.push_back("LUTRA_RUN_DIR=" + options.runDir);
    }
    std::vector<char *> envp;
    for (auto &entry : envStrings) {
        envp.push_back(entry.data());
    }
    envp.push_back(nullptr);

    if (::access(options.binary.c_str(), X_OK) != 0) {
        return Status(Errc::not_found,
                      "cannot start " + options.binary + ": " + std::strerror(errno));
    }
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (const int cpu : spawnCpus()) {
        CPU_SET(cpu, &cpus);
    }
    const bool placed = !spawnCpus().empty();
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        return Status(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
    }
    // fork + exec rather than posix_spawn: the child asks to be killed when its parent dies, so
    // a crashed benchmark or test never leaves targets behind holding its output pipes open.
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        ::close(pipeFds[0]);
        ::close(pipeFds[1]);
        return Status(Errc::io_error, std::string("fork: ") + std::strerror(error));
    }
    if (pid == 0) {
        // Only async-signal-safe calls from here to exec.
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigset_t none;
        sigemptyset(&none);
        ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
        ::dup2(pipeFds[1], STDOUT_FILENO);
        if (placed && ::sched_setaffinity(0, sizeof cpus, &cpus) != 0) {
            ::_exit(126);
        }
        ::execve(options.binary.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    std::unique_ptr<TargetProcess> process(new TargetProcess);
    process->m_pid = pid;
    process->m_stdout = pipeFds[0];

    std::string pending;
    const auto deadline = std::chrono::steady_clock::now() + options.startTimeout;
    const Status ready =
        readLines(process->m_stdout, deadline, pending, [&](const std::string &line) {
            if (line.find(" raw baseline on ") != std::string::npos) {
                process->m_rawUri = wordAfter(line, " raw baseline on ");
                return false;
            }
            if (line.find(" listening on ") != std::string::npos) {
                process->m_uri = wordAfter(line, " listening on ");
                process->m_controlSocket = wordAfter(line, " control ");
                return true;
            }
            return false;
        });
    if (!ready) {
        return ready; // the destructor stops the child
    }
    return process;
}

Result<int> stopChild(pid_t &pid, int signal, std::chrono::milliseconds timeout,
                      const std::string &name)
{
    if (pid <= 0) {
        return Status(Errc::failed_precondition, name + " is not running");
    }
    ::kill(pid, signal);
    ::kill(pid, SIGCONT); // a stopped process acts on SIGTERM only once continued
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        int status = 0;
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return Status(Errc::timeout,
                          name + " did not exit within " + std::to_string(timeout.count()) + " ms");
        }
        ::usleep(2000);
    }
}

Result<int> TargetProcess::stop(int signal, std::chrono::milliseconds timeout)
{
    return stopChild(m_pid, signal, timeout, "lutra-target");
}

TargetProcess::~TargetProcess()
{
    if (m_pid > 0 && !stop(SIGTERM).ok()) {
        (void)stop(SIGKILL);
    }
    if (m_stdout >= 0) {
        ::close(m_stdout);
    }
}

Result<std::vector<std::unique_ptr<TargetProcess>>>
spawnTargets(const std::string &dir, unsigned count, const TargetProcess::Options &base)
{
    std::vector<std::unique_ptr<TargetProcess>> targets;
    for (unsigned t = 0; t < count; ++t) {
        TargetProcess::Options options = base;
        options.name = "ost" + std::to_string(t);
        options.root = dir + "/" + options.name;
        std::error_code error;
        std::filesystem::create_directories(options.root, error);
        if (error) {
            return Status(Errc::io_error, "cannot create " + options.root + ": " + error.message());
        }
        auto started = TargetProcess::spawn(options);
        if (!started) {
            return started.status().withContext(options.name);
        }
        targets.push_back(std::move(started).value());
    }
    return targets;
}

Result<TempDir> TempDir::create(const std::string &prefix)
{
    const char *base = std::getenv("TMPDIR");
    std::string pattern =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + "-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
        return Status(Errc::io_error, "mkdtemp " + pattern + ": " + std::strerror(errno));
    }
    return TempDir(pattern);
}

TempDir::TempDir(TempDir &&other) noexcept : m_path(std::exchange(other.m_path, {})) {}

TempDir::~TempDir()
{
    if (!m_path.empty()) {
        std::error_code ignored;
        std::filesystem::remove_all(m_path, ignored);
    }
}

} // namespace lutra::tools
