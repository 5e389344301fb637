#include "model_print.h"
#include "models/format.h"
#include "models/plan_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

const QString pages = QStringLiteral("osc.ost0.max_pages_per_rpc");
const QString readahead = QStringLiteral("llite.lutra.max_read_ahead_mb");
const QString client = QStringLiteral("client-lutra");
const QString job2 = QStringLiteral("bench-job2");
const QString job10 = QStringLiteral("bench-job10");

PlanEntry entry(const QString &instance, const QString &name, const QString &live,
                const QString &desired, const QString &source)
{
    PlanEntry result;
    result.instance = instance;
    result.name = name;
    result.live = live;
    result.desired = desired;
    result.changed = live != desired;
    result.source = source;
    return result;
}

ProfilePlan node001Plan(const QString &job10Live = QStringLiteral("256"))
{
    ProfilePlan plan;
    plan.profile = QStringLiteral("compute");
    plan.matchesNode = true;
    plan.entries = {
        entry(client, pages, QStringLiteral("256"), QStringLiteral("1024"),
              QStringLiteral("compute.yaml:12:3")),
        entry(client, readahead, QStringLiteral("64"), QStringLiteral("64"),
              QStringLiteral("compute.yaml:13:3")),
        entry(job10, pages, job10Live, QStringLiteral("1024"), QStringLiteral("compute.yaml:12:3")),
        entry(job2, pages, QStringLiteral("1024"), QStringLiteral("1024"),
              QStringLiteral("compute.yaml:12:3")),
    };
    return plan;
}

ProfilePlan node002Plan()
{
    ProfilePlan plan;
    plan.profile = QStringLiteral("compute");
    plan.matchesNode = true;
    plan.entries = {entry(client, pages, QStringLiteral("1024"), QStringLiteral("1024"),
                          QStringLiteral("compute.yaml:12:3"))};
    return plan;
}

InstanceSetOutcome result(const QString &instance, bool applied, const QString &entryError = {})
{
    InstanceSetOutcome outcome;
    outcome.instance = instance;
    outcome.applied = applied;
    if (!entryError.isEmpty()) {
        SetEntry set;
        set.name = pages;
        set.error = entryError;
        outcome.entries = {set};
    }
    return outcome;
}

QColor foreground(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data(Qt::ForegroundRole).value<QBrush>().color();
}

} // namespace

class TestPlanModel : public QObject {
    Q_OBJECT
private slots:
    void everyNodeCanFail()
    {
        // Failed calls on several nodes each keep their own row (they once shared a key).
        PlanModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNodeError(QStringLiteral("node002"), QStringLiteral("UNAVAILABLE: down"));
        model.setNodeError(QStringLiteral("node001"), QStringLiteral("not stored: x"));
        model.setNodeError(QStringLiteral("node003"), QStringLiteral("CANCELLED: stop"));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.nodes(), QStringList({"node001", "node002", "node003"}));
        QCOMPARE(model.errorCount(), 3);
        model.setNodeError(QStringLiteral("node001"), QStringLiteral("again"));
        QCOMPARE(model.rowCount(), 3);
    }

    void diffApplyVerify()
    {
        PlanModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        ProfilePlan elsewhere;
        elsewhere.profile = QStringLiteral("compute");
        model.setPlan(QStringLiteral("node010"), elsewhere, PlanModel::Mode::diff);
        model.setPlan(QStringLiteral("node002"), node002Plan(), PlanModel::Mode::diff);
        model.setPlan(QStringLiteral("node001"), node001Plan(), PlanModel::Mode::diff);
        model.setNodeError(QStringLiteral("node003"),
                           QStringLiteral("UNAVAILABLE: failed to connect to all addresses"));
        const QString n1 = QStringLiteral("node001 | ");
        QCOMPARE(
            printModel(model),
            QStringList(
                {n1 + job2 + " | " + pages +
                     " | 1024 | 1024 | compute.yaml:12:3 | "
                     "unchanged",
                 n1 + job10 + " | " + pages + " | 256 | 1024 | compute.yaml:12:3 | will change",
                 n1 + client + " | " + readahead + " | 64 | 64 | compute.yaml:13:3 | unchanged",
                 n1 + client + " | " + pages + " | 256 | 1024 | compute.yaml:12:3 | will change",
                 "node002 | " + client + " | " + pages +
                     " | 1024 | 1024 | compute.yaml:12:3 | unchanged",
                 "node003 |  |  |  |  |  | error: UNAVAILABLE: failed to connect to "
                 "all addresses",
                 "node010 |  |  |  |  |  | profile does not match this node"}));
        QCOMPARE(model.nodes(), QStringList({"node001", "node002", "node003", "node010"}));
        QCOMPARE(model.changedCount(), 2);
        QCOMPARE(model.errorCount(), 1);
        QCOMPARE(foreground(model, 5, PlanModel::Node), errorColor());
        QCOMPARE(foreground(model, 5, PlanModel::Status), errorColor());
        QCOMPARE(foreground(model, 6, PlanModel::Status), mutedColor());
        QVERIFY(!model.index(1, PlanModel::Status).data(Qt::ForegroundRole).isValid());
        QVERIFY(model.index(1, 0).data(PlanModel::ChangedRole).toBool());
        QVERIFY(!model.index(0, 0).data(PlanModel::ChangedRole).toBool());
        QVERIFY(model.index(5, 0).data(PlanModel::ErrorRole).toBool());
        QCOMPARE(model.index(4, 0).data(PlanModel::NodeRole).toString(), QStringLiteral("node002"));

        // Changed only: the unchanged rows leave by removals and come back by inserts.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setChangedOnly(true);
        QCOMPARE(removed.size(), 3);
        QCOMPARE(changed.size() + inserted.size() + reset.size(), 0);
        QCOMPARE(printModel(model, {PlanModel::Node, PlanModel::Instance, PlanModel::Status}),
                 QStringList({"node001 | " + job10 + " | will change",
                              "node001 | " + client + " | will change",
                              "node003 |  | error: UNAVAILABLE: failed to connect to all addresses",
                              "node010 |  | profile does not match this node"}));
        QCOMPARE(model.changedCount(), 2);
        model.setChangedOnly(false);
        QCOMPARE(inserted.size(), 3);
        QCOMPARE(model.rowCount(), 7);

        // The apply failed on one instance, so the node rolled back: statuses change in place.
        removed.clear();
        inserted.clear();
        ProfilePlan applied = node001Plan();
        applied.results = {result(client, false),
                           result(job10, false, QStringLiteral("out of range: more than 512"))};
        model.setPlan(QStringLiteral("node001"), applied, PlanModel::Mode::apply);
        QCOMPARE(inserted.size() + removed.size() + reset.size(), 0);
        QCOMPARE(changed.size(), 2);
        QCOMPARE(printModel(model, {PlanModel::Instance, PlanModel::Parameter, PlanModel::Status})
                     .mid(0, 4),
                 QStringList({job2 + " | " + pages + " | unchanged",
                              job10 + " | " + pages + " | refused: out of range: more than 512",
                              client + " | " + readahead + " | unchanged",
                              client + " | " + pages + " | refused: rolled back with the rest"}));
        QCOMPARE(model.errorCount(), 3);
        QCOMPARE(foreground(model, 1, PlanModel::Status), errorColor());
        QVERIFY(!model.index(1, PlanModel::Live).data(Qt::ForegroundRole).isValid());

        // The retry applies everywhere.
        applied.applied = true;
        applied.results = {result(client, true), result(job10, true)};
        model.setPlan(QStringLiteral("node001"), applied, PlanModel::Mode::apply);
        QCOMPARE(printModel(model, {PlanModel::Status}).mid(0, 4),
                 QStringList({"unchanged", "applied", "unchanged", "applied"}));
        QCOMPARE(model.errorCount(), 1);

        // Validation errors on node002: nothing changed there, one red row per error.
        ProfilePlan invalid;
        invalid.profile = QStringLiteral("compute");
        invalid.matchesNode = true;
        ProfileError error;
        error.file = QStringLiteral("compute.yaml");
        error.line = 14;
        error.column = 3;
        error.message = QStringLiteral("unknown parameter osc.*.max_pagez_per_rpc");
        ProfileError second = error;
        second.line = 15;
        second.message = QStringLiteral("not a size: 12Q");
        invalid.errors = {error, second};
        model.setPlan(QStringLiteral("node002"), invalid, PlanModel::Mode::apply);
        QCOMPARE(printModel(model).mid(4, 2),
                 QStringList({"node002 |  |  |  |  |  | error: compute.yaml:14:3: unknown "
                              "parameter osc.*.max_pagez_per_rpc",
                              "node002 |  |  |  |  |  | error: compute.yaml:15:3: not a size: "
                              "12Q"}));
        QCOMPARE(foreground(model, 4, PlanModel::Parameter), errorColor());
        QCOMPARE(model.errorCount(), 3);

        // Verify: drift is amber, the rest ok; changed only hides the ok rows.
        model.setPlan(QStringLiteral("node001"), node001Plan(QStringLiteral("512")),
                      PlanModel::Mode::verify);
        QCOMPARE(
            printModel(model, {PlanModel::Live, PlanModel::Desired, PlanModel::Status}).mid(0, 4),
            QStringList(
                {"1024 | 1024 | ok", "512 | 1024 | drift", "64 | 64 | ok", "256 | 1024 | drift"}));
        QCOMPARE(model.index(1, PlanModel::Status).data(Qt::BackgroundRole).value<QBrush>().color(),
                 warningColor());
        QVERIFY(!model.index(0, PlanModel::Status).data(Qt::BackgroundRole).isValid());
        model.setChangedOnly(true);
        QCOMPARE(printModel(model, {PlanModel::Node, PlanModel::Status}),
                 QStringList({"node001 | drift", "node001 | drift",
                              "node002 | error: compute.yaml:14:3: unknown parameter "
                              "osc.*.max_pagez_per_rpc",
                              "node002 | error: compute.yaml:15:3: not a size: 12Q",
                              "node003 | error: UNAVAILABLE: failed to connect to all addresses",
                              "node010 | profile does not match this node"}));

        removed.clear();
        model.removeNode(QStringLiteral("node003"));
        QCOMPARE(removed.size(), 1);
        QCOMPARE(model.nodes(), QStringList({"node001", "node002", "node010"}));
        QCOMPARE(reset.size(), 0);
        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.nodes(), QStringList());
        QCOMPARE(model.changedCount(), 0);
        QCOMPARE(model.errorCount(), 0);
    }

    void changedOnlyBeforeData()
    {
        PlanModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setChangedOnly(true);
        model.setPlan(QStringLiteral("node1"), node001Plan(), PlanModel::Mode::diff);
        QCOMPARE(printModel(model, {PlanModel::Instance, PlanModel::Status}),
                 QStringList({job10 + " | will change", client + " | will change"}));
        // A node whose profile does not match still shows its entries (a diff is allowed).
        ProfilePlan notMatching = node002Plan();
        notMatching.matchesNode = false;
        notMatching.entries[0].live = QStringLiteral("8");
        notMatching.entries[0].changed = true;
        model.setPlan(QStringLiteral("node2"), notMatching, PlanModel::Mode::diff);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.index(2, PlanModel::Status).data().toString(),
                 QStringLiteral("will change"));
    }
};

QTEST_GUILESS_MAIN(TestPlanModel)
#include "test_plan_model.moc"
