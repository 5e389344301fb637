// A real Prometheus (Debian's package) on loopback scrapes three real lutra-ctld nodes (each with
// a lutra-bench --loop datapath process) through config/prometheus/ (intervals shortened to 1 s)
// and the file_sd list `lutractl prometheus-targets --ask-nodes` wrote; the recording rules'
// series exist with the nodes' labels, and gauge-based ones equal what each ctld's /metrics says.
#include "prometheus_process.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <map>
#include <optional>

using namespace lutra::test;

namespace {

constexpr int kNodes = 3;
const QString kToken = QStringLiteral("prometheus-test-token-0123456789");

// Binds host:port (0: any) and returns the port, or 0 when it is taken.
int bindPort(const char *host, int port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<std::uint16_t>(port));
    ::inet_pton(AF_INET, host, &address.sin_addr);
    socklen_t length = sizeof address;
    int bound = 0;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) == 0) {
        bound = ntohs(address.sin_port);
    }
    ::close(fd);
    return bound;
}

QString nodeHost(int node)
{
    return QStringLiteral("127.0.0.%1").arg(node + 2);
}

// A port P with P (gRPC) and P+1 (metrics) free on every node's loopback address: the fleet
// looks like real hosts, one ctld each on the same ports.
int fleetPort()
{
    for (int attempt = 0; attempt < 50; ++attempt) {
        const int port = bindPort("127.0.0.2", 0);
        bool free = port > 0 && port < 65535;
        for (int node = 0; free && node < kNodes; ++node) {
            const auto host = nodeHost(node).toLatin1();
            free = bindPort(host.constData(), port) == port &&
                   bindPort(host.constData(), port + 1) == port + 1;
        }
        if (free) {
            return port;
        }
    }
    return 0;
}

bool writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
}

// The sum of one metric's samples in a /metrics text, or nullopt when it has none.
std::optional<double> sumOf(const std::string &text, const std::string &metric)
{
    std::optional<double> sum;
    std::size_t at = 0;
    while ((at = text.find(metric + "{", at)) != std::string::npos) {
        if (at != 0 && text[at - 1] != '\n') {
            at += metric.size();
            continue;
        }
        const auto end = text.find('\n', at);
        const auto line = text.substr(at, end - at);
        sum = sum.value_or(0) + std::stod(line.substr(line.rfind(' ') + 1));
        at = end;
    }
    return sum;
}

} // namespace

class TestPrometheusScrape : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void recordedSeriesMatchWhatCtldReports()
    {
        QVERIFY(m_dir.isValid());
        QVERIFY2(!QStandardPaths::findExecutable("prometheus").isEmpty(),
                 "prometheus not found: install Debian's prometheus package");
        const int port = fleetPort();
        QVERIFY2(port > 0, "no port free on 127.0.0.2-4");
        const QString tokenFile = m_dir.filePath("token");
        QVERIFY(writeFile(tokenFile, kToken.toUtf8() + "\n"));

        // Three nodes, each its own run dir, datapath process and ctld.
        std::vector<std::unique_ptr<BenchProcess>> benches;
        std::vector<std::unique_ptr<CtldProcess>> ctlds;
        for (int node = 0; node < kNodes; ++node) {
            const QString runDir = m_dir.filePath(QStringLiteral("n%1").arg(node + 1));
            QVERIFY(QDir().mkpath(runDir));
            benches.push_back(std::make_unique<BenchProcess>(runDir, "b", "job1"));
            ctlds.push_back(std::make_unique<CtldProcess>(
                runDir, QStringLiteral("node: n%1\nlabels: {role: compute, rack: r%1}\n"
                                       "listen: [%2:%3]\nmetrics_listen: %2:%4\n"
                                       "run_dir: %5\ndb: %5/ctld.db\npoll_interval: 200ms\n"
                                       "auth:\n  tokens:\n    - {name: prom, token: %6, "
                                       "role: viewer}\n")
                            .arg(node + 1)
                            .arg(nodeHost(node))
                            .arg(port)
                            .arg(port + 1)
                            .arg(runDir, kToken)));
        }
        for (int node = 0; node < kNodes; ++node) {
            QVERIFY(benches[node]->waitReady());
            QVERIFY2(ctlds[node]->waitReady(), qPrintable(ctlds[node]->log()));
        }
        // Distinct cache sizes per node, and a fixed LRU size on n1 only (the others stay
        // dynamic, so they get no LRU fill ratio). Local socket: admin.
        for (int node = 0; node < kNodes; ++node) {
            const QString runDir = m_dir.filePath(QStringLiteral("n%1").arg(node + 1));
            QStringList assignments{
                QStringLiteral("llite.*.max_cached_mb=%1").arg(256 * (node + 1))};
            if (node == 0) {
                assignments << "ldlm.namespaces.*.lru_size=100";
            }
            const auto set = runProcess(
                QStringLiteral(LUTRACTL_BIN),
                QStringList{"--socket", runDir + "/ctld.sock", "set_param"} + assignments, runDir);
            QVERIFY2(set.exitCode == 0, qPrintable(set.out + set.err));
        }

        // The file_sd list, with each node's own labels asked over TCP with a token.
        QVERIFY(QDir().mkpath(m_dir.filePath("prometheus/rules")));
        const QString targets = m_dir.filePath("prometheus/lutra-targets.json");
        const auto written =
            runProcess(QStringLiteral(LUTRACTL_BIN),
                       {"-H", QStringLiteral("127.0.0.[2-%1]:%2").arg(kNodes + 1).arg(port),
                        "--token-file", tokenFile, "prometheus-targets", "--ask-nodes",
                        "--metrics-port", QString::number(port + 1), "-o", targets},
                       m_dir.path());
        QVERIFY2(written.exitCode == 0, qPrintable(written.out + written.err));

        // config/prometheus/ as shipped, with 1 s intervals.
        const auto configError = writeFastPrometheusConfig(
            QStringLiteral(LUTRA_PROMETHEUS_CONFIG_DIR), m_dir.filePath("prometheus"));
        QVERIFY2(configError.isEmpty(), qPrintable(configError));
        const int webPort = bindPort("127.0.0.1", 0);
        Prometheus prometheus(m_dir.filePath("prometheus"), webPort);
        QTRY_VERIFY2_WITH_TIMEOUT(prometheus.ready() || !prometheus.running(), "not ready", 20000);
        QVERIFY2(prometheus.running(), qPrintable(prometheus.log()));

        // Every node scraped ...
        QTRY_VERIFY2_WITH_TIMEOUT(
            prometheus.query("job:lutra_ctld_up:sum", "job").size() == 1 &&
                valueOf(prometheus.query("job:lutra_ctld_up:sum", "job")["lutra-ctld"]) == kNodes,
            qPrintable(prometheus.log()), 20000);
        // ... and two scrapes of each (rates need them) in the recorded readahead ratio.
        QTRY_VERIFY_WITH_TIMEOUT(
            prometheus.query("node:lutra_read_ahead_hit_ratio:rate1m", "node").size() == kNodes,
            20000);
        const auto ratios = prometheus.query("node:lutra_read_ahead_hit_ratio:rate1m", "node");
        for (int node = 0; node < kNodes; ++node) {
            const QString name = QStringLiteral("n%1").arg(node + 1);
            QVERIFY2(ratios.contains(name), qPrintable(name));
            const auto labels = ratios.at(name)["metric"].toObject().toVariantMap();
            // Target labels from the file (group, ctld, the node's own role and rack) and ctld's
            // node label; the per-process labels are aggregated away.
            QCOMPARE(labels["group"].toString(), QString("hosts"));
            QCOMPARE(labels["ctld"].toString(),
                     QStringLiteral("%1:%2").arg(nodeHost(node)).arg(port));
            QCOMPARE(labels["role"].toString(), QString("compute"));
            QCOMPARE(labels["rack"].toString(), QStringLiteral("r%1").arg(node + 1));
            QCOMPARE(labels["instance"].toString(),
                     QStringLiteral("%1:%2").arg(nodeHost(node)).arg(port + 1));
            QCOMPARE(labels["job"].toString(), QString("lutra-ctld"));
            QVERIFY(!labels.contains("process") && !labels.contains("fs"));
            const double ratio = valueOf(ratios.at(name));
            QVERIFY2(ratio >= 0 && ratio <= 1, qPrintable(QString::number(ratio)));
        }
        QCOMPARE(prometheus.query("job:lutra_read_ahead_hit_ratio:rate1m", "job").size(),
                 std::size_t(1));

        // Gauge rules equal what each ctld's /metrics says.
        QTRY_VERIFY_WITH_TIMEOUT(
            prometheus.query("node:lutra_llite_max_cached_bytes:sum", "node").size() == kNodes,
            20000);
        const auto maxCached = prometheus.query("node:lutra_llite_max_cached_bytes:sum", "node");
        const auto lruFixed = prometheus.query("node:lutra_ldlm_lru_size_fixed:sum", "node");
        for (int node = 0; node < kNodes; ++node) {
            httplib::Client client(nodeHost(node).toStdString(), port + 1);
            const auto response = client.Get("/metrics");
            QVERIFY(response && response->status == 200);
            const auto reported = sumOf(response->body, "lutra_llite_max_cached_bytes");
            QVERIFY(reported.has_value());
            QCOMPARE(*reported, 256.0 * (node + 1) * 1024 * 1024);
            const QString name = QStringLiteral("n%1").arg(node + 1);
            QCOMPARE(valueOf(maxCached.at(name)), *reported);
            if (node == 0) {
                const auto lru = sumOf(response->body, "lutra_ldlm_lru_size");
                QVERIFY(lru.has_value() && *lru == 200); // two namespaces of 100
                QCOMPARE(valueOf(lruFixed.at(name)), *lru);
            } else {
                QVERIFY(!lruFixed.contains(name));
            }
        }
        // The LRU fill ratio exists only where lru_size is fixed: n1's two namespaces.
        const auto fill = prometheus.query("namespace:lutra_ldlm_lru_fill:ratio", "namespace");
        QCOMPARE(fill.size(), std::size_t(2));
        for (const auto &[ns, sample] : fill) {
            QCOMPARE(sample["metric"].toObject()["node"].toString(), QString("n1"));
            QVERIFY(valueOf(sample) >= 0);
        }
        QCOMPARE(prometheus.query("node:lutra_llite_cache_use:ratio", "node").size(),
                 std::size_t(kNodes));
        // A rate needs two scrapes of a node's read RPC counters, which appear only once its
        // bench has read (the bench writes first): wait for every node, as for the gauges above.
        QTRY_COMPARE_WITH_TIMEOUT(
            prometheus.query("node:lutra_osc_rpcs:rate1m{direction=\"read\"}", "node").size(),
            std::size_t(kNodes), 20000);
        for (auto &ctld : ctlds) {
            QCOMPARE(ctld->stop(), 0);
        }
    }
};

QTEST_GUILESS_MAIN(TestPrometheusScrape)
#include "test_prometheus_scrape.moc"
