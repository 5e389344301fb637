#include "soak_support.h"

#include "lutra/datapath/v1/control.grpc.pb.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace lutra::tools {

Result<ProcessOutput> runCaptured(const std::vector<std::string> &argv,
                                  std::chrono::milliseconds timeout)
{
    std::vector<char *> args;
    for (const auto &arg : argv) {
        args.push_back(const_cast<char *>(arg.c_str()));
    }
    args.push_back(nullptr);
    int pipeFds[2];
    if (::pipe2(pipeFds, O_CLOEXEC) != 0) {
        return Status(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
    }
    const pid_t pid = ::fork();
    if (pid < 0) {
        return Status(Errc::io_error, std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(pipeFds[1], STDOUT_FILENO);
        ::dup2(null, STDERR_FILENO);
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    ::close(pipeFds[1]);
    ProcessOutput result;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    bool killed = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 && !killed) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
        pollfd fd{pipeFds[0], POLLIN, 0};
        const int ready = ::poll(&fd, 1, killed ? 1000 : static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            if (killed) {
                break;
            }
            continue;
        }
        char buffer[4096];
        const auto got = ::read(pipeFds[0], buffer, sizeof buffer);
        if (got <= 0) {
            break;
        }
        result.out.append(buffer, static_cast<std::size_t>(got));
    }
    ::close(pipeFds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (killed) {
        return Status(Errc::timeout, argv[0] + " did not finish within " +
                                         std::to_string(timeout.count()) + " ms");
    }
    return result;
}

Result<std::map<std::string, std::string>>
readParamsDirect(const std::string &socket, const std::vector<std::string> &patterns)
{
    auto stub = datapath::v1::DatapathControl::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
    datapath::v1::GetParamsRequest request;
    for (const auto &pattern : patterns) {
        request.add_patterns(pattern);
    }
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    datapath::v1::GetParamsReply reply;
    const auto status = stub->GetParams(&context, request, &reply);
    if (!status.ok()) {
        return Status(Errc::unavailable, socket + ": " + status.error_message());
    }
    if (reply.errors_size() > 0) {
        return Status(Errc::not_found, socket + ": " + reply.errors(0).message());
    }
    std::map<std::string, std::string> values;
    for (const auto &value : reply.values()) {
        values[value.name()] = value.value();
    }
    return values;
}

bool waitUntil(std::chrono::milliseconds timeout, const std::function<bool()> &done)
{
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (done()) {
            return true;
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

} // namespace lutra::tools
