// Soak kind ctld-kill: kill -9 of lutra-ctld at a random point of a profile apply that touches
// three datapath processes, sometimes again while it recovers. After the restart the values read
// straight from each process must be all-old or all-new, an acknowledged apply must have held,
// the history must say which, and the database must pass PRAGMA integrity_check.

#include "ctl_soak.h"
#include "ctld_process.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"
#include "soak_support.h"
#include "target_process.h"

#include <grpcpp/grpcpp.h>

#include <csignal>
#include <filesystem>
#include <thread>

namespace lutra::tools {

namespace {

constexpr unsigned kInstances = 3;
const std::vector<std::string> kParams = {"obdfilter.*.brw_size", "obdfilter.*.commit_interval"};

const char *const kProfileA = "name: soak-a\n"
                              "params:\n"
                              "  obdfilter.*.brw_size: 8\n"
                              "  obdfilter.*.commit_interval: 2ms\n";
const char *const kProfileB = "name: soak-b\n"
                              "params:\n"
                              "  obdfilter.*.brw_size: 16\n"
                              "  obdfilter.*.commit_interval: 5ms\n";

using Values = std::vector<std::map<std::string, std::string>>; // per instance

class Node {
public:
    Node(std::string dir) : m_dir(std::move(dir)), m_runDir(m_dir + "/run") {}

    Status start()
    {
        std::filesystem::create_directories(m_runDir);
        TargetProcess::Options options;
        options.runDir = m_runDir;
        auto targets = spawnTargets(m_dir, kInstances, options);
        if (!targets) {
            return targets.status();
        }
        m_targets = std::move(*targets);
        return restartCtld();
    }

    // Starts lutra-ctld and kills it after `delay`, before or while it recovers.
    Status startAndKill(std::chrono::microseconds delay)
    {
        m_ctld.reset();
        CtldProcess::Options options{"soak", m_runDir, db(), {}};
        options.waitForReady = false;
        auto ctld = CtldProcess::spawn(options);
        if (!ctld) {
            return ctld.status();
        }
        std::this_thread::sleep_for(delay);
        return (*ctld)->stop(SIGKILL).status();
    }

    Status restartCtld()
    {
        m_ctld.reset();
        const auto begin = std::chrono::steady_clock::now();
        auto ctld = CtldProcess::spawn({"soak", m_runDir, db(), {}});
        if (!ctld) {
            return ctld.status();
        }
        m_startTime = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now() - begin);
        m_ctld = std::move(*ctld);
        m_stub = ctl::v1::Ctl::NewStub(
            grpc::CreateChannel("unix:" + m_ctld->socket(), grpc::InsecureChannelCredentials()));
        const bool connected = waitUntil(std::chrono::seconds(20), [this] {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
            ctl::v1::ListInstancesReply reply;
            if (!m_stub->ListInstances(&context, {}, &reply).ok()) {
                return false;
            }
            unsigned count = 0;
            for (const auto &instance : reply.instances()) {
                count += instance.connected() ? 1 : 0;
            }
            return count >= kInstances;
        });
        return connected ? Status{}
                         : Status(Errc::timeout, "lutra-ctld did not reconnect to its instances");
    }

    Status kill() { return m_ctld->stop(SIGKILL).status(); }

    ctl::v1::Ctl::Stub &stub() { return *m_stub; }
    // How long the last start took until ready (recovery included).
    std::chrono::microseconds startTime() const { return m_startTime; }
    std::string db() const { return m_dir + "/ctld.db"; }

    Result<Values> readDirect() const
    {
        Values values;
        for (const auto &target : m_targets) {
            auto read = readParamsDirect(target->controlSocket(), kParams);
            if (!read) {
                return read.status();
            }
            values.push_back(std::move(*read));
        }
        return values;
    }

private:
    std::string m_dir;
    std::string m_runDir;
    std::vector<std::unique_ptr<TargetProcess>> m_targets;
    std::unique_ptr<CtldProcess> m_ctld;
    std::unique_ptr<ctl::v1::Ctl::Stub> m_stub;
    std::chrono::microseconds m_startTime{0};
};

std::chrono::system_clock::time_point callDeadline()
{
    return std::chrono::system_clock::now() + std::chrono::seconds(10);
}

Result<bool> applyProfile(ctl::v1::Ctl::Stub &stub, const std::string &profile)
{
    grpc::ClientContext context;
    context.set_deadline(callDeadline());
    ctl::v1::ProfileRequest request;
    request.set_name(profile);
    ctl::v1::ProfilePlan plan;
    const auto status = stub.ApplyProfile(&context, request, &plan);
    if (!status.ok()) {
        return Status(Errc::unavailable, "ApplyProfile " + profile + ": " + status.error_message());
    }
    return plan.applied();
}

Status store(ctl::v1::Ctl::Stub &stub, const char *yaml)
{
    grpc::ClientContext context;
    context.set_deadline(callDeadline());
    ctl::v1::PutProfileRequest request;
    request.set_yaml(yaml);
    ctl::v1::PutProfileReply reply;
    const auto status = stub.PutProfile(&context, request, &reply);
    if (!status.ok() || reply.errors_size() > 0) {
        return {Errc::invalid_argument, "PutProfile: " + (status.ok() ? reply.errors(0).message()
                                                                      : status.error_message())};
    }
    return {};
}

Result<ctl::v1::ListHistoryReply> history(ctl::v1::Ctl::Stub &stub)
{
    grpc::ClientContext context;
    context.set_deadline(callDeadline());
    ctl::v1::ListHistoryRequest request;
    request.set_limit(50);
    ctl::v1::ListHistoryReply reply;
    const auto status = stub.ListHistory(&context, request, &reply);
    if (!status.ok()) {
        return Status(Errc::unavailable, "ListHistory: " + status.error_message());
    }
    return reply;
}

// "a", "b" when every instance holds that profile's values, "" when mixed.
std::string classify(const Values &values, const Values &a, const Values &b)
{
    if (values == a) {
        return "a";
    }
    if (values == b) {
        return "b";
    }
    return {};
}

std::string describe(const Values &values)
{
    std::string text;
    for (std::size_t i = 0; i < values.size(); ++i) {
        text += (i ? "; " : "") + std::string("ost") + std::to_string(i) + ":";
        for (const auto &[name, value] : values[i]) {
            text += " " + name.substr(name.rfind('.') + 1) + "=" + value;
        }
    }
    return text;
}

} // namespace

Status soakCtldKill(std::uint64_t seed, unsigned cycles, SoakTally &tally)
{
    auto dir = TempDir::create("lutra-soak-ctld");
    if (!dir) {
        return dir.status();
    }
    auto random = soakRandom(seed, 2);
    Node node(dir->path());
    if (auto started = node.start(); !started) {
        return started;
    }
    for (const char *yaml : {kProfileA, kProfileB}) {
        if (auto stored = store(node.stub(), yaml); !stored) {
            return stored;
        }
    }
    // Each profile's values as the processes report them: the states a node may be in.
    Values valuesA;
    Values valuesB;
    // How long an uninterrupted apply takes: the kills land within it (and a little after).
    std::chrono::microseconds applyTime{0};
    const std::pair<const char *, Values *> states[] = {{"soak-a", &valuesA}, {"soak-b", &valuesB}};
    for (const auto &[profile, values] : states) {
        const auto begin = std::chrono::steady_clock::now();
        auto applied = applyProfile(node.stub(), profile);
        applyTime = std::max(applyTime, std::chrono::duration_cast<std::chrono::microseconds>(
                                            std::chrono::steady_clock::now() - begin));
        if (!applied || !*applied) {
            return Status(Errc::internal, std::string("could not apply ") + profile);
        }
        auto read = node.readDirect();
        if (!read) {
            return read.status();
        }
        *values = std::move(*read);
    }
    std::string current = "b";
    for (unsigned cycle = 0; cycle < cycles; ++cycle) {
        tally.cycles = cycle + 1;
        const std::string next = current == "a" ? "b" : "a";
        auto before = history(node.stub());
        if (!before) {
            return before.status();
        }
        const std::uint64_t lastId = before->points_size() > 0 ? before->points(0).id() : 0;

        bool acknowledged = false;
        std::thread applier([&] {
            auto applied = applyProfile(node.stub(), "soak-" + next);
            acknowledged = applied && *applied;
        });
        std::this_thread::sleep_for(std::chrono::microseconds(
            uniform(random, 0, static_cast<unsigned>(applyTime.count() * 5 / 4))));
        if (auto killed = node.kill(); !killed) {
            applier.join();
            return killed;
        }
        applier.join();
        if (uniform(random, 0, 1) == 1) {
            // A second crash somewhere in the next start, recovery included.
            const auto within = static_cast<unsigned>(node.startTime().count());
            if (auto killed =
                    node.startAndKill(std::chrono::microseconds(uniform(random, 0, within)));
                !killed) {
                return killed;
            }
            tally.outcome("crashed_again_while_starting");
        }
        if (auto restarted = node.restartCtld(); !restarted) {
            tally.violation(cycle, "lutra-ctld did not come back: " + restarted.message());
            return restarted;
        }

        auto values = node.readDirect();
        if (!values) {
            return values.status();
        }
        const std::string state = classify(*values, valuesA, valuesB);
        tally.outcome(state.empty() ? "half_changed" : state == next ? "all_new" : "all_old");
        if (state.empty()) {
            tally.violation(cycle, "node half-changed: " + describe(*values));
        } else if (acknowledged && state != next) {
            tally.violation(cycle, "ApplyProfile soak-" + next +
                                       " was acknowledged but the node holds soak-" + state);
        }

        auto after = history(node.stub());
        if (!after) {
            return after.status();
        }
        std::string recorded; // the outcome of this cycle's apply point, if it was journaled
        for (const auto &point : after->points()) {
            if (point.id() <= lastId) {
                break;
            }
            if (point.outcome() == "pending") {
                tally.violation(cycle, "history point " + std::to_string(point.id()) +
                                           " is still pending after recovery");
            }
            if (point.action() == "apply" && point.profile() == "soak-" + next) {
                recorded = point.outcome();
            }
        }
        // Where the kill landed: before the change was journaled, during it (recovery undid
        // it: "aborted") or after it finished ("ok").
        tally.outcome(recorded.empty() ? "killed_before_journal" : "journaled_" + recorded);
        const std::string expected = recorded == "ok" ? next : current;
        if (!state.empty() && state != expected) {
            tally.violation(cycle, "history says the apply of soak-" + next + " ended '" +
                                       (recorded.empty() ? "never recorded" : recorded) +
                                       "' but the node holds soak-" + state);
        }

        auto integrity = runCaptured({"sqlite3", node.db(), "PRAGMA integrity_check;"},
                                     std::chrono::seconds(30));
        if (!integrity || integrity->exitCode != 0 || integrity->out != "ok\n") {
            tally.violation(cycle, "PRAGMA integrity_check: " +
                                       (integrity ? integrity->out : integrity.status().message()));
        }
        if (!state.empty()) {
            current = state;
        } else {
            // Put the node back into a known state for the next cycle.
            auto applied = applyProfile(node.stub(), "soak-" + current);
            if (!applied || !*applied) {
                return Status(Errc::internal, "could not reset the node after a violation");
            }
        }
    }
    return {};
}

} // namespace lutra::tools
