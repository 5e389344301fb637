#pragma once
// The cluster file (config/cluster.yaml): which lutra-ctlds make up a cluster, in groups, with
// the credentials to reach them and, optionally, the Prometheus server that scrapes them. One
// parser for every reader — the console, `lutractl prometheus-targets` — so they never disagree
// about what a file means. No Qt, no gRPC.
//
//   name: demo                                # optional, shown in the console's title bar
//   prometheus: http://prom:9090              # optional: fleet charts from PromQL
//   prometheus_interval: 15s                  # optional: how often (default: Prometheus' own)
//   token_file: /etc/lutra/console.token      # defaults for every group
//   tls: {ca: ca.crt, cert: console.crt, key: console.key}
//   timeout: 10s                              # deadline of every call to a node (500ms .. 10m)
//   groups:
//     - name: oss
//       hosts: oss[01-02]:7370                # Slurm hostlist; the port defaults to 7370
//       token_file: oss.token                 # overrides the default for this group
//
// Relative paths are relative to the file. Every error says file:line:col.

#include <lutra/status.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld {

inline constexpr int kDefaultCtldPort = 7370;

struct ClusterCredentials {
    std::string tokenFile, tlsCa, tlsCert, tlsKey;    // paths, resolved against the file's folder
    std::optional<std::chrono::milliseconds> timeout; // unset: the reader's default
};

struct ClusterFileNode {
    std::string group;
    std::string address; // "host:port" (the default port added) or "unix:/path"
    ClusterCredentials credentials;
};

struct ClusterFileText {
    std::string value;
    int line = 0, column = 0; // 1-based, where the value is written; 0 when absent
};

struct ClusterFileContents {
    std::string name;
    // The Prometheus base URL as written; its syntax is checked by the reader that uses it
    // (the console's promql::checkBaseUrl), at this position.
    ClusterFileText prometheus;
    // How often the console asks that Prometheus ("2s"); its syntax is the console's to check.
    ClusterFileText prometheusInterval;
    std::vector<std::string> groups;    // in file order; unnamed groups are group1, group2, ...
    std::vector<ClusterFileNode> nodes; // in file order, each address once
};

struct ParsedClusterFile {
    ClusterFileContents contents;    // nodes empty when there are errors
    std::vector<std::string> errors; // every error of the document, "file:line:col: message"
    bool unreadable = false;         // the file could not be read (errors says why)
    bool ok() const { return errors.empty(); }
};

// `shownPath` names the file in errors; relative paths resolve against `baseDir` ("": as given).
ParsedClusterFile parseClusterFile(std::string_view text, const std::string &shownPath,
                                   const std::string &baseDir);
ParsedClusterFile loadClusterFile(const std::string &path);

// Every "host:port" of a Slurm hostlist, kDefaultCtldPort where none is given.
Result<std::vector<std::string>> expandCtldAddresses(const std::string &hostlist);

// "10s", "500ms", "2m" within 500ms .. 10m; nullopt when the text is not one.
std::optional<std::chrono::milliseconds> parseCallTimeout(std::string_view text);

} // namespace lutra::ctld
