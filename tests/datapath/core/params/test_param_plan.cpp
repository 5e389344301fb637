// planBatch: what a batch means against a schema, the one function Registry::set, ctld's
// NodeOps, profile checks and the console share.
#include "core/params/catalog.h"
#include "core/params/plan.h"

#include <QTest>

using namespace lutra;
using namespace lutra::params;

namespace {

std::vector<Spec> schema()
{
    std::vector<Spec> specs;
    for (const char *target : {"ost0", "ost1"}) {
        for (auto &spec : catalog::oscSpecs(target)) {
            specs.push_back(std::move(spec));
        }
    }
    for (auto &spec : catalog::ldlmSpecs("ost0")) {
        specs.push_back(
            std::move(spec)); // lru_size (writable, `clear`), ..., lock_count (read-only)
    }
    return specs;
}

std::vector<std::string> names(const BatchPlan &plan)
{
    std::vector<std::string> out;
    for (const auto &item : plan.items) {
        out.push_back(item.spec->name + "=" + item.requested);
    }
    return out;
}

} // namespace

class TestParamPlan : public QObject {
    Q_OBJECT

private slots:
    void globExpandsToCanonicalValues()
    {
        const auto specs = schema();
        const std::vector<Assignment> batch{{"osc.*.max_pages_per_rpc", "16M"}};
        const BatchPlan plan = planBatch(batch, specs);
        QVERIFY(plan.ok());
        QCOMPARE(names(plan), (std::vector<std::string>{"osc.ost0.max_pages_per_rpc=4096",
                                                        "osc.ost1.max_pages_per_rpc=4096"}));
        QCOMPARE(plan.items[1].assignment, std::size_t(0));
    }

    void laterValueReplacesEarlierInPlace()
    {
        const auto specs = schema();
        const std::vector<Assignment> batch{{"osc.*.max_pages_per_rpc", "16M"},
                                            {"osc.ost0.max_rpcs_in_flight", "4"},
                                            {"osc.ost1.max_pages_per_rpc", "1M"}};
        const BatchPlan plan = planBatch(batch, specs);
        QVERIFY(plan.ok());
        QCOMPARE(names(plan), (std::vector<std::string>{"osc.ost0.max_pages_per_rpc=4096",
                                                        "osc.ost1.max_pages_per_rpc=256",
                                                        "osc.ost0.max_rpcs_in_flight=4"}));
        QCOMPARE(plan.items[1].assignment, std::size_t(2));
    }

    void actionIsKeptBesideTheValueAndRunsOnce()
    {
        const auto specs = schema();
        const std::vector<Assignment> batch{{"ldlm.namespaces.ost0.lru_size", "clear"},
                                            {"ldlm.namespaces.ost0.lru_size", "100"},
                                            {"ldlm.namespaces.*.lru_size", "clear"}};
        const BatchPlan plan = planBatch(batch, specs);
        QVERIFY(plan.ok());
        QCOMPARE(names(plan), (std::vector<std::string>{"ldlm.namespaces.ost0.lru_size=clear",
                                                        "ldlm.namespaces.ost0.lru_size=100"}));
        QVERIFY(plan.items[0].isSpecial());
        QCOMPARE(plan.items[0].assignment, std::size_t(2));
    }

    void everyProblemIsListedInBatchOrder()
    {
        const auto specs = schema();
        const std::vector<Assignment> batch{{"osc.ost0.max_pages_per_rpc", "5000"},
                                            {"osc.[", "1"},
                                            {"osc.ost9.max_pages_per_rpc", "1"},
                                            {"ldlm.namespaces.ost0.lock_count", "1"},
                                            {"osc.ost1.max_rpcs_in_flight", "2"}};
        const BatchPlan plan = planBatch(batch, specs);
        QCOMPARE(plan.errors.size(), std::size_t(4));
        QCOMPARE(plan.errors[0].problem, PlanProblem::bad_value);
        QCOMPARE(plan.errors[0].spec->name, std::string("osc.ost0.max_pages_per_rpc"));
        QVERIFY(plan.errors[0].status.message().starts_with("osc.ost0.max_pages_per_rpc=5000"));
        QCOMPARE(plan.errors[1].problem, PlanProblem::bad_pattern);
        QCOMPARE(plan.errors[1].assignment, std::size_t(1));
        QCOMPARE(plan.errors[2].problem, PlanProblem::no_match);
        QCOMPARE(plan.errors[2].status.code(), Errc::not_found);
        QCOMPARE(plan.errors[2].status.message(),
                 std::string("no parameter matches 'osc.ost9.max_pages_per_rpc'"));
        QCOMPARE(plan.errors[3].problem, PlanProblem::read_only);
        QCOMPARE(plan.errors[3].status.message(),
                 std::string("ldlm.namespaces.ost0.lock_count is read-only"));
        QCOMPARE(plan.matched, (std::vector<bool>{true, false, false, true, true}));
    }

    void unmatchedIsAllowedWhenAsked()
    {
        const auto specs = schema();
        const std::vector<Assignment> batch{{"llite.*.max_read_ahead_mb", "64"},
                                            {"osc.ost0.max_rpcs_in_flight", "2"}};
        const BatchPlan plan = planBatch(batch, specs, {.allowUnmatched = true});
        QVERIFY(plan.ok());
        QCOMPARE(plan.matched, (std::vector<bool>{false, true}));
        QCOMPARE(names(plan), (std::vector<std::string>{"osc.ost0.max_rpcs_in_flight=2"}));
    }

    void planValueChecksOneParameter()
    {
        const auto specs = schema();
        const Spec &pages = specs.front();
        QCOMPARE(pages.name, std::string("osc.ost0.max_pages_per_rpc"));
        auto ok = planValue(pages, "1M");
        QVERIFY(ok.ok());
        QCOMPARE(ok->requested, std::string("256"));
        QVERIFY(!planValue(pages, "2K").ok());
    }
};

QTEST_GUILESS_MAIN(TestParamPlan)
#include "test_param_plan.moc"
