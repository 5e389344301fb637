#include "model_print.h"
#include "models/format.h"
#include "models/instances_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

constexpr qint64 nowMs = 1'700'000'000'000;

InstanceInfo instance(const QString &id, qint64 pid, qint64 seenSecondsAgo, int restarts = 0)
{
    InstanceInfo info;
    info.id = id;
    info.kind = id.section(u'-', 0, 0);
    info.name = id.section(u'-', 1);
    info.pid = pid;
    info.version = QStringLiteral("0.1.0");
    info.connected = true;
    info.seenSinceNs = (nowMs - seenSecondsAgo * 1000) * 1'000'000;
    info.restarts = restarts;
    return info;
}

} // namespace

class TestInstancesModel : public QObject {
    Q_OBJECT
private slots:
    void feedsInSteps()
    {
        InstancesModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNowMs(nowMs);

        InstanceInfo ost0 = instance(QStringLiteral("target-ost0"), 4242, 302);
        InstanceInfo ost1 = instance(QStringLiteral("target-ost1"), 4243, 3 * 3600 + 120, 2);
        InstanceInfo client = instance(QStringLiteral("client-lutra"), 5001, 45);
        model.setInstances({ost0, ost1, client});
        QCOMPARE(printModel(model),
                 QStringList({"target-ost0 | target | 4242 | 0.1.0 | yes | 5m 2s | 0",
                              "target-ost1 | target | 4243 | 0.1.0 | yes | 3h 2m | 2",
                              "client-lutra | client | 5001 | 0.1.0 | yes | 45s | 0"}));
        QCOMPARE(model.headerData(InstancesModel::Pid, Qt::Horizontal).toString(),
                 QStringLiteral("PID"));

        // Periodic refresh: one instance lost its connection; the clock moved.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setNowMs(nowMs + 10'000);
        ost1.connected = false;
        model.setInstances({ost0, ost1, client});
        QCOMPARE(changed.size(), 2);
        QCOMPARE(changed[1][0].toModelIndex(), model.index(1, 0));
        QCOMPARE(changed[1][1].toModelIndex(), model.index(1, InstancesModel::ColumnCount - 1));
        QCOMPARE(reset.size() + removed.size() + inserted.size(), 0);
        QCOMPARE(model.index(1, InstancesModel::Connected).data().toString(), QStringLiteral("no"));
        QCOMPARE(model.index(1, InstancesModel::Connected)
                     .data(Qt::ForegroundRole)
                     .value<QBrush>()
                     .color(),
                 errorColor());
        QVERIFY(!model.index(0, InstancesModel::Connected).data(Qt::ForegroundRole).isValid());
        QCOMPARE(model.index(0, InstancesModel::Since).data().toString(), QStringLiteral("5m 12s"));

        // A bench job appears between the targets and the client; ost1 is gone; the client
        // restarted (new pid, one more restart).
        InstanceInfo job = instance(QStringLiteral("bench-job1001"), 6001, 1);
        client.pid = 5002;
        client.restarts = 1;
        model.setInstances({ost0, job, client});
        QCOMPARE(removed.size(), 1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(printModel(model),
                 QStringList({"target-ost0 | target | 4242 | 0.1.0 | yes | 5m 12s | 0",
                              "bench-job1001 | bench | 6001 | 0.1.0 | yes | 11s | 0",
                              "client-lutra | client | 5002 | 0.1.0 | yes | 55s | 1"}));
        QCOMPARE(model.index(2, 0).data(InstancesModel::IdRole).toString(),
                 QStringLiteral("client-lutra"));
        QCOMPARE(model.index(2, InstancesModel::Pid).data(InstancesModel::SortRole).toLongLong(),
                 5002);

        model.setInstances({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestInstancesModel)
#include "test_instances_model.moc"
