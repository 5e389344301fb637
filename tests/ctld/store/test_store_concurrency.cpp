// Four threads mutating and reading one store at once (as ctld's gRPC threads do): no errors,
// and the end state is exactly the sum of what each thread did.
#include "store_test_support.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <thread>

using namespace lutra;
using namespace lutra::ctld;
using namespace lutra::ctld::test;

class TestStoreConcurrency : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;

private slots:
    void fourThreadsMutateAndRead()
    {
        constexpr int kThreads = 4;
        constexpr int kIterations = 40;
        const std::string path = m_dir.filePath("concurrent.db").toStdString();
        auto opened = Store::open(path);
        LUTRA_VERIFY_OK(opened);
        Store &db = **opened;

        std::atomic<int> failures{0};
        std::mutex firstErrorMutex;
        std::string firstError;
        auto check = [&](const Status &status) {
            if (!status.ok()) {
                std::lock_guard lock(firstErrorMutex);
                if (failures.fetch_add(1) == 0) {
                    firstError = status.toString();
                }
            }
        };

        std::vector<std::thread> threads;
        threads.reserve(kThreads);
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                const std::string principal = "token:thread" + std::to_string(t);
                const std::string instance = "target-ost" + std::to_string(t);
                for (int i = 0; i < kIterations; ++i) {
                    const std::string pattern =
                        "osc.ost" + std::to_string(t) + ".p" + std::to_string(i % 5);
                    DesiredUpdate desired{{{pattern, std::to_string(i), "set_param"}}, {}};
                    check(statusOf(db.recordPoint(draft(principal, i, Action::set), Outcome::ok, {},
                                                  {change(instance, pattern, "0", "1")}, desired)));
                    auto begun = db.beginApply(draft(principal, i, Action::apply, "hpc"),
                                               {{instance, pattern, "1", "2"}});
                    check(statusOf(begun));
                    if (begun.ok()) {
                        check(db.finishApply(
                            *begun,
                            {at(i), Outcome::ok, {}, {change(instance, pattern, "1", "2")}, {}}));
                    }
                    const std::vector<CounterValue> values{
                        {"osc.stats.reads", i}, {"osc.stats.writes", std::int64_t{2} * i}};
                    check(db.recordSamples(instance, at(i), values));
                    check(statusOf(db.history({.limit = 5, .instanceGlob = instance})));
                    check(statusOf(db.listDesired()));
                    check(statusOf(db.counterHistory({.instanceGlob = instance})));
                    check(statusOf(db.pendingApplies()));
                    check(statusOf(db.valuesToRestore(1)));
                    if (i % 10 == 9) {
                        check(db.flushSamples(at(i)));
                    }
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        QVERIFY2(failures.load() == 0, firstError.c_str());

        LUTRA_VERIFY_OK(db.flushSamples(at(kIterations)));
        auto page = db.history({.limit = HistoryQuery::kMaxLimit});
        LUTRA_VERIFY_OK(page);
        QCOMPARE(page->points.size(), std::size_t(kThreads * kIterations * 2));
        QCOMPARE(page->nextBeforeId, std::nullopt);
        auto desired = db.listDesired();
        LUTRA_VERIFY_OK(desired);
        QCOMPARE(desired->size(), std::size_t(kThreads * 5));
        auto pending = db.pendingApplies();
        LUTRA_VERIFY_OK(pending);
        QVERIFY(pending->empty());
        // 4 instances x 2 counters x 4 buckets (0..39 s), each with its exact last value.
        auto series = db.counterHistory({});
        LUTRA_VERIFY_OK(series);
        QCOMPARE(series->size(), std::size_t(kThreads * 2));
        for (const CounterSeries &one : *series) {
            QCOMPARE(one.points.size(), std::size_t(4));
            const std::int64_t scale = one.counter == "osc.stats.writes" ? 2 : 1;
            QCOMPARE(one.points.back().last, scale * (kIterations - 1));
            QCOMPARE(one.points.front().min, std::int64_t(0));
        }
        QCOMPARE(rawInt(path, "SELECT count(*) FROM counter_buckets"), kThreads * 2 * 4);
    }
};

QTEST_GUILESS_MAIN(TestStoreConcurrency)
#include "test_store_concurrency.moc"
