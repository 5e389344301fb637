#include "cli/prometheus_targets.h"

#include "client/fan_out.h"
#include "client/hostlist.h"

#include <grpcpp/grpcpp.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

namespace lutra::ctld {

namespace {

constexpr int kDefaultCtldPort = 7370; // the cluster file's default, as in the console

class Errors {
public:
    explicit Errors(std::string file) : m_file(std::move(file)) {}
    void add(const YAML::Mark &mark, const std::string &message)
    {
        m_text += (m_text.empty() ? "" : "\n") + m_file + ":" + std::to_string(mark.line + 1) +
                  ":" + std::to_string(mark.column + 1) + ": " + message;
    }
    bool empty() const { return m_text.empty(); }
    const std::string &text() const { return m_text; }

private:
    std::string m_file;
    std::string m_text;
};

bool scalar(const YAML::Node &node, const std::string &key, std::string &out, Errors &errors)
{
    if (!node.IsScalar()) {
        errors.add(node.Mark(), "'" + key + "' must be a single value");
        return false;
    }
    out = node.Scalar();
    return true;
}

// "10s", "500ms", "2m" within 500ms .. 10m (the console's rule); 0 when the text is not one.
std::int64_t parseTimeoutMs(const std::string &text)
{
    static const std::regex pattern(R"(^\s*(\d+)(ms|s|m)\s*$)");
    std::smatch match;
    if (!std::regex_match(text, match, pattern) || match[1].length() > 9) {
        return 0;
    }
    const std::int64_t value = std::stoll(match[1]);
    const std::int64_t ms = match[2] == "ms"  ? value
                            : match[2] == "s" ? value * 1000
                                              : value * 60'000;
    return ms >= 500 && ms <= 600'000 ? ms : 0;
}

std::string resolve(const std::string &path, const std::filesystem::path &baseDir)
{
    if (path.empty() || std::filesystem::path(path).is_absolute()) {
        return path;
    }
    return (baseDir / path).lexically_normal().native();
}

// token_file, tls and timeout, at the top level or in a group (the console's readCredentials).
void readCredentials(const YAML::Node &map, ClientOptions &credentials,
                     const std::filesystem::path &baseDir, Errors &errors)
{
    if (const auto timeout = map["timeout"]) {
        std::string value;
        if (scalar(timeout, "timeout", value, errors)) {
            const auto ms = parseTimeoutMs(value);
            if (ms == 0) {
                errors.add(timeout.Mark(),
                           "'timeout' is '" + value + "': give 500ms .. 10m, e.g. 10s, 500ms, 2m");
            } else {
                credentials.timeout = std::chrono::milliseconds(ms);
            }
        }
    }
    if (const auto token = map["token_file"]) {
        std::string value;
        if (scalar(token, "token_file", value, errors)) {
            credentials.tokenFile = resolve(value, baseDir);
        }
    }
    if (const auto tls = map["tls"]) {
        if (!tls.IsMap()) {
            errors.add(tls.Mark(), "'tls' must be a map with ca, cert, key");
            return;
        }
        for (const auto &entry : tls) {
            const auto key = entry.first.Scalar();
            std::string value;
            if (!scalar(entry.second, "tls." + key, value, errors)) {
                continue;
            }
            if (key == "ca") {
                credentials.tlsCa = resolve(value, baseDir);
            } else if (key == "cert") {
                credentials.tlsCert = resolve(value, baseDir);
            } else if (key == "key") {
                credentials.tlsKey = resolve(value, baseDir);
            } else {
                errors.add(entry.first.Mark(),
                           "unknown key 'tls." + key + "' (known: ca, cert, key)");
            }
        }
        if (credentials.tlsCert.empty() != credentials.tlsKey.empty()) {
            errors.add(tls.Mark(), "'tls' needs both cert and key for a client certificate");
        }
    }
}

// Every "host:port" of a hostlist; port 7370 when none is given.
Result<std::vector<std::string>> expandAddresses(const std::string &hostlist)
{
    auto expanded = expandHostlist(hostlist);
    if (!expanded) {
        return expanded.status();
    }
    for (auto &address : *expanded) {
        if (!address.starts_with("unix:") && address.find(':') == std::string::npos) {
            address += ":" + std::to_string(kDefaultCtldPort);
        }
    }
    return expanded;
}

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
    std::ifstream in(path);
    if (!in) {
        return Status(Errc::not_found, path + ": cannot read: " + std::strerror(errno));
    }
    std::stringstream text;
    text << in.rdbuf();
    const auto baseDir = std::filesystem::absolute(path).parent_path();
    Errors errors(path);
    YAML::Node root;
    try {
        root = YAML::Load(text.str());
    } catch (const YAML::Exception &error) {
        errors.add(error.mark, error.msg);
        return Status(Errc::invalid_argument, errors.text());
    }
    if (!root.IsMap()) {
        return Status(Errc::invalid_argument,
                      path + ":1:1: a cluster file is a map with 'groups' (and optionally name, "
                             "token_file, tls)");
    }
    ClusterTargets cluster;
    ClientOptions fileDefaults = defaults;
    readCredentials(root, fileDefaults, baseDir, errors);
    for (const auto &entry : root) {
        const auto key = entry.first.Scalar();
        if (key == "name") {
            scalar(entry.second, key, cluster.name, errors);
        } else if (key != "groups" && key != "token_file" && key != "tls" && key != "timeout") {
            errors.add(entry.first.Mark(),
                       "unknown key '" + key + "' (known: name, token_file, tls, timeout, groups)");
        }
    }
    const auto groups = root["groups"];
    if (!groups) {
        errors.add(root.Mark(), "no 'groups': list the nodes as groups: [{name, hosts}]");
    } else if (!groups.IsSequence()) {
        errors.add(groups.Mark(), "'groups' must be a list of {name, hosts}");
    } else {
        std::set<std::string> seen;
        std::size_t groupCount = 0;
        for (const auto &group : groups) {
            if (!group.IsMap()) {
                errors.add(group.Mark(), "a group is a map with name and hosts");
                continue;
            }
            ++groupCount;
            ClientOptions credentials = fileDefaults;
            readCredentials(group, credentials, baseDir, errors);
            std::string name;
            std::vector<std::string> addresses;
            for (const auto &entry : group) {
                const auto key = entry.first.Scalar();
                if (key == "name") {
                    scalar(entry.second, key, name, errors);
                } else if (key == "hosts") {
                    std::string hosts;
                    if (!scalar(entry.second, key, hosts, errors)) {
                        continue;
                    }
                    auto expanded = expandAddresses(hosts);
                    if (!expanded) {
                        errors.add(entry.second.Mark(), expanded.status().message());
                        continue;
                    }
                    for (const auto &address : *expanded) {
                        if (!seen.insert(address).second) {
                            errors.add(entry.second.Mark(), address + " is listed twice");
                            continue;
                        }
                        addresses.push_back(address);
                    }
                } else if (key != "token_file" && key != "tls" && key != "timeout") {
                    errors.add(entry.first.Mark(), "unknown key '" + key +
                                                       "' in a group (known: name, hosts, "
                                                       "token_file, tls, timeout)");
                }
            }
            if (!group["hosts"]) {
                errors.add(group.Mark(), "a group needs 'hosts' (a hostlist: node[001-064])");
            }
            if (name.empty()) {
                name = "group" + std::to_string(groupCount);
            }
            for (const auto &address : addresses) {
                cluster.targets.push_back(targetFor(address, cluster.name, name, credentials));
            }
        }
    }
    if (!errors.empty()) {
        return Status(Errc::invalid_argument, errors.text());
    }
    return cluster;
}

Result<ClusterTargets> hostlistTargets(const std::string &hostlist, const ClientOptions &defaults)
{
    auto addresses = expandAddresses(hostlist);
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
