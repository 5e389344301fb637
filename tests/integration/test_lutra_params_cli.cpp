// lutra-params as a user runs it: a real process, its exit codes, text and JSON.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

namespace {

struct Run {
    int exitCode = -1;
    QString out;
    QString err;
};

Run runParams(const QStringList &arguments)
{
    QProcess process;
    process.start(QStringLiteral(LUTRA_PARAMS_BIN), arguments);
    Run run;
    if (!process.waitForFinished(30000)) {
        process.kill();
        return run;
    }
    run.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    run.out = QString::fromUtf8(process.readAllStandardOutput());
    run.err = QString::fromUtf8(process.readAllStandardError());
    return run;
}

} // namespace

class TestLutraParamsCli : public QObject {
    Q_OBJECT
private slots:
    void getPrintsLctlLines()
    {
        const Run run = runParams({"get", "osc.*.max_pages_per_rpc"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out,
                 QString("osc.ost0.max_pages_per_rpc=1024\nosc.ost1.max_pages_per_rpc=1024\n"));
        const Run values =
            runParams({"--targets", "ostA", "get", "-n", "osc.ostA.max_rpcs_in_flight"});
        QCOMPARE(values.out, QString("8\n"));
    }

    void setReportsEachChange()
    {
        const Run run =
            runParams({"set", "osc.*.max_pages_per_rpc=16M", "llite.lutra.max_read_ahead_mb=2G"});
        QCOMPARE(run.exitCode, 0);
        QCOMPARE(run.out, QString("osc.ost0.max_pages_per_rpc: 1024 -> 4096\n"
                                  "osc.ost1.max_pages_per_rpc: 1024 -> 4096\n"
                                  "llite.lutra.max_read_ahead_mb: 64 -> 2048\n"));
    }

    void badBatchChangesNothingAndSaysWhy()
    {
        const Run run =
            runParams({"set", "osc.ost0.max_pages_per_rpc=8M", "osc.ost0.max_dirty_mb=512K"});
        QCOMPARE(run.exitCode, 1);
        QVERIFY(run.out.isEmpty());
        QVERIFY2(run.err.contains("error: osc.ost0.max_dirty_mb=512K: not a whole number of MiB"),
                 qPrintable(run.err));
        QVERIFY(run.err.contains("nothing changed"));
        const Run malformed = runParams({"set", "osc.ost0.max_pages_per_rpc"});
        QCOMPARE(malformed.exitCode, 2);
        QVERIFY(malformed.err.contains("is not NAME=VALUE"));
    }

    void jsonForScripts()
    {
        const Run run = runParams(
            {"--json", "set", "osc.ost0.max_rpcs_in_flight=16", "osc.ost1.max_rpcs_in_flight=999"});
        QCOMPARE(run.exitCode, 1);
        const QJsonObject doc = QJsonDocument::fromJson(run.out.toUtf8()).object();
        QCOMPARE(doc["ok"].toBool(true), false);
        QCOMPARE(doc["errors"].toArray().size(), 1);
        QCOMPARE(doc["errors"].toArray()[0].toObject()["code"].toString(), QString("out_of_range"));

        const Run list = runParams({"--json", "list", "ldlm.namespaces.ost0.lru_size"});
        QCOMPARE(list.exitCode, 0);
        const QJsonObject lru = QJsonDocument::fromJson(list.out.toUtf8()).array()[0].toObject();
        QCOMPARE(lru["type"].toString(), QString("integer"));
        QVERIFY(lru["special"].toObject().contains("clear"));
    }

    void badArgumentsAreExplained()
    {
        const Run unknown = runParams({"get", "osc.ost9.*"});
        QCOMPARE(unknown.exitCode, 1);
        QCOMPARE(unknown.err, QString("error: no parameter matches 'osc.ost9.*'\n"));
        const Run badInstance = runParams({"--targets", "ost.0", "list"});
        QCOMPARE(badInstance.exitCode, 2);
        QVERIFY(badInstance.err.contains("--targets: 'ost.0' is not a valid instance name"));
        const Run noCommand = runParams({});
        QVERIFY(noCommand.exitCode != 0);
    }
};

QTEST_GUILESS_MAIN(TestLutraParamsCli)
#include "test_lutra_params_cli.moc"
