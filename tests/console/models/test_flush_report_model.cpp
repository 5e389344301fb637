#include "model_print.h"
#include "models/flush_report_model.h"
#include "models/format.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

constexpr quint64 MiB = 1024 * 1024;

InstanceFlushReport report(const QString &instance, quint64 locks, quint64 pages, quint64 bytes,
                           quint64 durationUs, const QStringList &problems = {},
                           const QString &error = {})
{
    InstanceFlushReport result;
    result.instance = instance;
    result.error = error;
    result.locksCancelled = locks;
    result.pagesDropped = pages;
    result.bytesWrittenBack = bytes;
    result.durationUs = durationUs;
    result.problems = problems;
    return result;
}

QColor foreground(const QModelIndex &index)
{
    return index.data(Qt::ForegroundRole).value<QBrush>().color();
}

} // namespace

class TestFlushReportModel : public QObject {
    Q_OBJECT
private slots:
    void reportsNodeByNode()
    {
        FlushReportModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        model.setNodes({"node001", "node002", "node003", "node001"});
        QCOMPARE(printModel(model),
                 QStringList({"node001 | queued |  |  |  |  | ", "node002 | queued |  |  |  |  | ",
                              "node003 | queued |  |  |  |  | "}));
        QCOMPARE(foreground(model.index(0, FlushReportModel::Status)), mutedColor());

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.setNodeRunning(QStringLiteral("node001"));
        model.setNodeRunning(QStringLiteral("node002"));
        QCOMPARE(changed.size(), 2);
        QCOMPARE(model.index(0, FlushReportModel::Status).data().toString(),
                 QStringLiteral("flushing…"));

        FlushOutcome ok;
        ok.jobId = QStringLiteral("job.1001");
        ok.ok = true;
        ok.durationUs = 12'345;
        ok.historyId = 12;
        ok.instances = {
            report(QStringLiteral("target-ost0"), 3, 256, MiB, 9'000),
            report(QStringLiteral("client-lutra"), 17, 4'096, 16 * MiB, 12'000,
                   {QStringLiteral("write-back of page 42 retried after EAGAIN"),
                    QStringLiteral("write-back of page 97 retried after EAGAIN")}),
        };
        model.setNodeReport(QStringLiteral("node001"), ok);

        FlushOutcome failed;
        failed.jobId = QStringLiteral("job.1001");
        failed.durationUs = 2'500'000;
        failed.historyId = 13;
        failed.instances = {
            report(QStringLiteral("client-lutra"), 2, 10, 0, 2'400'000, {},
                   QStringLiteral("DEADLINE_EXCEEDED: write-back did not finish in 2 s")),
        };
        model.setNodeReport(QStringLiteral("node002"), failed);
        model.setNodeError(QStringLiteral("node003"),
                           QStringLiteral("UNAVAILABLE: failed to connect to all addresses"), true);
        QCOMPARE(removed.size() + reset.size(), 0);
        const QString problems = QStringLiteral("write-back of page 42 retried after EAGAIN; "
                                                "write-back of page 97 retried after EAGAIN");
        QCOMPARE(printModel(model),
                 QStringList({"node001 | ok | 20 | 4,352 | 17.0 MiB | 12.3 ms | " + problems,
                              "  client-lutra | ok | 17 | 4,096 | 16.0 MiB | 12.0 ms | " + problems,
                              "  target-ost0 | ok | 3 | 256 | 1.0 MiB | 9.0 ms | ",
                              "node002 | error | 2 | 10 | 0 bytes | 2.5 s | ",
                              "  client-lutra | error: DEADLINE_EXCEEDED: write-back did not "
                              "finish in 2 s | 2 | 10 | 0 bytes | 2.4 s | ",
                              "node003 | unreachable |  |  |  |  | "}));
        QCOMPARE(model.okCount(), 1);
        QCOMPARE(model.failedCount(), 2);
        const FlushTotals totals = model.totals();
        QCOMPARE(totals.locks, 22u);
        QCOMPARE(totals.pages, 4'362u);
        QCOMPARE(totals.bytes, 17 * MiB);

        const QModelIndex node001 = model.index(0, 0);
        const QModelIndex node002 = model.index(1, 0);
        QCOMPARE(node001.data(Qt::ToolTipRole).toString(), QStringLiteral("history #12"));
        QCOMPARE(model.index(0, FlushReportModel::Problems)
                     .data(Qt::BackgroundRole)
                     .value<QBrush>()
                     .color(),
                 warningColor());
        QVERIFY(!model.index(1, FlushReportModel::Problems, node001)
                     .data(Qt::BackgroundRole)
                     .isValid());
        QVERIFY(!model.index(0, FlushReportModel::Status).data(Qt::ForegroundRole).isValid());
        QCOMPARE(foreground(model.index(1, FlushReportModel::Status)), errorColor());
        QCOMPARE(foreground(model.index(0, FlushReportModel::Status, node002)), errorColor());
        QCOMPARE(foreground(model.index(2, FlushReportModel::Status)), errorColor());
        QCOMPARE(model.index(2, FlushReportModel::Status).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("UNAVAILABLE: failed to connect to all addresses"));
        QCOMPARE(model.index(0, FlushReportModel::What, node002)
                     .data(FlushReportModel::NodeRole)
                     .toString(),
                 QStringLiteral("node002"));
        QCOMPARE(model.index(0, FlushReportModel::WrittenBack)
                     .data(FlushReportModel::SortRole)
                     .toULongLong(),
                 17 * MiB);

        // The same report again changes nothing.
        changed.clear();
        model.setNodeReport(QStringLiteral("node001"), ok);
        QCOMPARE(changed.size(), 0);

        // A new flush over node002 and node004: node001 and node003 go, node002 starts over.
        model.setNodes({"node002", "node004"});
        QCOMPARE(printModel(model), QStringList({"node002 | queued |  |  |  |  | ",
                                                 "node004 | queued |  |  |  |  | "}));
        QCOMPARE(model.okCount() + model.failedCount(), 0);
        QCOMPARE(model.totals().bytes, 0u);
        QCOMPARE(reset.size(), 0);

        // A node not given to setNodes is appended; a refused call is an error, not unreachable.
        model.setNodeError(QStringLiteral("node005"),
                           QStringLiteral("PERMISSION_DENIED: role viewer may not flush"), false);
        QCOMPARE(model.index(2, FlushReportModel::Status).data().toString(),
                 QStringLiteral("error: PERMISSION_DENIED: role viewer may not flush"));
        QCOMPARE(model.failedCount(), 1);
    }

    void notOkWithoutInstanceErrors()
    {
        FlushReportModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        FlushOutcome outcome;
        outcome.ok = false;
        outcome.durationUs = 800;
        model.setNodeReport(QStringLiteral("node1"), outcome);
        QCOMPARE(printModel(model), QStringList({"node1 | error | 0 | 0 | 0 bytes | 0.8 ms | "}));
        QVERIFY(!model.index(0, 0).data(Qt::ToolTipRole).isValid());
        QCOMPARE(model.failedCount(), 1);
    }
};

QTEST_GUILESS_MAIN(TestFlushReportModel)
#include "test_flush_report_model.moc"
