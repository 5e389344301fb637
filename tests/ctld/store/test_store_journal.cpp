// The apply journal: a begun apply is durable before any datapath process is touched, survives
// a SIGKILL of the process that wrote it, and is settled by finishApply(); what was acknowledged
// before the kill is all there.
#include "store_test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;

namespace {

const std::vector<PlannedChange> kPlan{
    {"target-ost0", "osc.ost0.max_pages_per_rpc", "256", "1024"},
    {"bench-b0", "llite.b0.max_read_ahead_mb", "64", "256"},
};

// The child's work: one finished apply, then one begun and never finished. Reports 'B' once
// the second is begun (or 'F' on any failure), then waits to be killed.
[[noreturn]] void crashingChild(const std::string &path, int reportFd)
{
    auto fail = [reportFd] {
        const char failed = 'F';
        (void)!::write(reportFd, &failed, 1);
        ::_exit(1);
    };
    auto store = Store::open(path);
    if (!store.ok()) {
        fail();
    }
    auto first = (*store)->beginApply(draft("token:alice", 1, Action::set), kPlan);
    if (!first.ok()) {
        fail();
    }
    ApplyResult result{
        at(2), Outcome::ok, {}, {}, {{{"osc.*.max_pages_per_rpc", "1024", "set_param"}}, {}}};
    result.changes.push_back(change("target-ost0", "osc.ost0.max_pages_per_rpc", "256", "1024"));
    if (!(*store)->finishApply(*first, result).ok()) {
        fail();
    }
    auto second = (*store)->beginApply(draft("token:bob", 3, Action::apply, "hpc"), kPlan);
    if (!second.ok()) {
        fail();
    }
    const char begun = 'B';
    (void)!::write(reportFd, &begun, 1);
    for (;;) {
        ::pause();
    }
}

} // namespace

class TestStoreJournal : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void beginThenFinish()
    {
        auto store = Store::open(m_dir.filePath("journal.db").toStdString());
        LUTRA_VERIFY_OK(store);
        Store &db = **store;
        auto begun = db.beginApply(draft("token:alice", 1, Action::set), kPlan);
        LUTRA_VERIFY_OK(begun);

        auto pending = db.pendingApplies();
        LUTRA_VERIFY_OK(pending);
        QCOMPARE(pending->size(), std::size_t(1));
        QCOMPARE((*pending)[0].point.id, *begun);
        QCOMPARE((*pending)[0].point.outcome, Outcome::pending);
        QCOMPARE((*pending)[0].point.finished, std::nullopt);
        QCOMPARE((*pending)[0].planned.size(), kPlan.size());
        QCOMPARE((*pending)[0].planned[1].instance, kPlan[1].instance);
        QCOMPARE((*pending)[0].planned[1].param, kPlan[1].param);
        QCOMPARE((*pending)[0].planned[1].oldValue, kPlan[1].oldValue);
        QCOMPARE((*pending)[0].planned[1].newValue, kPlan[1].newValue);
        auto detail = db.point(*begun);
        LUTRA_VERIFY_OK(detail);
        QCOMPARE(detail->changes.size(), std::size_t(2));
        QCOMPARE(detail->changes[0].outcome, ChangeOutcome::pending);
        QCOMPARE(db.valuesToRestore(*begun).status().code(), Errc::failed_precondition);

        // Refused finishes change nothing.
        QCOMPARE(db.finishApply(*begun, {at(2), Outcome::pending, {}, {}, {}}).code(),
                 Errc::invalid_argument);
        const Status badDesired =
            db.finishApply(*begun, {at(2), Outcome::ok, {}, {}, {{{"osc.[", "1", "x"}}, {}}});
        QCOMPARE(badDesired.code(), Errc::invalid_argument);
        QCOMPARE(db.pendingApplies()->size(), std::size_t(1));

        // The clamp shows in the read-back; the desired update lands with the outcome.
        ApplyResult result{
            at(2), Outcome::ok, {}, {}, {{{"osc.*.max_pages_per_rpc", "1024", "set_param"}}, {}}};
        result.changes = {
            {"target-ost0",
             "osc.ost0.max_pages_per_rpc",
             "256",
             "1024",
             "1024",
             ChangeOutcome::ok,
             {}},
            {"bench-b0", "llite.b0.max_read_ahead_mb", "64", "256", "128", ChangeOutcome::ok, {}}};
        LUTRA_VERIFY_OK(db.finishApply(*begun, result));
        pending = db.pendingApplies();
        LUTRA_VERIFY_OK(pending);
        QVERIFY(pending->empty());
        detail = db.point(*begun);
        LUTRA_VERIFY_OK(detail);
        QCOMPARE(detail->point.outcome, Outcome::ok);
        QCOMPARE(detail->point.finished, std::optional<TimePoint>(at(2)));
        QCOMPARE(detail->changes.size(), std::size_t(2));
        QCOMPARE(detail->changes[1].readBack, std::string("128"));
        QCOMPARE(detail->changes[1].outcome, ChangeOutcome::ok);
        auto desired = db.listDesired();
        LUTRA_VERIFY_OK(desired);
        QCOMPARE(desired->size(), std::size_t(1));
        QCOMPARE((*desired)[0].point, *begun);
        QCOMPARE((*desired)[0].principal, std::string("token:alice"));
        QCOMPARE((*desired)[0].time, at(2));

        const Status twice = db.finishApply(*begun, result);
        QCOMPARE(twice.code(), Errc::failed_precondition);
        QVERIFY2(twice.message().find("finish apply of history point 1: the point is not pending "
                                      "(its outcome is ok)") != std::string::npos,
                 twice.message().c_str());
        QCOMPARE(db.finishApply(999, result).code(), Errc::not_found);
    }

    void pendingApplySurvivesSigkill()
    {
        const std::string path = m_dir.filePath("killed.db").toStdString();
        int fds[2];
        QCOMPARE(::pipe(fds), 0);
        const pid_t child = ::fork();
        QVERIFY(child >= 0);
        if (child == 0) {
            ::close(fds[0]);
            crashingChild(path, fds[1]);
        }
        ::close(fds[1]);
        char report = 0;
        QCOMPARE(::read(fds[0], &report, 1), ssize_t(1));
        ::close(fds[0]);
        QCOMPARE(::kill(child, SIGKILL), 0);
        int status = 0;
        QCOMPARE(::waitpid(child, &status, 0), child);
        QCOMPARE(report, 'B');
        QVERIFY(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

        {
            auto store = Store::open(path);
            LUTRA_VERIFY_OK(store);
            // Acknowledged before the kill: all there.
            auto first = (*store)->point(1);
            LUTRA_VERIFY_OK(first);
            QCOMPARE(first->point.outcome, Outcome::ok);
            auto desired = (*store)->listDesired();
            LUTRA_VERIFY_OK(desired);
            QCOMPARE(desired->size(), std::size_t(1));
            // Begun, never finished: what to restore.
            auto pending = (*store)->pendingApplies();
            LUTRA_VERIFY_OK(pending);
            QCOMPARE(pending->size(), std::size_t(1));
            const PendingApply &interrupted = (*pending)[0];
            QCOMPARE(interrupted.point.id, PointId(2));
            QCOMPARE(interrupted.point.profile, std::string("hpc"));
            QCOMPARE(interrupted.planned.size(), std::size_t(2));
            QCOMPARE(interrupted.planned[0].oldValue, std::string("256"));
            QCOMPARE(interrupted.planned[1].oldValue, std::string("64"));

            // ctld restores the old values and settles the point as aborted.
            ApplyResult aborted{
                at(10), Outcome::aborted, "interrupted by a restart of ctld", {}, {}};
            for (const PlannedChange &planned : interrupted.planned) {
                aborted.changes.push_back({planned.instance,
                                           planned.param,
                                           planned.oldValue,
                                           planned.newValue,
                                           planned.oldValue,
                                           ChangeOutcome::reverted,
                                           {}});
            }
            LUTRA_VERIFY_OK((*store)->finishApply(interrupted.point.id, aborted));
        }
        auto store = Store::open(path);
        LUTRA_VERIFY_OK(store);
        auto pending = (*store)->pendingApplies();
        LUTRA_VERIFY_OK(pending);
        QVERIFY(pending->empty());
        auto detail = (*store)->point(2);
        LUTRA_VERIFY_OK(detail);
        QCOMPARE(detail->point.outcome, Outcome::aborted);
        QCOMPARE(detail->changes[0].outcome, ChangeOutcome::reverted);
        auto applications = (*store)->profileApplications("hpc", 0);
        LUTRA_VERIFY_OK(applications);
        QCOMPARE(applications->size(), std::size_t(1));
        QCOMPARE((*applications)[0].outcome, Outcome::aborted);
    }
};

QTEST_GUILESS_MAIN(TestStoreJournal)
#include "test_store_journal.moc"
