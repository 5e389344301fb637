#include "ctld_process.h"

#include "target_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace lutra::tools {

std::string CtldProcess::siblingBinary(const std::string &name)
{
    std::error_code error;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
    if (error) {
        return name;
    }
    // A build tree keeps every program in one folder; the packages put lutra-ctld in sbin/.
    for (const auto &candidate :
         {self.parent_path() / name, self.parent_path().parent_path() / "sbin" / name}) {
        if (std::filesystem::exists(candidate, error)) {
            return candidate.string();
        }
    }
    return (self.parent_path() / name).string();
}

Result<std::unique_ptr<CtldProcess>> CtldProcess::spawn(const Options &options)
{
    const std::string config = options.runDir + "/../ctld-" + options.node + ".yaml";
    {
        std::ofstream out(config);
        out << "node: " << options.node << "\n"
            << "listen: 127.0.0.1:0\n"
            << "metrics_listen: ''\n"
            << "run_dir: " << options.runDir << "\n"
            << "db: " << options.db << "\n";
        if (!options.tokenFile.empty()) {
            out << "auth:\n  tokens: [{name: bench, token_file: " << options.tokenFile
                << ", role: admin}]\n";
        }
        if (!out) {
            return Status(Errc::io_error, "cannot write " + config);
        }
    }
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        return Status(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
    }
    const std::string binary = siblingBinary("lutra-ctld");
    const pid_t pid = ::fork();
    if (pid < 0) {
        return Status(Errc::io_error, std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        ::dup2(pipeFds[1], STDOUT_FILENO);
        ::execl(binary.c_str(), binary.c_str(), "--config", config.c_str(),
                static_cast<char *>(nullptr));
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    std::unique_ptr<CtldProcess> process(new CtldProcess);
    process->m_pid = pid;
    process->m_stdout = pipeFds[0];
    process->m_socket = options.runDir + "/ctld.sock";
    if (!options.waitForReady) {
        return process;
    }

    // "lutra-ctld: ready node=... grpc=127.0.0.1:PORT unix=..."
    std::string output;
    const auto deadline = std::chrono::steady_clock::now() + options.startTimeout;
    while (output.find('\n', output.find("ready")) == std::string::npos) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd fd{process->m_stdout, POLLIN, 0};
        if (left.count() <= 0 || ::poll(&fd, 1, static_cast<int>(left.count())) <= 0) {
            return Status(Errc::timeout, binary + " did not become ready (is it built?)");
        }
        char buffer[512];
        const auto got = ::read(process->m_stdout, buffer, sizeof buffer);
        if (got <= 0) {
            return Status(Errc::unavailable, binary + " exited before it was ready");
        }
        output.append(buffer, static_cast<std::size_t>(got));
    }
    const auto at = output.find(" grpc=");
    if (at == std::string::npos) {
        return Status(Errc::protocol_error, "unexpected ready line from lutra-ctld: " + output);
    }
    const auto start = at + 6;
    process->m_grpc = output.substr(start, output.find(' ', start) - start);
    return process;
}

Result<int> CtldProcess::stop(int signal, std::chrono::milliseconds timeout)
{
    return stopChild(m_pid, signal, timeout, "lutra-ctld");
}

void CtldProcess::signal(int signal) const noexcept
{
    if (m_pid > 0) {
        ::kill(m_pid, signal);
    }
}

CtldProcess::~CtldProcess()
{
    if (m_pid > 0 && !stop(SIGTERM).ok()) {
        (void)stop(SIGKILL);
    }
    if (m_stdout >= 0) {
        ::close(m_stdout);
    }
}

} // namespace lutra::tools
