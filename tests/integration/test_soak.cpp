// The fault soaks, a few cycles of every kind under the test build (ASan in CI): lutra-bench soak
// (the datapath's kinds: real lutra-target processes) and lutra-ctl-bench soak (the control
// plane's: lutra-ctld and lutractl), processes killed with SIGKILL or stopped with SIGSTOP
// mid-operation; every kind must finish its cycles with no violation. The full 100-cycle soaks
// are bench runs (see datapath/tools/README.md and ctld/tools/README.md).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

class TestSoak : public QObject {
    Q_OBJECT

private slots:
    void everyKindHoldsItsPromises_data()
    {
        QTest::addColumn<QString>("program");
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("kinds");
        QTest::newRow("lutra-bench") << QStringLiteral(LUTRA_BENCH_BIN) << "lutra-bench"
                                     << QStringList{"target-kill", "job-flush"};
        QTest::newRow("lutra-ctl-bench")
            << QStringLiteral(LUTRA_CTL_BENCH_BIN) << "lutra-ctl-bench"
            << QStringList{"ctld-kill", "datapath-restart", "node-stop"};
    }

    void everyKindHoldsItsPromises()
    {
        QFETCH(QString, program);
        QFETCH(QString, name);
        QFETCH(QStringList, kinds);
        QProcess process;
        process.setProcessChannelMode(QProcess::SeparateChannels);
        process.start(program, {QStringLiteral("soak"), QStringLiteral("--cycles"),
                                QStringLiteral("2"), QStringLiteral("--json")});
        QVERIFY(process.waitForFinished(600000));
        const QByteArray errors = process.readAllStandardError();
        // The seed line comes first, so a failure can be replayed with --seed.
        const auto seedLine = errors.left(errors.indexOf('\n'));
        QVERIFY2(seedLine.startsWith((name + " soak: seed ").toUtf8()),
                 errors.left(2000).constData());
        const auto report = QJsonDocument::fromJson(process.readAllStandardOutput()).object();
        QCOMPARE(report[QStringLiteral("params")].toObject()[QStringLiteral("kinds")].toArray(),
                 QJsonArray::fromStringList(kinds));
        const auto results = report[QStringLiteral("results")].toObject();
        for (const QString &kind : kinds) {
            const auto result = results[kind].toObject();
            const auto context =
                kind + " (" + QString::fromUtf8(seedLine) +
                "): " + QString::fromUtf8(QJsonDocument(result).toJson(QJsonDocument::Compact));
            QVERIFY2(!result.isEmpty(), qPrintable(context));
            QVERIFY2(!result.contains(QStringLiteral("error")), qPrintable(context));
            QVERIFY2(result[QStringLiteral("cycles")].toInt() == 2, qPrintable(context));
            QVERIFY2(result[QStringLiteral("violations")].toInt() == 0, qPrintable(context));
        }
        QCOMPARE(results[QStringLiteral("violations")].toInt(), 0);
        QCOMPARE(process.exitCode(), 0);
    }

    // Each program names the kinds it runs: a control-plane kind asked of lutra-bench points
    // to the program that has it.
    void unknownKindIsRefused()
    {
        QProcess process;
        process.start(
            QStringLiteral(LUTRA_BENCH_BIN),
            {QStringLiteral("soak"), QStringLiteral("--kinds"), QStringLiteral("ctld-kill")});
        QVERIFY(process.waitForFinished(60000));
        QCOMPARE(process.exitCode(), 1);
        const QByteArray errors = process.readAllStandardError();
        QVERIFY2(errors.contains("unknown soak kind 'ctld-kill' (this program runs: target-kill, "
                                 "job-flush)"),
                 errors.constData());
    }
};

QTEST_GUILESS_MAIN(TestSoak)
#include "test_soak.moc"
