// The registry's contract: globbed get/list, atomic batch set with rollback, reported clamps,
// special actions, change notifications, and registrations that end with their owner.
#include "core/params/catalog.h"
#include "core/params/registry.h"

#include <QTest>

#include <atomic>
#include <memory>

using namespace lutra;
using namespace lutra::params;

namespace {

// A stand-in component with live tunables, bound the way the engine binds its own.
struct FakeOsc {
    std::atomic<std::int64_t> maxPages{1024};
    std::atomic<std::int64_t> rpcsInFlight{8};
    std::atomic<std::int64_t> maxDirtyMb{512};
    std::atomic<std::int64_t> checksums{1};
    std::atomic<std::int64_t> checksumType{0};
};

Binding bindCell(std::atomic<std::int64_t> &cell)
{
    return {[&cell] { return Value(cell.load()); },
            [&cell](const Value &value) {
                cell.store(std::get<std::int64_t>(value));
                return Status{};
            },
            {}};
}

void addOsc(Registry &registry, const std::string &target, FakeOsc &osc)
{
    for (auto &spec : catalog::oscSpecs(target)) {
        const auto leaf = std::string(leafName(spec.name));
        std::atomic<std::int64_t> &cell = leaf == "max_pages_per_rpc"    ? osc.maxPages
                                          : leaf == "max_rpcs_in_flight" ? osc.rpcsInFlight
                                          : leaf == "max_dirty_mb"       ? osc.maxDirtyMb
                                          : leaf == "checksums"          ? osc.checksums
                                                                         : osc.checksumType;
        QVERIFY(registry.add(std::move(spec), bindCell(cell)).ok());
    }
}

std::vector<Assignment> batch(std::initializer_list<std::pair<const char *, const char *>> list)
{
    std::vector<Assignment> out;
    for (const auto &[pattern, value] : list) {
        out.push_back({pattern, value});
    }
    return out;
}

} // namespace

class TestParamRegistry : public QObject {
    Q_OBJECT

    std::unique_ptr<Registry> m_registry;
    FakeOsc m_ost0;
    FakeOsc m_ost1;
    std::atomic<std::int64_t> m_lruSize{0};
    std::atomic<int> m_lruClears{0};
    std::atomic<std::int64_t> m_perFileMb{64};
    std::atomic<std::int64_t> m_fragile{0};
    std::atomic<std::int64_t> m_lockCount{7};

private slots:
    void init()
    {
        m_registry = std::make_unique<Registry>();
        m_ost0.maxPages = 1024;
        m_ost0.rpcsInFlight = 8;
        m_ost0.maxDirtyMb = 512;
        m_ost1.maxPages = 1024;
        m_lruSize = 0;
        m_lruClears = 0;
        m_perFileMb = 64;
        m_fragile = 0;
        addOsc(*m_registry, "ost0", m_ost0);
        addOsc(*m_registry, "ost1", m_ost1);

        Spec lru = catalog::ldlmSpecs("ost0")[0];
        Binding lruBinding = bindCell(m_lruSize);
        lruBinding.action = [this](std::string_view word) {
            if (word == "clear") {
                ++m_lruClears;
            }
            return Status{};
        };
        QVERIFY(m_registry->add(lru, lruBinding).ok());

        Spec lockCount = catalog::ldlmSpecs("ost0")[2];
        QVERIFY(m_registry->add(lockCount, {[this] { return Value(m_lockCount.load()); }, {}, {}})
                    .ok());

        // Like Lustre's per-file readahead limit, the component keeps at most 100 here.
        Spec perFile = catalog::lliteSpecs("lutra")[2];
        Binding perFileBinding = bindCell(m_perFileMb);
        perFileBinding.apply = [this](const Value &value) {
            m_perFileMb = std::min<std::int64_t>(std::get<std::int64_t>(value), 100);
            return Status{};
        };
        QVERIFY(m_registry->add(perFile, perFileBinding).ok());

        // Refuses 13 at apply time, to exercise rollback.
        Spec fragile{"test.fragile", Type::integer, Unit::none, 0, 100, std::int64_t{0}};
        Binding fragileBinding = bindCell(m_fragile);
        fragileBinding.apply = [this](const Value &value) {
            if (std::get<std::int64_t>(value) == 13) {
                return Status(Errc::io_error, "device refused 13");
            }
            m_fragile = std::get<std::int64_t>(value);
            return Status{};
        };
        QVERIFY(m_registry->add(fragile, fragileBinding).ok());
    }

    void cleanup() { m_registry.reset(); }

    void addRejectsDuplicatesAndBadSpecs()
    {
        auto again = m_registry->add(catalog::oscSpecs("ost0")[0], bindCell(m_ost0.maxPages));
        QCOMPARE(again.code(), Errc::already_exists);
        Spec bad{"osc..x", Type::integer};
        QCOMPARE(m_registry->add(bad, bindCell(m_fragile)).code(), Errc::invalid_argument);
        Spec spaces{"osc.ost 0.x", Type::integer};
        QCOMPARE(m_registry->add(spaces, bindCell(m_fragile)).code(), Errc::invalid_argument);
        Spec noApply{"test.no_apply", Type::integer};
        QCOMPARE(m_registry->add(noApply, {[] { return Value(std::int64_t{0}); }, {}, {}}).code(),
                 Errc::invalid_argument);
        Spec noAction{"test.no_action", Type::integer};
        noAction.specialValues = {{"clear", "x"}};
        QCOMPARE(m_registry->add(noAction, bindCell(m_fragile)).code(), Errc::invalid_argument);
    }

    void getByGlob()
    {
        auto readings = m_registry->get("osc.*.max_pages_per_rpc");
        QVERIFY(readings.ok());
        QCOMPARE(readings->size(), std::size_t(2));
        QCOMPARE((*readings)[0].name, std::string("osc.ost0.max_pages_per_rpc"));
        QCOMPARE((*readings)[0].value, std::string("1024"));
        QCOMPARE((*readings)[1].name, std::string("osc.ost1.max_pages_per_rpc"));
        auto enumReading = m_registry->get("osc.ost0.checksum_type");
        QCOMPARE((*enumReading)[0].value, std::string("crc32c"));

        auto none = m_registry->get("osc.ost9.*");
        QCOMPARE(none.status().code(), Errc::not_found);
        QCOMPARE(none.status().message(), std::string("no parameter matches 'osc.ost9.*'"));
        QCOMPARE(m_registry->get("osc.{ost0").status().code(), Errc::invalid_argument);
    }

    void listSchema()
    {
        auto specs = m_registry->list("osc.ost0", true);
        QVERIFY(specs.ok());
        QCOMPARE(specs->size(), catalog::oscSpecs("ost0").size());
        QCOMPARE(specs->front().name, std::string("osc.ost0.checksum_type"));
        auto one = m_registry->list("osc.ost0.max_pages_per_rpc");
        QCOMPARE(one->front().unit, Unit::pages);
        QCOMPARE(one->front().max, std::int64_t(4096));
        QVERIFY(!m_registry->list("osc.ost0").ok()); // not recursive: a prefix is no parameter
    }

    void batchApplies()
    {
        const auto assignments = batch({{"osc.*.max_pages_per_rpc", "16M"},
                                        {"osc.*.max_rpcs_in_flight", "16"},
                                        {"osc.*.max_dirty_mb", "512"},
                                        {"osc.*.checksums", "0"}});
        auto result = m_registry->set(assignments, "test");
        QVERIFY2(result.status.ok(), result.status.toString().c_str());
        QCOMPARE(result.results.size(), std::size_t(8));
        QCOMPARE(m_ost0.maxPages.load(), 4096);
        QCOMPARE(m_ost1.maxPages.load(), 4096);
        QCOMPARE(m_ost1.rpcsInFlight.load(), 16);
        QCOMPARE(m_ost0.checksums.load(), 0);
        const SetResult &first = result.results[0];
        QCOMPARE(first.name, std::string("osc.ost0.max_pages_per_rpc"));
        QCOMPARE(first.oldValue, std::string("1024"));
        QCOMPARE(first.requested, std::string("4096"));
        QCOMPARE(first.readBack, std::string("4096"));
        QVERIFY(!first.clamped);
        QVERIFY(first.status.ok());
    }

    void invalidThirdAssignmentChangesNothing()
    {
        int notifications = 0;
        auto subscription = m_registry->subscribe([&](const ChangeEvent &) { ++notifications; });
        const auto assignments = batch({{"osc.ost0.max_pages_per_rpc", "256"},
                                        {"osc.ost0.max_rpcs_in_flight", "32"},
                                        {"osc.ost0.max_dirty_mb", "lots"}});
        auto result = m_registry->set(assignments, "test");
        QCOMPARE(result.status.code(), Errc::invalid_argument);
        QCOMPARE(result.errors.size(), std::size_t(1));
        QVERIFY(result.status.message().find("osc.ost0.max_dirty_mb=lots: not a number") == 0);
        QVERIFY(result.results.empty());
        QCOMPARE(m_ost0.maxPages.load(), 1024);
        QCOMPARE(m_ost0.rpcsInFlight.load(), 8);
        QCOMPARE(notifications, 0);
    }

    void everyValidationErrorIsReported()
    {
        const auto assignments = batch({{"osc.ost0.no_such", "1"},
                                        {"ldlm.namespaces.ost0.lock_count", "3"},
                                        {"osc.*.max_rpcs_in_flight", "0"},
                                        {"osc.ost0.max_pages_per_rpc", "8"}});
        auto result = m_registry->set(assignments, "test");
        QVERIFY(!result.status.ok());
        QCOMPARE(result.errors.size(), std::size_t(4)); // unknown, read-only, 2 x out of range
        QCOMPARE(result.errors[0].code(), Errc::not_found);
        QCOMPARE(result.errors[1].code(), Errc::permission_denied);
        QCOMPARE(result.errors[1].message(),
                 std::string("ldlm.namespaces.ost0.lock_count is read-only"));
        QCOMPARE(result.errors[2].code(), Errc::out_of_range);
        QCOMPARE(result.errors[3].code(), Errc::out_of_range);
        QCOMPARE(m_ost0.maxPages.load(), 1024); // the valid assignment did not happen either
    }

    void failingApplyIsRolledBack()
    {
        std::vector<ChangeEvent> events;
        auto subscription =
            m_registry->subscribe([&](const ChangeEvent &e) { events.push_back(e); });
        const auto assignments = batch({{"osc.ost0.max_pages_per_rpc", "256"},
                                        {"osc.ost0.max_rpcs_in_flight", "32"},
                                        {"test.fragile", "13"},
                                        {"osc.ost1.max_dirty_mb", "64"}});
        auto result = m_registry->set(assignments, "admin@test");
        QCOMPARE(result.status.code(), Errc::io_error);
        QVERIFY(result.status.message().find("test.fragile: device refused 13") !=
                std::string::npos);
        QCOMPARE(m_ost0.maxPages.load(), 1024);
        QCOMPARE(m_ost0.rpcsInFlight.load(), 8);
        QCOMPARE(m_ost1.maxDirtyMb.load(), 512); // after the failure: never applied
        QCOMPARE(result.results.size(), std::size_t(4));
        QVERIFY(result.results[0].rolledBack);
        QVERIFY(result.results[1].rolledBack);
        QCOMPARE(result.results[0].readBack, std::string("1024"));
        QCOMPARE(result.results[2].status.code(), Errc::io_error);
        QCOMPARE(result.results[3].status.code(), Errc::cancelled);
        QCOMPARE(events.size(), std::size_t(1));
        QCOMPARE(events[0].principal, std::string("admin@test"));
        QCOMPARE(events[0].status.code(), Errc::io_error);
    }

    void clampIsReportedNotHidden()
    {
        auto result =
            m_registry->set(batch({{"llite.lutra.max_read_ahead_per_file_mb", "500"}}), "t");
        QVERIFY(result.status.ok());
        QCOMPARE(result.results.size(), std::size_t(1));
        QVERIFY(result.results[0].clamped);
        QCOMPARE(result.results[0].requested, std::string("500"));
        QCOMPARE(result.results[0].readBack, std::string("100"));
        QCOMPARE(result.results[0].oldValue, std::string("64"));
    }

    void specialActionsRunLastAndNotOnFailure()
    {
        auto failed = m_registry->set(
            batch({{"ldlm.namespaces.ost0.lru_size", "clear"}, {"test.fragile", "13"}}), "t");
        QVERIFY(!failed.status.ok());
        QCOMPARE(m_lruClears.load(), 0);

        auto ok = m_registry->set(
            batch({{"ldlm.namespaces.*.lru_size", "clear"}, {"osc.ost0.max_pages_per_rpc", "8"}}),
            "t");
        QVERIFY(ok.status.ok());
        QCOMPARE(m_lruClears.load(), 1);
        QCOMPARE(m_ost0.maxPages.load(), 8);
        QCOMPARE(ok.results.back().name, std::string("ldlm.namespaces.ost0.lru_size"));
        QVERIFY(ok.results.back().special);
        QVERIFY(!ok.results.back().clamped);
        QCOMPARE(ok.results.back().requested, std::string("clear"));
        QCOMPARE(m_lruSize.load(), 0); // clear is an action, not a value
    }

    void laterAssignmentWins()
    {
        auto result = m_registry->set(
            batch({{"osc.*.max_pages_per_rpc", "16M"}, {"osc.ost1.max_pages_per_rpc", "1M"}}), "t");
        QVERIFY(result.status.ok());
        QCOMPARE(result.results.size(), std::size_t(2));
        QCOMPARE(m_ost0.maxPages.load(), 4096);
        QCOMPARE(m_ost1.maxPages.load(), 256);
    }

    void valueAndActionOfOneParameterBothRun()
    {
        auto result = m_registry->set(batch({{"ldlm.namespaces.ost0.lru_size", "100"},
                                             {"ldlm.namespaces.ost0.lru_size", "clear"},
                                             {"ldlm.namespaces.ost0.lru_size", "200"}}),
                                      "t");
        QVERIFY(result.status.ok());
        QCOMPARE(result.results.size(), std::size_t(2));
        QCOMPARE(result.results[0].requested, std::string("200"));
        QCOMPARE(result.results[1].requested, std::string("clear"));
        QCOMPARE(m_lruSize.load(), 200);
        QCOMPARE(m_lruClears.load(), 1);
    }

    void notificationSaysWhoChangedWhat()
    {
        std::vector<ChangeEvent> events;
        auto subscription =
            m_registry->subscribe([&](const ChangeEvent &e) { events.push_back(e); });
        QVERIFY(m_registry->set(batch({{"osc.ost0.max_rpcs_in_flight", "4"}}), "ctld:admin")
                    .status.ok());
        QCOMPARE(events.size(), std::size_t(1));
        QCOMPARE(events[0].principal, std::string("ctld:admin"));
        QCOMPARE(events[0].results.size(), std::size_t(1));
        QCOMPARE(events[0].results[0].oldValue, std::string("8"));
        QCOMPARE(events[0].results[0].readBack, std::string("4"));
        {
            auto moved = std::move(subscription);
        }
        QVERIFY(m_registry->set(batch({{"osc.ost0.max_rpcs_in_flight", "5"}}), "x").status.ok());
        QCOMPARE(events.size(), std::size_t(1)); // unsubscribed when the handle went away
    }

    void groupUnregistersWithItsOwner()
    {
        const auto before = m_registry->schemaGeneration();
        std::atomic<std::int64_t> cell{3};
        {
            ParamGroup group(*m_registry);
            QVERIFY(group
                        .add({"llite.scratch.fast_read", Type::boolean, Unit::none, 0, 1,
                              std::int64_t{1}},
                             bindCell(cell))
                        .ok());
            QVERIFY(m_registry->get("llite.scratch.fast_read").ok());
            QVERIFY(m_registry->schemaGeneration() > before);
        }
        QCOMPARE(m_registry->get("llite.scratch.fast_read").status().code(), Errc::not_found);
    }

    void counterBlocks()
    {
        CounterBlock stats(catalog::readAheadStatDefs());
        QVERIFY(m_registry
                    ->addStats("llite.lutra.read_ahead_stats",
                               std::string(catalog::kReadAheadStatsHelp), stats)
                    .ok());
        stats.add(catalog::ra_hits, 10);
        stats.add(catalog::ra_misses, 2);
        auto text = m_registry->get("llite.*.read_ahead_stats");
        QVERIFY(text.ok());
        const std::string &rendered = (*text)[0].value;
        QVERIFY(rendered.find("hits                      10 samples [pages]\n") !=
                std::string::npos);
        QVERIFY(rendered.find("misses                    2 samples [pages]\n") !=
                std::string::npos);

        auto snapshots = m_registry->counters("llite.lutra.read_ahead_stats");
        QVERIFY(snapshots.ok());
        QCOMPARE((*snapshots)[0].second.counters.size(), std::size_t(18));
        QCOMPARE((*snapshots)[0].second.counters[0].samples, std::uint64_t(10));
        QCOMPARE(m_registry->counters("osc.*.checksums").status().code(), Errc::not_found);

        auto bad = m_registry->set(batch({{"llite.lutra.read_ahead_stats", "0"}}), "t");
        QCOMPARE(bad.status.code(), Errc::invalid_argument);
        auto clear = m_registry->set(batch({{"llite.lutra.read_ahead_stats", "clear"}}), "t");
        QVERIFY(clear.status.ok());
        QCOMPARE(stats.snapshot().counters[0].samples, std::uint64_t(0));
        m_registry->remove("llite.lutra.read_ahead_stats");
    }
};

QTEST_GUILESS_MAIN(TestParamRegistry)
#include "test_param_registry.moc"
