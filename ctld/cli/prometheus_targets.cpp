#include "cli/prometheus_targets.h"

#include "client/cluster_file.h"
#include "client/fan_out.h"
#include "client/hostlist.h"

#include <grpcpp/grpcpp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

namespace lutra::ctld {

namespace {

ScrapeTarget targetFor(const std::string &address, const std::string &cluster,
                       const std::string &group, const ClientOptions &credentials)
{
    ScrapeTarget target;
    target.ctld = address;
    target.credentials = credentials;
    if (!cluster.empty()) {
        target.labels["cluster"] = cluster;
    }
    target.labels["group"] = group;
    target.labels["ctld"] = address;
    return target;
}

// Labels Prometheus or ctld already set on every series, and the ones this file adds: a node's
// own label with such a name is kept as label_<name> instead of overwriting it.
bool reservedLabel(const std::string &name)
{
    static const std::set<std::string> reserved{"job",     "instance", "node",  "kind",
                                                "process", "cluster",  "group", "ctld"};
    return reserved.contains(name);
}

Status writeAtomically(const std::string &path, const std::string &text)
{
    // file_sd re-reads the file on every change: it must never see half of it.
    const std::string temporary = path + ".tmp";
    {
        std::ofstream out(temporary, std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            return {Errc::unavailable, path + ": cannot write: " + std::strerror(errno)};
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary, ec);
        return {Errc::unavailable, path + ": cannot write: " + ec.message()};
    }
    return {};
}

struct AskOutcome {
    bool ok = true;
    std::string error;
};

// GetNodeInfo on every node (bounded concurrency): its ctld.yaml labels join the target's.
std::vector<AskOutcome> askNodes(ClusterTargets &cluster, std::size_t concurrency)
{
    std::vector<AskOutcome> outcomes(cluster.targets.size());
    fanOut(cluster.targets.size(), concurrency, [&](std::size_t i) {
        auto &target = cluster.targets[i];
        auto client = CtlClient::connect(target.ctld, target.credentials);
        if (!client) {
            outcomes[i] = {false, client.status().message()};
            return;
        }
        ctl::v1::NodeInfo info;
        const auto status = client->stub().GetNodeInfo(client->context().get(),
                                                       ctl::v1::GetNodeInfoRequest(), &info);
        if (!status.ok()) {
            outcomes[i] = {false, describe(status)};
            return;
        }
        for (const auto &[key, value] : info.labels()) {
            auto name = prometheusLabelName(key);
            if (reservedLabel(name)) {
                name = "label_" + name;
            }
            target.labels[name] = value;
        }
    });
    return outcomes;
}

} // namespace

std::string prometheusLabelName(const std::string &name)
{
    std::string out = name.empty() ? "_" : name;
    for (auto &c : out) {
        const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
        if (!letter && !(c >= '0' && c <= '9')) {
            c = '_';
        }
    }
    if (out[0] >= '0' && out[0] <= '9') {
        out.insert(0, "_");
    }
    if (out.starts_with("__")) { // reserved for Prometheus' own use
        out.insert(0, "label");
    }
    return out;
}

Result<ClusterTargets> readClusterTargets(const std::string &path, const ClientOptions &defaults)
{
    auto parsed = loadClusterFile(path);
    if (!parsed.ok()) {
        std::string text;
        for (const auto &error : parsed.errors) {
            text += (text.empty() ? "" : "\n") + error;
        }
        return Status(parsed.unreadable ? Errc::not_found : Errc::invalid_argument, text);
    }
    ClusterTargets cluster;
    cluster.name = parsed.contents.name;
    for (const auto &node : parsed.contents.nodes) {
        ClientOptions credentials = defaults;
        const auto set = [](std::string &to, const std::string &from) {
            if (!from.empty()) {
                to = from;
            }
        };
        set(credentials.tokenFile, node.credentials.tokenFile);
        set(credentials.tlsCa, node.credentials.tlsCa);
        set(credentials.tlsCert, node.credentials.tlsCert);
        set(credentials.tlsKey, node.credentials.tlsKey);
        credentials.timeout = node.credentials.timeout.value_or(defaults.timeout);
        cluster.targets.push_back(targetFor(node.address, cluster.name, node.group, credentials));
    }
    return cluster;
}

Result<ClusterTargets> hostlistTargets(const std::string &hostlist, const ClientOptions &defaults)
{
    auto addresses = expandCtldAddresses(hostlist);
    if (!addresses) {
        return Status(Errc::invalid_argument,
                      "-H " + hostlist + ": " + addresses.status().message());
    }
    ClusterTargets cluster;
    for (const auto &address : *addresses) {
        cluster.targets.push_back(targetFor(address, "", "hosts", defaults));
    }
    return cluster;
}

Status setMetricsAddresses(ClusterTargets &cluster, int metricsPort)
{
    for (auto &target : cluster.targets) {
        if (target.ctld.starts_with("unix:")) {
            return {Errc::invalid_argument,
                    target.ctld + ": a unix socket has no /metrics address Prometheus can scrape; "
                                  "name the node as host:port"};
        }
        // "host:port" or "[v6]:port": the host is everything before the last colon.
        const auto host = target.ctld.substr(0, target.ctld.rfind(':'));
        target.metrics = host + ":" + std::to_string(metricsPort);
    }
    return {};
}

nlohmann::json fileSdJson(const ClusterTargets &cluster)
{
    auto document = nlohmann::json::array();
    for (const auto &target : cluster.targets) {
        document.push_back({{"targets", {target.metrics}}, {"labels", target.labels}});
    }
    return document;
}

CLI::App *addPrometheusTargetsCommand(CLI::App &app, PrometheusTargetsOptions &options)
{
    auto *command = app.add_subcommand(
        "prometheus-targets",
        "write a Prometheus file_sd target list of the nodes' /metrics (see config/prometheus/)");
    command->add_option("--cluster", options.clusterFile,
                        "a console cluster file (config/cluster.yaml) instead of -H");
    command->add_option("-o,--output", options.output,
                        "write the list here, atomically (default: stdout)");
    command
        ->add_option("--metrics-port", options.metricsPort,
                     "ctld's metrics_listen port on every node")
        ->check(CLI::Range(1, 65535))
        ->capture_default_str();
    command->add_flag("--ask-nodes", options.askNodes,
                      "add each node's ctld.yaml labels (one GetNodeInfo call per node)");
    command->footer("Each target is labelled cluster (the file's name), group and ctld (its gRPC "
                    "address); a node that does not answer --ask-nodes is still listed, so "
                    "Prometheus shows it as down.");
    return command;
}

int runPrometheusTargets(const PrometheusTargetsOptions &options, const CliContext &context)
{
    if (options.clusterFile.empty() == context.hostlist.empty()) {
        std::cerr << "lutractl: prometheus-targets: give the nodes with --cluster FILE or -H "
                     "HOSTLIST (one of them)\n";
        return 2;
    }
    if (context.json && options.output.empty()) {
        std::cerr << "lutractl: prometheus-targets: --json prints the report; give -o FILE for "
                     "the target list\n";
        return 2;
    }
    auto cluster = options.clusterFile.empty()
                       ? hostlistTargets(context.hostlist, context.client)
                       : readClusterTargets(options.clusterFile, context.client);
    if (!cluster) {
        std::cerr << "lutractl: " << cluster.status().message() << "\n";
        return 2;
    }
    if (const auto status = setMetricsAddresses(*cluster, options.metricsPort); !status.ok()) {
        std::cerr << "lutractl: " << status.message() << "\n";
        return 2;
    }
    std::vector<AskOutcome> outcomes(cluster->targets.size());
    if (options.askNodes) {
        outcomes = askNodes(*cluster, context.concurrency);
    }
    const auto document = fileSdJson(*cluster).dump(2) + "\n";
    if (options.output.empty()) {
        std::cout << document;
    } else if (const auto status = writeAtomically(options.output, document); !status.ok()) {
        std::cerr << "lutractl: " << status.message() << "\n";
        return 1;
    }
    std::size_t failures = 0;
    auto nodes = nlohmann::json::array();
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const auto &target = cluster->targets[i];
        nlohmann::json entry{{"node", target.ctld}, {"ok", outcomes[i].ok}};
        entry["result"] = {{"targets", {target.metrics}}, {"labels", target.labels}};
        if (!outcomes[i].ok) {
            ++failures;
            entry["error"] = outcomes[i].error;
            if (!context.json) {
                std::cerr << "lutractl: " << target.ctld << ": " << outcomes[i].error
                          << " (listed without its own labels)\n";
            }
        }
        nodes.push_back(std::move(entry));
    }
    if (context.json) {
        std::cout << nlohmann::json{{"nodes", nodes},
                                    {"summary",
                                     {{"nodes", outcomes.size()},
                                      {"ok", outcomes.size() - failures},
                                      {"failed", failures},
                                      {"output", options.output}}}}
                         .dump(2)
                  << "\n";
    } else if (!options.output.empty()) {
        std::cerr << "lutractl: wrote " << cluster->targets.size() << " targets to "
                  << options.output << "\n";
    }
    if (failures > 0 && context.failSoft) {
        return 0;
    }
    return failures > 0 ? 1 : 0;
}

} // namespace lutra::ctld
