#include "ib_write_bw.h"

#include "target_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

namespace lutra::tools {

namespace {

using Clock = std::chrono::steady_clock;

// A child with stdout and stderr in `logPath`; -1 when fork fails.
pid_t start(const std::vector<std::string> &argv, const std::string &logPath)
{
    std::vector<char *> args;
    for (const auto &arg : argv) {
        args.push_back(const_cast<char *>(arg.c_str()));
    }
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid == 0) {
        const int log = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (log >= 0) {
            ::dup2(log, STDOUT_FILENO);
            ::dup2(log, STDERR_FILENO);
        }
        ::execvp(args[0], args.data());
        ::_exit(127);
    }
    return pid;
}

// The child's exit code (128 + signal), or nothing while it runs.
std::optional<int> exited(pid_t pid, bool wait)
{
    int status = 0;
    if (::waitpid(pid, &status, wait ? 0 : WNOHANG) != pid) {
        return std::nullopt;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void killAndReap(pid_t pid)
{
    ::kill(pid, SIGKILL);
    exited(pid, true);
}

std::string readLog(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    std::string out = text.str();
    constexpr std::size_t kQuoted = 2000; // the end says why; keep errors readable
    if (out.size() > kQuoted) {
        out = "..." + out.substr(out.size() - kQuoted);
    }
    return out.empty() ? "(no output)" : out;
}

std::string describe(int code)
{
    return code == 127 ? "could not be run (exit 127)"
                       : "exited with status " + std::to_string(code);
}

} // namespace

Result<double> parseIbWriteBwAverage(std::string_view output, std::size_t bytes)
{
    const std::string size = std::to_string(bytes);
    std::optional<double> average;
    std::istringstream lines{std::string(output)};
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::vector<std::string> fields;
        for (std::string word; words >> word;) {
            fields.push_back(word);
        }
        // #bytes #iterations BW-peak BW-average MsgRate
        if (fields.size() < 5 || fields[0] != size) {
            continue;
        }
        double value = 0;
        const auto &text = fields[3];
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (error != std::errc{} || end != text.data() + text.size() || value < 0) {
            return Status(Errc::invalid_argument, "ib_write_bw's result row for " + size +
                                                      " bytes has no BW average: '" + line + "'");
        }
        if (value == 0) {
            return Status(Errc::out_of_range,
                          "ib_write_bw measured 0 MB/s for " + size + " bytes: '" + line + "'");
        }
        average = value;
    }
    if (!average) {
        return Status(Errc::invalid_argument,
                      "ib_write_bw printed no result row for " + size + " bytes");
    }
    return *average;
}

namespace {

Result<double> runIbWriteBw(const IbWriteBwOptions &options)
{
    auto dir = TempDir::create("lutra-bench-ib-write-bw");
    if (!dir) {
        return dir.status();
    }
    std::vector<std::string> common{options.binary};
    if (!options.device.empty()) {
        common.insert(common.end(), {"-d", options.device});
    }
    if (options.gidIndex >= 0) {
        common.insert(common.end(), {"-x", std::to_string(options.gidIndex)});
    }
    common.insert(common.end(), {"-F", "-s", std::to_string(options.bytes), "-n",
                                 std::to_string(options.iterations)});
    if (options.qps > 1) {
        common.insert(common.end(), {"-q", std::to_string(options.qps)});
    }
    auto clientArgs = common;
    clientArgs.push_back(options.address);
    const std::string serverLog = dir->path() + "/server.log";
    const std::string clientLog = dir->path() + "/client.log";
    const std::string what =
        options.binary + (options.device.empty() ? "" : " on " + options.device);

    const pid_t server = start(common, serverLog);
    if (server < 0) {
        return Status(Errc::io_error, "cannot fork " + options.binary + " (server)");
    }
    const auto until = Clock::now() + options.timeout;
    for (;;) {
        if (auto code = exited(server, false)) {
            return Status(Errc::unavailable, what + " (server) " + describe(*code) +
                                                 " before a client ran: " + readLog(serverLog));
        }
        const pid_t client = start(clientArgs, clientLog);
        if (client < 0) {
            killAndReap(server);
            return Status(Errc::io_error, "cannot fork " + options.binary + " (client)");
        }
        std::optional<int> clientCode;
        while (!(clientCode = exited(client, false)) && Clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (!clientCode) {
            killAndReap(client);
            killAndReap(server);
            return Status(Errc::timeout, what + " did not finish within " +
                                             std::to_string(options.timeout.count()) +
                                             " s: " + readLog(clientLog));
        }
        if (*clientCode == 0) {
            break;
        }
        // Refused while the server is still starting: try again while it runs.
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (auto serverCode = exited(server, false)) {
            return Status(Errc::unavailable, what + " (server) " + describe(*serverCode) + ": " +
                                                 readLog(serverLog) +
                                                 "; its client said: " + readLog(clientLog));
        }
        if (Clock::now() >= until) {
            killAndReap(server);
            return Status(Errc::unavailable, what + " (client to " + options.address + ") " +
                                                 describe(*clientCode) + ": " + readLog(clientLog));
        }
    }
    // The server ends once its client is done.
    std::optional<int> serverCode;
    while (!(serverCode = exited(server, false)) && Clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!serverCode) {
        killAndReap(server);
    }
    std::ifstream in(clientLog);
    std::stringstream output;
    output << in.rdbuf();
    auto average = parseIbWriteBwAverage(output.str(), options.bytes);
    if (!average) {
        return average.status().withContext(what);
    }
    return average;
}

} // namespace

Result<double> measureIbWriteBw(const IbWriteBwOptions &options)
{
    auto average = runIbWriteBw(options);
    if (!average && average.status().code() == Errc::out_of_range) {
        average = runIbWriteBw(options);
    }
    return average;
}

} // namespace lutra::tools
