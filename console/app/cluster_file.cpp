#include "app/cluster_file.h"

#include "client/cluster_file.h"
#include "core/promql.h"
#include "net/fleet_telemetry.h"

#include <QFileInfo>

namespace lutra::console {

namespace {

ClusterFile::Parsed convert(ctld::ParsedClusterFile parsed, const QString &path,
                            const QString &shownPath)
{
    ClusterFile::Parsed out;
    out.file.path = path;
    for (const auto &error : parsed.errors) {
        out.errors << QString::fromStdString(error);
    }
    const auto &contents = parsed.contents;
    out.file.name = QString::fromStdString(contents.name);
    if (!contents.prometheus.value.empty()) {
        const QUrl url(QString::fromStdString(contents.prometheus.value), QUrl::StrictMode);
        if (const auto why = promql::checkBaseUrl(url); !why.isEmpty()) {
            out.errors << QStringLiteral("%1:%2:%3: 'prometheus' %4")
                              .arg(shownPath)
                              .arg(contents.prometheus.line)
                              .arg(contents.prometheus.column)
                              .arg(why);
        } else {
            out.file.prometheus = url;
        }
    }
    if (const auto &interval = contents.prometheusInterval; !interval.value.empty()) {
        const QString text = QString::fromStdString(interval.value);
        const auto ms = parsePrometheusDurationMs(text);
        const auto where =
            QStringLiteral("%1:%2:%3: ").arg(shownPath).arg(interval.line).arg(interval.column);
        if (!ms || *ms < FleetTelemetry::kMinPollMs || *ms > FleetTelemetry::kMaxPollMs) {
            out.errors << where + QStringLiteral("'prometheus_interval' must be a duration from "
                                                 "1s to 1h such as 2s, 15s or 1m30s, not '%1'")
                                      .arg(text);
        } else if (contents.prometheus.value.empty()) {
            out.errors << where + QStringLiteral("'prometheus_interval' without 'prometheus': "
                                                 "name the Prometheus to ask that often");
        } else {
            out.file.prometheusIntervalMs = int(*ms);
        }
    }
    for (const auto &group : contents.groups) {
        out.file.groups << QString::fromStdString(group);
    }
    if (!out.errors.isEmpty()) {
        return out; // no nodes from a file with errors
    }
    for (const auto &node : contents.nodes) {
        Endpoint endpoint;
        endpoint.address = QString::fromStdString(node.address);
        endpoint.tokenFile = QString::fromStdString(node.credentials.tokenFile);
        endpoint.tlsCa = QString::fromStdString(node.credentials.tlsCa);
        endpoint.tlsCert = QString::fromStdString(node.credentials.tlsCert);
        endpoint.tlsKey = QString::fromStdString(node.credentials.tlsKey);
        if (node.credentials.timeout) {
            endpoint.callTimeoutMs = int(node.credentials.timeout->count());
        }
        out.file.nodes << ClusterNode{QString::fromStdString(node.group), endpoint};
    }
    return out;
}

} // namespace

ClusterFile::Parsed ClusterFile::parse(const QString &text, const QString &path)
{
    const QString shownPath = path.isEmpty() ? QStringLiteral("cluster file") : path;
    const QString baseDir = path.isEmpty() ? QString() : QFileInfo(path).absolutePath();
    return convert(
        ctld::parseClusterFile(text.toStdString(), shownPath.toStdString(), baseDir.toStdString()),
        path, shownPath);
}

ClusterFile::Parsed ClusterFile::load(const QString &path)
{
    return convert(ctld::loadClusterFile(path.toStdString()), path, path);
}

ClusterFile::Parsed ClusterFile::fromHostlist(const QString &hostlist, const Endpoint &credentials)
{
    Parsed parsed;
    auto addresses = ctld::expandCtldAddresses(hostlist.toStdString());
    if (!addresses) {
        parsed.errors << "-H " + hostlist + ": " +
                             QString::fromStdString(addresses.status().message());
        return parsed;
    }
    parsed.file.name = hostlist;
    parsed.file.groups << QStringLiteral("hosts");
    for (const auto &address : *addresses) {
        Endpoint endpoint = credentials;
        endpoint.address = QString::fromStdString(address);
        parsed.file.nodes << ClusterNode{QStringLiteral("hosts"), endpoint};
    }
    return parsed;
}

} // namespace lutra::console
