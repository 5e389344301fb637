#include "model_print.h"
#include "models/format.h"
#include "models/ranking_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

class TestRankingModel : public QObject {
    Q_OBJECT
private slots:
    void feedsInSteps()
    {
        RankingModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        model.setEntries({{QStringLiteral("node007"), 0.61, 1234.5},
                          {QStringLiteral("node003"), 0.85, 12},
                          {QStringLiteral("node001"), 0.97, 0.26}});
        QCOMPARE(printModel(model),
                 QStringList({"node007 | 61.0 % | 1,234.5/s", "node003 | 85.0 % | 12.0/s",
                              "node001 | 97.0 % | 0.3/s"}));
        QCOMPARE(
            model.index(0, RankingModel::HitRatio).data(Qt::BackgroundRole).value<QBrush>().color(),
            warningColor());
        QVERIFY(!model.index(1, RankingModel::HitRatio).data(Qt::BackgroundRole).isValid());
        QCOMPARE(
            model.index(0, RankingModel::MissesPerSecond).data(RankingModel::NodeRole).toString(),
            QStringLiteral("node007"));

        // The next tick: the ranking changes order, same count: rows are updated in place.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setEntries({{QStringLiteral("node003"), 0.55, 40},
                          {QStringLiteral("node007"), 0.62, 1100},
                          {QStringLiteral("node001"), 0.97, 0.26}});
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed[0][0].toModelIndex(), model.index(0, 0));
        QCOMPARE(changed[0][1].toModelIndex(), model.index(1, RankingModel::ColumnCount - 1));
        QCOMPARE(reset.size() + removed.size() + inserted.size(), 0);
        QCOMPARE(printModel(model),
                 QStringList({"node003 | 55.0 % | 40.0/s", "node007 | 62.0 % | 1,100.0/s",
                              "node001 | 97.0 % | 0.3/s"}));

        // Fewer nodes left to rank, then more.
        model.setEntries({{QStringLiteral("node003"), 0.55, 40}});
        QCOMPARE(removed.size(), 1);
        QCOMPARE(printModel(model), QStringList({"node003 | 55.0 % | 40.0/s"}));
        model.setEntries(
            {{QStringLiteral("node003"), 0.55, 40}, {QStringLiteral("node009"), 0.79, 3}});
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(printModel(model),
                 QStringList({"node003 | 55.0 % | 40.0/s", "node009 | 79.0 % | 3.0/s"}));
        model.setEntries({});
        QCOMPARE(model.rowCount(), 0);
    }
};

QTEST_GUILESS_MAIN(TestRankingModel)
#include "test_ranking_model.moc"
