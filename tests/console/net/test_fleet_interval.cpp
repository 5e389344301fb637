// How often FleetTelemetry asks Prometheus: Prometheus durations, the global interval read from
// /api/v1/status/config, and the poll interval following it, against a real HTTP server on a
// real socket (cpp-httplib) that answers like Prometheus and counts what it was asked.

#include "net/fleet_telemetry.h"

#include <QSignalSpy>
#include <QTest>

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace lutra::console;

namespace {

QByteArray configAnswer(const QString &yaml)
{
    return QByteArray(R"({"status":"success","data":{"yaml":)") + QByteArray("\"") +
           yaml.toUtf8().replace("\n", "\\n") + QByteArray("\"}}");
}

// Prometheus' own rendering of a configuration: its global block first, two-space indentation;
// a scrape job with an interval of its own that must not be taken for the global one.
QString prometheusYaml(const QString &evaluation)
{
    return QStringLiteral("global:\n  scrape_interval: 15s\n  scrape_timeout: 10s\n"
                          "  evaluation_interval: %1\n  external_labels:\n    site: a\n"
                          "rule_files:\n- /etc/prometheus/rules/*.yml\nscrape_configs:\n"
                          "- job_name: lutra-ctld\n  scrape_interval: 5s\n")
        .arg(evaluation);
}

// A Prometheus stand-in: /api/v1/status/config answers `config`, the queries an empty vector
// (or 503 while `down`).
class FakePrometheus {
public:
    FakePrometheus()
    {
        m_server.Get("/api/v1/status/config",
                     [this](const httplib::Request &, httplib::Response &response) {
                         ++configAsked;
                         std::lock_guard lock(m_mutex);
                         response.set_content(m_config.toStdString(), "application/json");
                     });
        const auto query = [this](const httplib::Request &request, httplib::Response &response) {
            if (request.path == "/api/v1/query_range") {
                ++polls;
            }
            if (down) {
                response.status = 503;
                response.set_content("Service Unavailable", "text/plain");
                return;
            }
            response.set_content(
                R"({"status":"success","data":{"resultType":"vector","result":[]}})",
                "application/json");
        };
        m_server.Get("/api/v1/query", query);
        m_server.Get("/api/v1/query_range", query);
        m_port = m_server.bind_to_any_port("127.0.0.1");
        // Listening from here on: requests wait in the backlog until the thread accepts them.
        m_thread = std::thread([this] { m_server.listen_after_bind(); });
    }
    ~FakePrometheus()
    {
        // stop() before the accept loop started would not stop it (a failed bind never starts).
        for (int i = 0; i < 2000 && m_port > 0 && !m_server.is_running(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        m_server.stop();
        m_thread.join();
    }

    QUrl url() const { return QUrl(QStringLiteral("http://127.0.0.1:%1").arg(m_port)); }
    void setConfig(const QByteArray &body)
    {
        std::lock_guard lock(m_mutex);
        m_config = QString::fromUtf8(body);
    }

    std::atomic<int> configAsked{0};
    std::atomic<int> polls{0};
    std::atomic<bool> down{false};

private:
    httplib::Server m_server;
    std::mutex m_mutex;
    QString m_config;
    int m_port = 0;
    std::thread m_thread;
};

} // namespace

class TestFleetInterval : public QObject {
    Q_OBJECT

private slots:
    void prometheusDurations_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("ms"); // -1: not a duration
        QTest::newRow("seconds") << "2s" << qint64(2'000);
        QTest::newRow("minutes and seconds") << "1m30s" << qint64(90'000);
        QTest::newRow("milliseconds") << "500ms" << qint64(500);
        QTest::newRow("hours") << "1h" << qint64(3'600'000);
        QTest::newRow("days and hours") << "1d2h" << qint64(26 * 3'600'000LL);
        QTest::newRow("empty") << "" << qint64(-1);
        QTest::newRow("zero") << "0s" << qint64(-1);
        QTest::newRow("no unit") << "15" << qint64(-1);
        QTest::newRow("space") << "2 s" << qint64(-1);
        QTest::newRow("fraction") << "1.5s" << qint64(-1);
        QTest::newRow("units out of order") << "30s1m" << qint64(-1);
        QTest::newRow("unit twice") << "1s1s" << qint64(-1);
        QTest::newRow("too large") << "99999999999y" << qint64(-1);
    }

    void prometheusDurations()
    {
        QFETCH(QString, text);
        QFETCH(qint64, ms);
        const auto parsed = parsePrometheusDurationMs(text);
        QCOMPARE(parsed.value_or(-1), ms);
    }

    void intervalFromPrometheusConfig()
    {
        auto interval = intervalFromStatusConfig(configAnswer(prometheusYaml("2s")));
        QVERIFY2(interval.error.isEmpty(), qPrintable(interval.error));
        QCOMPARE(interval.ms, qint64(2'000));
        QCOMPARE(interval.key, QString("evaluation_interval"));
        QCOMPARE(interval.text, QString("2s"));

        // No evaluation_interval: the scrape interval is when new numbers can come.
        interval = intervalFromStatusConfig(
            configAnswer("global:\n  scrape_interval: 1m\nscrape_configs: []\n"));
        QCOMPARE(interval.ms, qint64(60'000));
        QCOMPARE(interval.key, QString("scrape_interval"));

        // A job's own interval is not the global one.
        interval = intervalFromStatusConfig(
            configAnswer("scrape_configs:\n- job_name: a\n  scrape_interval: 5s\n"));
        QCOMPARE(interval.ms, qint64(0));
        QCOMPARE(interval.error, QString("its configuration has no global evaluation_interval "
                                         "or scrape_interval"));

        interval = intervalFromStatusConfig(configAnswer(prometheusYaml("soon")));
        QCOMPARE(interval.error,
                 QString("its global evaluation_interval 'soon' is not a duration"));
        interval = intervalFromStatusConfig("<html>login</html>");
        QVERIFY2(interval.error.startsWith("its /api/v1/status/config answer is not JSON"),
                 qPrintable(interval.error));
        interval = intervalFromStatusConfig(R"({"status":"error","error":"forbidden"})");
        QCOMPARE(interval.error,
                 QString("its /api/v1/status/config answer is an error: forbidden"));
        interval = intervalFromStatusConfig(R"({"status":"success","data":{}})");
        QCOMPARE(interval.error, QString("its /api/v1/status/config answer has no data.yaml"));
    }

    // Prometheus evaluates every second: the console asks every second, not every 15 s, and
    // asks for the configuration once while Prometheus keeps answering.
    void pollsAsOftenAsPrometheusEvaluates()
    {
        FakePrometheus prometheus;
        prometheus.setConfig(configAnswer(prometheusYaml("1s")));
        FleetTelemetry fleet(prometheus.url(), QString(), {});
        QSignalSpy changed(&fleet, &FleetTelemetry::pollIntervalChanged);
        fleet.start();
        QTRY_COMPARE_WITH_TIMEOUT(fleet.pollIntervalMs(), 1'000, 10'000);
        QCOMPARE(fleet.pollIntervalSource(), QString("Prometheus' evaluation_interval 1s"));
        QCOMPARE(changed.count(), 1);
        // Three polls more come within the time the old fixed interval gave one.
        const int before = prometheus.polls;
        QTRY_VERIFY_WITH_TIMEOUT(prometheus.polls >= before + 3,
                                 FleetTelemetry::kDefaultPollMs - 1'000);
        QCOMPARE(prometheus.configAsked.load(), 1);

        // Prometheus down, then back (restarted, another interval): asked again, followed.
        prometheus.down = true;
        QTRY_VERIFY_WITH_TIMEOUT(!fleet.lastError().isEmpty(), 10'000);
        prometheus.setConfig(configAnswer(prometheusYaml("2s")));
        prometheus.down = false;
        QTRY_COMPARE_WITH_TIMEOUT(fleet.pollIntervalMs(), 2'000, 10'000);
        QCOMPARE(prometheus.configAsked.load(), 2);
        QCOMPARE(fleet.pollIntervalSource(), QString("Prometheus' evaluation_interval 2s"));
    }

    void configuredIntervalWinsAndPrometheusIsNotAsked()
    {
        FakePrometheus prometheus;
        prometheus.setConfig(configAnswer(prometheusYaml("1s")));
        FleetTelemetry fleet(prometheus.url(), QString(), {});
        fleet.start(3'000);
        QTRY_VERIFY_WITH_TIMEOUT(fleet.lastUpdateMs() > 0, 10'000);
        QCOMPARE(fleet.pollIntervalMs(), 3'000);
        QCOMPARE(fleet.pollIntervalSource(), QString("the cluster file's prometheus_interval"));
        QCOMPARE(prometheus.configAsked.load(), 0);
    }

    // An interval Prometheus does not say (an old server, a proxy's login page): 15 s, and why.
    void withoutAnIntervalItIsFifteenSecondsAndSaysWhy()
    {
        FakePrometheus prometheus;
        prometheus.setConfig("<html>login</html>");
        FleetTelemetry fleet(prometheus.url(), QString(), {});
        QSignalSpy changed(&fleet, &FleetTelemetry::pollIntervalChanged);
        fleet.start();
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 10'000);
        QCOMPARE(fleet.pollIntervalMs(), FleetTelemetry::kDefaultPollMs);
        QVERIFY2(fleet.pollIntervalSource().startsWith(
                     "the default: Prometheus did not say its interval (its "
                     "/api/v1/status/config answer is not JSON"),
                 qPrintable(fleet.pollIntervalSource()));

        // 100 ms rules: polled every second at most.
        FakePrometheus fast;
        fast.setConfig(configAnswer(prometheusYaml("100ms")));
        FleetTelemetry fastFleet(fast.url(), QString(), {});
        fastFleet.start();
        QTRY_COMPARE_WITH_TIMEOUT(fastFleet.pollIntervalMs(), FleetTelemetry::kMinPollMs, 10'000);
        QCOMPARE(fastFleet.pollIntervalSource(),
                 QString("Prometheus' evaluation_interval 100ms, kept within 1s .. 1h"));
    }
};

QTEST_GUILESS_MAIN(TestFleetInterval)
#include "test_fleet_interval.moc"
