// lutra-ctld with a datapath process that stops answering (SIGSTOP) or is gone: the others'
// values still come back with the silent one named, "not connected" is said as such, a restart
// of ctld that changes nothing adds nothing to the history, and errors keep the database's path
// to the node.
#include "ctld_node.h"

#include <QJsonArray>

#include <signal.h>

using namespace lutra::test;

namespace {

const std::string kParam = "llite.bench.max_read_ahead_mb";

} // namespace

class TestCtldInstances : public QObject {
    Q_OBJECT

    std::unique_ptr<CtldNode> m_node;

    // bench-b stopped (not killed: it keeps its state and answers again after SIGCONT).
    struct Stopped {
        qint64 pid;
        explicit Stopped(qint64 process) : pid(process)
        {
            ::kill(static_cast<pid_t>(pid), SIGSTOP);
        }
        ~Stopped() { ::kill(static_cast<pid_t>(pid), SIGCONT); }
    };

    bool waitConnected(int count)
    {
        QElapsedTimer timer;
        timer.start();
        while (m_node->lutractl({"instances"}).out.count("  connected") != count) {
            if (timer.elapsed() > 30000) {
                return false;
            }
            QTest::qWait(100);
        }
        return true;
    }

private slots:
    void initTestCase()
    {
        m_node = std::make_unique<CtldNode>();
        QVERIFY(m_node->ready());
    }
    void cleanupTestCase() { m_node.reset(); }
    void init() { m_node->freshDatabase(); }

    void getParamsNamesTheInstanceThatDidNotAnswer()
    {
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        {
            Stopped stopped(m_node->bench('b').pid());
            // Whether ctld still counts bench-b (the call times out) or already dropped it (the
            // scan noticed), bench-a's value comes back and bench-b is named.
            auto get = m_node->lutractl({"--json", "get_param", "llite.*.max_read_ahead_mb"});
            QCOMPARE(get.exitCode, 1);
            const auto node = jsonOf(get)["nodes"].toArray()[0].toObject();
            const auto values = node["result"].toObject()["values"].toArray();
            QCOMPARE(values.size(), 1);
            QCOMPARE(values[0].toObject()["instance"].toString(), QString("bench-a"));
            const auto failures = node["result"].toObject()["failures"].toArray();
            QCOMPARE(failures.size(), 1);
            QCOMPARE(failures[0].toObject()["instance"].toString(), QString("bench-b"));
            QVERIFY2(node["error"].toString().startsWith("bench-b "), qPrintable(get.out));
        }
        QVERIFY(waitConnected(2));
        QCOMPARE(ctld->stop(), 0);
    }

    void instanceNotConnectedIsSaidAsSuch()
    {
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        {
            Stopped stopped(m_node->bench('b').pid());
            QVERIFY(waitConnected(1));
            auto get = m_node->lutractl(
                {"get_param", "--instance", "bench-b", "llite.*.max_read_ahead_mb"});
            QCOMPARE(get.exitCode, 1);
            QVERIFY2(get.err.contains("bench-b is not connected") &&
                         !get.err.contains("no parameter matches"),
                     qPrintable(get.err));
            auto set = m_node->lutractl(
                {"set_param", "--instance", "bench-b", "llite.*.max_read_ahead_mb=32"});
            QCOMPARE(set.exitCode, 1);
            QVERIFY2(set.err.contains("bench-b is not connected"), qPrintable(set.err));
        }
        QVERIFY(waitConnected(2));
        QCOMPARE(m_node->value("bench-b", kParam), std::string("64"));
        QCOMPARE(ctld->stop(), 0);
    }

    void restartWithNothingToChangeAddsNoHistory()
    {
        {
            auto ctld = m_node->startCtld();
            QVERIFY(ctld);
            auto set = m_node->lutractl({"set_param", "llite.*.max_read_ahead_mb=48"});
            QVERIFY2(set.exitCode == 0, qPrintable(set.err));
            QCOMPARE(ctld->stop(), 0);
        }
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        const auto history = jsonOf(m_node->lutractl({"--json", "history"}));
        const auto points =
            history["nodes"].toArray()[0].toObject()["result"].toObject()["points"].toArray();
        QCOMPARE(points.size(), 1); // the set_param, no reconcile per instance
        QCOMPARE(points[0].toObject()["action"].toString(), QString("set"));
        QVERIFY(m_node->lutractl({"set_param", "llite.*.max_read_ahead_mb=64"}).exitCode == 0);
        QCOMPARE(ctld->stop(), 0);
    }

    void errorsDoNotNameTheDatabaseFile()
    {
        auto ctld = m_node->startCtld();
        QVERIFY(ctld);
        auto rollback = m_node->lutractl({"rollback", "999999"});
        QCOMPARE(rollback.exitCode, 1);
        QVERIFY2(!rollback.err.isEmpty() &&
                     !rollback.err.contains(QString::fromStdString(m_node->dbPath())) &&
                     !rollback.err.contains("ctld.db"),
                 qPrintable(rollback.err));
        QCOMPARE(ctld->stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestCtldInstances)
#include "test_ctld_instances.moc"
