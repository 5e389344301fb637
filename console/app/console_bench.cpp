#include "app/console_bench.h"

#include "app/cluster_controller.h"
#include "app/main_window.h"
#include "app/readahead_view.h"
#include "core/params/catalog.h"
#include "net/node_connection.h"

#include <QApplication>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

namespace lutra::console {

namespace {

// The counters a client reports, named as the registry names them (Lustre 2.17's order).
const QStringList kReadaheadCounters = [] {
    QStringList names;
    for (const auto name : lutra::params::catalog::kReadAheadStatNames) {
        names << QString::fromLatin1(name.data(), qsizetype(name.size()));
    }
    return names;
}();
const QString kBlock = QStringLiteral("llite.bench.read_ahead_stats");
const QStringList kNamespaces{"ost0", "ost1"};

// Cumulative counter i of node n after t seconds: the hit ratio differs per node and drifts.
quint64 counterAt(int node, int counter, qint64 seconds)
{
    const double missShare = 0.02 + 0.3 * ((node * 37) % 100) / 100.0;
    const double pagesPerSecond = 2000.0 + 10.0 * counter;
    const double rate = counter == 0   ? pagesPerSecond * (1 - missShare)
                        : counter == 1 ? pagesPerSecond * missShare
                                       : pagesPerSecond / (counter + 1);
    return static_cast<quint64>(rate * double(seconds) + 0.5 * std::sin(double(seconds) / 30.0));
}

CounterUpdate updateAt(int node, qint64 timeMs, qint64 startMs)
{
    const qint64 seconds = (timeMs - startMs) / 1000;
    InstanceCounters instance;
    instance.instance = QStringLiteral("bench-job%1").arg(node);
    CounterBlock block;
    block.name = kBlock;
    block.snapshotTimeNs = timeMs * 1'000'000;
    block.startTimeNs = startMs * 1'000'000;
    for (int c = 0; c < kReadaheadCounters.size(); ++c) {
        Counter counter;
        counter.name = kReadaheadCounters.at(c);
        counter.unit = QStringLiteral("pages");
        counter.samples = counterAt(node, c, seconds);
        block.counters << counter;
    }
    instance.blocks << block;
    for (const auto &ns : kNamespaces) {
        const QString prefix = "ldlm.namespaces." + ns + ".";
        const qint64 locks = 200 + (seconds * 7 + node) % 300;
        instance.gauges << InstanceValue{instance.instance, prefix + "lock_count",
                                         QString::number(locks)}
                        << InstanceValue{instance.instance, prefix + "lock_unused_count",
                                         QString::number(locks / 2)}
                        << InstanceValue{instance.instance, prefix + "lru_size", "400"};
    }
    instance.gauges << InstanceValue{instance.instance, "llite.bench.cached_pages", "262144"}
                    << InstanceValue{instance.instance, "llite.bench.max_cached_mb", "4096"};
    CounterUpdate update;
    update.timeNs = timeMs * 1'000'000;
    update.instances << instance;
    return update;
}

// An hour of 10 s buckets before `untilMs`, as GetCounterHistory returns them.
QList<HistorySeries> historyOf(int node, qint64 untilMs, qint64 startMs)
{
    QList<HistorySeries> history;
    const auto instance = QStringLiteral("bench-job%1").arg(node);
    for (int c = 0; c < kReadaheadCounters.size(); ++c) {
        HistorySeries series;
        series.instance = instance;
        series.counter = kBlock + "." + kReadaheadCounters.at(c);
        for (qint64 t = untilMs - 3'600'000; t < untilMs; t += 10'000) {
            const qint64 value = qint64(counterAt(node, c, (t - startMs) / 1000));
            series.timeNs << t * 1'000'000;
            series.value << value;
            series.min << value;
            series.max << value;
        }
        history << series;
    }
    return history;
}

qint64 rssKiB()
{
    QFile status("/proc/self/status");
    if (!status.open(QIODevice::ReadOnly)) {
        return -1;
    }
    for (const auto &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:")) {
            return line.mid(6).trimmed().split(' ').first().toLongLong();
        }
    }
    return -1;
}

double percentile(QList<double> values, double p)
{
    if (values.isEmpty()) {
        return qQNaN();
    }
    std::sort(values.begin(), values.end());
    const auto index = std::min<qsizetype>(values.size() - 1, qsizetype(p * double(values.size())));
    return values.at(index);
}

struct Measured {
    double updatesMedianMs = 0; // every node's update arriving (controller, series, models)
    double clusterMedianMs = 0;
    double clusterP90Ms = 0;
    double nodeMedianMs = 0;
    qint64 rssKiB = 0;
};

Measured measure(int nodes, int frames)
{
    ClusterController cluster;
    MainWindow window(cluster);
    window.setFrameInterval(24 * 3600 * 1000); // the bench drives the frames itself
    window.resize(1400, 900);
    window.show();
    ClusterFile file;
    file.name = QStringLiteral("bench");
    for (int n = 0; n < nodes; ++n) {
        ClusterNode node;
        node.group = QStringLiteral("bench");
        node.endpoint.address = QStringLiteral("bench-node%1:7370").arg(n, 3, 10, QChar('0'));
        file.nodes << node;
    }
    window.openCluster(file, false);
    const qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    const qint64 firstLive = nowMs - qint64(frames) * 1000;
    const qint64 startMs = firstLive - 2 * 3'600'000;
    const auto addresses = cluster.addresses();
    for (int n = 0; n < nodes; ++n) {
        cluster.injectHistory(addresses.at(n), historyOf(n, firstLive, startMs));
    }
    Measured measured;
    QList<double> clusterFrames;
    QList<double> nodeFrames;
    QList<double> updates;
    window.showTab(MainWindow::readaheadTab);
    for (int frame = 0; frame < frames; ++frame) {
        const bool nodeScope = frame % 2 == 1;
        window.readaheadView()->setScope(nodeScope ? ReadaheadView::Scope::node
                                                   : ReadaheadView::Scope::cluster);
        QApplication::processEvents();
        QElapsedTimer timer;
        timer.start();
        // One frame = every node's update arriving + the visible view redrawing and painting.
        const qint64 t = firstLive + qint64(frame) * 1000;
        for (int n = 0; n < nodes; ++n) {
            cluster.injectCounters(addresses.at(n), updateAt(n, t, startMs));
        }
        updates << double(timer.nsecsElapsed()) / 1e6;
        window.frame();
        window.repaint();
        const double ms = double(timer.nsecsElapsed()) / 1e6;
        (nodeScope ? nodeFrames : clusterFrames) << ms;
    }
    measured.updatesMedianMs = percentile(updates, 0.5);
    measured.clusterMedianMs = percentile(clusterFrames, 0.5);
    measured.clusterP90Ms = percentile(clusterFrames, 0.9);
    measured.nodeMedianMs = percentile(nodeFrames, 0.5);
    measured.rssKiB = rssKiB();
    cluster.shutdown();
    return measured;
}

// utime + stime of a process, in clock ticks.
qint64 cpuTicks(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly)) {
        return -1;
    }
    const QByteArray text = stat.readAll();
    // The command name may hold spaces: fields are counted after its closing parenthesis.
    const auto fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    return fields.size() > 12 ? fields.at(11).toLongLong() + fields.at(12).toLongLong() : -1;
}

// The event loop runs for `ms`; returns the process' CPU use meanwhile, in % of one core.
double cpuPercentOver(qint64 pid, int ms, int *updates, const std::function<int()> &countUpdates)
{
    const qint64 before = cpuTicks(pid);
    const int updatesBefore = countUpdates();
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < ms) {
        QApplication::processEvents(QEventLoop::AllEvents, 100);
    }
    const qint64 after = cpuTicks(pid);
    *updates = countUpdates() - updatesBefore;
    const double ticksPerSecond = double(sysconf(_SC_CLK_TCK));
    return 100.0 * double(after - before) / ticksPerSecond / (double(timer.elapsed()) / 1000.0);
}

} // namespace

int runStreamsBench(const Endpoint &node, qint64 ctldPid, int streams, int seconds)
{
    if (cpuTicks(ctldPid) < 0 || streams < 1 || streams > 4096 || seconds < 2) {
        std::fprintf(stderr, "lutra-console: --bench-streams needs --node, a live --ctld-pid, "
                             "1..4096 streams and --seconds >= 2\n");
        return 2;
    }
    int updates = 0;
    const auto none = [] { return 0; };
    const double idle = cpuPercentOver(ctldPid, seconds * 1000, &updates, none);

    // The same N connections measured twice: streaming (a console without Prometheus streams
    // every node), then only probed (with Prometheus, a node off screen is probed every 5 s).
    std::vector<std::unique_ptr<NodeConnection>> connections;
    int received = 0;
    const auto measureConnections = [&](bool streaming, double *cpuPercent) {
        for (int i = 0; i < streams; ++i) {
            auto connection = std::make_unique<NodeConnection>(node);
            auto *raw = connection.get();
            raw->setStreaming(streaming);
            QObject::connect(raw, &NodeConnection::countersAvailable, raw, [raw, &received] {
                if (raw->takeLatestCounters()) {
                    ++received;
                }
            });
            connection->start();
            connections.push_back(std::move(connection));
        }
        QElapsedTimer ready;
        ready.start();
        const auto allReady = [&] {
            return std::all_of(connections.begin(), connections.end(),
                               [](const auto &c) { return c->state() == ConnectionState::ready; });
        };
        while (!allReady() && ready.elapsed() < 60'000) {
            QApplication::processEvents(QEventLoop::AllEvents, 100);
        }
        if (!allReady()) {
            return false;
        }
        *cpuPercent =
            cpuPercentOver(ctldPid, seconds * 1000, &updates, [&received] { return received; });
        for (auto &connection : connections) {
            connection->shutdown();
        }
        connections.clear();
        return true;
    };
    double busy = 0;
    double probed = 0;
    if (!measureConnections(true, &busy)) {
        std::fprintf(stderr, "lutra-console: --bench-streams: not every stream connected\n");
        return 1;
    }
    const int streamUpdates = updates;
    if (!measureConnections(false, &probed)) {
        std::fprintf(stderr, "lutra-console: --bench-streams: not every connection came up\n");
        return 1;
    }
    const double perUpdateUs =
        streamUpdates > 0 ? (busy - idle) / 100.0 * seconds * 1e6 / double(streamUpdates) : qQNaN();
    const QJsonObject result{
        {"mode", "console-streams"},
        {"streams", streams},
        {"seconds", seconds},
        {"ctld_cpu_percent_idle", idle},
        {"ctld_cpu_percent_with_streams", busy},
        {"updates_received", streamUpdates},
        {"ctld_cpu_us_per_stream_update", perUpdateUs},
        // What the same connections cost with Prometheus for the fleet: probes only.
        {"ctld_cpu_percent_probes_only", probed},
        {"updates_received_probes_only", updates},
        {"probes_only_vs_streams", busy - idle > 0 ? (probed - idle) / (busy - idle) : qQNaN()}};
    std::printf("%s", QJsonDocument(result).toJson().constData());
    return 0;
}

int runConsoleBench(const QString &nodeCounts, int frames)
{
    QList<int> counts;
    for (const auto &part : nodeCounts.split(',', Qt::SkipEmptyParts)) {
        bool ok = false;
        const int n = part.trimmed().toInt(&ok);
        if (!ok || n < 1 || n > 4096) {
            std::fprintf(stderr, "lutra-console: --bench: '%s' is not a node count in 1..4096\n",
                         qPrintable(part));
            return 2;
        }
        counts << n;
    }
    if (counts.isEmpty() || frames < 4) {
        std::fprintf(stderr, "lutra-console: --bench needs node counts (1,128) and >= 4 frames\n");
        return 2;
    }
    QJsonArray runs;
    QHash<int, Measured> byCount;
    for (const int n : counts) {
        const auto measured = measure(n, frames);
        byCount.insert(n, measured);
        runs.append(QJsonObject{{"nodes", n},
                                {"frame_cluster_median_ms", measured.clusterMedianMs},
                                {"updates_median_ms", measured.updatesMedianMs},
                                {"frame_cluster_p90_ms", measured.clusterP90Ms},
                                {"frame_node_median_ms", measured.nodeMedianMs},
                                {"rss_mib_after", double(measured.rssKiB) / 1024.0}});
    }
    QJsonObject result{{"mode", "console"}, {"frames", frames}, {"runs", runs}};
    const int low = *std::min_element(counts.begin(), counts.end());
    const int high = *std::max_element(counts.begin(), counts.end());
    if (low != high) {
        result.insert(QStringLiteral("frame_%1_vs_%2").arg(high).arg(low),
                      byCount[high].clusterMedianMs / byCount[low].clusterMedianMs);
    }
    std::printf("%s", QJsonDocument(result).toJson().constData());
    return 0;
}

} // namespace lutra::console
