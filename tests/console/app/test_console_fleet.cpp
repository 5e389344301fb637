// The console with a Prometheus in its cluster file: a real Prometheus (config/prometheus/ with
// 1 s intervals) scrapes three real lutra-ctld nodes, and the console draws the cluster views
// from PromQL while no node streams counters; the node opened on screen (and only it) streams.
// A Prometheus that stops answering is said so, and the charts keep its last answer.

#include "../../ctld/prometheus/prometheus_process.h"
#include "app/cluster_controller.h"
#include "app/main_window.h"
#include "app/node_picker.h"
#include "app/node_view.h"
#include "app/readahead_view.h"
#include "console_test_cluster.h"
#include "models/cluster_model.h"
#include "models/ranking_model.h"
#include "net/fleet_telemetry.h"
#include "widgets/heat_map.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QStatusBar>

using namespace lutra::console;
using namespace lutra::console::test;

namespace {

// The file_sd list `lutractl prometheus-targets --cluster` writes, for nodes that share one host
// and so have a metrics port each (the command takes one --metrics-port for all).
QByteArray targetsJson(TestCluster &nodes)
{
    QJsonArray targets;
    for (int i = 0; i < nodes.size(); ++i) {
        const auto &node = nodes.node(i);
        targets.append(QJsonObject{
            {"targets", QJsonArray{QStringLiteral("127.0.0.1:%1").arg(node.metricsPort)}},
            {"labels", QJsonObject{{"cluster", "console-test"},
                                   {"group", "compute"},
                                   {"ctld", QStringLiteral("127.0.0.1:%1").arg(node.port)}}}});
    }
    return QJsonDocument(targets).toJson();
}

// Whether every row of the heat map has data in at least `cells` buckets and no empty bucket
// between its first and its last.
bool rowsSteady(const HeatMap &map, int cells)
{
    for (int row = 0; row < map.rowCount(); ++row) {
        QList<int> withData;
        for (int bucket = 0; bucket < map.bucketCount(); ++bucket) {
            if (map.colorAt(row, bucket) != HeatMap::noDataColor()) {
                withData << bucket;
            }
        }
        if (withData.size() < cells || withData.last() - withData.first() + 1 != withData.size()) {
            return false;
        }
    }
    return map.rowCount() > 0;
}

int streamingNodes(const ClusterController &cluster)
{
    int streaming = 0;
    for (const auto &address : cluster.addresses()) {
        streaming += cluster.isStreaming(address);
    }
    return streaming;
}

} // namespace

class TestConsoleFleet : public QObject {
    Q_OBJECT

private:
    TestCluster m_nodes;
    std::unique_ptr<lutra::test::Prometheus> m_prometheus;
    std::unique_ptr<ClusterController> m_cluster;
    std::unique_ptr<MainWindow> m_window;

    QString address(int i) { return QStringLiteral("127.0.0.1:%1").arg(m_nodes.node(i).port); }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true);
        QVERIFY2(!QStandardPaths::findExecutable("prometheus").isEmpty(),
                 "prometheus not found: install Debian's prometheus package");
        const auto error = m_nodes.start(3, true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // Distinct cache limits per node: what the Cluster table must show from Prometheus.
        for (int i = 0; i < m_nodes.size(); ++i) {
            const auto set = lutra::test::runProcess(
                QStringLiteral(LUTRACTL_BIN),
                {"--socket", m_nodes.node(i).runDir + "/ctld.sock", "set_param",
                 QStringLiteral("llite.*.max_cached_mb=%1").arg(256 * (i + 1))},
                m_nodes.node(i).runDir);
            QVERIFY2(set.exitCode == 0,
                     qPrintable(set.out + set.err + m_nodes.node(i).ctld->log()));
        }
        const auto dir = m_nodes.filePath("prometheus");
        const auto configError = lutra::test::writeFastPrometheusConfig(
            QStringLiteral(LUTRA_PROMETHEUS_CONFIG_DIR), dir);
        QVERIFY2(configError.isEmpty(), qPrintable(configError));
        QFile targets(dir + "/lutra-targets.json");
        QVERIFY(targets.open(QIODevice::WriteOnly));
        targets.write(targetsJson(m_nodes));
        targets.close();
        m_prometheus = std::make_unique<lutra::test::Prometheus>(dir, freePort());
        QTRY_VERIFY2_WITH_TIMEOUT(m_prometheus->ready() || !m_prometheus->running(), "not ready",
                                  20000);
        QVERIFY2(m_prometheus->running(), qPrintable(m_prometheus->log()));

        m_cluster = std::make_unique<ClusterController>();
        m_window = std::make_unique<MainWindow>(*m_cluster);
        m_window->setFrameInterval(200);
        m_window->resize(1400, 900);
        m_window->show();
        const auto parsed = ClusterFile::load(m_nodes.clusterFile(
            "admin", QStringLiteral("http://127.0.0.1:%1").arg(m_prometheus->port())));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        m_window->showTab(MainWindow::clusterTab);
        m_window->openCluster(parsed.file);
        QVERIFY(m_cluster->fleet() != nullptr);
        m_cluster->fleet()->start(500);
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_cluster.reset();
        m_prometheus.reset();
        m_nodes.stop();
    }

    void clusterTableComesFromPrometheusWithoutStreams()
    {
        auto &model = m_cluster->clusterModel();
        // Every node's cache limit, as each node's ctld reports it to Prometheus.
        const auto cacheShown = [&] {
            for (int i = 0; i < m_nodes.size(); ++i) {
                bool found = false;
                for (int row = 0; row < model.rowCount(); ++row) {
                    if (model.index(row, 0).data(ClusterModel::AddressRole) == address(i)) {
                        found = cell(model, row, ClusterModel::Cache)
                                    .endsWith(QStringLiteral("/ %1 MiB").arg(256 * (i + 1)));
                    }
                }
                if (!found) {
                    return false;
                }
            }
            return true;
        };
        QTRY_VERIFY_WITH_TIMEOUT(cacheShown(), 30000);
        // Connected (probed, instances known) but not one counter stream: the Cluster tab shows
        // no single node.
        for (int i = 0; i < m_nodes.size(); ++i) {
            const auto *connection = m_cluster->connection(address(i));
            QCOMPARE(connection->state(), ConnectionState::ready);
            QVERIFY(!connection->instances().isEmpty());
            QVERIFY(!m_cluster->isStreaming(address(i)));
            // ctld sends a stream update every 500 ms (poll_interval): none arrived in the
            // seconds the Prometheus answers took.
            QVERIFY(m_cluster->latestCounters(address(i)) == nullptr);
        }
        QVERIFY(m_window->statusBar()->currentMessage().contains("fleet charts from Prometheus"));
        screenshot(*m_window, "fleet-cluster");
    }

    void readaheadClusterScopeDrawsPrometheusRates()
    {
        auto *view = m_window->readaheadView();
        view->setScope(ReadaheadView::Scope::cluster); // before the tab shows: no node on screen
        view->setWindowMinutes(1); // 120 half-second buckets, Prometheus' answers 1 s apart
        m_window->showTab(MainWindow::readaheadTab);
        // Every node reads (its bench loops): each has a hit ratio in Prometheus, ranked here.
        QTRY_COMPARE_WITH_TIMEOUT(view->ranking()->rowCount(), m_nodes.size(), 40000);
        const auto recorded = m_prometheus->query("node:lutra_read_ahead_hit_ratio:rate1m", "ctld");
        QStringList ranked;
        for (const auto &entry : view->ranking()->entries()) {
            ranked << entry.node;
            QVERIFY2(entry.hitRatio >= 0 && entry.hitRatio <= 1,
                     qPrintable(QString::number(entry.hitRatio)));
        }
        ranked.sort();
        QCOMPARE(ranked, QStringList({"node001", "node002", "node003"}));
        QCOMPARE(recorded.size(), std::size_t(m_nodes.size()));
        // No node streams, so these ratios can only have come from Prometheus.
        for (int i = 0; i < m_nodes.size(); ++i) {
            QVERIFY(m_cluster->latestCounters(address(i)) == nullptr);
        }
        QTRY_VERIFY_WITH_TIMEOUT(
            view->source()->text().contains(QStringLiteral("3 of 3 nodes have reads to rate")),
            10000);
        QVERIFY(view->source()->isVisible());
        // How often the charts can change, and why that often.
        const FleetTelemetry &fleet = *m_cluster->fleet();
        QVERIFY2(view->source()->text().contains(
                     QStringLiteral("polled every %1 s as %2")
                         .arg(QString::number(fleet.pollIntervalMs() / 1000.0),
                              fleet.pollIntervalSource())),
                 qPrintable(view->source()->text()));
        QCOMPARE(streamingNodes(*m_cluster), 0);
        // Every node reads all along: its heat-map row is one run, not stripes of empty
        // half-second buckets between the 1 s samples.
        QTRY_VERIFY_WITH_TIMEOUT(rowsSteady(*view->heatMap(), 6), 20000);
        screenshot(*m_window, "fleet-readahead");
    }

    // Without prometheus_interval the console asks this real Prometheus how often it evaluates
    // its rules (1 s here, 15 s as shipped) and polls that often.
    void pollsAsOftenAsThisPrometheusEvaluates()
    {
        FleetTelemetry fleet(QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_prometheus->port())),
                             QStringLiteral("console-test"), {address(0)});
        fleet.start();
        QTRY_COMPARE_WITH_TIMEOUT(fleet.pollIntervalMs(), 1'000, 20'000);
        QCOMPARE(fleet.pollIntervalSource(), QString("Prometheus' evaluation_interval 1s"));
        QTRY_VERIFY_WITH_TIMEOUT(!fleet.facts().isEmpty(), 20'000);
        QVERIFY2(fleet.lastError().isEmpty(), qPrintable(fleet.lastError()));
    }

    void onlyTheNodeOnScreenStreams()
    {
        m_window->nodeView()->picker()->setCurrentAddress(address(1));
        m_window->showTab(MainWindow::nodeTab);
        QTRY_VERIFY_WITH_TIMEOUT(m_cluster->latestCounters(address(1)) != nullptr, 20000);
        QVERIFY(m_cluster->isStreaming(address(1)));
        QCOMPARE(streamingNodes(*m_cluster), 1);
        QVERIFY(m_cluster->latestCounters(address(0)) == nullptr);
        QVERIFY(m_cluster->latestCounters(address(2)) == nullptr);
        screenshot(*m_window, "fleet-node");
        // Back to the cluster: the node stops streaming.
        m_window->showTab(MainWindow::readaheadTab);
        QTRY_COMPARE_WITH_TIMEOUT(streamingNodes(*m_cluster), 0, 5000);
    }

    void aPrometheusThatStopsAnsweringIsSaidSo()
    {
        auto *view = m_window->readaheadView();
        const int rows = view->ranking()->rowCount();
        m_prometheus->stop();
        QTRY_VERIFY_WITH_TIMEOUT(!m_cluster->fleet()->lastError().isEmpty(), 20000);
        QTRY_VERIFY2_WITH_TIMEOUT(
            view->source()->text().contains("did not answer"),
            qPrintable(view->source()->text() + " / " + m_cluster->fleet()->lastError()), 5000);
        // The status bar says it at the next frame.
        QTRY_VERIFY2_WITH_TIMEOUT(
            m_window->statusBar()->currentMessage().contains(
                QStringLiteral("Prometheus http://127.0.0.1:%1: ").arg(m_prometheus->port())),
            qPrintable(m_window->statusBar()->currentMessage()), 5000);
        // The charts keep the last answer rather than going blank.
        QCOMPARE(view->ranking()->rowCount(), rows);
        screenshot(*m_window, "fleet-prometheus-down");
    }
};

QTEST_MAIN(TestConsoleFleet)
#include "test_console_fleet.moc"
