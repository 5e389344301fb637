// lutractl: the command line of lutra-ctld. lctl-compatible parameter commands, profiles,
// history, jobs and per-job cleanup, on the local node or fanned out over a hostlist.

#include "cli/commands.h"
#include "cli/prometheus_targets.h"
#include "client/fan_out.h"
#include "client/hostlist.h"
#include "control/run_dir.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace {

using namespace lutra;
using namespace lutra::ctld;

struct NodeOutcome {
    std::string node; // "" for the local socket
    NodeResult result;
};

// Runs the command on every node, at most `concurrency` at a time, in hostlist order.
std::vector<NodeOutcome> runOnNodes(const std::vector<std::string> &nodes,
                                    const ClientOptions &options, const Command &command,
                                    std::size_t concurrency)
{
    std::vector<NodeOutcome> outcomes(nodes.size());
    fanOut(nodes.size(), concurrency, [&](std::size_t i) {
        outcomes[i].node = nodes[i];
        auto client = CtlClient::connect(nodes[i], options);
        if (!client) {
            outcomes[i].result.error = client.status().message();
            return;
        }
        outcomes[i].result = command(*client);
    });
    return outcomes;
}

int report(const std::vector<NodeOutcome> &outcomes, bool json, bool failSoft)
{
    std::size_t failures = 0;
    const bool many = outcomes.size() > 1;
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto &outcome : outcomes) {
        const auto name = outcome.node.empty() ? std::string("local") : outcome.node;
        if (!outcome.result.ok) {
            ++failures;
        }
        if (json) {
            nlohmann::json entry{{"node", name}, {"ok", outcome.result.ok}};
            if (!outcome.result.error.empty()) {
                entry["error"] = outcome.result.error;
            }
            if (!outcome.result.json.is_null()) {
                entry["result"] = outcome.result.json;
            }
            nodes.push_back(std::move(entry));
            continue;
        }
        // pdsh style: every line says which node it came from when there are several.
        std::string_view text = outcome.result.text;
        while (!text.empty()) {
            const auto newline = text.find('\n');
            const auto line = text.substr(0, newline);
            std::cout << (many ? name + ": " : std::string()) << line << "\n";
            text =
                newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
        }
        if (!outcome.result.ok) {
            std::cerr << "lutractl: " << (many || !outcome.node.empty() ? name + ": " : "")
                      << outcome.result.error << "\n";
        }
    }
    if (json) {
        std::cout << nlohmann::json{{"nodes", nodes},
                                    {"summary",
                                     {{"nodes", outcomes.size()},
                                      {"ok", outcomes.size() - failures},
                                      {"failed", failures}}}}
                         .dump(2)
                  << "\n";
    } else if (many) {
        std::cerr << "lutractl: " << outcomes.size() - failures << "/" << outcomes.size()
                  << " nodes ok";
        if (failures > 0) {
            std::cerr << "; failed:";
            for (const auto &outcome : outcomes) {
                if (!outcome.result.ok) {
                    std::cerr << " " << outcome.node;
                }
            }
        }
        std::cerr << "\n";
    }
    if (failures > 0 && failSoft) {
        std::cerr << "lutractl: --fail-soft: exiting 0 despite " << failures << " failure(s)\n";
        return 0;
    }
    return failures > 0 ? 1 : 0;
}

std::chrono::milliseconds parseTimeout(const std::string &text)
{
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    const auto unit = text.substr(used);
    double ms = value * 1000;
    if (unit == "ms") {
        ms = value;
    } else if (unit == "m") {
        ms = value * 60'000;
    } else if (!unit.empty() && unit != "s") {
        throw CLI::ValidationError("--timeout",
                                   "'" + text + "' is not a duration (30s, 500ms, 2m)");
    }
    if (ms < 1 || ms > 3'600'000) {
        throw CLI::ValidationError("--timeout", "'" + text + "' is outside 1ms..1h");
    }
    return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"lutractl: control lutra nodes through lutra-ctld. Parameter commands behave like "
                 "lctl's (get_param, set_param, list_param) but a set is atomic per node.",
                 "lutractl"};
    app.require_subcommand(1);
    app.footer(
        "Nodes: the local ctld by default (its unix socket), --node host:port, or a hostlist\n"
        "-H 'node[01-64]:7370' run with bounded concurrency; output lines are prefixed with the\n"
        "node and a summary goes to stderr. Exit status: 0 when every node succeeded, 1 when any\n"
        "failed, 2 for usage errors. --fail-soft exits 0 on node failures (still reported):\n"
        "for Slurm epilogs, where a failing epilog drains the node.");

    ClientOptions options;
    options.socket = (control::runDirectory() / "ctld.sock").native();
    std::string node;
    std::string hostlist;
    std::string timeoutText = "30s";
    bool json = false;
    bool failSoft = false;
    std::size_t concurrency = 32;
    app.add_option("--node", node, "one ctld at host:port (TCP)");
    app.add_option("-H,--hosts", hostlist, "hostlist of ctlds: node[01-64]:7370,login1:7370");
    app.add_option("--socket", options.socket, "local ctld unix socket")->capture_default_str();
    app.add_option("--token-file", options.tokenFile, "bearer token for TCP nodes");
    app.add_option("--tls-ca", options.tlsCa, "PEM CA bundle: use TLS to TCP nodes");
    app.add_option("--tls-cert", options.tlsCert, "PEM client certificate (mTLS)");
    app.add_option("--tls-key", options.tlsKey, "PEM key of --tls-cert");
    app.add_option("--timeout", timeoutText, "per-call timeout (30s, 500ms, 2m)")
        ->capture_default_str();
    app.add_option("--concurrency", concurrency, "nodes contacted at once")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
    app.add_flag("--json", json, "print JSON: {nodes: [{node, ok, error, result}], summary}");
    app.add_flag("--fail-soft", failSoft, "exit 0 even when nodes fail (Slurm epilogs)");

    Command command;
    Status commandError;
    const auto setCommand = [&](Result<Command> made) {
        if (made) {
            command = std::move(*made);
        } else {
            commandError = made.status();
        }
    };

    GetOptions get;
    auto *getCmd = app.add_subcommand("get_param", "print parameter values (lctl get_param)");
    getCmd->add_flag("-n", get.valuesOnly, "values only");
    getCmd->add_flag("-N", get.namesOnly, "names only");
    getCmd->add_option("--instance", get.instance, "only instances matching this glob");
    getCmd->add_option("PATTERN", get.patterns, "names or lctl globs")->required();
    getCmd->callback([&] { command = getParamCommand(get); });

    SetOptions set;
    auto *setCmd = app.add_subcommand("set_param", "set parameters atomically on each node");
    setCmd->add_flag("-n", set.valuesOnly, "print values only");
    setCmd->add_flag("--dry-run", set.dryRun, "validate everywhere, change nothing");
    setCmd->add_option("--instance", set.instance, "only instances matching this glob");
    setCmd->add_option("NAME=VALUE", set.assignments, "assignments")->required();
    setCmd->callback([&] { setCommand(setParamCommand(set)); });

    std::vector<std::string> listPatterns;
    std::string listInstance;
    auto *listCmd = app.add_subcommand("list_param", "list parameter names");
    listCmd->add_option("--instance", listInstance, "only instances matching this glob");
    listCmd->add_option("PATTERN", listPatterns, "names or lctl globs (default: all)");
    listCmd->callback([&] { command = listParamCommand(listPatterns, listInstance); });

    ProfileOptions profile;
    const auto addProfileCommand = [&](const char *name, const char *help, ProfileMode mode,
                                       bool takesFile) {
        auto *sub = app.add_subcommand(name, help);
        sub->add_option("PROFILE", profile.name, "a profile stored on or shipped with the node");
        if (takesFile) {
            sub->add_option("-f,--file", profile.file, "a YAML profile document instead");
        }
        if (mode == ProfileMode::apply) {
            sub->add_flag("--force", profile.force, "apply even where `match` excludes the node");
        }
        sub->callback([&, mode] { setCommand(profileCommand(mode, profile)); });
    };
    addProfileCommand("diff", "dry run: what a profile would change", ProfileMode::diff, true);
    addProfileCommand("apply", "apply a profile (all-or-nothing per node)", ProfileMode::apply,
                      true);
    addProfileCommand("verify", "report drift from a profile (exit 1 on drift)",
                      ProfileMode::verify, false);

    std::string putFile;
    auto *putCmd = app.add_subcommand("put-profile", "store a YAML profile on the node(s)");
    putCmd->add_option("FILE", putFile, "the profile document")->required();
    putCmd->callback([&] { setCommand(putProfileCommand(putFile)); });
    std::string deleteName;
    auto *deleteCmd =
        app.add_subcommand("delete-profile", "delete a stored profile from the node(s)");
    deleteCmd->add_option("NAME", deleteName, "the stored profile's name")->required();
    deleteCmd->callback([&] { command = deleteProfileCommand(deleteName); });
    app.add_subcommand("profiles", "list profiles (* marks those matching the node)")
        ->callback([&] { command = listProfilesCommand(); });

    std::uint64_t rollbackTo = 0;
    bool rollbackDry = false;
    auto *rollbackCmd =
        app.add_subcommand("rollback", "restore the values right after a history point");
    rollbackCmd->add_option("POINT", rollbackTo, "history point id (lutractl history)")->required();
    rollbackCmd->add_flag("--dry-run", rollbackDry, "show what would change");
    rollbackCmd->callback([&] { command = rollbackCommand(rollbackTo, rollbackDry); });

    HistoryOptions history;
    auto *historyCmd = app.add_subcommand("history", "the audit trail, newest first");
    historyCmd->add_option("--limit", history.limit, "points to show")->capture_default_str();
    historyCmd->add_option("--before", history.beforeId, "older than this point id");
    historyCmd->add_option("--action", history.action,
                           "set, apply, rollback, reconcile, flush, ...");
    historyCmd->add_option("--param", history.param, "glob on parameter names");
    historyCmd->add_option("--instance", history.instance, "glob on instance ids");
    historyCmd->add_option("--principal", history.principal, "who made the change");
    historyCmd->callback([&] { command = historyCommand(history); });

    std::string jobGlob;
    auto *jobsCmd = app.add_subcommand("jobs", "per-job I/O counters (job_stats)");
    jobsCmd->add_option("JOB", jobGlob, "job id glob (default: all)");
    jobsCmd->callback([&] { command = jobsCommand(jobGlob); });

    std::string flushJob;
    bool flushAll = false;
    auto *flushCmd = app.add_subcommand(
        "flush", "per-job cleanup: write back, cancel unused locks, drop pages (epilog)");
    auto *jobOption = flushCmd->add_option("--job", flushJob, "the job id");
    auto *allOption =
        flushCmd->add_flag("--all", flushAll, "every job (lru_size=clear everywhere)");
    jobOption->excludes(allOption);
    flushCmd->callback([&] {
        if (flushJob.empty() && !flushAll) {
            throw CLI::ValidationError("flush", "give --job ID or --all");
        }
        command = flushCommand(flushJob, flushAll, parseTimeout(timeoutText));
    });

    app.add_subcommand("instances", "datapath processes on the node")->callback([&] {
        command = instancesCommand();
    });
    app.add_subcommand("status", "node, ctld and who you are to it")->callback([&] {
        command = statusCommand();
    });

    PrometheusTargetsOptions targets;
    auto *targetsCmd = addPrometheusTargetsCommand(app, targets);

    try {
        app.parse(argc, argv);
        options.timeout = parseTimeout(timeoutText);
    } catch (const CLI::ParseError &error) {
        const int code = app.exit(error);
        return code == 0 ? 0 : 2;
    }
    if (!commandError.ok()) {
        std::cerr << "lutractl: " << commandError.message() << "\n";
        return 2;
    }
    if (targetsCmd->parsed()) {
        return runPrometheusTargets(targets, {hostlist, options, json, failSoft, concurrency});
    }
    if (!node.empty() && !hostlist.empty()) {
        std::cerr << "lutractl: give --node or -H, not both\n";
        return 2;
    }
    std::vector<std::string> nodes{node};
    if (!hostlist.empty()) {
        auto expanded = expandHostlist(hostlist);
        if (!expanded) {
            std::cerr << "lutractl: " << expanded.status().message() << "\n";
            return 2;
        }
        nodes = std::move(*expanded);
        for (auto &host : nodes) {
            if (host.find(':') == std::string::npos) {
                host += ":7370";
            }
        }
    }
    return report(runOnNodes(nodes, options, command, concurrency), json, failSoft);
}
