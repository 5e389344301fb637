#include "model_print.h"
#include "models/cluster_filter_model.h"
#include "models/cluster_model.h"
#include "models/format.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

constexpr qint64 nowMs = 1'700'000'000'000;

qint64 startedSecondsAgo(qint64 seconds)
{
    return (nowMs - seconds * 1000) * 1'000'000;
}

NodeInfo nodeInfo(const QString &name, QMap<QString, QString> labels, qint64 uptimeSeconds)
{
    NodeInfo info;
    info.node = name;
    info.labels = std::move(labels);
    info.version = QStringLiteral("0.1.0");
    info.startTimeNs = startedSecondsAgo(uptimeSeconds);
    info.principal = QStringLiteral("demo-admin");
    info.role = Role::admin;
    info.instanceCount = 2;
    info.lastProfile = QStringLiteral("sequential-read");
    return info;
}

InstanceInfo instance(const QString &id, int restarts)
{
    InstanceInfo info;
    info.id = id;
    info.kind = id.section(u'-', 0, 0);
    info.name = id.section(u'-', 1);
    info.connected = true;
    info.restarts = restarts;
    return info;
}

NodeLive live(double hitRatio, qint64 unused, qint64 lru, qint64 cached)
{
    NodeLive result;
    result.hitRatio = hitRatio;
    result.lockCount = unused + 100;
    result.lockUnused = unused;
    result.lruSize = lru;
    result.cachedMb = cached;
    result.maxCachedMb = 2048;
    return result;
}

QColor foreground(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data(Qt::ForegroundRole).value<QBrush>().color();
}

QColor background(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data(Qt::BackgroundRole).value<QBrush>().color();
}

const QString a1 = QStringLiteral("10.0.0.1:7070");
const QString a2 = QStringLiteral("10.0.0.2:7070");
const QString a3 = QStringLiteral("10.0.0.10:7070");

// Three nodes as the controller leaves them after the first answers: two ready, one unreachable.
void feedCluster(ClusterModel &model)
{
    model.setNowMs(nowMs);
    model.setNodes({a1, a2, a3});
    model.setState(a1, ConnectionState::ready, {});
    model.setState(a2, ConnectionState::ready, {});
    model.setState(a3, ConnectionState::unreachable,
                   QStringLiteral("UNAVAILABLE: failed to connect to all addresses"));
    model.setInfo(a1, nodeInfo(QStringLiteral("node001"),
                               {{QStringLiteral("rack"), QStringLiteral("r1")},
                                {QStringLiteral("role"), QStringLiteral("compute")}},
                               3 * 86400 + 4 * 3600 + 10));
    model.setInfo(a2, nodeInfo(QStringLiteral("node002"),
                               {{QStringLiteral("role"), QStringLiteral("compute")},
                                {QStringLiteral("rack"), QStringLiteral("r2")}},
                               12 * 60 + 5));
    model.setInstances(a1, {instance(QStringLiteral("client-lutra"), 1),
                            instance(QStringLiteral("bench-job1001"), 2)});
    model.setLive(a1, live(0.973, 12, 400, 512));
    model.setLive(a2, live(0.61, 400, 400, 2048));
}

} // namespace

class TestClusterModel : public QObject {
    Q_OBJECT
private slots:
    void feedsInSteps()
    {
        ClusterModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        model.setNodes({a1, a2, a3});
        QCOMPARE(printModel(model, {ClusterModel::Node, ClusterModel::State}),
                 QStringList({"10.0.0.1:7070 | connecting", "10.0.0.2:7070 | connecting",
                              "10.0.0.10:7070 | connecting"}));

        feedCluster(model);
        QCOMPARE(printModel(model),
                 QStringList({"node001 | ready | 0.1.0 | 3d 4h | demo-admin (admin) | rack=r1, "
                              "role=compute | 2 | 3 | sequential-read | 97.3 % | 12 / 400 | 512 / "
                              "2048 MiB |  | ",
                              "node002 | ready | 0.1.0 | 12m 5s | demo-admin (admin) | rack=r2, "
                              "role=compute | 2 |  | sequential-read | 61.0 % | 400 / 400 | 2048 "
                              "/ 2048 MiB |  | ",
                              "10.0.0.10:7070 | unreachable |  |  |  |  |  |  |  | — | — | — |  | "
                              "UNAVAILABLE: failed to connect to all addresses"}));
        QCOMPARE(model.rowOf(a2), 1);
        QCOMPARE(model.rowOf(QStringLiteral("10.9.9.9:7070")), -1);
        QCOMPARE(model.addressAt(2), a3);
        QCOMPARE(model.info(a1).node, QStringLiteral("node001"));
        QCOMPARE(model.state(a3), ConnectionState::unreachable);
        QCOMPARE(model.index(1, 0).data(ClusterModel::AddressRole).toString(), a2);
        QCOMPARE(model.index(0, 0).data(ClusterModel::LabelsRole).toMap(),
                 QVariantMap({{"rack", "r1"}, {"role", "compute"}}));
        QCOMPARE(model.index(2, 0).data(ClusterModel::StateRole).toInt(),
                 int(ConnectionState::unreachable));
        // Long or cut texts carry a tooltip.
        QCOMPARE(model.index(2, ClusterModel::Error).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("UNAVAILABLE: failed to connect to all addresses"));
        QCOMPARE(model.index(0, ClusterModel::Labels).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("rack=r1\nrole=compute"));
        QCOMPARE(model.index(0, ClusterModel::Node).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("node001\n10.0.0.1:7070"));

        // The periodic update: values change in place, nothing is inserted, removed or reset.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy layout(&model, &QAbstractItemModel::layoutChanged);
        model.setNowMs(nowMs + 60'000);
        model.setLive(a1, live(0.95, 20, 0, 600));
        // Repeats of what is known: no signal.
        model.setLive(a2, live(0.61, 400, 400, 2048));
        model.setInfo(a2, model.info(a2));
        model.setInstances(a1, {instance(QStringLiteral("client-lutra"), 1),
                                instance(QStringLiteral("bench-job1001"), 2)});
        QCOMPARE(changed.size(), 2);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(removed.size(), 0);
        QCOMPARE(inserted.size(), 0);
        QCOMPARE(layout.size(), 0);
        // The uptime column for every row, then node001's live columns only.
        QCOMPARE(changed[0][0].toModelIndex(), model.index(0, ClusterModel::Uptime));
        QCOMPARE(changed[0][1].toModelIndex(), model.index(2, ClusterModel::Uptime));
        QCOMPARE(changed[1][0].toModelIndex(), model.index(0, ClusterModel::HitRatio));
        QCOMPARE(changed[1][1].toModelIndex(), model.index(0, ClusterModel::Cache));
        QCOMPARE(
            printModel(model, {ClusterModel::Node, ClusterModel::Uptime, ClusterModel::HitRatio,
                               ClusterModel::Locks, ClusterModel::Cache}),
            QStringList({"node001 | 3d 4h | 95.0 % | 20 / dynamic | 600 / 2048 MiB",
                         "node002 | 13m 5s | 61.0 % | 400 / 400 | 2048 / 2048 MiB",
                         "10.0.0.10:7070 |  | — | — | —"}));

        // The unreachable node comes back: its error goes.
        model.setState(a3, ConnectionState::ready, {});
        QCOMPARE(model.index(2, ClusterModel::Error).data().toString(), QString());
        QCOMPARE(reset.size(), 0);

        // The cluster file changes: node002 leaves, a new node joins at the end.
        const QString a4 = QStringLiteral("10.0.0.4:7070");
        model.setNodes({a1, a3, a4});
        QCOMPARE(removed.size(), 1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(printModel(model, {ClusterModel::Node, ClusterModel::State}),
                 QStringList(
                     {"node001 | ready", "10.0.0.10:7070 | ready", "10.0.0.4:7070 | connecting"}));
        // Updates for a node no longer listed are dropped.
        model.setLive(a2, live(0.5, 1, 1, 1));
        QCOMPARE(model.rowCount(), 3);
    }

    void driftFromTheLastVerify()
    {
        ClusterModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNodes({"a:7370", "b:7370"});
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setDrift("a:7370", 0, "compute");
        model.setDrift("b:7370", 3, "compute");
        QCOMPARE(changed.size(), 2);
        QCOMPARE(printModel(model, {ClusterModel::Drift}),
                 QStringList({"none (compute)", "3 (compute)"}));
        QVERIFY(!model.index(0, ClusterModel::Drift).data(Qt::BackgroundRole).isValid());
        QCOMPARE(model.index(1, ClusterModel::Drift).data(Qt::BackgroundRole).value<QBrush>(),
                 QBrush(warningColor()));
        model.setDrift("b:7370", 3, "compute"); // unchanged: no signal
        QCOMPARE(changed.size(), 2);
        model.setDrift("b:7370", -1, {});
        QCOMPARE(printModel(model, {ClusterModel::Drift}), QStringList({"none (compute)", ""}));
    }

    void reordersWithMoves()
    {
        ClusterModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNodes({a1, a2, a3});
        model.setInfo(a1, nodeInfo(QStringLiteral("node001"), {}, 10));
        QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.setNodes({a3, a1, a2, a3});
        QCOMPARE(moved.size(), 1);
        QCOMPARE(removed.size(), 0);
        QCOMPARE(printModel(model, {ClusterModel::Node}),
                 QStringList({"10.0.0.10:7070", "node001", "10.0.0.2:7070"}));
        model.setNodes({});
        QCOMPARE(model.rowCount(), 0);
    }

    void coloursCarryMeaning()
    {
        ClusterModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        feedCluster(model);
        model.setNodes({a1, a2, a3, QStringLiteral("10.0.0.4:7070")});

        QCOMPARE(foreground(model, 2, ClusterModel::State), errorColor());
        QCOMPARE(foreground(model, 3, ClusterModel::State), mutedColor());
        QVERIFY(!model.index(0, ClusterModel::State).data(Qt::ForegroundRole).isValid());
        // node002: 61 % hit ratio and every lock of the LRU unused.
        QCOMPARE(background(model, 1, ClusterModel::HitRatio), warningColor());
        QCOMPARE(background(model, 1, ClusterModel::Locks), warningColor());
        QVERIFY(!model.index(0, ClusterModel::HitRatio).data(Qt::BackgroundRole).isValid());
        QVERIFY(!model.index(0, ClusterModel::Locks).data(Qt::BackgroundRole).isValid());
        // A dynamic LRU (0) is never "exhausted".
        model.setLive(a2, live(0.9, 400, 0, 1));
        QVERIFY(!model.index(1, ClusterModel::Locks).data(Qt::BackgroundRole).isValid());
        QVERIFY(!model.index(1, ClusterModel::HitRatio).data(Qt::BackgroundRole).isValid());
        // Nothing else is coloured.
        for (int column = 0; column < ClusterModel::ColumnCount; ++column) {
            if (column != ClusterModel::State && column != ClusterModel::Error) {
                QVERIFY(!model.index(2, column).data(Qt::ForegroundRole).isValid());
            }
        }
    }

    void sortsAndFiltersByLabel()
    {
        ClusterModel model;
        ClusterFilterModel proxy;
        proxy.setSourceModel(&model);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester proxyTester(
            &proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);

        const QString b1 = QStringLiteral("n1:7070");
        const QString b9 = QStringLiteral("n9:7070");
        const QString b10 = QStringLiteral("n10:7070");
        model.setNowMs(nowMs);
        model.setNodes({b10, b1, b9});
        model.setInfo(b1, nodeInfo(QStringLiteral("node1"),
                                   {{QStringLiteral("rack"), QStringLiteral("r1")},
                                    {QStringLiteral("role"), QStringLiteral("compute")}},
                                   100));
        model.setInfo(b9, nodeInfo(QStringLiteral("node9"),
                                   {{QStringLiteral("rack"), QStringLiteral("r2")},
                                    {QStringLiteral("role"), QStringLiteral("compute")}},
                                   5000));
        model.setInfo(b10, nodeInfo(QStringLiteral("node10"),
                                    {{QStringLiteral("rack"), QStringLiteral("r1")},
                                     {QStringLiteral("role"), QStringLiteral("Storage")},
                                     {QStringLiteral("gpu"), QStringLiteral("a100")}},
                                    20));
        model.setLive(b1, live(0.90, 1, 10, 1));
        model.setLive(b9, live(0.50, 1, 10, 1));
        model.setLive(b10, live(0.70, 1, 10, 1));

        const QList<int> names{ClusterModel::Node};
        // Names sort naturally: node9 before node10.
        proxy.sort(ClusterModel::Node, Qt::AscendingOrder);
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node9", "node10"}));
        // Numbers by value, not by text ("20s" < "1m 40s" < "1h 23m").
        proxy.sort(ClusterModel::Uptime, Qt::AscendingOrder);
        QCOMPARE(printModel(proxy, names), QStringList({"node10", "node1", "node9"}));
        proxy.sort(ClusterModel::HitRatio, Qt::AscendingOrder);
        QCOMPARE(printModel(proxy, names), QStringList({"node9", "node10", "node1"}));
        // A live update re-sorts the view without a reset of the source.
        model.setLive(b1, live(0.10, 1, 10, 1));
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node9", "node10"}));

        proxy.sort(ClusterModel::Node, Qt::AscendingOrder);
        proxy.setLabelFilter(QStringLiteral("rack=r1"));
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node10"}));
        proxy.setLabelFilter(QStringLiteral("rack=r"));
        QCOMPARE(printModel(proxy, names), QStringList());
        proxy.setLabelFilter(QStringLiteral("gpu"));
        QCOMPARE(printModel(proxy, names), QStringList({"node10"}));
        proxy.setLabelFilter(QStringLiteral("storage"));
        QCOMPARE(printModel(proxy, names), QStringList({"node10"}));
        proxy.setLabelFilter(QStringLiteral("NODE9"));
        QCOMPARE(printModel(proxy, names), QStringList({"node9"}));
        proxy.setLabelFilter(QStringLiteral("compute"));
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node9"}));
        proxy.setLabelFilter(QStringLiteral(" "));
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node9", "node10"}));

        // A node whose labels change leaves or enters the filtered view by itself.
        proxy.setLabelFilter(QStringLiteral("role=compute"));
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node9"}));
        model.setInfo(b10, nodeInfo(QStringLiteral("node10"),
                                    {{QStringLiteral("role"), QStringLiteral("compute")}}, 20));
        QCOMPARE(printModel(proxy, names), QStringList({"node1", "node9", "node10"}));
    }
};

QTEST_GUILESS_MAIN(TestClusterModel)
#include "test_cluster_model.moc"
