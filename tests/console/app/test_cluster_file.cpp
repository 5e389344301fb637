// The cluster file: groups of hostlists with credentials; every error at file:line:col.

#include "app/cluster_file.h"

#include <QTemporaryDir>
#include <QTest>

using namespace lutra::console;

class TestClusterFile : public QObject {
    Q_OBJECT

private slots:
    void groupsExpandWithDefaultsAndOverrides()
    {
        const auto parsed = ClusterFile::parse("name: demo\n"
                                               "token_file: admin.token\n"
                                               "groups:\n"
                                               "  - name: oss\n"
                                               "    hosts: oss[01-02]\n"
                                               "  - name: compute\n"
                                               "    hosts: node[008-010]:7400\n"
                                               "    token_file: /etc/lutra/compute.token\n"
                                               "    tls: {ca: ca.crt}\n",
                                               "/srv/lutra/cluster.yaml");
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        const auto &file = parsed.file;
        QCOMPARE(file.name, QString("demo"));
        QCOMPARE(file.groups, QStringList({"oss", "compute"}));
        QStringList addresses;
        for (const auto &node : file.nodes) {
            addresses << node.group + " " + node.endpoint.address;
        }
        QCOMPARE(addresses, QStringList({"oss oss01:7370", "oss oss02:7370", "compute node008:7400",
                                         "compute node009:7400", "compute node010:7400"}));
        // Relative paths are relative to the file; a group's own settings win.
        QCOMPARE(file.nodes.first().endpoint.tokenFile, QString("/srv/lutra/admin.token"));
        QCOMPARE(file.nodes.first().endpoint.tlsCa, QString());
        QCOMPARE(file.nodes.last().endpoint.tokenFile, QString("/etc/lutra/compute.token"));
        QCOMPARE(file.nodes.last().endpoint.tlsCa, QString("/srv/lutra/ca.crt"));
        QCOMPARE(file.nodes.first().endpoint.callTimeoutMs, Endpoint{}.callTimeoutMs);
    }

    void timeoutsApplyToTheirGroup()
    {
        const auto parsed = ClusterFile::parse("timeout: 2m\n"
                                               "groups:\n"
                                               "  - hosts: a\n"
                                               "  - hosts: b\n"
                                               "    timeout: 500ms\n",
                                               "c.yaml");
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        QCOMPARE(parsed.file.nodes.at(0).endpoint.callTimeoutMs, 120'000);
        QCOMPARE(parsed.file.nodes.at(1).endpoint.callTimeoutMs, 500);
    }

    void errorsSayFileLineAndColumn_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("error");
        QTest::newRow("unknown top key") << "groups: [{hosts: n1}]\nnodes: n[1-2]\n"
                                         << "c.yaml:2:1: unknown key 'nodes' (known: name, "
                                            "prometheus, prometheus_interval, token_file, tls, "
                                            "timeout, groups)";
        QTest::newRow("prometheus not http") << "prometheus: prom:9090\ngroups: [{hosts: n1}]\n"
                                             << "c.yaml:1:13: 'prometheus' ";
        QTest::newRow("prometheus with a query")
            << "groups: [{hosts: n1}]\nprometheus: http://prom:9090/?q=1\n"
            << "c.yaml:2:13: 'prometheus' ";
        QTest::newRow("prometheus a list") << "prometheus: [a]\ngroups: [{hosts: n1}]\n"
                                           << "c.yaml:1:13: 'prometheus' must be a single value";
        QTest::newRow("prometheus_interval not a duration")
            << "prometheus: http://p:9090\nprometheus_interval: 2 seconds\ngroups: [{hosts: n1}]\n"
            << "c.yaml:2:22: 'prometheus_interval' must be a duration from 1s to 1h such as 2s, "
               "15s or 1m30s, not '2 seconds'";
        QTest::newRow("prometheus_interval a number")
            << "prometheus: http://p:9090\ngroups: [{hosts: n1}]\nprometheus_interval: 15\n"
            << "c.yaml:3:22: 'prometheus_interval' must be a duration from 1s to 1h such as 2s, "
               "15s or 1m30s, not '15'";
        QTest::newRow("prometheus_interval too short")
            << "prometheus: http://p:9090\nprometheus_interval: 200ms\ngroups: [{hosts: n1}]\n"
            << "c.yaml:2:22: 'prometheus_interval' must be a duration from 1s to 1h";
        QTest::newRow("prometheus_interval too long")
            << "prometheus: http://p:9090\nprometheus_interval: 2h\ngroups: [{hosts: n1}]\n"
            << "c.yaml:2:22: 'prometheus_interval' must be a duration from 1s to 1h";
        QTest::newRow("prometheus_interval units out of order")
            << "prometheus: http://p:9090\nprometheus_interval: 30s1m\ngroups: [{hosts: n1}]\n"
            << "c.yaml:2:22: 'prometheus_interval' must be a duration";
        QTest::newRow("prometheus_interval a list")
            << "prometheus: http://p:9090\nprometheus_interval: [2s]\ngroups: [{hosts: n1}]\n"
            << "c.yaml:2:22: 'prometheus_interval' must be a single value";
        QTest::newRow("prometheus_interval without prometheus")
            << "prometheus_interval: 5s\ngroups: [{hosts: n1}]\n"
            << "c.yaml:1:22: 'prometheus_interval' without 'prometheus'";
        QTest::newRow("bad timeout") << "timeout: 10 parsecs\ngroups: [{hosts: n1}]\n"
                                     << "c.yaml:1:10: 'timeout' is '10 parsecs'";
        QTest::newRow("timeout too short") << "groups: [{hosts: n1, timeout: 10ms}]\n"
                                           << "c.yaml:1:31: 'timeout' is '10ms'";
        QTest::newRow("bad hostlist") << "groups:\n  - name: a\n    hosts: node[3-1]\n"
                                      << "c.yaml:3:12: ";
        QTest::newRow("group without hosts") << "groups:\n  - name: a\n"
                                             << "c.yaml:2:5: a group needs 'hosts'";
        QTest::newRow("duplicate host") << "groups:\n  - hosts: n1\n  - hosts: n[1-2]\n"
                                        << "c.yaml:3:12: n1:7370 is listed twice";
        QTest::newRow("tls key without cert")
            << "groups:\n  - hosts: n1\n    tls: {ca: a, key: k}\n"
            << "c.yaml:3:10: 'tls' needs both cert and key";
        QTest::newRow("unknown tls key") << "tls: {ca: a, pem: b}\ngroups: [{hosts: n1}]\n"
                                         << "c.yaml:1:14: unknown key 'tls.pem'";
        QTest::newRow("groups not a list") << "groups: n1\n"
                                           << "c.yaml:1:9: 'groups' must be a list";
        QTest::newRow("no groups") << "name: x\n"
                                   << "c.yaml:1:1: no 'groups'";
        QTest::newRow("syntax") << "groups: [\n"
                                << "c.yaml:2:1: ";
        QTest::newRow("not a map") << "- a\n- b\n"
                                   << "c.yaml:1:1: a cluster file is a map";
    }

    void errorsSayFileLineAndColumn()
    {
        QFETCH(QString, text);
        QFETCH(QString, error);
        const auto parsed = ClusterFile::parse(text, "c.yaml");
        QVERIFY(!parsed.ok());
        QVERIFY(parsed.file.nodes.isEmpty());
        QVERIFY2(parsed.errors.first().startsWith(error), qPrintable(parsed.errors.join('\n')));
    }

    void prometheusUrlIsKept()
    {
        const auto parsed = ClusterFile::parse("prometheus: https://ops.example/prometheus/\n"
                                               "groups: [{hosts: n1}]\n",
                                               "c.yaml");
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        QCOMPARE(parsed.file.prometheus, QUrl("https://ops.example/prometheus/"));
        const auto without = ClusterFile::parse("groups: [{hosts: n1}]\n", "c.yaml");
        QVERIFY(without.file.prometheus.isEmpty());
        // Without prometheus_interval the console asks Prometheus how often it evaluates.
        QCOMPARE(parsed.file.prometheusIntervalMs, 0);
    }

    void prometheusIntervalIsKept_data()
    {
        QTest::addColumn<QString>("interval");
        QTest::addColumn<int>("ms");
        QTest::newRow("seconds") << "2s" << 2'000;
        QTest::newRow("minutes and seconds") << "1m30s" << 90'000;
        QTest::newRow("milliseconds") << "1500ms" << 1'500;
        QTest::newRow("an hour") << "1h" << 3'600'000;
    }

    void prometheusIntervalIsKept()
    {
        QFETCH(QString, interval);
        QFETCH(int, ms);
        const auto parsed = ClusterFile::parse("prometheus: http://prom:9090\n"
                                               "prometheus_interval: " +
                                                   interval + "\ngroups: [{hosts: n1}]\n",
                                               "c.yaml");
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        QCOMPARE(parsed.file.prometheusIntervalMs, ms);
        QCOMPARE(parsed.file.nodes.size(), 1);
    }

    void everyErrorIsReportedAtOnce()
    {
        const auto parsed = ClusterFile::parse("colour: blue\ngroups:\n  - hosts: n[2-1]\n"
                                               "  - name: b\n",
                                               "c.yaml");
        QCOMPARE(parsed.errors.size(), 3);
    }

    void theShippedExampleLoads()
    {
        const auto parsed = ClusterFile::load(QStringLiteral(LUTRA_EXAMPLE_CLUSTER));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        QCOMPARE(parsed.file.groups, QStringList({"oss", "compute", "login"}));
        QCOMPARE(parsed.file.nodes.size(), 4 + 128 + 16 + 2);
        QVERIFY(parsed.file.nodes.first().endpoint.tlsCa.endsWith("/config/tls/ca.crt"));
        QCOMPARE(parsed.file.nodes.last().endpoint.callTimeoutMs, 30'000);
    }

    void loadNamesAMissingFile()
    {
        QTemporaryDir dir;
        const auto path = dir.filePath("missing.yaml");
        const auto parsed = ClusterFile::load(path);
        QVERIFY(!parsed.ok());
        QVERIFY2(parsed.errors.first().startsWith(path + ": cannot read"),
                 qPrintable(parsed.errors.first()));
    }

    void hostlistForAQuickLook()
    {
        Endpoint credentials;
        credentials.tokenFile = "/t";
        const auto parsed = ClusterFile::fromHostlist("node[1-3],login:7000", credentials);
        QVERIFY(parsed.ok());
        QCOMPARE(parsed.file.nodes.size(), 4);
        QCOMPARE(parsed.file.nodes.at(2).endpoint.address, QString("node3:7370"));
        QCOMPARE(parsed.file.nodes.at(3).endpoint.address, QString("login:7000"));
        QCOMPARE(parsed.file.nodes.at(3).endpoint.tokenFile, QString("/t"));
        const auto bad = ClusterFile::fromHostlist("node[1-", credentials);
        QVERIFY(!bad.ok());
        QVERIFY2(bad.errors.first().startsWith("-H node[1-: "), qPrintable(bad.errors.first()));
    }
};

QTEST_GUILESS_MAIN(TestClusterFile)
#include "test_cluster_file.moc"
