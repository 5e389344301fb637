// ctld.yaml: defaults, every setting, and errors that name file:line:column.
#include "daemon/config.h"

#include <QTemporaryDir>
#include <QTest>

#include <fstream>

using namespace lutra::ctld;

class TestCtldConfig : public QObject {
    Q_OBJECT

private slots:
    void defaults()
    {
        auto config = parseConfig("", "ctld.yaml");
        QVERIFY2(config.ok(), config.status().message().c_str());
        QCOMPARE(config->listen, std::vector<std::string>{"127.0.0.1:7370"});
        QCOMPARE(config->metricsListen, std::string("127.0.0.1:7371"));
        QVERIFY(!config->node.empty());
        QCOMPARE(config->localSocket, config->runDir / "ctld.sock");
        QCOMPARE(config->sampleInterval, std::chrono::milliseconds(10000));
        QVERIFY(config->localRole == Role::admin);
        QVERIFY(checkListenSecurity(*config).ok());
    }

    void everySetting()
    {
        QTemporaryDir dir;
        const auto token = dir.filePath("t").toStdString();
        std::ofstream(token) << "0123456789abcdef0123\n";
        const std::string yaml = "node: n7\n"
                                 "labels: {rack: r1, role: compute}\n"
                                 "listen: [127.0.0.1:7370, '[::1]:7370']\n"
                                 "local_socket: /tmp/x.sock\n"
                                 "metrics_listen: ''\n"
                                 "run_dir: /tmp/run\n"
                                 "db: /tmp/ctld.db\n"
                                 "profiles_dir: /etc/lutra/profiles\n"
                                 "sample_interval: 30s\n"
                                 "poll_interval: 500ms\n"
                                 "history_retention: 48h\n"
                                 "auth:\n"
                                 "  local_role: operator\n"
                                 "  tokens:\n"
                                 "    - {name: ada, token_file: " +
                                 token +
                                 ", role: admin}\n"
                                 "    - {name: vera, token: viewer-secret-0123, role: viewer}\n"
                                 "  client_certs:\n"
                                 "    - {subject: console, role: operator}\n";
        auto config = parseConfig(yaml, "c.yaml");
        QVERIFY2(config.ok(), config.status().message().c_str());
        QCOMPARE(config->node, std::string("n7"));
        QCOMPARE(config->labels.at("role"), std::string("compute"));
        QCOMPARE(config->listen.size(), std::size_t{2});
        QVERIFY(config->metricsListen.empty());
        QCOMPARE(config->sampleInterval, std::chrono::milliseconds(30000));
        QCOMPARE(config->pollInterval, std::chrono::milliseconds(500));
        QCOMPARE(config->historyRetention, std::chrono::hours(48));
        QCOMPARE(config->tokens.size(), std::size_t{2});
        QCOMPARE(config->tokens[0].token, std::string("0123456789abcdef0123"));
        QVERIFY(config->tokens[1].role == Role::viewer);
        QVERIFY(config->certs[0].role == Role::operator_);
        QVERIFY(config->localRole == Role::operator_);
        QVERIFY(checkListenSecurity(*config).ok()); // [::1] is loopback
    }

    void errors_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown key") << "node: a\nlisten_on: x\n"
                                     << "c.yaml:2:1: unknown setting 'listen_on'";
        QTest::newRow("bad address") << "listen: localhost\n"
                                     << "c.yaml:1:9: listen address 'localhost' is not host:port";
        QTest::newRow("bad port") << "listen: 1.2.3.4:99999\n"
                                  << "c.yaml:1:9: listen address '1.2.3.4:99999'";
        QTest::newRow("bad duration") << "sample_interval: 5 min\n"
                                      << "c.yaml:1:18: 'sample_interval' is '5 min'";
        QTest::newRow("too short") << "sample_interval: 10ms\n"
                                   << "c.yaml:1:18: 'sample_interval' is '10ms'";
        QTest::newRow("bad role") << "auth:\n  local_role: god\n"
                                  << "c.yaml:2:15: unknown role 'god'";
        QTest::newRow("short token")
            << "auth:\n  tokens:\n    - {name: a, token: abc, role: admin}\n"
            << "token of 'a' is shorter than 16 characters";
        QTest::newRow("missing token file")
            << "auth:\n  tokens:\n    - {name: a, token_file: /nonexistent, role: admin}\n"
            << "cannot read token file /nonexistent";
        QTest::newRow("tls half") << "tls: {cert: /nonexistent}\n"
                                  << "tls.cert: cannot read /nonexistent";
        QTest::newRow("syntax") << "node: [a\n"
                                << "c.yaml:2:1:";
        QTest::newRow("not a map") << "- a\n- b\n"
                                   << "c.yaml:1:1: ctld.yaml must be a map";
    }

    void errors()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, message);
        auto config = parseConfig(yaml.toStdString(), "c.yaml");
        QVERIFY(!config.ok());
        QVERIFY2(QString::fromStdString(config.status().message()).contains(message),
                 config.status().message().c_str());
    }

    void allErrorsAtOnce()
    {
        auto config = parseConfig("nodee: a\nlisten: x\nsample_interval: y\n", "c.yaml");
        QVERIFY(!config.ok());
        const auto text = QString::fromStdString(config.status().message());
        QCOMPARE(text.count('\n'), 2); // three lines, one per problem
    }

    // The example shipped in config/ is a valid config.
    void shippedExample()
    {
        auto config = loadConfig(LUTRA_EXAMPLE_CONFIG);
        QVERIFY2(config.ok(), config.status().message().c_str());
        QCOMPARE(config->node, std::string("node001"));
        QCOMPARE(config->labels.at("role"), std::string("compute"));
        QVERIFY(checkListenSecurity(*config).ok());
    }

    void nonLoopbackNeedsTls()
    {
        auto config = parseConfig("listen: 0.0.0.0:7370\n", "c.yaml");
        QVERIFY(config.ok());
        const auto secure = checkListenSecurity(*config);
        QVERIFY(!secure.ok());
        QVERIFY2(secure.message().find("refusing to listen on 0.0.0.0:7370 without TLS") == 0,
                 secure.message().c_str());
        QVERIFY(isLoopbackAddress("127.0.0.2:1"));
        QVERIFY(isLoopbackAddress("[::1]:1"));
        QVERIFY(!isLoopbackAddress("10.0.0.1:1"));
    }
};

QTEST_GUILESS_MAIN(TestCtldConfig)
#include "test_ctld_config.moc"
