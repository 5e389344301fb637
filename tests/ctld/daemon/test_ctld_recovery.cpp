// kill -9 of lutra-ctld in the middle of a change, then again (and again) during the recovery of
// that change at the next starts: the node must end all-old, the history must say the change was
// aborted and the node restored, and the database must be intact. The crashes are placed by the
// test-only fault hook of lutra-ctld-faults (LUTRA_FAULT_KILL_AFTER_INSTANCES), so every crash
// point is hit exactly, every run.
#include "ctld_node.h"

#include <QJsonArray>

#include <sqlite3.h>

using namespace lutra::test;

namespace {

const std::string kParam = "llite.bench.max_read_ahead_mb";

std::string integrityCheck(const std::string &path)
{
    sqlite3 *db = nullptr;
    std::string result = "cannot open";
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt *statement = nullptr;
        if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nullptr) ==
                SQLITE_OK &&
            sqlite3_step(statement) == SQLITE_ROW) {
            result = reinterpret_cast<const char *>(sqlite3_column_text(statement, 0));
        }
        sqlite3_finalize(statement);
    }
    sqlite3_close(db);
    return result;
}

} // namespace

class TestCtldRecovery : public QObject {
    Q_OBJECT

    std::unique_ptr<CtldNode> m_node;

    // Starts lutra-ctld-faults, which kills itself after `instances` instances applied a change
    // (the recovery's undo included); true when it died of SIGKILL as planned.
    bool crashAfter(int instances, const QStringList &command)
    {
        auto ctld =
            m_node->launchCtld(QStringLiteral(LUTRA_CTLD_FAULTS_BIN),
                               {"LUTRA_FAULT_KILL_AFTER_INSTANCES=" + QString::number(instances)});
        if (!command.isEmpty()) {
            if (!ctld->waitReady()) {
                qWarning("%s", qPrintable(ctld->log()));
                return false;
            }
            QElapsedTimer timer;
            timer.start();
            while (m_node->lutractl({"instances"}).out.count("connected") != 2) {
                if (timer.elapsed() > 30000) {
                    return false;
                }
                QTest::qWait(100);
            }
            (void)m_node->lutractl(command);
        }
        if (!ctld->process().waitForFinished(30000)) {
            qWarning("lutra-ctld-faults did not kill itself: %s", qPrintable(ctld->log()));
            return false;
        }
        return ctld->process().exitStatus() == QProcess::CrashExit;
    }

private slots:
    void initTestCase()
    {
        m_node = std::make_unique<CtldNode>();
        QVERIFY(m_node->ready());
    }
    void cleanupTestCase() { m_node.reset(); }
    void init()
    {
        m_node->freshDatabase();
        for (const char *instance : {"bench-a", "bench-b"}) {
            QVERIFY(setDatapathValue(m_node->runDir(), instance, kParam, "64"));
        }
    }

    void productionDaemonIgnoresFaultHooks()
    {
        // The environment cannot make lutra-ctld kill itself: the hook is not built into it.
        auto ctld = m_node->startCtld({}, {"LUTRA_FAULT_KILL_AFTER_INSTANCES=1"});
        QVERIFY(ctld);
        auto set = m_node->lutractl({"set_param", "llite.*.max_read_ahead_mb=40"});
        QVERIFY2(set.exitCode == 0, qPrintable(set.out + set.err));
        QCOMPARE(ctld->process().state(), QProcess::Running);
        QCOMPARE(m_node->value("bench-b", kParam), std::string("40"));
        QCOMPARE(ctld->stop(), 0);
    }

    void crashesDuringRecoveryLeaveTheNodeAllOld_data()
    {
        QTest::addColumn<int>("applyCrash");             // instances applied when the apply dies
        QTest::addColumn<QList<int>>("recoveryCrashes"); // the same, for each following start
        QTest::newRow("1 applied, clean restart") << 1 << QList<int>{};
        QTest::newRow("1 applied, recovery dies after undoing 1") << 1 << QList<int>{1};
        QTest::newRow("2 applied, recovery dies after undoing 1") << 2 << QList<int>{1};
        QTest::newRow("2 applied, recovery dies after undoing 2") << 2 << QList<int>{2};
        // The second recovery has one instance left to undo and dies before recording it.
        QTest::newRow("2 applied, recovery dies twice") << 2 << QList<int>{1, 1};
    }

    void crashesDuringRecoveryLeaveTheNodeAllOld()
    {
        QFETCH(int, applyCrash);
        QFETCH(QList<int>, recoveryCrashes);
        QCOMPARE(m_node->value("bench-a", kParam), std::string("64"));
        QCOMPARE(m_node->value("bench-b", kParam), std::string("64"));

        const QString file = m_node->dir() + "/change.yaml";
        std::ofstream(file.toStdString()) << "name: change\nparams:\n"
                                             "  llite.*.max_read_ahead_mb: 40\n";
        QVERIFY(crashAfter(applyCrash, {"apply", "--file", file}));
        QCOMPARE(m_node->value("bench-a", kParam), std::string("40"));
        QCOMPARE(m_node->value("bench-b", kParam), applyCrash == 2 ? "40" : std::string("64"));
        for (const int crash : recoveryCrashes) {
            QVERIFY(crashAfter(crash, {}));
        }

        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        QCOMPARE(m_node->value("bench-a", kParam), std::string("64"));
        QCOMPARE(m_node->value("bench-b", kParam), std::string("64"));
        const auto history = jsonOf(m_node->lutractl({"--json", "history"}));
        const auto points =
            history["nodes"].toArray()[0].toObject()["result"].toObject()["points"].toArray();
        bool appliedAborted = false;
        for (const auto &value : points) {
            const auto point = value.toObject();
            QVERIFY2(point["outcome"].toString() != "pending",
                     qPrintable(QJsonDocument(point).toJson()));
            if (point["action"].toString() == "apply") {
                QCOMPARE(point["outcome"].toString(), QString("aborted"));
                appliedAborted = true;
            }
        }
        QVERIFY2(appliedAborted, qPrintable(QJsonDocument(history).toJson()));
        QCOMPARE(ctld->stop(), 0);
        QCOMPARE(integrityCheck(m_node->dbPath()), std::string("ok"));
    }
};

QTEST_GUILESS_MAIN(TestCtldRecovery)
#include "test_ctld_recovery.moc"
