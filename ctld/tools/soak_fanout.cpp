// Soak kinds over several nodes driven by lutractl, as admins and Slurm epilogs drive them:
// datapath-restart (kill -9 of a node's datapath process during `lutractl -H ... set_param`;
// the restarted process must come back to what the node acknowledged) and node-stop (SIGSTOP of
// one lutra-ctld during `lutractl -H ... flush --job`: the others finish within the deadline and
// the stopped node is reported).

#include "ctl_soak.h"
#include "ctld_process.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"
#include "soak_support.h"
#include "target_process.h"

#include <grpcpp/grpcpp.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

namespace lutra::tools {

namespace {

constexpr unsigned kNodes = 3;
const std::string kParam = "obdfilter.ost0.brw_size";
const std::string kToken = "lutra-soak-token-0123456789abcdef";

struct SoakNode {
    std::string dir;
    std::string runDir;
    TargetProcess::Options targetOptions;
    std::unique_ptr<TargetProcess> target;
    std::unique_ptr<CtldProcess> ctld;
};

class Cluster {
public:
    // kNodes nodes in a fresh temporary directory, removed with the cluster.
    static Result<std::unique_ptr<Cluster>> start(const std::string &prefix)
    {
        auto dir = TempDir::create(prefix);
        if (!dir) {
            return dir.status();
        }
        std::unique_ptr<Cluster> cluster(new Cluster(std::move(*dir)));
        if (auto started = cluster->startNodes(); !started) {
            return started;
        }
        return cluster;
    }

    Status startNodes()
    {
        std::ofstream(m_tokenFile) << kToken << "\n";
        for (unsigned n = 0; n < kNodes; ++n) {
            auto &node = m_nodes.emplace_back();
            node.dir = m_dir + "/node" + std::to_string(n);
            node.runDir = node.dir + "/run";
            std::filesystem::create_directories(node.runDir);
            node.targetOptions.runDir = node.runDir;
            node.targetOptions.root = node.dir + "/ost0";
            std::filesystem::create_directories(node.targetOptions.root);
            auto target = TargetProcess::spawn(node.targetOptions);
            if (!target) {
                return target.status();
            }
            node.target = std::move(*target);
            auto ctld = CtldProcess::spawn(
                {"node" + std::to_string(n), node.runDir, node.dir + "/ctld.db", m_tokenFile});
            if (!ctld) {
                return ctld.status();
            }
            node.ctld = std::move(*ctld);
            if (!waitConnected(n)) {
                return {Errc::timeout, "node" + std::to_string(n) + "'s ctld found no datapath"};
            }
        }
        return {};
    }

    bool waitConnected(unsigned n)
    {
        auto stub = ctl::v1::Ctl::NewStub(grpc::CreateChannel("unix:" + m_nodes[n].ctld->socket(),
                                                              grpc::InsecureChannelCredentials()));
        return waitUntil(std::chrono::seconds(20), [&] {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
            ctl::v1::ListInstancesReply reply;
            return stub->ListInstances(&context, {}, &reply).ok() && reply.instances_size() > 0 &&
                   reply.instances(0).connected();
        });
    }

    std::string hosts() const
    {
        std::string list;
        for (const auto &node : m_nodes) {
            list += (list.empty() ? "" : ",") + node.ctld->grpcAddress();
        }
        return list;
    }

    // lutractl -H <every node> --json <arguments...>, its exit code and parsed output.
    Result<std::pair<int, nlohmann::json>> lutractl(const std::vector<std::string> &arguments,
                                                    const std::string &timeout = "10s")
    {
        std::vector<std::string> argv = {CtldProcess::siblingBinary("lutractl"),
                                         "-H",
                                         hosts(),
                                         "--token-file",
                                         m_tokenFile,
                                         "--timeout",
                                         timeout,
                                         "--json"};
        argv.insert(argv.end(), arguments.begin(), arguments.end());
        auto ran = runCaptured(argv, std::chrono::seconds(60));
        if (!ran) {
            return ran.status();
        }
        auto parsed = nlohmann::json::parse(ran->out, nullptr, false);
        if (parsed.is_discarded() || !parsed.contains("nodes")) {
            return Status(Errc::protocol_error, "lutractl printed no JSON (exit " +
                                                    std::to_string(ran->exitCode) +
                                                    "): " + ran->out.substr(0, 200));
        }
        return std::pair{ran->exitCode, std::move(parsed)};
    }

    // Whether each node said ok, by node index (missing entries count as not ok).
    std::vector<bool> okByNode(const nlohmann::json &reply) const
    {
        std::vector<bool> ok(m_nodes.size(), false);
        for (const auto &entry : reply["nodes"]) {
            for (std::size_t n = 0; n < m_nodes.size(); ++n) {
                if (entry.value("node", "") == m_nodes[n].ctld->grpcAddress()) {
                    ok[n] = entry.value("ok", false);
                }
            }
        }
        return ok;
    }

    Result<std::string> liveValue(unsigned n) const
    {
        auto values = readParamsDirect(m_nodes[n].target->controlSocket(), {kParam});
        if (!values) {
            return values.status();
        }
        return (*values)[kParam];
    }

    SoakNode &node(unsigned n) { return m_nodes[n]; }

private:
    explicit Cluster(TempDir dir)
        : m_tempDir(std::move(dir)), m_dir(m_tempDir.path()), m_tokenFile(m_dir + "/token")
    {
    }

    TempDir m_tempDir; // first: removed after every process below has stopped
    std::string m_dir;
    std::string m_tokenFile;
    std::vector<SoakNode> m_nodes;
};

} // namespace

Status soakDatapathRestart(std::uint64_t seed, unsigned cycles, SoakTally &tally)
{
    auto cluster = Cluster::start("lutra-soak-restart");
    if (!cluster) {
        return cluster.status();
    }
    auto random = soakRandom(seed, 4);
    // The two values the cycles alternate between, as the processes spell them; neither is the
    // default, so a restarted process that was not reconciled shows.
    std::vector<std::string> spelled;
    for (const std::string value : {"16", "8"}) {
        auto set = (*cluster)->lutractl({"set_param", kParam + "=" + value});
        if (!set || set->first != 0) {
            return Status(Errc::internal, "lutractl set_param failed while setting up");
        }
        auto live = (*cluster)->liveValue(0);
        if (!live) {
            return live.status();
        }
        spelled.push_back(*live);
    }
    std::vector<std::string> desired(kNodes, spelled[1]); // what each node acknowledged last

    for (unsigned cycle = 0; cycle < cycles; ++cycle) {
        tally.cycles = cycle + 1;
        const std::string value = cycle % 2 == 0 ? "16" : "8";
        const std::string canonical = spelled[cycle % 2];
        const unsigned victim = uniform(random, 0, kNodes - 1);
        Result<std::pair<int, nlohmann::json>> set = Status(Errc::internal, "not run");
        std::thread setter([&] {
            set = (*cluster)->lutractl({"set_param", kParam + "=" + value});
        });
        std::this_thread::sleep_for(std::chrono::microseconds(uniform(random, 0, 40000)));
        auto &node = (*cluster)->node(victim);
        if (auto killed = node.target->stop(SIGKILL); !killed) {
            setter.join();
            return killed.status();
        }
        node.target.reset();
        auto restarted = TargetProcess::spawn(node.targetOptions);
        setter.join();
        if (!restarted) {
            return restarted.status();
        }
        node.target = std::move(*restarted);
        if (!set) {
            tally.violation(cycle, "lutractl set_param: " + set.status().message());
            continue;
        }
        const auto ok = (*cluster)->okByNode(set->second);
        tally.outcome(ok[victim] ? "victim_acknowledged" : "victim_failed");
        for (unsigned n = 0; n < kNodes; ++n) {
            const std::string expected = ok[n] ? canonical : desired[n];
            std::string live;
            // The victim comes back with defaults until its ctld reconciles it.
            const bool settled = waitUntil(std::chrono::seconds(n == victim ? 20 : 0), [&] {
                auto read = (*cluster)->liveValue(n);
                live = read ? *read : read.status().message();
                return read && *read == expected;
            });
            if (!settled) {
                tally.violation(cycle, "node" + std::to_string(n) +
                                           (n == victim ? " (restarted)" : "") + " holds " + live +
                                           ", expected " + expected + " (its set " +
                                           (ok[n] ? "was acknowledged" : "failed") + ")");
            }
            desired[n] = expected;
        }
    }
    return {};
}

Status soakNodeStop(std::uint64_t seed, unsigned cycles, SoakTally &tally)
{
    auto cluster = Cluster::start("lutra-soak-stop");
    if (!cluster) {
        return cluster.status();
    }
    auto random = soakRandom(seed, 5);
    constexpr auto kDeadline = std::chrono::seconds(2);
    // lutractl gives a flush call its --timeout (passed to ctld as the flush's own deadline) plus
    // 5 s for ctld to report; then lutractl's start: generous for a loaded 2-core machine.
    constexpr auto kBound = kDeadline + std::chrono::seconds(5) + std::chrono::seconds(3);
    for (unsigned cycle = 0; cycle < cycles; ++cycle) {
        tally.cycles = cycle + 1;
        const unsigned victim = uniform(random, 0, kNodes - 1);
        auto &node = (*cluster)->node(victim);
        node.ctld->signal(SIGSTOP);
        const auto begin = std::chrono::steady_clock::now();
        auto flushed = (*cluster)->lutractl({"flush", "--job", "soak." + std::to_string(cycle)},
                                            std::to_string(kDeadline.count()) + "s");
        const auto took = std::chrono::steady_clock::now() - begin;
        node.ctld->signal(SIGCONT);
        if (!flushed) {
            tally.violation(cycle, "lutractl flush: " + flushed.status().message());
            continue;
        }
        const auto ok = (*cluster)->okByNode(flushed->second);
        for (unsigned n = 0; n < kNodes; ++n) {
            if (n == victim && ok[n]) {
                tally.violation(cycle, "the stopped node" + std::to_string(n) + " reported ok");
            }
            if (n != victim && !ok[n]) {
                tally.violation(cycle, "node" + std::to_string(n) +
                                           " failed while another node was stopped");
            }
        }
        if (flushed->first != 1) {
            tally.violation(cycle, "lutractl exited " + std::to_string(flushed->first) +
                                       " with a stopped node (expected 1)");
        }
        const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(took).count();
        tally.outcome("max_ms", 0);
        tally.outcomes["max_ms"] =
            std::max<std::int64_t>(tally.outcomes["max_ms"].get<std::int64_t>(), ms);
        if (took > kBound) {
            tally.violation(cycle, "lutractl took " + std::to_string(ms) + " ms with a " +
                                       std::to_string(kDeadline.count()) + " s flush timeout");
        }
        // The node answers again once continued.
        auto status = (*cluster)->lutractl({"status"});
        if (!status || status->first != 0) {
            tally.violation(cycle,
                            "node" + std::to_string(victim) + " does not answer after SIGCONT");
        }
    }
    return {};
}

} // namespace lutra::tools
