#pragma once
// lutractl prometheus-targets: a Prometheus file_sd target list (JSON) naming each node's ctld
// /metrics endpoint, from a hostlist or a console cluster file (config/cluster.yaml, same format),
// with the node's labels: cluster, group, ctld (its gRPC address) and, with --ask-nodes, the
// labels of its ctld.yaml.

#include <lutra/status.h>

#include "client/ctl_client.h"

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lutra::ctld {

struct ScrapeTarget {
    std::string ctld;    // the ctld's gRPC address from the hostlist ("host:port")
    std::string metrics; // its /metrics address ("host:metrics_port")
    std::map<std::string, std::string> labels;
    ClientOptions credentials; // the group's token / TLS, for --ask-nodes
};

struct ClusterTargets {
    std::string name; // the cluster file's `name` ("" for none)
    std::vector<ScrapeTarget> targets;
};

// Reads a console cluster file: every error "file:line:col: what", all of them.
Result<ClusterTargets> readClusterTargets(const std::string &path, const ClientOptions &defaults);
// -H node[01-64]:7370 with the command line's credentials; group "hosts".
Result<ClusterTargets> hostlistTargets(const std::string &hostlist, const ClientOptions &defaults);
// Fills `metrics` from each ctld address and the port; a unix socket cannot be scraped.
Status setMetricsAddresses(ClusterTargets &cluster, int metricsPort);
// A label name Prometheus accepts ([a-zA-Z_][a-zA-Z0-9_]*, not __reserved); others become _.
std::string prometheusLabelName(const std::string &name);
// The file_sd document: [{"targets": ["host:7371"], "labels": {...}}, ...], one entry per node.
nlohmann::json fileSdJson(const ClusterTargets &cluster);

struct PrometheusTargetsOptions {
    std::string clusterFile;
    std::string output; // "" for stdout
    int metricsPort = 7371;
    bool askNodes = false;
};

CLI::App *addPrometheusTargetsCommand(CLI::App &app, PrometheusTargetsOptions &options);

struct CliContext {
    std::string hostlist;
    ClientOptions client;
    bool json = false;
    bool failSoft = false;
    std::size_t concurrency = 32;
};
// Runs the verb; the exit status of lutractl (0 ok, 1 a node failed with --ask-nodes, 2 usage
// or input error: then nothing is written).
int runPrometheusTargets(const PrometheusTargetsOptions &options, const CliContext &context);

} // namespace lutra::ctld
