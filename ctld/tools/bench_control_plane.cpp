#include "bench_control_plane.h"

#include "ctld_process.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"
#include "lutra/datapath/v1/control.grpc.pb.h"
#include "target_process.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace lutra::tools {

namespace {

using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> values, double fraction)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1));
    return values[index];
}

// n, p50, max, and a tail percentile only when the sample has values above it (p90 from 10
// samples, p99 from 100): over fewer, a "p99" is just the max (or less) under another name.
nlohmann::json latencySummary(const std::vector<double> &ms)
{
    nlohmann::json summary = {
        {"n", ms.size()},
        {"p50_ms", rounded(percentile(ms, 0.5))},
        {"max_ms", rounded(ms.empty() ? 0 : *std::max_element(ms.begin(), ms.end()))}};
    if (ms.size() >= 10) {
        summary["p90_ms"] = rounded(percentile(ms, 0.9));
    }
    if (ms.size() >= 100) {
        summary["p99_ms"] = rounded(percentile(ms, 0.99));
    }
    return summary;
}

std::chrono::system_clock::time_point deadline()
{
    return std::chrono::system_clock::now() + std::chrono::seconds(30);
}

// Waits until ctld has connected to `count` datapath processes.
Status waitForInstances(ctl::v1::Ctl::Stub &stub, std::size_t count, const std::string &token)
{
    const auto until = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < until) {
        grpc::ClientContext context;
        context.set_deadline(deadline());
        if (!token.empty()) {
            context.AddMetadata("authorization", "Bearer " + token);
        }
        ctl::v1::ListInstancesReply reply;
        if (stub.ListInstances(&context, {}, &reply).ok()) {
            const auto connected = std::count_if(reply.instances().begin(), reply.instances().end(),
                                                 [](const auto &i) { return i.connected(); });
            if (static_cast<std::size_t>(connected) >= count) {
                return {};
            }
        }
        ::usleep(50'000);
    }
    return {Errc::timeout, "lutra-ctld did not find the datapath processes in time"};
}

Result<int> runAndWait(const std::vector<std::string> &argv)
{
    std::vector<char *> args;
    for (const auto &arg : argv) {
        args.push_back(const_cast<char *>(arg.c_str()));
    }
    args.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        return Status(Errc::io_error, "fork failed");
    }
    if (pid == 0) {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDOUT_FILENO);
        ::execv(args[0], args.data());
        ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

} // namespace

Result<Report> runCtlBench(const BenchOptions & /*options*/, const CtlBenchOptions &ctl)
{
    auto dir = TempDir::create("lutra-ctl-bench-ctl");
    if (!dir) {
        return dir.status();
    }
    const std::string runDir = dir->path() + "/run";
    std::filesystem::create_directories(runDir);
    TargetProcess::Options targetOptions;
    targetOptions.runDir = runDir;
    auto targets = spawnTargets(dir->path(), 1, targetOptions);
    if (!targets) {
        return targets.status();
    }
    auto ctld = CtldProcess::spawn({"bench", runDir, dir->path() + "/ctld.db", {}});
    if (!ctld) {
        return ctld.status();
    }
    auto stub = ctl::v1::Ctl::NewStub(
        grpc::CreateChannel("unix:" + (*ctld)->socket(), grpc::InsecureChannelCredentials()));
    if (auto ready = waitForInstances(*stub, 1, {}); !ready) {
        return ready;
    }
    auto direct = datapath::v1::DatapathControl::NewStub(grpc::CreateChannel(
        "unix:" + (*targets)[0]->controlSocket(), grpc::InsecureChannelCredentials()));

    // Alternating values, so every call really changes the parameter (and is journaled).
    const std::string name = "obdfilter.ost0.brw_size";
    std::vector<double> viaCtld;
    std::vector<double> viaSocket;
    viaCtld.reserve(ctl.calls);
    viaSocket.reserve(ctl.calls);
    const auto started = Clock::now();
    for (unsigned i = 0; i < ctl.calls + 10; ++i) {
        ctl::v1::SetParamsRequest request;
        auto *assignment = request.add_assignments();
        assignment->set_pattern(name);
        assignment->set_value(i % 2 == 0 ? "8" : "4");
        grpc::ClientContext context;
        context.set_deadline(deadline());
        ctl::v1::SetParamsReply reply;
        const auto begin = Clock::now();
        const auto status = stub->SetParams(&context, request, &reply);
        const auto took = std::chrono::duration<double, std::micro>(Clock::now() - begin).count();
        if (!status.ok() || !reply.applied()) {
            return Status(Errc::internal,
                          "SetParams through lutra-ctld failed: " + status.error_message());
        }
        if (i >= 10) { // the first calls warm up channels and caches
            viaCtld.push_back(took);
        }
    }
    const double ctldSeconds = std::chrono::duration<double>(Clock::now() - started).count();
    for (unsigned i = 0; i < ctl.calls + 10; ++i) {
        datapath::v1::SetParamsRequest request;
        auto *assignment = request.add_assignments();
        assignment->set_pattern(name);
        assignment->set_value(i % 2 == 0 ? "8" : "4");
        request.set_principal("lutra-ctl-bench");
        grpc::ClientContext context;
        context.set_deadline(deadline());
        datapath::v1::SetParamsReply reply;
        const auto begin = Clock::now();
        const auto status = direct->SetParams(&context, request, &reply);
        const auto took = std::chrono::duration<double, std::micro>(Clock::now() - begin).count();
        if (!status.ok() || !reply.result().applied()) {
            return Status(Errc::internal,
                          "SetParams to the target failed: " + status.error_message());
        }
        if (i >= 10) {
            viaSocket.push_back(took);
        }
    }

    Report report;
    report.mode = "ctl";
    report.params = {{"calls", ctl.calls}, {"parameter", name}};
    const double p50 = percentile(viaCtld, 0.5);
    const double directP50 = percentile(viaSocket, 0.5);
    report.results = {{"ctld_set_p50_us", rounded(p50)},
                      {"ctld_set_p99_us", rounded(percentile(viaCtld, 0.99))},
                      {"ctld_sets_per_s", rounded((ctl.calls + 10) / ctldSeconds)},
                      {"direct_set_p50_us", rounded(directP50)},
                      {"direct_set_p99_us", rounded(percentile(viaSocket, 0.99))}};
    report.ratios = {{"ctld_latency_vs_direct_p50", rounded(directP50 > 0 ? p50 / directP50 : 0)}};
    report.notes.push_back("each ctld set is planned, journaled (SQLite, synchronous=FULL: two "
                           "commits), applied and recorded; the direct set only applies");
    return report;
}

Result<Report> runFanoutBench(const BenchOptions & /*options*/, const FanoutBenchOptions &fanout)
{
    // Every lutra-ctld watches its run dir with one inotify instance, a per-user limit (128 by
    // default): on one machine it caps the node count long before anything of lutra's does.
    std::size_t inotifyLimit = 0;
    std::ifstream("/proc/sys/fs/inotify/max_user_instances") >> inotifyLimit;
    if (inotifyLimit != 0 && inotifyLimit < fanout.nodes + 16) {
        return Status(Errc::resource_exhausted,
                      std::to_string(fanout.nodes) +
                          " lutra-ctld processes need more inotify "
                          "instances than fs.inotify.max_user_instances (" +
                          std::to_string(inotifyLimit) +
                          ") allows; raise it, e.g. sysctl -w "
                          "fs.inotify.max_user_instances=" +
                          std::to_string(fanout.nodes + 64));
    }
    auto dir = TempDir::create("lutra-ctl-bench-fanout");
    if (!dir) {
        return dir.status();
    }
    const std::string token = "lutra-ctl-bench-fanout-token-0123456789";
    const std::string tokenFile = dir->path() + "/token";
    std::ofstream(tokenFile) << token << "\n";

    std::vector<std::unique_ptr<TargetProcess>> targets;
    std::vector<std::unique_ptr<CtldProcess>> nodes;
    for (unsigned n = 0; n < fanout.nodes; ++n) {
        const std::string nodeDir = dir->path() + "/node" + std::to_string(n);
        const std::string runDir = nodeDir + "/run";
        std::filesystem::create_directories(runDir);
        TargetProcess::Options targetOptions;
        targetOptions.runDir = runDir;
        auto spawned = spawnTargets(nodeDir, 1, targetOptions);
        if (!spawned) {
            return spawned.status();
        }
        targets.push_back(std::move((*spawned)[0]));
        auto ctld = CtldProcess::spawn(
            {"node" + std::to_string(n), runDir, nodeDir + "/ctld.db", tokenFile});
        if (!ctld) {
            return ctld.status();
        }
        auto stub = ctl::v1::Ctl::NewStub(
            grpc::CreateChannel("unix:" + (*ctld)->socket(), grpc::InsecureChannelCredentials()));
        if (auto ready = waitForInstances(*stub, 1, {}); !ready) {
            return ready;
        }
        nodes.push_back(std::move(*ctld));
    }

    std::vector<unsigned> counts;
    for (unsigned n = 1; n < fanout.nodes; n *= 2) {
        counts.push_back(n);
    }
    counts.push_back(fanout.nodes);
    const std::string lutractl = CtldProcess::siblingBinary("lutractl");
    Report report;
    report.mode = "fanout";
    report.params = {{"nodes", fanout.nodes}, {"rounds", fanout.rounds}};
    double firstP50 = 0;
    double lastP50 = 0;
    for (const unsigned count : counts) {
        std::string hosts;
        for (unsigned n = 0; n < count; ++n) {
            hosts += (hosts.empty() ? "" : ",") + nodes[n]->grpcAddress();
        }
        // lutractl end to end (process start included, as in an epilog) for one command line.
        const auto timeRounds = [&](const std::vector<std::string> &command,
                                    const char *what) -> Result<std::vector<double>> {
            std::vector<double> times;
            std::vector<std::string> argv = {lutractl,       "-H",      hosts,
                                             "--token-file", tokenFile, "--json"};
            argv.insert(argv.end(), command.begin(), command.end());
            for (unsigned round = 0; round < fanout.rounds; ++round) {
                const auto begin = Clock::now();
                auto exitCode = runAndWait(argv);
                const double ms =
                    std::chrono::duration<double, std::milli>(Clock::now() - begin).count();
                if (!exitCode || *exitCode != 0) {
                    return Status(Errc::internal,
                                  std::string("lutractl ") + what + " over " +
                                      std::to_string(count) + " nodes failed (exit " +
                                      std::to_string(exitCode ? *exitCode : -1) + ")");
                }
                times.push_back(ms);
            }
            return times;
        };
        auto flushTimes = timeRounds({"flush", "--job", "bench.fanout"}, "flush");
        if (!flushTimes) {
            return flushTimes.status();
        }
        auto getTimes = timeRounds({"get_param", "obdfilter.*.brw_size"}, "get_param");
        if (!getTimes) {
            return getTimes.status();
        }
        const auto &times = *flushTimes;
        report.results["get_param_nodes_" + std::to_string(count)] = latencySummary(*getTimes);
        const double p50 = percentile(times, 0.5);
        report.results["nodes_" + std::to_string(count)] = latencySummary(times);
        if (count == 1) {
            firstP50 = p50;
        }
        lastP50 = p50;
    }
    report.ratios = {{"p50_" + std::to_string(fanout.nodes) + "_nodes_vs_1",
                      rounded(firstP50 > 0 ? lastP50 / firstP50 : 0)}};
    if (fanout.rounds < 100) {
        report.notes.push_back("p99_ms needs --rounds >= 100 and p90_ms >= 10: with fewer rounds "
                               "only n, p50_ms and max_ms are printed");
    }
    report.notes.push_back("each node is a lutra-ctld with one lutra-target (no client cache): "
                           "times are the control plane's (lutractl start, TLS-less TCP, ctld "
                           "fan-out to its datapath processes, SQLite record)");
    return report;
}

} // namespace lutra::tools
