// lutra-bench soak, a few cycles of every kind under the test build (ASan in CI): real
// lutra-target, lutra-ctld and lutractl processes killed with SIGKILL or stopped with SIGSTOP
// mid-operation; every kind must finish its cycles with no violation. The full 100-cycle soak is
// a bench run (see datapath/tools/README.md).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

class TestSoak : public QObject {
    Q_OBJECT

private slots:
    void everyKindHoldsItsPromises()
    {
        QProcess process;
        process.setProcessChannelMode(QProcess::SeparateChannels);
        process.start(QStringLiteral(LUTRA_BENCH_BIN),
                      {QStringLiteral("soak"), QStringLiteral("--cycles"), QStringLiteral("2"),
                       QStringLiteral("--json")});
        QVERIFY(process.waitForFinished(600000));
        const QByteArray errors = process.readAllStandardError();
        // The seed line comes first, so a failure can be replayed with --seed.
        const auto seedLine = errors.left(errors.indexOf('\n'));
        QVERIFY2(seedLine.startsWith("lutra-bench soak: seed "), errors.left(2000).constData());
        const auto report = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
        const auto results = report[QStringLiteral("results")].toObject();
        for (const auto kind :
             {"target-kill", "ctld-kill", "job-flush", "datapath-restart", "node-stop"}) {
            const auto result = results[QLatin1String(kind)].toObject();
            const auto context =
                QString::fromLatin1(kind) + " (" + QString::fromUtf8(seedLine) +
                "): " + QString::fromUtf8(QJsonDocument(result).toJson(QJsonDocument::Compact));
            QVERIFY2(!result.isEmpty(), qPrintable(context));
            QVERIFY2(!result.contains(QStringLiteral("error")), qPrintable(context));
            QVERIFY2(result[QStringLiteral("cycles")].toInt() == 2, qPrintable(context));
            QVERIFY2(result[QStringLiteral("violations")].toInt() == 0, qPrintable(context));
        }
        QCOMPARE(results[QStringLiteral("violations")].toInt(), 0);
        QCOMPARE(process.exitCode(), 0);
    }

    void unknownKindIsRefused()
    {
        QProcess process;
        process.start(QStringLiteral(LUTRA_BENCH_BIN),
                      {QStringLiteral("soak"), QStringLiteral("--kinds"), QStringLiteral("nope")});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 1);
        QVERIFY(process.readAllStandardError().contains("unknown soak kind 'nope'"));
    }
};

QTEST_GUILESS_MAIN(TestSoak)
#include "test_soak.moc"
