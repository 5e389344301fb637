// The Jobs and Audit views, offscreen, against two real lutra-ctld processes each with a
// lutra-bench --loop workload (job 1001 on node001, job 1002 on node002): per-job flush only where
// the job ran, flush of every job behind a typed confirmation, the audit trail merged across nodes
// with its filters, and a rollback from it. Screenshots go to $LUTRA_SCREENSHOT_DIR (default:
// screenshots/ next to the test binary).

#include "app/audit_view.h"
#include "app/cluster_controller.h"
#include "app/jobs_view.h"
#include "app/operations_dock.h"
#include "console_test_cluster.h"
#include "models/flush_report_model.h"
#include "models/history_model.h"
#include "models/jobs_model.h"
#include "models/operations_model.h"
#include "models/plan_model.h"

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTreeView>

using namespace lutra::console;
using namespace lutra::console::test;

namespace {

const QString kParam = QStringLiteral("osc.ost0.max_rpcs_in_flight");

// "1,234" as the models print counts.
bool isCount(const QString &text)
{
    bool ok = false;
    QString(text).remove(',').toULongLong(&ok);
    return ok;
}

} // namespace

class TestConsoleJobsAudit : public QObject {
    Q_OBJECT

private:
    QString address(int node) const { return m_cluster->addresses().at(node); }
    NodeConnection &connection(int node) const { return *m_cluster->connection(address(node)); }

    QList<HistoryPoint> historyOf(int node, const QString &action) const
    {
        HistoryQuery query;
        query.action = action;
        auto *target = &connection(node);
        const auto page =
            await<HistoryPage>([&](auto done) { target->listHistory(query, std::move(done)); });
        return page.ok ? page.value.points : QList<HistoryPoint>{};
    }

    quint64 setParam(int node, const QString &value)
    {
        auto *target = &connection(node);
        const auto set = await<SetOutcome>([&](auto done) {
            target->setParams({{kParam, value}}, {}, false, std::move(done));
        });
        return set.ok && set.value.applied ? set.value.historyId : 0;
    }

    // The last operation of the dock: its id.
    int lastOperation() const
    {
        const auto &operations = m_cluster->operationsModel();
        return operations.index(operations.rowCount() - 1, 0)
            .data(OperationsModel::OperationIdRole)
            .toInt();
    }

    qint64 readBytes(const QString &job) const
    {
        const auto *jobs = m_jobsView->jobs();
        const int row = int(jobs->jobs().indexOf(job));
        return row < 0
                   ? -1
                   : jobs->index(row, JobsModel::ReadBytes).data(JobsModel::SortRole).toLongLong();
    }

    // What the node's clients (llite) and targets (obdfilter) counted of the job's bytes
    // written, now. (Written: the workload's reads mostly hit its client's page cache.)
    static QPair<qint64, qint64> writtenBytesBySide(NodeConnection &node, const QString &job)
    {
        const auto reply =
            await<QList<JobStat>>([&](auto done) { node.getJobStats(job, std::move(done)); });
        QPair<qint64, qint64> sides{-1, -1};
        if (!reply.ok) {
            return sides;
        }
        sides = {0, 0};
        for (const JobStat &stat : reply.value) {
            for (const Counter &counter : stat.counters) {
                if (counter.name == QStringLiteral("write_bytes")) {
                    (stat.block.startsWith(QStringLiteral("llite.")) ? sides.first
                                                                     : sides.second) += counter.sum;
                }
            }
        }
        return sides;
    }

    // Waits until the audit list is loaded as far as its first pages go.
    bool auditSettled(int atLeast)
    {
        const auto *history = m_auditView->history();
        return QTest::qWaitFor(
            [&] { return history->pendingFetches() == 0 && history->rowCount() >= atLeast; },
            30000);
    }

    template <typename T> T *child(const QString &name) const
    {
        return m_window->findChild<T *>(name);
    }

    TestCluster m_nodes;
    std::unique_ptr<ClusterController> m_cluster;
    std::unique_ptr<QMainWindow> m_window;
    QTabWidget *m_tabs = nullptr;
    JobsView *m_jobsView = nullptr;
    AuditView *m_auditView = nullptr;
    QStringList m_selected; // what the Cluster view's selection would be
    quint64 m_firstSet = 0; // node001's first set (max_rpcs_in_flight=5)

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings of the window stay out of ~/.config
        const auto error = m_nodes.start(2);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        m_cluster = std::make_unique<ClusterController>();
        m_window = std::make_unique<QMainWindow>();
        m_tabs = new QTabWidget;
        const auto selected = [this] { return m_selected; };
        m_jobsView = new JobsView(*m_cluster, selected);
        m_auditView = new AuditView(*m_cluster, selected);
        m_tabs->addTab(m_jobsView, "Jobs");
        m_tabs->addTab(m_auditView, "Audit");
        m_window->setCentralWidget(m_tabs);
        auto *dock = new OperationsDock(*m_cluster, m_window.get());
        m_window->addDockWidget(Qt::BottomDockWidgetArea, dock);
        m_window->resizeDocks({dock}, {170}, Qt::Vertical);
        m_window->resize(1400, 900);
        m_window->show();
        const auto parsed = ClusterFile::load(m_nodes.clusterFile("admin"));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        m_cluster->open(parsed.file);
        QVERIFY(TestCluster::waitAllReady(*m_cluster));
        QCOMPARE(m_cluster->nodeName(address(0)), QString("node001"));
        QCOMPARE(m_cluster->nodeName(address(1)), QString("node002"));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_cluster.reset();
        m_nodes.stop();
    }

    void jobsTableShowsEveryJobWithItsNode()
    {
        m_tabs->setCurrentWidget(m_jobsView);
        // The workloads read all the time; their bytes show up within a few samples.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_jobsView->refresh();
                return readBytes("1001") > 0 && readBytes("1002") > 0;
            }(),
            30000);
        const auto &jobs = *m_jobsView->jobs();
        const int row1 = int(jobs.jobs().indexOf("1001"));
        const int row2 = int(jobs.jobs().indexOf("1002"));
        QCOMPARE(cell(jobs, row1, JobsModel::Nodes), QString("node001"));
        QCOMPARE(cell(jobs, row2, JobsModel::Nodes), QString("node002"));
        QVERIFY(!cell(jobs, row1, JobsModel::ReadBytes).isEmpty());

        auto *filter = child<QLineEdit>("jobs.filter");
        QTest::keyClicks(filter, "100[1]");
        QCOMPARE(jobs.jobs(), QStringList({"1001"}));
        filter->clear();
        QVERIFY(jobs.jobs().contains("1001") && jobs.jobs().contains("1002"));

        QVERIFY(m_jobsView->selectJob("1001"));
        // A rate needs two snapshots of the node.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_jobsView->refresh();
                const int row = int(jobs.jobs().indexOf("1001"));
                return cell(jobs, row, JobsModel::ReadRate).endsWith("/s");
            }(),
            20000);
        auto *flush = child<QPushButton>("jobs.flush");
        QVERIFY(flush->isEnabled());
        QCOMPARE(flush->text(), QString("Flush job 1001 on node001"));
        screenshot(*m_window, "jobs");
    }

    // The first answer has no rate to give: the cells and the note say a second sample is
    // coming (they showed "—" for jobs reading all the time), and the second one gives it.
    void ratesSayTheyWaitForASecondSample()
    {
        JobsView jobs(*m_cluster, [] { return QStringList{}; });
        jobs.resize(1200, 500);
        jobs.show();
        QSignalSpy loaded(&jobs, &JobsView::jobsLoaded);
        jobs.reload();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 1, 20000);
        const auto &model = *jobs.jobs();
        const int row = int(model.jobs().indexOf("1001"));
        QVERIFY(row >= 0);
        QCOMPARE(cell(model, row, JobsModel::ReadRate), QString("measuring…"));
        QCOMPARE(cell(model, row, JobsModel::WriteRate), QString("measuring…"));
        const auto why = model.index(row, JobsModel::ReadRate).data(Qt::ToolTipRole).toString();
        QVERIFY2(why.startsWith("Measuring: a rate needs two samples") &&
                     why.contains("node001: first sample of this job"),
                 qPrintable(why));
        auto *note = jobs.findChild<QLabel *>("jobs.statsNote");
        QVERIFY2(note->text().contains("rates from the next sample, in 2 s"),
                 qPrintable(note->text()));
        jobs.refresh();    // the clock for "ago"
        QTest::qWait(100); // the columns fit their new contents
        screenshot(jobs, "jobs-measuring");

        QTest::qWait(JobsView::kRefreshMs);
        jobs.reload();
        QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), 2, 20000);
        QVERIFY2(cell(model, row, JobsModel::ReadRate).endsWith("/s"),
                 qPrintable(cell(model, row, JobsModel::ReadRate)));
        QVERIFY(cell(model, row, JobsModel::WriteRate).endsWith("/s"));
        QVERIFY2(note->text().contains("rates over the last 2 s"), qPrintable(note->text()));
    }

    // A node whose workload writes through a lutra-target beside it reports job 1001 from its
    // client and its target (the same I/O): the view counts the client's bytes, not their sum
    // with the target's (which made "Read" and "Written" up to twice what the job did).
    void bytesAreTheClientsNotBothSides()
    {
        TestCluster nodes;
        const auto error = nodes.start(1, false, true);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        ClusterController cluster;
        const auto parsed = ClusterFile::load(nodes.clusterFile("admin"));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        cluster.open(parsed.file);
        QVERIFY(TestCluster::waitAllReady(cluster));
        NodeConnection &node = *cluster.connection(cluster.addresses().at(0));
        QTRY_VERIFY_WITH_TIMEOUT(writtenBytesBySide(node, "1001").second > 0, 30000);

        JobsView jobs(cluster, [] { return QStringList{}; });
        QSignalSpy loaded(&jobs, &JobsView::jobsLoaded);
        const auto &model = *jobs.jobs();
        // The job writes on: the view's answer lies between the client's counts before and
        // after it. Tried again while the job wrote as much as its target counted in between,
        // where the bounds could not tell the client's bytes from both sides'.
        for (int attempt = 1;; ++attempt) {
            const auto before = writtenBytesBySide(node, "1001");
            QVERIFY2(before.first > 0 && before.second > 0,
                     qPrintable(QString("node001's job 1001 writes: client %1, target %2")
                                    .arg(before.first)
                                    .arg(before.second)));
            jobs.reload();
            QTRY_COMPARE_WITH_TIMEOUT(loaded.count(), attempt, 20000);
            const int row = int(model.jobs().indexOf("1001"));
            QVERIFY(row >= 0);
            const qint64 shown =
                model.index(row, JobsModel::WriteBytes).data(JobsModel::SortRole).toLongLong();
            const auto after = writtenBytesBySide(node, "1001");
            if (after.first >= before.first + before.second && attempt < 5) {
                continue;
            }
            QVERIFY2(after.first < before.first + before.second, "the job wrote too fast to tell");
            QVERIFY2(before.first <= shown && shown <= after.first,
                     qPrintable(QString("shown %1, client %2..%3, target %4")
                                    .arg(shown)
                                    .arg(before.first)
                                    .arg(after.first)
                                    .arg(before.second)));
            QCOMPARE(cell(model, row, JobsModel::CountedFrom), QString("clients"));
            QCOMPARE(cell(model, row, JobsModel::Nodes), QString("node001"));
            const auto from =
                model.index(row, JobsModel::CountedFrom).data(Qt::ToolTipRole).toString();
            QVERIFY2(from == "Counted from the clients' job_stats (llite) on node001\nNot added: "
                             "the targets' job_stats on node001 describe the same I/O",
                     qPrintable(from));
            break;
        }
        jobs.resize(1200, 300);
        jobs.show();
        QTest::qWait(100); // the columns fit their contents
        screenshot(jobs, "jobs-client-and-target");
    }

    void flushOfOneJobRunsOnlyWhereItRan()
    {
        QVERIFY(historyOf(1, "flush").isEmpty());
        const int operationsBefore = m_cluster->operationsModel().rowCount();
        QVERIFY(m_jobsView->selectJob("1001"));
        QSignalSpy finished(m_jobsView, &JobsView::flushFinished);
        QTest::mouseClick(child<QPushButton>("jobs.flush"), Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);

        // The report: node001 only, ok, with its instance and what the flush did there.
        const auto &report = *m_jobsView->report();
        QCOMPARE(report.rowCount(), 1);
        QCOMPARE(cell(report, 0, FlushReportModel::What), QString("node001"));
        QCOMPARE(cell(report, 0, FlushReportModel::Status), QString("ok"));
        const auto node = report.index(0, 0);
        QCOMPARE(report.rowCount(node), 1);
        QCOMPARE(cell(report, 0, FlushReportModel::What, node), QString("bench-jobnode001"));
        QCOMPARE(cell(report, 0, FlushReportModel::Status, node), QString("ok"));
        QVERIFY2(isCount(cell(report, 0, FlushReportModel::LocksCancelled, node)),
                 qPrintable(cell(report, 0, FlushReportModel::LocksCancelled, node)));
        QVERIFY2(isCount(cell(report, 0, FlushReportModel::PagesDropped, node)),
                 qPrintable(cell(report, 0, FlushReportModel::PagesDropped, node)));
        const auto point = report.index(0, FlushReportModel::What).data(Qt::ToolTipRole).toString();
        QVERIFY2(point.startsWith("history #"), qPrintable(point));
        const auto summary = child<QLabel>("jobs.summary")->text();
        QVERIFY2(summary.startsWith("Job 1001: flushed on 1 of 1 node(s)") &&
                     summary.contains(point.mid(QString("history ").size()) + " on node001"),
                 qPrintable(summary));

        // One operation, on node001 only, that a shell can redo.
        const auto &operations = m_cluster->operationsModel();
        QCOMPARE(operations.rowCount(), operationsBefore + 1);
        const int id = lastOperation();
        QCOMPARE(operations.index(operations.rowCount() - 1, 0).data().toString(),
                 QString("flush job 1001"));
        QCOMPARE(operations.nodeCount(id), 1);
        const auto *record = m_cluster->operationRecord(id);
        QVERIFY(record);
        QVERIFY2(record->script.contains("flush --job 1001"), qPrintable(record->script));
        QCOMPARE(record->addresses, QStringList({address(0)}));
        QVERIFY(record->outcomes.value(address(0)).json.contains("\"job_id\""));

        // The marker on node001's charts, none on node002.
        QCOMPARE(m_cluster->events(address(0)).size(), 1);
        QCOMPARE(m_cluster->events(address(0)).first().label, QString("flush 1001"));
        QVERIFY(m_cluster->events(address(1)).isEmpty());
        // node002's ctld was never asked: no flush in its audit trail, job 1002's pages untouched.
        QVERIFY(historyOf(1, "flush").isEmpty());
        QCOMPARE(historyOf(0, "flush").size(), 1);
        m_tabs->setCurrentWidget(m_jobsView);
        screenshot(*m_window, "jobs-flushed");
    }

    void flushOfEveryJobNeedsTheWordsTyped()
    {
        const int operationsBefore = m_cluster->operationsModel().rowCount();
        QString asked;
        m_jobsView->setTypedConfirm([&](const QString &, const QString &text) {
            asked = text;
            return QString("flush al");
        });
        auto *flushAll = child<QPushButton>("jobs.flushAll");
        QVERIFY(flushAll->isEnabled());
        QTest::mouseClick(flushAll, Qt::LeftButton);
        QVERIFY2(asked.contains("on 2 node(s)") && asked.contains("Type \"flush all\""),
                 qPrintable(asked));
        QCOMPARE(m_cluster->operationsModel().rowCount(), operationsBefore);
        const auto cancelled = child<QLabel>("jobs.summary")->text();
        QVERIFY2(cancelled.contains("cancelled") && cancelled.contains("\"flush al\""),
                 qPrintable(cancelled));
        QVERIFY(historyOf(1, "flush").isEmpty());

        m_jobsView->setTypedConfirm(
            [](const QString &, const QString &) { return QString("flush all"); });
        QSignalSpy finished(m_jobsView, &JobsView::flushFinished);
        QTest::mouseClick(flushAll, Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QCOMPARE(m_cluster->operationsModel().rowCount(), operationsBefore + 1);
        const auto *record = m_cluster->operationRecord(lastOperation());
        QCOMPARE(record->title, QString("flush all jobs"));
        QVERIFY2(record->script.contains("flush --all"), qPrintable(record->script));
        const auto &report = *m_jobsView->report();
        QCOMPARE(report.rowCount(), 2);
        QCOMPARE(report.okCount(), 2);
        QCOMPARE(historyOf(1, "flush").size(), 1);
        QCOMPARE(m_cluster->events(address(1)).last().label, QString("flush all"));
    }

    void auditMergesBothNodesByTimeAndFilters()
    {
        m_firstSet = setParam(0, "5");
        QVERIFY(m_firstSet > 0);
        QVERIFY(setParam(1, "6") > 0);
        QVERIFY(setParam(0, "7") > 0);

        m_tabs->setCurrentWidget(m_auditView);
        m_auditView->applyFilter();
        // 3 sets and 3 flushes at least.
        QVERIFY(auditSettled(6));
        const auto &history = *m_auditView->history();
        QSet<QString> nodes;
        for (int row = 0; row < history.rowCount(); ++row) {
            const auto index = history.index(row, 0);
            nodes.insert(history.nodeOf(index));
            if (row > 0) {
                QVERIFY(history.point(index)->timeNs <=
                        history.point(history.index(row - 1, 0))->timeNs);
            }
        }
        QCOMPARE(nodes, QSet<QString>({"node001", "node002"}));

        // action = set, principal = ada: only those.
        auto *action = child<QComboBox>("audit.action");
        action->setCurrentIndex(action->findText("set"));
        QTest::keyClicks(child<QLineEdit>("audit.principal"), "ada");
        QTest::mouseClick(child<QPushButton>("audit.apply"), Qt::LeftButton);
        QVERIFY(auditSettled(3));
        for (int row = 0; row < history.rowCount(); ++row) {
            QCOMPARE(cell(history, row, HistoryModel::Action), QString("set"));
            QCOMPARE(cell(history, row, HistoryModel::Principal), QString("ada"));
        }
        QVERIFY(m_auditView->lutractlCommand().contains(
            "history --limit 50 --principal ada --action set"));
        auto *sinceAny = child<QCheckBox>("audit.sinceAny");
        QVERIFY(!child<QPushButton>("audit.copy")->toolTip().contains("--since"));
        sinceAny->setChecked(false);
        QVERIFY(child<QPushButton>("audit.copy")->toolTip().contains("no --since/--until"));
        sinceAny->setChecked(true);

        QVERIFY(m_auditView->selectPoint("node001", m_firstSet));
        QVERIFY(m_auditView->tree()->isExpanded(m_auditView->tree()->currentIndex()));
        QVERIFY(child<QLabel>("audit.detail")->text().contains(kParam));
        screenshot(*m_window, "audit");
    }

    void rollbackFromTheAuditTrail()
    {
        // Every action again, so the rollback's own point can show at the top.
        child<QComboBox>("audit.action")->setCurrentIndex(0);
        child<QLineEdit>("audit.principal")->clear();
        m_auditView->applyFilter();
        QVERIFY(auditSettled(6));
        QVERIFY(m_auditView->selectPoint("node001", m_firstSet));

        QString asked;
        QStringList planned;
        m_auditView->setConfirm([&](const QString &, const QString &text) {
            asked = text;
            const auto &plan = *m_auditView->rollbackPlan();
            for (int row = 0; row < plan.rowCount(); ++row) {
                planned << cell(plan, row, PlanModel::Parameter) + ' ' +
                               cell(plan, row, PlanModel::Live) + " -> " +
                               cell(plan, row, PlanModel::Desired) + ' ' +
                               cell(plan, row, PlanModel::Status);
            }
            return true;
        });
        QSignalSpy finished(m_auditView, &AuditView::rollbackFinished);
        auto *rollback = child<QPushButton>("audit.rollback");
        QVERIFY(rollback->isEnabled());
        QTest::mouseClick(rollback, Qt::LeftButton);
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), true);
        QCOMPARE(planned, QStringList({kParam + " 7 -> 5 will change"}));
        QVERIFY2(asked.startsWith(QString("Restore 1 parameter(s) on node001 to their values right "
                                          "after #%1")
                                      .arg(m_firstSet)) &&
                     asked.contains(kParam + ": 7 → 5"),
                 qPrintable(asked));

        // The value is back, the operation is in the dock, the rollback is the newest point.
        auto *node1 = &connection(0);
        const auto values = await<QList<InstanceValue>>(
            [&](auto done) { node1->getParams({kParam}, {}, std::move(done)); });
        QVERIFY2(values.ok && values.value.size() == 1, qPrintable(values.error));
        QCOMPARE(values.value.first().value, QString("5"));
        const auto *record = m_cluster->operationRecord(lastOperation());
        QCOMPARE(record->title, QString("rollback to #%1 on node001").arg(m_firstSet));
        QVERIFY2(record->script.endsWith(QString("rollback %1").arg(m_firstSet)),
                 qPrintable(record->script));
        const auto &history = *m_auditView->history();
        QVERIFY(auditSettled(7));
        QCOMPARE(cell(history, 0, HistoryModel::Action), QString("rollback"));
        QCOMPARE(cell(history, 0, HistoryModel::Node), QString("node001"));
        QCOMPARE(cell(history, 0, HistoryModel::What),
                 QString("roll back to point %1").arg(m_firstSet));
        const auto &plan = *m_auditView->rollbackPlan();
        QCOMPARE(plan.rowCount(), 1);
        QCOMPARE(cell(plan, 0, PlanModel::Status), QString("applied"));
        QVERIFY2(child<QLabel>("audit.status")->text().startsWith("Rolled back node001"),
                 qPrintable(child<QLabel>("audit.status")->text()));
        m_auditView->tree()->setCurrentIndex(history.index(0, 0));
        screenshot(*m_window, "audit-rollback");
    }

    void aRollbackThatChangesNothingSaysSoAndDoesNotAsk()
    {
        // Nothing changed after the rollback's own point: ctld has nothing to restore.
        const auto &history = *m_auditView->history();
        QCOMPARE(cell(history, 0, HistoryModel::Action), QString("rollback"));
        m_auditView->tree()->setCurrentIndex(history.index(0, 0));
        bool asked = false;
        m_auditView->setConfirm([&](const QString &, const QString &) {
            asked = true;
            return true;
        });
        const int operationsBefore = m_cluster->operationsModel().rowCount();
        QSignalSpy finished(m_auditView, &AuditView::rollbackFinished);
        QTest::mouseClick(child<QPushButton>("audit.rollback"), Qt::LeftButton);
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY(!asked);
        QCOMPARE(m_cluster->operationsModel().rowCount(), operationsBefore);
        const auto status = child<QLabel>("audit.status")->text();
        QVERIFY2(status.startsWith("Nothing to roll back"), qPrintable(status));
    }

    void aViewerCannotFlushAndIsToldWhy()
    {
        ClusterController cluster;
        cluster.open(ClusterFile::load(m_nodes.clusterFile("viewer")).file);
        QVERIFY(TestCluster::waitAllReady(cluster));
        QCOMPARE(cluster.roleOn(cluster.addresses()), Role::viewer);
        JobsView jobs(cluster, [] { return QStringList{}; });
        AuditView audit(cluster, [] { return QStringList{}; });
        jobs.resize(1200, 700);
        jobs.show();
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                jobs.refresh();
                return jobs.selectJob("1001");
            }(),
            20000);
        jobs.refresh();
        for (const auto *name : {"jobs.flush", "jobs.flushAll"}) {
            auto *button = jobs.findChild<QPushButton *>(name);
            QVERIFY(!button->isEnabled());
            QVERIFY2(button->toolTip().contains("is viewer") &&
                         button->toolTip().contains("needs operator"),
                     qPrintable(button->toolTip()));
        }
        auto *note = jobs.findChild<QLabel *>("jobs.roleNote");
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains("is viewer") && note->text().contains("needs operator"),
                 qPrintable(note->text()));

        // Reading the audit trail is fine; rolling back is not.
        audit.show();
        audit.applyFilter();
        QVERIFY(QTest::qWaitFor(
            [&] {
                return audit.history()->rowCount() > 0 && audit.history()->pendingFetches() == 0;
            },
            30000));
        audit.tree()->setCurrentIndex(audit.history()->index(0, 0));
        auto *rollback = audit.findChild<QPushButton *>("audit.rollback");
        QVERIFY(!rollback->isEnabled());
        QVERIFY2(rollback->toolTip().contains("needs operator"), qPrintable(rollback->toolTip()));
    }
};

QTEST_MAIN(TestConsoleJobsAudit)
#include "test_console_jobs_audit.moc"
