// History retention in a real lutra-ctld: a database with 300 old points and a desired parameter
// from the first, ctld started with audit_retention max_points 100 and a 1 s sample_interval;
// its main loop prunes down to the newest 100 plus the desired-state point, and a rollback to
// that point is refused through lutractl with the reason.
#include "../daemon/ctld_fixture.h"
#include "store_test_support.h"

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;
using lutra::test::CtldProcess;
using lutra::test::runProcess;

class TestCtldRetentionDaemon : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void ctldPrunesInItsLoopAndKeepsWhatIsNeeded()
    {
        QVERIFY(m_dir.isValid());
        const QString runDir = m_dir.path();
        const std::string db = (runDir + "/ctld.db").toStdString();
        {
            auto store = Store::open(db);
            LUTRA_VERIFY_OK(store);
            for (int i = 0; i < 300; ++i) {
                DesiredUpdate desired;
                if (i == 0) {
                    desired.upserts.push_back({"osc.*.max_rpcs_in_flight", "16", "set_param"});
                }
                LUTRA_VERIFY_OK((*store)->recordPoint(
                    draft("token:alice", i, Action::set), Outcome::ok, {},
                    {change("bench-b", "osc.ost0.max_rpcs_in_flight", "8", "16")}, desired));
            }
            LUTRA_VERIFY_OK((*store)->close());
        }
        CtldProcess ctld(runDir, "node: n1\nlisten: [127.0.0.1:0]\nmetrics_listen: ''\n"
                                 "run_dir: " +
                                     runDir + "\ndb: " + runDir +
                                     "/ctld.db\nsample_interval: 1s\n"
                                     "audit_retention: {max_points: 100, max_age: 0}\n");
        QVERIFY2(ctld.waitReady(), qPrintable(ctld.log()));
        // (No ctld.log() in this message: it hands out stderr once, and QTRY evaluates it.)
        QTRY_VERIFY2_WITH_TIMEOUT(rawInt(db, "SELECT count(*) FROM history_points") == 101,
                                  "ctld did not prune to 100 points and the desired one", 30000);
        QCOMPARE(rawInt(db, "SELECT count(*) FROM history_points WHERE id = 1"), 1);
        QCOMPARE(rawInt(db, "SELECT min(id) FROM history_points WHERE id > 1"), 201);
        QCOMPARE(rawInt(db, "SELECT pruned_through FROM history_retention"), 200);
        QCOMPARE(rawInt(db, "SELECT point_id FROM desired_params"), 1);

        const auto lutractl = [&](const QStringList &arguments) {
            return runProcess(QStringLiteral(LUTRACTL_BIN),
                              QStringList{"--socket", runDir + "/ctld.sock"} + arguments, runDir);
        };
        const auto refused = lutractl({"rollback", "1", "--dry-run"});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("older than the retained history"),
                 qPrintable(refused.out + refused.err));
        // A retained point is a rollback target (no process is running here to plan against,
        // so only the retention refusal is ruled out).
        const auto kept = lutractl({"rollback", "250", "--dry-run"});
        QVERIFY2(!(kept.out + kept.err).contains("older than the retained history"),
                 qPrintable(kept.out + kept.err));
        // Stopped, ctld's stderr has been read to the end.
        QCOMPARE(ctld.stop(), 0);
        const QString log = ctld.log();
        QVERIFY2(log.contains("history retention: deleted 199 points, the newest 200"),
                 qPrintable(log));
    }
};

QTEST_GUILESS_MAIN(TestCtldRetentionDaemon)
#include "test_ctld_retention_daemon.moc"
