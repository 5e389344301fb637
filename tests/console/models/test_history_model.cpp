#include "model_print.h"
#include "models/format.h"
#include "models/history_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSet>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>

#include <time.h>

#include <memory>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

constexpr qint64 baseS = 1'796'135'525; // 2026-12-01 14:32:05 UTC

HistoryPoint point(quint64 id, qint64 secondsAfterBase, const QString &outcome = {})
{
    HistoryPoint result;
    result.id = id;
    result.timeNs = (baseS + secondsAfterBase) * 1'000'000'000;
    result.principal = QStringLiteral("alice");
    result.action = QStringLiteral("set");
    result.description = QStringLiteral("set #%1").arg(id);
    result.outcome = outcome.isEmpty() ? QStringLiteral("ok") : outcome;
    return result;
}

// Serves ListHistory from per-node lists (newest first), the way lutra-ctld pages them.
struct FakeHistory {
    QMap<QString, QList<HistoryPoint>> points;
    QMap<QString, int> failingCall; // node → its call (1-based) that fails
    QList<QPair<QString, HistoryQuery>> calls;

    // Answers the call; returns false (and fills error) for a failing one.
    bool serve(const QString &node, const HistoryQuery &query, HistoryPage &page, QString &error)
    {
        calls.append({node, query});
        const auto nodeCalls = std::count_if(calls.cbegin(), calls.cend(),
                                             [&](const auto &call) { return call.first == node; });
        if (failingCall.value(node) == nodeCalls) {
            error = QStringLiteral("UNAVAILABLE: connection reset");
            return false;
        }
        const QList<HistoryPoint> &all = points[node];
        qsizetype start = 0;
        while (query.beforeId != 0 && start < all.size() && all[start].id >= query.beforeId) {
            ++start;
        }
        page.points = all.mid(start, query.limit);
        const bool more = start + page.points.size() < all.size();
        page.nextBeforeId = more ? page.points.constLast().id : 0;
        return true;
    }

    QList<quint64> beforeIds(const QString &node) const
    {
        QList<quint64> ids;
        for (const auto &call : calls) {
            if (call.first == node) {
                ids.append(call.second.beforeId);
            }
        }
        return ids;
    }

    int total() const
    {
        int count = 0;
        for (const auto &list : points) {
            count += int(list.size());
        }
        return count;
    }
};

// Three nodes whose times interleave, with equal times across nodes.
FakeHistory interleaved()
{
    FakeHistory fake;
    fake.points[QStringLiteral("node001")] = {point(7, 100), point(6, 90), point(5, 80),
                                              point(4, 70),  point(3, 50), point(2, 50),
                                              point(1, 10)};
    fake.points[QStringLiteral("node002")] = {point(3, 95), point(2, 60), point(1, 50)};
    fake.points[QStringLiteral("node003")] = {point(9, 85), point(8, 84), point(7, 83),
                                              point(6, 82), point(5, 81), point(4, 50),
                                              point(3, 40), point(2, 30), point(1, 5)};
    return fake;
}

const QStringList threeNodes{"node001", "node002", "node003"};

// Rows never go back in time, ties in node order; every point once.
void checkMerged(const HistoryModel &model, const FakeHistory &fake)
{
    QSet<QString> seen;
    for (int row = 0; row < model.rowCount(); ++row) {
        const QModelIndex index = model.index(row, 0);
        const HistoryPoint *current = model.point(index);
        QVERIFY(current);
        const QString key = model.nodeOf(index) + u'#' + QString::number(current->id);
        QVERIFY2(!seen.contains(key), qPrintable(key));
        seen.insert(key);
        if (row == 0) {
            continue;
        }
        const QModelIndex previousIndex = model.index(row - 1, 0);
        const HistoryPoint *previous = model.point(previousIndex);
        QVERIFY(previous->timeNs >= current->timeNs);
        if (previous->timeNs == current->timeNs) {
            QVERIFY(!naturalLess(model.nodeOf(index), model.nodeOf(previousIndex)));
        }
    }
    QCOMPARE(int(seen.size()), fake.total());
}

} // namespace

class TestHistoryModel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // Times show in local time; the test's local time is UTC.
        qputenv("TZ", "UTC");
        tzset();
    }

    void showsPointsAndChanges()
    {
        HistoryModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        tester.setUseFetchMore(true);

        HistoryPoint rolledBack = point(42, 0, QStringLiteral("partial"));
        rolledBack.action = QStringLiteral("apply");
        rolledBack.description.clear();
        rolledBack.profile = QStringLiteral("compute");
        HistoryChange applied{QStringLiteral("client-lutra"),
                              QStringLiteral("osc.ost0.max_pages_per_rpc"),
                              QStringLiteral("256"),
                              QStringLiteral("1024"),
                              QStringLiteral("1024"),
                              true,
                              {}};
        HistoryChange refused{QStringLiteral("bench-job1"),
                              QStringLiteral("osc.ost0.max_pages_per_rpc"),
                              QStringLiteral("256"),
                              QStringLiteral("4096"),
                              QStringLiteral("256"),
                              false,
                              QStringLiteral("out of range: more than 1024")};
        rolledBack.changes = {applied, refused};
        FakeHistory fake;
        fake.points[QStringLiteral("node001")] = {
            rolledBack, point(41, -60, QStringLiteral("error")), point(40, -3600)};
        model.setSource({QStringLiteral("node001")}, HistoryQuery{},
                        [&fake](const QString &node, const HistoryQuery &query,
                                const HistoryModel::Done &done) {
                            HistoryPage page;
                            QString error;
                            const bool ok = fake.serve(node, query, page, error);
                            done(ok, error, page);
                        });
        // The tester fetched on its own (its reset checks call fetchMore).
        QCOMPARE(printModel(model),
                 QStringList({"2026-12-01 14:32:05 | node001 | alice | apply | compute | partial "
                              "| #42",
                              "   | client-lutra | osc.ost0.max_pages_per_rpc | 256 → 1024 | 1024 "
                              "| ok | ",
                              "   | bench-job1 | osc.ost0.max_pages_per_rpc | 256 → 4096 | 256 | "
                              "error: out of range: more than 1024 | ",
                              "2026-12-01 14:31:05 | node001 | alice | set | set #41 | error | #41",
                              "2026-12-01 13:32:05 | node001 | alice | set | set #40 | ok | #40"}));
        QVERIFY(!model.canFetchMore({}));
        QCOMPARE(fake.calls.size(), 1);
        QCOMPARE(fake.calls[0].second.limit, 50);

        const QModelIndex top = model.index(0, 0);
        QCOMPARE(
            model.index(0, HistoryModel::Outcome).data(Qt::BackgroundRole).value<QBrush>().color(),
            warningColor());
        QCOMPARE(
            model.index(1, HistoryModel::Outcome).data(Qt::ForegroundRole).value<QBrush>().color(),
            errorColor());
        QVERIFY(!model.index(2, HistoryModel::Outcome).data(Qt::ForegroundRole).isValid());
        QVERIFY(!model.index(2, HistoryModel::Outcome).data(Qt::BackgroundRole).isValid());
        const QModelIndex refusedIndex = model.index(1, HistoryModel::Outcome, top);
        QCOMPARE(refusedIndex.data(Qt::ForegroundRole).value<QBrush>().color(), errorColor());
        QVERIFY(!model.index(0, HistoryModel::Outcome, top).data(Qt::ForegroundRole).isValid());
        // A change leads to its point.
        QCOMPARE(model.point(refusedIndex)->id, 42u);
        QCOMPARE(model.nodeOf(refusedIndex), QStringLiteral("node001"));
        QCOMPARE(refusedIndex.data(HistoryModel::PointIdRole).toULongLong(), 42u);
        QCOMPARE(model.index(1, 0).data(HistoryModel::NodeRole).toString(),
                 QStringLiteral("node001"));
        QVERIFY(!model.point({}));
        QVERIFY(!model.canFetchMore(top));
    }

    void pagesOnlyWhatTheMergeNeeds()
    {
        HistoryModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        tester.setUseFetchMore(false); // this test calls fetchMore itself, step by step

        FakeHistory fake;
        fake.points[QStringLiteral("node001")] = {point(4, 100), point(3, 90), point(2, 80),
                                                  point(1, 70)};
        fake.points[QStringLiteral("node002")] = {point(2, 95), point(1, 60)};
        fake.points[QStringLiteral("node003")] = {point(5, 85), point(4, 84), point(3, 83),
                                                  point(2, 82), point(1, 81)};
        HistoryQuery filter;
        filter.limit = 2;
        model.setSource(threeNodes, filter,
                        [&fake](const QString &node, const HistoryQuery &query,
                                const HistoryModel::Done &done) {
                            HistoryPage page;
                            QString error;
                            const bool ok = fake.serve(node, query, page, error);
                            done(ok, error, page);
                        });
        QCOMPARE(fake.calls.size(), 0);
        QVERIFY(model.canFetchMore({}));
        const auto ids = [&model] {
            QStringList rows;
            for (int row = 0; row < model.rowCount(); ++row) {
                rows.append(model.index(row, HistoryModel::Node).data().toString() + u'#' +
                            model.index(row, HistoryModel::Id).data().toString().mid(1));
            }
            return rows;
        };

        // Every node's first page; node001's two points and node002's newer one are safe, but
        // node003's 85 might still be beaten by node001's next page.
        model.fetchMore({});
        QCOMPARE(fake.calls.size(), 3);
        QCOMPARE(ids(), QStringList({"node001#4", "node002#2", "node001#3"}));
        // Only node001 holds the merge up: only it is asked, for what is older than #3.
        model.fetchMore({});
        QCOMPARE(fake.calls.size(), 4);
        QCOMPARE(fake.calls[3].first, QStringLiteral("node001"));
        QCOMPARE(fake.calls[3].second.beforeId, 3u);
        QCOMPARE(ids().mid(3), QStringList({"node003#5", "node003#4"}));
        model.fetchMore({});
        QCOMPARE(ids().mid(5), QStringList({"node003#3", "node003#2"}));
        QVERIFY(model.canFetchMore({}));
        model.fetchMore({});
        QCOMPARE(ids().mid(7), QStringList({"node003#1", "node001#2", "node001#1", "node002#1"}));
        QVERIFY(!model.canFetchMore({}));
        QCOMPARE(fake.beforeIds(QStringLiteral("node001")), QList<quint64>({0, 3}));
        QCOMPARE(fake.beforeIds(QStringLiteral("node002")), QList<quint64>({0}));
        QCOMPARE(fake.beforeIds(QStringLiteral("node003")), QList<quint64>({0, 4, 2}));
        model.fetchMore({});
        QCOMPARE(fake.calls.size(), 6);
        QCOMPARE(model.pendingFetches(), 0);
    }

    void synchronousUnderTester()
    {
        HistoryModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        tester.setUseFetchMore(true);

        FakeHistory fake = interleaved();
        HistoryQuery filter;
        filter.limit = 2;
        filter.principal = QStringLiteral("alice");
        filter.action = QStringLiteral("set");
        filter.param = QStringLiteral("osc.*.max_pages_per_rpc");
        filter.instance = QStringLiteral("client-*");
        filter.sinceNs = 1;
        filter.untilNs = (baseS + 1000) * 1'000'000'000;
        filter.beforeId = 99; // the model's own business
        model.setSource(threeNodes, filter,
                        [&fake](const QString &node, const HistoryQuery &query,
                                const HistoryModel::Done &done) {
                            HistoryPage page;
                            QString error;
                            const bool ok = fake.serve(node, query, page, error);
                            done(ok, error, page);
                        });
        for (int i = 0; i < 100 && model.canFetchMore({}); ++i) {
            model.fetchMore({});
        }
        QVERIFY(!model.canFetchMore({}));
        QCOMPARE(model.rowCount(), fake.total());
        checkMerged(model, fake);
        QVERIFY(model.errors().isEmpty());
        // The filter went with every call, each page asked once.
        for (const auto &call : std::as_const(fake.calls)) {
            QCOMPARE(call.second.limit, 2);
            QCOMPARE(call.second.principal, filter.principal);
            QCOMPARE(call.second.action, filter.action);
            QCOMPARE(call.second.param, filter.param);
            QCOMPARE(call.second.instance, filter.instance);
            QCOMPARE(call.second.sinceNs, filter.sinceNs);
            QCOMPARE(call.second.untilNs, filter.untilNs);
        }
        QCOMPARE(fake.beforeIds(QStringLiteral("node001")), QList<quint64>({0, 6, 4, 2}));
        QCOMPARE(fake.beforeIds(QStringLiteral("node002")), QList<quint64>({0, 2}));
        QCOMPARE(fake.beforeIds(QStringLiteral("node003")), QList<quint64>({0, 8, 6, 4, 2}));
        // Equal times: node order, then newer id first.
        QStringList at50;
        for (int row = 0; row < model.rowCount(); ++row) {
            if (model.point(model.index(row, 0))->timeNs == (baseS + 50) * 1'000'000'000) {
                at50.append(model.nodeOf(model.index(row, 0)) + u'#' +
                            QString::number(model.point(model.index(row, 0))->id));
            }
        }
        QCOMPARE(at50, QStringList({"node001#3", "node001#2", "node002#1", "node003#4"}));
    }

    void asynchronousAnswersAndAFailure()
    {
        HistoryModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        tester.setUseFetchMore(true);
        QSignalSpy errorsChanged(&model, &HistoryModel::errorsChanged);

        FakeHistory fake = interleaved();
        fake.failingCall[QStringLiteral("node002")] = 2;
        struct Pending {
            QString node;
            HistoryQuery query;
            HistoryModel::Done done;
        };
        QList<Pending> pending;
        HistoryQuery filter;
        filter.limit = 2;
        model.setSource(threeNodes, filter,
                        [&pending](const QString &node, const HistoryQuery &query,
                                   const HistoryModel::Done &done) {
                            pending.append({node, query, done});
                        });
        // The tester's fetchMore during the reset asked every node once.
        QCOMPARE(pending.size(), 3);
        QCOMPARE(model.pendingFetches(), 3);
        QCOMPARE(model.rowCount(), 0);
        // Asked again while the pages are out: nobody is asked twice.
        model.fetchMore({});
        QCOMPARE(pending.size(), 3);

        // Answers arrive in another order than asked: newest-last node first.
        std::reverse(pending.begin(), pending.end());
        int answered = 0;
        for (int i = 0; i < 200 && (!pending.isEmpty() || model.canFetchMore({})); ++i) {
            if (pending.isEmpty()) {
                model.fetchMore({});
                continue;
            }
            const Pending call = pending.takeFirst();
            HistoryPage page;
            QString error;
            const bool ok = fake.serve(call.node, call.query, page, error);
            call.done(ok, error, page);
            ++answered;
        }
        QVERIFY(pending.isEmpty());
        QVERIFY(!model.canFetchMore({}));
        QCOMPARE(model.pendingFetches(), 0);
        QCOMPARE(model.errors(), QStringList({"node002: UNAVAILABLE: connection reset"}));
        QCOMPARE(errorsChanged.size(), 1);
        // node002's first page arrived; its last point (behind the failed page) did not.
        QSet<QString> node002;
        for (int row = 0; row < model.rowCount(); ++row) {
            if (model.nodeOf(model.index(row, 0)) == QStringLiteral("node002")) {
                node002.insert(model.index(row, HistoryModel::Id).data().toString());
            }
        }
        QCOMPARE(node002, QSet<QString>({"#3", "#2"}));
        FakeHistory without = interleaved();
        without.points[QStringLiteral("node002")].removeLast();
        checkMerged(model, without);
        QCOMPARE(answered, int(fake.calls.size()));
    }

    void answersThroughTheEventLoop()
    {
        HistoryModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        tester.setUseFetchMore(true);
        FakeHistory fake = interleaved();
        HistoryQuery filter;
        filter.limit = 2;
        model.setSource(threeNodes, filter,
                        [&fake](const QString &node, const HistoryQuery &query,
                                const HistoryModel::Done &done) {
                            QTimer::singleShot(0, [&fake, node, query, done] {
                                HistoryPage page;
                                QString error;
                                const bool ok = fake.serve(node, query, page, error);
                                done(ok, error, page);
                            });
                        });
        for (int i = 0; i < 200 && (model.pendingFetches() > 0 || model.canFetchMore({})); ++i) {
            if (model.pendingFetches() == 0) {
                model.fetchMore({});
            }
            QCoreApplication::processEvents();
        }
        QVERIFY(!model.canFetchMore({}));
        QCOMPARE(model.rowCount(), fake.total());
        checkMerged(model, fake);
    }

    void newSourceDropsOldAnswers()
    {
        auto model = std::make_unique<HistoryModel>();
        QAbstractItemModelTester tester(model.get(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        tester.setUseFetchMore(false);
        QList<HistoryModel::Done> pending;
        const auto store = [&pending](const QString &, const HistoryQuery &,
                                      const HistoryModel::Done &done) { pending.append(done); };
        model->setSource({QStringLiteral("node001")}, HistoryQuery{}, store);
        model->fetchMore({});
        QCOMPARE(pending.size(), 1);
        QSignalSpy reset(model.get(), &QAbstractItemModel::modelReset);
        model->setSource({QStringLiteral("node002")}, HistoryQuery{}, store);
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model->pendingFetches(), 0);

        HistoryPage page;
        page.points = {point(1, 0)};
        pending.takeFirst()(true, {}, page); // for node001, from before: dropped
        QCOMPARE(model->rowCount(), 0);
        QVERIFY(model->canFetchMore({}));

        model->fetchMore({});
        QCOMPARE(pending.size(), 1);
        model.reset();
        pending.takeFirst()(true, {}, page); // the model is gone: nothing happens
    }
};

QTEST_GUILESS_MAIN(TestHistoryModel)
#include "test_history_model.moc"
