// lutra-bench as a user runs it: each mode spawns its own lutra-target, measures lutra and its
// baseline in the same run, and prints {mode, params, results, ratios}. Only the shape and the
// sanity of the numbers are checked, never their size: machines here are shared and noisy.
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

namespace {

QJsonObject runBench(const QStringList &arguments, int *exitCode)
{
    QProcess process;
    process.setProcessChannelMode(QProcess::SeparateChannels);
    process.start(QStringLiteral(LUTRA_BENCH_BIN), arguments);
    if (!process.waitForFinished(120000)) {
        process.kill();
        *exitCode = -1;
        return {};
    }
    *exitCode = process.exitCode();
    return QJsonDocument::fromJson(process.readAllStandardOutput()).object();
}

void verifyPositive(const QJsonObject &object, const QStringList &keys)
{
    for (const auto &key : keys) {
        QVERIFY2(object.contains(key), qPrintable("missing " + key));
        QVERIFY2(object[key].toDouble() > 0, qPrintable(key + " is not positive"));
    }
}

} // namespace

class TestLutraBench : public QObject {
    Q_OBJECT
private slots:
    void rpcMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.2", "rpc", "--object-mb", "8"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("rpc"));
        QCOMPARE(report["params"].toObject()["transport"].toString(), QString("tcp"));
        verifyPositive(report["results"].toObject(),
                       {"small_rpc_per_s", "raw_echo_per_s", "bulk_read_MBps", "raw_tcp_MBps"});
        verifyPositive(report["ratios"].toObject(), {"vs_raw_tcp", "small_rpc_vs_raw_echo"});
    }

    void commitMode()
    {
        int exitCode = 0;
        const auto report =
            runBench({"--json", "--duration", "0.3", "commit", "--writers", "8"}, &exitCode);
        QCOMPARE(exitCode, 0);
        QCOMPARE(report["mode"].toString(), QString("commit"));
        const auto results = report["results"].toObject();
        verifyPositive(results, {"group_commit_writes_per_s", "per_write_sync_writes_per_s",
                                 "fdatasync_per_s", "group_commit_writes_per_batch"});
        verifyPositive(report["ratios"].toObject(), {"group_vs_per_write"});
        // Structural, not timing: per-write mode syncs the file and the log for every write.
        QCOMPARE(results["per_write_syncs_per_write"].toDouble(), 2.0);
    }

    void badArguments()
    {
        int exitCode = 0;
        runBench({"rpc", "--threads", "0"}, &exitCode);
        QVERIFY(exitCode != 0);
        runBench({"--raw-baseline", "tcp://127.0.0.1:1", "rpc"}, &exitCode);
        QCOMPARE(exitCode, 2);
        runBench({"--target", "tcp://127.0.0.1:1", "rpc"}, &exitCode);
        QCOMPARE(exitCode, 1);
    }
};

QTEST_GUILESS_MAIN(TestLutraBench)
#include "test_lutra_bench.moc"
