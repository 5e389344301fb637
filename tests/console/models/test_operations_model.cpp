#include "model_print.h"
#include "models/format.h"
#include "models/operations_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

class TestOperationsModel : public QObject {
    Q_OBJECT
private slots:
    void feedsInSteps()
    {
        OperationsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        const QStringList nodes{"node001", "node002", "node003", "node004", "node005"};
        const int set =
            model.addOperation(QStringLiteral("set osc.*.max_pages_per_rpc=1024"), nodes);
        QCOMPARE(
            printModel(model),
            QStringList({"set osc.*.max_pages_per_rpc=1024 | running 0/5 | ",
                         "  node001 | queued | ", "  node002 | queued | ", "  node003 | queued | ",
                         "  node004 | queued | ", "  node005 | queued | "}));
        QCOMPARE(model.nodeCount(set), 5);
        QCOMPARE(model.doneCount(set), 0);
        QCOMPARE(model.operationState(set), OpState::running);

        // Progress arrives node by node; instance results under their node.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        for (const QString &node : nodes) {
            model.setNodeState(set, node, OpState::running);
        }
        model.setInstanceResult(set, QStringLiteral("node001"), QStringLiteral("client-lutra"),
                                true, QStringLiteral("1024"));
        model.setNodeState(set, QStringLiteral("node001"), OpState::ok);
        model.setNodeState(set, QStringLiteral("node002"), OpState::ok);
        model.setNodeState(set, QStringLiteral("node003"), OpState::unreachable,
                           QStringLiteral("UNAVAILABLE: failed to connect to all addresses"));
        QCOMPARE(reset.size() + removed.size(), 0);
        QVERIFY(!changed.isEmpty());
        QCOMPARE(model.doneCount(set), 3);
        QCOMPARE(
            printModel(model),
            QStringList({"set osc.*.max_pages_per_rpc=1024 | running 3/5 | 2 ok, 1 unreachable",
                         "  node001 | ok | ", "    client-lutra | ok | 1024", "  node002 | ok | ",
                         "  node003 | unreachable | UNAVAILABLE: failed to connect to all "
                         "addresses",
                         "  node004 | running | ", "  node005 | running | "}));

        // A second operation is appended while the first runs.
        const int flush = model.addOperation(QStringLiteral("flush job 1001"), {"node004"});
        QVERIFY(flush != set);
        QCOMPARE(model.operationIndex(flush).row(), 1);
        QCOMPARE(model.operationIndex(set).row(), 0);

        model.setInstanceResult(set, QStringLiteral("node004"), QStringLiteral("client-lutra"),
                                false, QStringLiteral("out of range: more than 512"));
        model.setInstanceResult(set, QStringLiteral("node004"), QStringLiteral("client-lutra"),
                                false, QStringLiteral("out of range: more than 256"));
        model.setNodeState(set, QStringLiteral("node004"), OpState::failed,
                           QStringLiteral("rolled back"));
        model.setNodeState(set, QStringLiteral("node005"), OpState::ok);
        model.finish(set);
        QCOMPARE(model.operationState(set), OpState::failed);
        QCOMPARE(model.doneCount(set), 5);
        const QModelIndex op = model.operationIndex(set);
        QCOMPARE(op.siblingAtColumn(OperationsModel::State).data().toString(),
                 QStringLiteral("failed"));
        QCOMPARE(op.siblingAtColumn(OperationsModel::Detail).data().toString(),
                 QStringLiteral("3 ok, 1 failed, 1 unreachable"));
        const QModelIndex node004 = model.index(3, 0, op);
        QCOMPARE(printModel(model, {}, node004),
                 QStringList({"client-lutra | failed | out of range: more than 256"}));

        // Roles and colours: red for failed and unreachable, gray for cancelled.
        const QModelIndex instance = model.index(0, OperationsModel::State, node004);
        QCOMPARE(instance.data(OperationsModel::OperationIdRole).toInt(), set);
        QCOMPARE(node004.data(OperationsModel::OperationIdRole).toInt(), set);
        QCOMPARE(instance.data(OperationsModel::StateRole).toInt(), int(OpState::failed));
        QCOMPARE(instance.data(Qt::ForegroundRole).value<QBrush>().color(), errorColor());
        QCOMPARE(model.index(2, OperationsModel::State, op)
                     .data(Qt::ForegroundRole)
                     .value<QBrush>()
                     .color(),
                 errorColor());
        QVERIFY(!model.index(0, OperationsModel::State, op).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.index(2, OperationsModel::Detail, op).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("UNAVAILABLE: failed to connect to all addresses"));

        // Cancelled: the node still running when the operation ends counts as cancelled.
        const int clear =
            model.addOperation(QStringLiteral("clear ldlm.*.lru_size"), {"node001", "node002"});
        model.setNodeState(clear, QStringLiteral("node001"), OpState::ok);
        model.setNodeState(clear, QStringLiteral("node002"), OpState::running);
        model.finish(clear);
        QCOMPARE(model.operationState(clear), OpState::cancelled);
        const QModelIndex clearIndex = model.operationIndex(clear);
        QCOMPARE(printModel(model, {}, clearIndex),
                 QStringList({"node001 | ok | ", "node002 | cancelled | "}));
        QCOMPARE(model.index(1, OperationsModel::State, clearIndex)
                     .data(Qt::ForegroundRole)
                     .value<QBrush>()
                     .color(),
                 mutedColor());
        QCOMPARE(clearIndex.siblingAtColumn(OperationsModel::Detail).data().toString(),
                 QStringLiteral("1 ok, 1 cancelled"));

        // Every node ok (or skipped): ok.
        model.setNodeState(flush, QStringLiteral("node004"), OpState::ok);
        model.setNodeState(flush, QStringLiteral("node009"), OpState::skipped,
                           QStringLiteral("no such job"));
        QCOMPARE(model.nodeCount(flush), 2);
        model.finish(flush);
        QCOMPARE(model.operationState(flush), OpState::ok);
        QCOMPARE(printModel(model, {}, model.operationIndex(flush)),
                 QStringList({"node004 | ok | ", "node009 | skipped | no such job"}));
        QCOMPARE(reset.size() + removed.size(), 0);
        QCOMPARE(stateName(OpState::unreachable), QStringLiteral("unreachable"));
    }
};

QTEST_GUILESS_MAIN(TestOperationsModel)
#include "test_operations_model.moc"
