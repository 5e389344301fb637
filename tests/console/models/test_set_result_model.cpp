#include "model_print.h"
#include "models/format.h"
#include "models/set_result_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

const QString pages = QStringLiteral("osc.ost0.max_pages_per_rpc");
const QString readahead = QStringLiteral("llite.lutra.max_read_ahead_mb");

SetEntry entry(const QString &name, const QString &oldValue, const QString &requested,
               const QString &readBack = {})
{
    SetEntry result;
    result.name = name;
    result.oldValue = oldValue;
    result.requested = requested;
    result.readBack = readBack;
    return result;
}

SetOutcome dryRun(const QString &oldPages)
{
    SetOutcome outcome;
    outcome.dryRun = true;
    outcome.instances = {{QStringLiteral("client-lutra"),
                          false,
                          {},
                          {entry(pages, oldPages, QStringLiteral("1024")),
                           entry(readahead, QStringLiteral("64"), QStringLiteral("64"))}}};
    return outcome;
}

QColor foreground(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data(Qt::ForegroundRole).value<QBrush>().color();
}

} // namespace

class TestSetResultModel : public QObject {
    Q_OBJECT
private slots:
    void dryRunThenApply()
    {
        SetResultModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        model.setOutcome(QStringLiteral("node001"), dryRun(QStringLiteral("256")));
        model.setOutcome(QStringLiteral("node002"), dryRun(QStringLiteral("1024")));
        model.setNodeError(QStringLiteral("node003"),
                           QStringLiteral("PERMISSION_DENIED: role viewer may not set"));
        QCOMPARE(
            printModel(model),
            QStringList({"node001 | client-lutra | " + pages + " | 256 | 1024 |  | would change",
                         "node001 | client-lutra | " + readahead + " | 64 | 64 |  | unchanged",
                         "node002 | client-lutra | " + pages + " | 1024 | 1024 |  | unchanged",
                         "node002 | client-lutra | " + readahead + " | 64 | 64 |  | unchanged",
                         "node003 |  |  |  |  |  | error: PERMISSION_DENIED: role viewer may "
                         "not set"}));
        QCOMPARE(model.errorCount(), 1);
        QCOMPARE(model.nodes(), QStringList({"node001", "node002", "node003"}));
        // The failed call is one red row; its message is a tooltip too.
        for (int column = 0; column < SetResultModel::ColumnCount; ++column) {
            QCOMPARE(foreground(model, 4, column), errorColor());
        }
        QCOMPARE(model.index(4, SetResultModel::Status).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("error: PERMISSION_DENIED: role viewer may not set"));
        QVERIFY(!model.index(0, SetResultModel::Status).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.headerData(SetResultModel::ReadBack, Qt::Horizontal).toString(),
                 QStringLiteral("Read back"));

        // Applied on node001: one value clamped by the target, and an instance batch error.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        SetOutcome applied;
        applied.applied = true;
        SetEntry clamped =
            entry(pages, QStringLiteral("256"), QStringLiteral("1024"), QStringLiteral("512"));
        clamped.clamped = true;
        applied.instances = {{QStringLiteral("client-lutra"),
                              true,
                              {},
                              {clamped, entry(readahead, QStringLiteral("64"), QStringLiteral("64"),
                                              QStringLiteral("64"))}},
                             {QStringLiteral("bench-job1001"),
                              false,
                              {QStringLiteral("instance went away during the set")},
                              {}}};
        applied.errors = {QStringLiteral("pattern osc.ost9.* matched nothing")};
        model.setOutcome(QStringLiteral("node001"), applied);
        // node001 had two rows, now four: two updated in place, two inserted after them.
        QCOMPARE(changed.size(), 1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(reset.size() + removed.size(), 0);
        QCOMPARE(printModel(model),
                 QStringList({"node001 |  |  |  |  |  | error: pattern osc.ost9.* matched nothing",
                              "node001 | client-lutra | " + pages + " | 256 | 1024 | 512 | clamped",
                              "node001 | client-lutra | " + readahead + " | 64 | 64 | 64 | ok",
                              "node001 | bench-job1001 |  |  |  |  | error: instance went away "
                              "during the set",
                              "node002 | client-lutra | " + pages + " | 1024 | 1024 |  | unchanged",
                              "node002 | client-lutra | " + readahead + " | 64 | 64 |  | unchanged",
                              "node003 |  |  |  |  |  | error: PERMISSION_DENIED: role viewer may "
                              "not set"}));
        QCOMPARE(model.errorCount(), 3);
        QCOMPARE(
            model.index(1, SetResultModel::Status).data(Qt::BackgroundRole).value<QBrush>().color(),
            warningColor());
        QCOMPARE(foreground(model, 0, SetResultModel::Status), errorColor());
        QCOMPARE(foreground(model, 3, SetResultModel::Status), errorColor());
        QVERIFY(model.index(3, 0).data(SetResultModel::ErrorRole).toBool());
        QVERIFY(!model.index(2, 0).data(SetResultModel::ErrorRole).toBool());

        // node003's retry succeeds; node002's rows shrink to one entry that failed and was
        // rolled back with the rest.
        SetOutcome ok;
        ok.applied = true;
        ok.instances = {{QStringLiteral("client-lutra"),
                         true,
                         {},
                         {entry(pages, QStringLiteral("256"), QStringLiteral("1024"),
                                QStringLiteral("1024"))}}};
        model.setOutcome(QStringLiteral("node003"), ok);
        SetOutcome failed;
        SetEntry error = entry(pages, QStringLiteral("1024"), QStringLiteral("4096"));
        error.error = QStringLiteral("out of range: 4096 > 1024");
        failed.instances = {{QStringLiteral("client-lutra"), false, {}, {error}}};
        model.setOutcome(QStringLiteral("node002"), failed);
        QCOMPARE(removed.size(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(
            printModel(model, {SetResultModel::Node, SetResultModel::Status}),
            QStringList({"node001 | error: pattern osc.ost9.* matched nothing", "node001 | clamped",
                         "node001 | ok", "node001 | error: instance went away during the set",
                         "node002 | error: out of range: 4096 > 1024", "node003 | ok"}));
        QCOMPARE(model.errorCount(), 3);
        QVERIFY(!model.index(5, 0).data(Qt::ForegroundRole).isValid());

        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.errorCount(), 0);
        QCOMPARE(model.nodes(), QStringList());
    }

    void rolledBackAndSpecial()
    {
        SetResultModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        SetOutcome dry;
        dry.dryRun = true;
        SetEntry clear = entry(QStringLiteral("ldlm.namespaces.ost0.lru_size"),
                               QStringLiteral("clear"), QStringLiteral("clear"));
        clear.special = true;
        dry.instances = {{QStringLiteral("client-lutra"), false, {}, {clear}}};
        model.setOutcome(QStringLiteral("node001"), dry);
        QCOMPARE(model.index(0, SetResultModel::Status).data().toString(),
                 QStringLiteral("would change"));

        SetOutcome undone;
        SetEntry back =
            entry(pages, QStringLiteral("256"), QStringLiteral("1024"), QStringLiteral("256"));
        back.rolledBack = true;
        undone.instances = {{QStringLiteral("client-lutra"), false, {}, {back}}};
        model.setOutcome(QStringLiteral("node001"), undone);
        QCOMPARE(model.index(0, SetResultModel::Status).data().toString(),
                 QStringLiteral("rolled back"));
        QCOMPARE(foreground(model, 0, SetResultModel::Status), mutedColor());
        QCOMPARE(model.errorCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestSetResultModel)
#include "test_set_result_model.moc"
