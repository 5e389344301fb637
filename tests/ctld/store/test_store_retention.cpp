// History retention: prunes by count and by age in batches (one commit each), never deletes a
// pending point (the apply journal) or a point desired state came from, keeps rollbacks to
// retained points exact, and refuses a rollback whose later changes retention deleted.
#include "store_test_support.h"

#include <QTemporaryDir>
#include <QTest>

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;

namespace {

std::vector<PointId> allIds(Store &store)
{
    HistoryQuery query;
    query.limit = HistoryQuery::kMaxLimit;
    std::vector<PointId> ids;
    auto page = store.history(query);
    if (!page.ok()) {
        qFatal("%s", page.status().toString().c_str());
    }
    for (const auto &point : page->points) {
        ids.insert(ids.begin(), point.id); // oldest first
    }
    return ids;
}

std::vector<PointId> range(PointId first, PointId last)
{
    std::vector<PointId> ids;
    for (PointId id = first; id <= last; ++id) {
        ids.push_back(id);
    }
    return ids;
}

} // namespace

class TestStoreRetention : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Store> m_store;
    std::string m_file;
    int m_files = 0;

    void openFresh()
    {
        m_store.reset();
        m_file = m_dir.filePath(QString("r%1.db").arg(++m_files)).toStdString();
        auto store = Store::open(m_file);
        if (!store.ok()) {
            qFatal("%s", store.status().toString().c_str());
        }
        m_store = std::move(*store);
    }

    // A set of one parameter at `second`, optionally becoming desired state.
    PointId set(std::int64_t second, const std::string &param, const std::string &oldValue,
                const std::string &newValue, bool desired = false)
    {
        DesiredUpdate update;
        if (desired) {
            update.upserts.push_back({param, newValue, "set_param"});
        }
        auto point =
            m_store->recordPoint(draft("token:alice", second, Action::set), Outcome::ok, {},
                                 {change("bench-b1", param, oldValue, newValue)}, update);
        if (!point.ok()) {
            qFatal("%s", point.status().toString().c_str());
        }
        return *point;
    }

private slots:
    void prunesByCountInBatches()
    {
        openFresh();
        for (int i = 0; i < 250; ++i) {
            set(i, "osc.ost0.max_rpcs_in_flight", std::to_string(i), std::to_string(i + 1));
        }
        const auto commitsBefore = m_store->stats().commits;
        HistoryRetention retention;
        retention.maxPoints = 100;
        retention.batchSize = 40;
        auto report = m_store->pruneHistory(retention, at(1000));
        LUTRA_VERIFY_OK(report);
        QCOMPARE(report->pointsDeleted, std::uint64_t(150));
        QCOMPARE(report->batches, std::uint64_t(4)); // 40 + 40 + 40 + 30
        QCOMPARE(report->prunedThrough, PointId(150));
        QCOMPARE(m_store->stats().commits - commitsBefore, std::uint64_t(4));
        QCOMPARE(allIds(*m_store), range(151, 250));
        // The changes went with their points.
        QCOMPARE(rawInt(m_file, "SELECT count(*) FROM history_changes"), 100);
        QCOMPARE(rawInt(m_file, "SELECT min(point_id) FROM history_changes"), 151);
        // Nothing more to do: no commit at all.
        auto again = m_store->pruneHistory(retention, at(1000));
        LUTRA_VERIFY_OK(again);
        QCOMPARE(again->pointsDeleted, std::uint64_t(0));
        QCOMPARE(m_store->stats().commits - commitsBefore, std::uint64_t(4));
    }

    void prunesByAge()
    {
        openFresh();
        for (int i = 0; i < 10; ++i) {
            set(i * 3600, "llite.bench.max_read_ahead_mb", "64", std::to_string(65 + i));
        }
        HistoryRetention retention;
        retention.maxAge = std::chrono::hours(4);
        // At 9h the cutoff is 5h: the points of 0h..4h (ids 1..5) go; 5h is not older, it stays.
        auto report = m_store->pruneHistory(retention, at(9 * 3600));
        LUTRA_VERIFY_OK(report);
        QCOMPARE(report->pointsDeleted, std::uint64_t(5));
        QCOMPARE(allIds(*m_store), range(6, 10));
        // Both limits: the stricter one wins.
        retention.maxPoints = 2;
        report = m_store->pruneHistory(retention, at(9 * 3600));
        LUTRA_VERIFY_OK(report);
        QCOMPARE(allIds(*m_store), range(9, 10));
        // No limit at all: nothing happens.
        report = m_store->pruneHistory(HistoryRetention{}, at(100 * 3600));
        LUTRA_VERIFY_OK(report);
        QCOMPARE(report->pointsDeleted, std::uint64_t(0));
        QCOMPARE(allIds(*m_store), range(9, 10));
    }

    void keepsPointsDesiredStateAndTheJournalNeed()
    {
        openFresh();
        const PointId desiredA = set(0, "osc.ost0.max_pages_per_rpc", "256", "1024", true);
        const PointId pending = *m_store->beginApply(draft("token:bob", 1, Action::apply, "hpc"),
                                                     {{"bench-b1", "lru_size", "0", "400"}});
        for (int i = 0; i < 20; ++i) {
            set(10 + i, "osc.ost0.max_rpcs_in_flight", std::to_string(i), std::to_string(i + 1));
        }
        // Re-set desired B twice: only the latest point is what desired state refers to.
        set(40, "llite.bench.max_cached_mb", "1024", "512", true);
        const PointId desiredB = set(41, "llite.bench.max_cached_mb", "512", "256", true);
        for (int i = 0; i < 5; ++i) {
            set(50 + i, "osc.ost0.max_rpcs_in_flight", "x", "y");
        }
        const auto desiredBefore = m_store->listDesired();
        LUTRA_VERIFY_OK(desiredBefore);
        HistoryRetention retention;
        retention.maxPoints = 3;
        retention.batchSize = 7;
        auto report = m_store->pruneHistory(retention, at(100));
        LUTRA_VERIFY_OK(report);
        auto expected = std::vector<PointId>{desiredA, pending, desiredB};
        for (PointId id = desiredB + 3; id <= desiredB + 5; ++id) {
            expected.push_back(id);
        }
        QCOMPARE(allIds(*m_store), expected);
        QCOMPARE(report->pointsDeleted, std::uint64_t(desiredB + 5 - 6));
        // Desired state is untouched and still names its points; the journal still lists the
        // pending apply with its plan.
        const auto desiredAfter = m_store->listDesired();
        LUTRA_VERIFY_OK(desiredAfter);
        QCOMPARE(desiredAfter->size(), desiredBefore->size());
        QCOMPARE(desiredAfter->front().point, desiredA);
        QCOMPARE(desiredAfter->back().point, desiredB);
        auto journal = m_store->pendingApplies();
        LUTRA_VERIFY_OK(journal);
        QCOMPARE(journal->size(), std::size_t(1));
        QCOMPARE(journal->front().point.id, pending);
        QCOMPARE(journal->front().planned.size(), std::size_t(1));
        QCOMPARE(m_store->point(desiredA)->changes.size(), std::size_t(1));
        // A rollback behind the pruned range is refused with the reason; one after it is exact.
        auto refused = m_store->valuesToRestore(desiredA);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.status().code(), Errc::failed_precondition);
        QVERIFY2(refused.status().message().find("older than the retained history") !=
                     std::string::npos,
                 refused.status().message().c_str());
        auto kept = m_store->valuesToRestore(desiredB + 3);
        LUTRA_VERIFY_OK(kept);
        QCOMPARE(kept->size(), std::size_t(1));
        QCOMPARE(kept->front().param, std::string("osc.ost0.max_rpcs_in_flight"));
        QCOMPARE(kept->front().changedBy, desiredB + 4);
    }

    void rollbackToARetainedPointIsUnchangedByPruning()
    {
        openFresh();
        for (int i = 0; i < 30; ++i) {
            set(i, "p" + std::to_string(i % 4), std::to_string(i), std::to_string(i + 100));
        }
        const auto before = m_store->valuesToRestore(20);
        LUTRA_VERIFY_OK(before);
        HistoryRetention retention;
        retention.maxPoints = 11; // keeps 20..30
        LUTRA_VERIFY_OK(m_store->pruneHistory(retention, at(100)));
        const auto after = m_store->valuesToRestore(20);
        LUTRA_VERIFY_OK(after);
        QCOMPARE(after->size(), before->size());
        for (std::size_t i = 0; i < after->size(); ++i) {
            QCOMPARE((*after)[i].value, (*before)[i].value);
            QCOMPARE((*after)[i].changedBy, (*before)[i].changedBy);
        }
        QVERIFY(!m_store->valuesToRestore(19).ok()); // deleted: no such point
        // The watermark survives a reopen.
        m_store.reset();
        auto reopened = Store::open(m_file);
        LUTRA_VERIFY_OK(reopened);
        QCOMPARE(rawInt(m_file, "SELECT pruned_through FROM history_retention"), 19);
    }
};

QTEST_GUILESS_MAIN(TestStoreRetention)
#include "test_store_retention.moc"
