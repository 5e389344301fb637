#pragma once
// The cluster file: which ctlds the console connects to, grouped, with the credentials to use.
// Parsed by ctld/client/cluster_file.h (shared with `lutractl prometheus-targets`); this is
// the console's view of it.
//
//   name: demo                      # optional, shown in the title bar
//   prometheus: http://prom:9090    # optional: the cluster views chart fleet aggregates from
//                                   # PromQL and stream only the nodes on screen
//   prometheus_interval: 15s        # optional: how often to ask it (1s .. 1h); default: its
//                                   # own global evaluation_interval
//   token_file: /etc/lutra/console.token   # defaults for every group
//   tls: {ca: ca.crt, cert: console.crt, key: console.key}
//   timeout: 10s                  # deadline of every call to a node (500ms .. 10m)
//   groups:
//     - name: oss
//       hosts: oss[01-02]:7370       # Slurm hostlist; the port defaults to 7370
//     - name: compute
//       hosts: node[001-128]
//       token_file: compute.token    # overrides the default for this group
//
// Relative paths are relative to the file. Every error says file:line:col.

#include "net/endpoint.h"

#include <QList>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace lutra::console {

struct ClusterNode {
    QString group;
    Endpoint endpoint;
};

struct ClusterFile {
    QString name;
    QString path;                 // where it was read from ("" for -H)
    QUrl prometheus;              // the Prometheus that scrapes these ctlds; empty: none
    int prometheusIntervalMs = 0; // how often to ask it; 0: as often as it evaluates its rules
    QList<ClusterNode> nodes;     // in file order, each address once
    QStringList groups;

    static constexpr int kDefaultPort = 7370;

    // All errors of the document, each "file:line:col: message"; `nodes` is empty on error.
    struct Parsed;
    static Parsed parse(const QString &text, const QString &path);
    static Parsed load(const QString &path);
    // A quick look without a file: `-H node[01-04]:7370` with the given credentials.
    static Parsed fromHostlist(const QString &hostlist, const Endpoint &credentials);
};

struct ClusterFile::Parsed {
    ClusterFile file;
    QStringList errors;
    bool ok() const { return errors.isEmpty(); }
};

} // namespace lutra::console
