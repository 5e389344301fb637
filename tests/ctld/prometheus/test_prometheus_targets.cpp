// lutractl prometheus-targets as a real process: file_sd JSON from a console cluster file and
// from -H (targets on the metrics port, labels cluster/group/ctld), atomic -o with the --json
// report, and input errors that name the file, line and column and write nothing.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QByteArray out;
    QString err;
};

Run lutractl(const QStringList &arguments)
{
    QProcess process;
    process.start(QStringLiteral(LUTRACTL_BIN), arguments);
    Run run;
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        run.err = "timed out";
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = process.readAllStandardOutput();
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

bool writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// {target: labels} of a file_sd document, checking each entry has exactly one target.
QMap<QString, QVariantMap> targetsOf(const QByteArray &json)
{
    QMap<QString, QVariantMap> targets;
    const auto document = QJsonDocument::fromJson(json);
    for (const auto &entry : document.array()) {
        const auto list = entry.toObject().value("targets").toArray();
        if (list.size() != 1) {
            return {};
        }
        targets.insert(list.first().toString(),
                       entry.toObject().value("labels").toObject().toVariantMap());
    }
    return targets;
}

const QByteArray kClusterFile = R"(# like config/cluster.yaml
name: test site
prometheus: http://prom:9090    # the console's; this command accepts and ignores it
token_file: tokens/console
timeout: 10s
groups:
  - name: oss
    hosts: oss[01-02]
  - name: compute
    hosts: node[1-2]:7380,127.0.0.1:7390
    timeout: 30s
  - hosts: login1
)";

} // namespace

class TestPrometheusTargets : public QObject {
    Q_OBJECT

private slots:
    void clusterFileGivesOneTargetPerNodeWithItsLabels()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeFile(dir.filePath("cluster.yaml"), kClusterFile));
        const auto run =
            lutractl({"prometheus-targets", "--cluster", dir.filePath("cluster.yaml")});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const auto targets = targetsOf(run.out);
        QCOMPARE(targets.keys(), QStringList({"127.0.0.1:7371", "login1:7371", "node1:7371",
                                              "node2:7371", "oss01:7371", "oss02:7371"}));
        QCOMPARE(targets["oss01:7371"],
                 QVariantMap({{"cluster", "test site"}, {"group", "oss"}, {"ctld", "oss01:7370"}}));
        QCOMPARE(
            targets["node2:7371"],
            QVariantMap({{"cluster", "test site"}, {"group", "compute"}, {"ctld", "node2:7380"}}));
        QCOMPARE(targets["127.0.0.1:7371"]["ctld"].toString(), QString("127.0.0.1:7390"));
        // A group without a name is numbered like the console numbers it.
        QCOMPARE(targets["login1:7371"]["group"].toString(), QString("group3"));
        // The shipped example is a valid cluster file for this command too.
        const auto example = lutractl({"prometheus-targets", "--cluster", LUTRA_CLUSTER_EXAMPLE});
        QVERIFY2(example.exitCode == 0, qPrintable(example.err));
        QCOMPARE(targetsOf(example.out).size(), 4 + 128 + 16 + 2);
    }

    void hostlistWithMetricsPortAndAtomicOutputAndJsonReport()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto output = dir.filePath("lutra-targets.json");
        const auto run = lutractl({"-H", "127.0.0.[2-3]:7000", "--json", "prometheus-targets",
                                   "--metrics-port", "9100", "-o", output});
        QVERIFY2(run.exitCode == 0, qPrintable(run.err));
        const auto targets = targetsOf(readFile(output));
        QCOMPARE(targets.keys(), QStringList({"127.0.0.2:9100", "127.0.0.3:9100"}));
        QCOMPARE(targets["127.0.0.3:9100"],
                 QVariantMap({{"group", "hosts"}, {"ctld", "127.0.0.3:7000"}}));
        QVERIFY(!QFile::exists(output + ".tmp"));
        const auto report = QJsonDocument::fromJson(run.out).object();
        QCOMPARE(report["summary"].toObject()["nodes"].toInt(), 2);
        QCOMPARE(report["summary"].toObject()["failed"].toInt(), 0);
        const auto first = report["nodes"].toArray().first().toObject();
        QCOMPARE(first["node"].toString(), QString("127.0.0.2:7000"));
        QCOMPARE(first["ok"].toBool(), true);
        QCOMPARE(first["result"].toObject()["targets"].toArray().first().toString(),
                 QString("127.0.0.2:9100"));
    }

    void inputErrorsSayWhereAndWriteNothing_data()
    {
        QTest::addColumn<QByteArray>("cluster");
        QTest::addColumn<QStringList>("arguments");
        QTest::addColumn<QString>("error");
        QTest::newRow("unknown key") << QByteArray("groups:\n  - name: a\n    hots: n1\n")
                                     << QStringList{} << "cluster.yaml:3:5: unknown key 'hots'";
        QTest::newRow("no hosts") << QByteArray("groups:\n  - name: a\n") << QStringList{}
                                  << "cluster.yaml:2:5: a group needs 'hosts'";
        QTest::newRow("bad hostlist") << QByteArray("groups:\n  - hosts: n[1-\n") << QStringList{}
                                      << "cluster.yaml:2:12: hostlist 'n[1-'";
        QTest::newRow("twice") << QByteArray("groups:\n  - hosts: n1,n1\n") << QStringList{}
                               << "n1:7370 is listed twice";
        QTest::newRow("bad timeout") << QByteArray("timeout: 1h\ngroups:\n  - hosts: n1\n")
                                     << QStringList{} << "cluster.yaml:1:10: 'timeout' is '1h'";
        QTest::newRow("not yaml") << QByteArray("groups: [\n") << QStringList{} << "cluster.yaml:";
        QTest::newRow("unix socket") << QByteArray("groups:\n  - hosts: unix:/run/ctld.sock\n")
                                     << QStringList{} << "unix:/run/ctld.sock: a unix socket";
        QTest::newRow("bad port") << QByteArray("groups:\n  - hosts: n1\n")
                                  << QStringList{"--metrics-port", "70000"} << "--metrics-port";
        QTest::newRow("json without -o")
            << QByteArray("groups:\n  - hosts: n1\n") << QStringList{"--json-no-output"}
            << "--json prints the report; give -o FILE";
    }

    void inputErrorsSayWhereAndWriteNothing()
    {
        QFETCH(QByteArray, cluster);
        QFETCH(QStringList, arguments);
        QFETCH(QString, error);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(writeFile(dir.filePath("cluster.yaml"), cluster));
        const auto output = dir.filePath("targets.json");
        QVERIFY(writeFile(output, "[]\n")); // a previous list stays as it was
        QStringList command{"prometheus-targets", "--cluster", dir.filePath("cluster.yaml")};
        if (arguments == QStringList{"--json-no-output"}) {
            command.prepend("--json");
        } else {
            command << arguments << "-o" << output;
        }
        const auto run = lutractl(command);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains(error), qPrintable(run.err));
        QCOMPARE(readFile(output), QByteArray("[]\n"));
        QVERIFY(run.out.isEmpty());
    }

    void nodesComeFromExactlyOneSource()
    {
        const auto none = lutractl({"prometheus-targets"});
        QCOMPARE(none.exitCode, 2);
        QVERIFY2(none.err.contains("--cluster FILE or -H HOSTLIST"), qPrintable(none.err));
        const auto missing = lutractl({"prometheus-targets", "--cluster", "/nonexistent.yaml"});
        QCOMPARE(missing.exitCode, 2);
        QVERIFY2(missing.err.contains("/nonexistent.yaml: cannot read"), qPrintable(missing.err));
        const auto help = lutractl({"prometheus-targets", "--help"});
        QCOMPARE(help.exitCode, 0);
        QVERIFY(help.out.contains("--ask-nodes"));
        QVERIFY(help.out.contains("--metrics-port"));
    }
};

QTEST_GUILESS_MAIN(TestPrometheusTargets)
#include "test_prometheus_targets.moc"
