// History: paging and filters with exact results, one point in full, rollback targets over a
// sequence of points, profiles and their applications, flush reports, and a mutation failing
// part-way rolled back whole.
#include "store_test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <limits>

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;

namespace {

std::vector<PointId> ids(const HistoryPage &page)
{
    std::vector<PointId> result;
    for (const auto &point : page.points) {
        result.push_back(point.id);
    }
    return result;
}

std::vector<PointId> range(PointId from, PointId downTo)
{
    std::vector<PointId> result;
    for (PointId id = from; id >= downTo; --id) {
        result.push_back(id);
    }
    return result;
}

} // namespace

class TestStoreHistory : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::unique_ptr<Store> m_store;
    int m_files = 0;

    void openFresh()
    {
        m_store.reset();
        auto store = Store::open(m_dir.filePath(QString("h%1.db").arg(++m_files)).toStdString());
        if (!store.ok()) {
            qFatal("%s", store.status().toString().c_str());
        }
        m_store = std::move(*store);
    }

    PointId record(const PointDraft &pointDraft, const std::vector<Change> &changes,
                   Outcome outcome = Outcome::ok)
    {
        auto point = m_store->recordPoint(pointDraft, outcome, {}, changes);
        if (!point.ok()) {
            qFatal("%s", point.status().toString().c_str());
        }
        return *point;
    }

    HistoryPage query(const HistoryQuery &query)
    {
        auto page = m_store->history(query);
        if (!page.ok()) {
            qFatal("%s", page.status().toString().c_str());
        }
        return std::move(*page);
    }

private slots:
    void init() { openFresh(); }
    void cleanup() { m_store.reset(); }

    void pagesAndFiltersGiveExactResults()
    {
        // 30 points, one per second: principals alternate alice/bob, every third is a
        // reconcile, points touch target-ost<i % 3> and parameter osc.ost<i%3>.<i%2 ? a : b>.
        for (int i = 1; i <= 30; ++i) {
            const std::string ost = "ost" + std::to_string(i % 3);
            const Action action = i % 3 == 0 ? Action::reconcile : Action::set;
            const PointId id =
                record(draft(i % 2 ? "token:alice" : "token:bob", i, action),
                       {change("target-" + ost, "osc." + ost + (i % 2 ? ".a" : ".b"), "1", "2")});
            QCOMPARE(id, PointId(i));
        }
        // A flush touching target-ost7 only through its report.
        auto flush = m_store->recordFlush(audit("token:carol", 31), Outcome::ok, {},
                                          {{"job42", "target-ost7", 1, 2, 3, 4, {}}});
        LUTRA_VERIFY_OK(flush);
        QCOMPARE(*flush, PointId(31));

        // Paging, newest first, with an exact "more" cursor.
        HistoryPage page = query({.limit = 10});
        QCOMPARE(ids(page), range(31, 22));
        QCOMPARE(page.nextBeforeId, std::optional<PointId>(22));
        QCOMPARE(page.points[1].changeCount, std::int64_t(1));
        QCOMPARE(page.points[1].principal, std::string("token:bob"));
        QCOMPARE(page.points[1].time, at(30));
        QCOMPARE(page.points[1].finished, std::optional<TimePoint>(at(30)));
        page = query({.limit = 10, .beforeId = 22});
        QCOMPARE(ids(page), range(21, 12));
        page = query({.limit = 10, .beforeId = 12});
        QCOMPARE(ids(page), range(11, 2));
        QCOMPARE(page.nextBeforeId, std::optional<PointId>(2));
        page = query({.limit = 10, .beforeId = 2});
        QCOMPARE(ids(page), std::vector<PointId>{1});
        QCOMPARE(page.nextBeforeId, std::nullopt);
        page = query({.limit = 31});
        QCOMPARE(page.points.size(), std::size_t(31));
        QCOMPARE(page.nextBeforeId, std::nullopt);

        // Filters.
        page = query({.since = at(10), .until = at(14)});
        QCOMPARE(ids(page), range(13, 10));
        page = query({.limit = 5, .principal = "token:bob"});
        QCOMPARE(ids(page), (std::vector<PointId>{30, 28, 26, 24, 22}));
        page = query({.until = at(16), .action = Action::reconcile});
        QCOMPARE(ids(page), (std::vector<PointId>{15, 12, 9, 6, 3}));
        page = query({.since = at(20), .instanceGlob = "target-ost1"});
        QCOMPARE(ids(page), (std::vector<PointId>{28, 25, 22}));
        page = query({.until = at(8), .paramGlob = "osc.*.a"});
        QCOMPARE(ids(page), (std::vector<PointId>{7, 5, 3, 1}));
        page = query({.instanceGlob = "target-ost[12]", .paramGlob = "osc.ost2.b"});
        QCOMPARE(ids(page), (std::vector<PointId>{26, 20, 14, 8, 2}));
        page = query({.instanceGlob = "target-ost7"});
        QCOMPARE(ids(page), std::vector<PointId>{31});
        page = query({.action = Action::flush});
        QCOMPARE(ids(page), std::vector<PointId>{31});
        page = query({.principal = "token:nobody"});
        QVERIFY(page.points.empty());

        auto bad = m_store->history({.paramGlob = "osc.[ost"});
        QCOMPARE(bad.status().code(), Errc::invalid_argument);
        QVERIFY2(bad.status().message().find("query history: parameter glob 'osc.[ost': ") !=
                     std::string::npos,
                 bad.status().message().c_str());
    }

    void pointHasItsChangesInOrder()
    {
        std::vector<Change> changes{
            change("target-ost0", "osc.ost0.max_pages_per_rpc", "256", "1024"),
            {"target-ost0",
             "osc.ost0.max_rpcs_in_flight",
             "8",
             "9999",
             "256",
             ChangeOutcome::ok,
             {}},
            {"bench-b0", "llite.b0.max_read_ahead_mb", "64", "x", "", ChangeOutcome::error,
             "invalid_argument: 'x' is not a size"},
        };
        const PointId id =
            record(draft("token:alice", 7, Action::apply, "hpc"), changes, Outcome::error);
        auto detail = m_store->point(id);
        LUTRA_VERIFY_OK(detail);
        QCOMPARE(detail->point.action, Action::apply);
        QCOMPARE(detail->point.profile, std::string("hpc"));
        QCOMPARE(detail->point.outcome, Outcome::error);
        QCOMPARE(detail->point.node, std::string("node01"));
        QCOMPARE(detail->point.description, std::string("test"));
        QCOMPARE(detail->changes.size(), changes.size());
        for (std::size_t i = 0; i < changes.size(); ++i) {
            QCOMPARE(detail->changes[i].instance, changes[i].instance);
            QCOMPARE(detail->changes[i].param, changes[i].param);
            QCOMPARE(detail->changes[i].oldValue, changes[i].oldValue);
            QCOMPARE(detail->changes[i].requested, changes[i].requested);
            QCOMPARE(detail->changes[i].readBack, changes[i].readBack);
            QCOMPARE(detail->changes[i].outcome, changes[i].outcome);
            QCOMPARE(detail->changes[i].error, changes[i].error);
        }
        auto missing = m_store->point(99);
        QCOMPARE(missing.status().code(), Errc::not_found);
        QVERIFY2(missing.status().message().find(
                     ": read history point 99: no such history point") != std::string::npos,
                 missing.status().message().c_str());
        auto badChange = m_store->recordPoint(draft("token:alice", 8, Action::set), Outcome::ok, {},
                                              {change("", "osc.x", "1", "2")});
        QCOMPARE(badChange.status().code(), Errc::invalid_argument);
        QVERIFY2(badChange.status().message().find("change 1: instance: must not be empty") !=
                     std::string::npos,
                 badChange.status().message().c_str());
    }

    void rollbackTargetsComeFromTheEarliestLaterChange()
    {
        // 1: a.x 1 -> 2
        record(draft("token:alice", 1, Action::set), {change("t0", "a.x", "1", "2")});
        // 2: a.x 2 -> 3, a.y 5 -> 6
        record(draft("token:alice", 2, Action::set),
               {change("t0", "a.x", "2", "3"), change("t0", "a.y", "5", "6")});
        // 3: a reconcile after a restart (defaults back to desired): left out.
        record(draft("ctld", 3, Action::reconcile), {change("t1", "b.x", "0", "3")});
        // 4: refused, and 5: applied then reverted: neither changed anything.
        record(draft("token:bob", 4, Action::set),
               {change("t0", "a.y", "6", "7", ChangeOutcome::error)}, Outcome::error);
        record(draft("token:bob", 5, Action::apply, "hpc"),
               {change("t0", "a.z", "0", "1", ChangeOutcome::reverted)}, Outcome::error);
        // 6: b.x 3 -> 4 on the other instance, 7: a.x 3 -> 4 again.
        record(draft("token:bob", 6, Action::set), {change("t1", "b.x", "3", "4")});
        record(draft("token:bob", 7, Action::rollback), {change("t0", "a.x", "3", "4")});

        auto values = m_store->valuesToRestore(1);
        LUTRA_VERIFY_OK(values);
        QCOMPARE(values->size(), std::size_t(3));
        QCOMPARE((*values)[0].instance, std::string("t0"));
        QCOMPARE((*values)[0].param, std::string("a.x"));
        QCOMPARE((*values)[0].value, std::string("2"));
        QCOMPARE((*values)[0].changedBy, PointId(2));
        QCOMPARE((*values)[1].param, std::string("a.y"));
        QCOMPARE((*values)[1].value, std::string("5"));
        QCOMPARE((*values)[2].instance, std::string("t1"));
        QCOMPARE((*values)[2].param, std::string("b.x"));
        QCOMPARE((*values)[2].value, std::string("3"));
        QCOMPARE((*values)[2].changedBy, PointId(6));

        values = m_store->valuesToRestore(2);
        LUTRA_VERIFY_OK(values);
        QCOMPARE(values->size(), std::size_t(2));
        QCOMPARE((*values)[0].param, std::string("a.x"));
        QCOMPARE((*values)[0].value, std::string("3"));
        QCOMPARE((*values)[0].changedBy, PointId(7));
        QCOMPARE((*values)[1].param, std::string("b.x"));
        QCOMPARE((*values)[1].value, std::string("3"));

        values = m_store->valuesToRestore(7);
        LUTRA_VERIFY_OK(values);
        QVERIFY(values->empty());
        QCOMPARE(m_store->valuesToRestore(8).status().code(), Errc::not_found);
    }

    void profilesAndTheirApplications()
    {
        auto put = m_store->putProfile(audit("token:alice", 1), "hpc", "name: hpc\nparams: {}\n");
        LUTRA_VERIFY_OK(put);
        LUTRA_VERIFY_OK(m_store->putProfile(audit("token:alice", 2), "archive", "name: archive\n"));
        LUTRA_VERIFY_OK(
            m_store->putProfile(audit("token:bob", 3), "hpc", "name: hpc\nparams: {a: 1}\n"));
        auto profile = m_store->profile("hpc");
        LUTRA_VERIFY_OK(profile);
        QCOMPARE(profile->text, std::string("name: hpc\nparams: {a: 1}\n"));
        QCOMPARE(profile->principal, std::string("token:bob"));
        QCOMPARE(profile->updated, at(3));
        auto list = m_store->listProfiles();
        LUTRA_VERIFY_OK(list);
        QCOMPARE(list->size(), std::size_t(2));
        QCOMPARE((*list)[0].name, std::string("archive"));
        QCOMPARE((*list)[1].name, std::string("hpc"));

        // Applications: one through the journal, one recorded directly, one of another profile.
        auto begun = m_store->beginApply(draft("token:alice", 4, Action::apply, "hpc"),
                                         {{"t0", "a.x", "1", "2"}});
        LUTRA_VERIFY_OK(begun);
        LUTRA_VERIFY_OK(m_store->finishApply(
            *begun, {at(5), Outcome::ok, {}, {change("t0", "a.x", "1", "2")}, {}}));
        record(draft("token:bob", 6, Action::apply, "archive"), {}, Outcome::error);
        record(draft("token:bob", 7, Action::apply, "hpc"), {});
        record(draft("token:bob", 8, Action::set), {});

        auto applications = m_store->profileApplications("hpc", 10);
        LUTRA_VERIFY_OK(applications);
        QCOMPARE(applications->size(), std::size_t(2));
        QCOMPARE((*applications)[0].point, PointId(6));
        QCOMPARE((*applications)[1].point, *begun);
        QCOMPARE((*applications)[1].time, at(5));
        QCOMPARE((*applications)[1].outcome, Outcome::ok);
        QCOMPARE((*applications)[1].node, std::string("node01"));
        applications = m_store->profileApplications({}, 2);
        LUTRA_VERIFY_OK(applications);
        QCOMPARE(applications->size(), std::size_t(2));
        QCOMPARE((*applications)[1].profile, std::string("archive"));
        QCOMPARE((*applications)[1].outcome, Outcome::error);

        // Deleting: a point; a missing profile changes nothing.
        auto deleted = m_store->deleteProfile(audit("token:alice", 9), "archive");
        LUTRA_VERIFY_OK(deleted);
        QCOMPARE(*deleted, PointId(8));
        auto again = m_store->deleteProfile(audit("token:alice", 10), "archive");
        QCOMPARE(again.status().code(), Errc::not_found);
        QCOMPARE(m_store->profile("archive").status().code(), Errc::not_found);
        HistoryPage page = query({.action = Action::profile_put});
        QCOMPARE(ids(page), (std::vector<PointId>{3, 2, 1}));
        QCOMPARE(page.points[0].profile, std::string("hpc"));
        QCOMPARE(ids(query({.limit = 1})), std::vector<PointId>{8});

        QCOMPARE(m_store->putProfile(audit("token:alice", 11), "", "x").status().code(),
                 Errc::invalid_argument);
        QCOMPARE(m_store->putProfile(audit("token:alice", 11), "a\nb", "x").status().code(),
                 Errc::invalid_argument);
        const std::string huge(std::size_t{2} << 20, 'x');
        auto tooBig = m_store->putProfile(audit("token:alice", 11), "big", huge);
        QCOMPARE(tooBig.status().code(), Errc::out_of_range);
        QVERIFY2(tooBig.status().message().find("profile text: 2097152 bytes, more than the limit "
                                                "of 1048576") != std::string::npos,
                 tooBig.status().message().c_str());
        QCOMPARE(ids(query({.limit = 1})), std::vector<PointId>{8});
    }

    void flushReportsByJob()
    {
        constexpr auto kHuge = std::numeric_limits<std::uint64_t>::max();
        auto first = m_store->recordFlush(
            audit("token:ops", 1, "flush job 42"), Outcome::partial, "bench-b0 unreachable",
            {{"42", "target-ost0", 10, 20, 4096, 1500, {}},
             {"42", "bench-b0", 0, 0, 0, 0, "unavailable: bench-b0: connection refused"}});
        LUTRA_VERIFY_OK(first);
        auto second = m_store->recordFlush(audit("token:ops", 2), Outcome::ok, {},
                                           {{"all", "target-ost0", 1, kHuge, 3, 4, {}}});
        LUTRA_VERIFY_OK(second);

        auto reports = m_store->flushReports("42", 10);
        LUTRA_VERIFY_OK(reports);
        QCOMPARE(reports->size(), std::size_t(2));
        QCOMPARE((*reports)[0].instance, std::string("bench-b0")); // newest first
        QCOMPARE((*reports)[0].error, std::string("unavailable: bench-b0: connection refused"));
        QCOMPARE((*reports)[1].locksCancelled, std::uint64_t(10));
        QCOMPARE((*reports)[1].pagesDropped, std::uint64_t(20));
        QCOMPARE((*reports)[1].bytesWrittenBack, std::uint64_t(4096));
        QCOMPARE((*reports)[1].durationUs, std::uint64_t(1500));
        QCOMPARE((*reports)[1].principal, std::string("token:ops"));
        QCOMPARE((*reports)[1].time, at(1));
        QCOMPARE((*reports)[1].point, *first);
        reports = m_store->flushReports({}, 0);
        LUTRA_VERIFY_OK(reports);
        QCOMPARE(reports->size(), std::size_t(3));
        QCOMPARE((*reports)[0].jobId, std::string("all"));
        // Stored as a signed 64-bit integer: clamped, never wrapped.
        QCOMPARE((*reports)[0].pagesDropped,
                 std::uint64_t(std::numeric_limits<std::int64_t>::max()));

        auto detail = m_store->point(*first);
        LUTRA_VERIFY_OK(detail);
        QCOMPARE(detail->point.action, Action::flush);
        QCOMPARE(detail->point.outcome, Outcome::partial);
        QCOMPARE(detail->point.error, std::string("bench-b0 unreachable"));
        QCOMPARE(detail->flushes.size(), std::size_t(2));
        QCOMPARE(detail->flushes[0].instance, std::string("target-ost0"));

        auto bad = m_store->recordFlush(audit("token:ops", 3), Outcome::ok, {},
                                        {{"7", "target-ost0"}, {"", "target-ost1"}});
        QCOMPARE(bad.status().code(), Errc::invalid_argument);
        QVERIFY2(bad.status().message().find("flush report 2: job id") != std::string::npos,
                 bad.status().message().c_str());
        reports = m_store->flushReports({}, 0);
        LUTRA_VERIFY_OK(reports);
        QCOMPARE(reports->size(), std::size_t(3));
    }

    void aMutationFailingPartWayLeavesNothing()
    {
        record(draft("token:alice", 1, Action::set), {change("t0", "a.x", "1", "2")});
        const std::string file = m_store->path();
        // recordFlush() inserts its point before the reports; a refused report must take the
        // point with it.
        rawExec(file, "CREATE TRIGGER refuse_reports BEFORE INSERT ON flush_reports "
                      "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
        const std::uint64_t commits = m_store->stats().commits;
        auto failed =
            m_store->recordFlush(audit("token:ops", 2), Outcome::ok, {}, {{"all", "target-ost0"}});
        QCOMPARE(failed.status().code(), Errc::failed_precondition);
        QCOMPARE(failed.status().message(), file + ": record flush: refused by the test");
        QCOMPARE(m_store->stats().commits, commits);
        QCOMPARE(rawInt(file, "SELECT count(*) FROM history_points"), 1);
        QCOMPARE(ids(query({})), std::vector<PointId>{1});

        // The failed transaction is over: the next mutation commits as usual.
        rawExec(file, "DROP TRIGGER refuse_reports");
        auto flushed =
            m_store->recordFlush(audit("token:ops", 3), Outcome::ok, {}, {{"all", "target-ost0"}});
        LUTRA_VERIFY_OK(flushed);
        QCOMPARE(*flushed, PointId(2));
        QCOMPARE(m_store->stats().commits, commits + 1);
        QCOMPARE(ids(query({})), (std::vector<PointId>{2, 1}));
    }
};

QTEST_GUILESS_MAIN(TestStoreHistory)
#include "test_store_history.moc"
