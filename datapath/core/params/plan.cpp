#include "core/params/plan.h"

#include <algorithm>

namespace lutra::params {

Result<PlannedValue> planValue(const Spec &spec, std::string_view text)
{
    if (!spec.writable) {
        return Status(Errc::permission_denied, spec.name + " is read-only");
    }
    auto parsed = parseValue(spec, text);
    if (!parsed) {
        return parsed.status();
    }
    PlannedValue planned;
    planned.spec = &spec;
    planned.requested = parsed->isSpecial() ? parsed->special : formatValue(spec, parsed->value);
    planned.value = std::move(parsed).value();
    return planned;
}

BatchPlan planBatch(std::span<const Assignment> batch, const SpecMatcher &match,
                    PlanOptions options)
{
    BatchPlan plan;
    plan.matched.assign(batch.size(), false);
    for (std::size_t index = 0; index < batch.size(); ++index) {
        const Assignment &assignment = batch[index];
        auto glob = Glob::compile(assignment.pattern);
        if (!glob) {
            plan.errors.push_back({index, PlanProblem::bad_pattern, nullptr, glob.status()});
            continue;
        }
        const std::vector<const Spec *> specs = match(*glob);
        plan.matched[index] = !specs.empty();
        if (specs.empty() && !options.allowUnmatched) {
            plan.errors.push_back(
                {index, PlanProblem::no_match, nullptr,
                 Status(Errc::not_found, "no parameter matches '" + assignment.pattern + "'")});
            continue;
        }
        for (const Spec *spec : specs) {
            auto planned = planValue(*spec, assignment.value);
            if (!planned) {
                plan.errors.push_back(
                    {index, spec->writable ? PlanProblem::bad_value : PlanProblem::read_only, spec,
                     planned.status()});
                continue;
            }
            planned->assignment = index;
            const auto same =
                std::find_if(plan.items.begin(), plan.items.end(), [&](const PlannedValue &item) {
                    return item.spec == spec && item.isSpecial() == planned->isSpecial();
                });
            if (same != plan.items.end()) {
                *same = std::move(planned).value();
            } else {
                plan.items.push_back(std::move(planned).value());
            }
        }
    }
    return plan;
}

BatchPlan planBatch(std::span<const Assignment> batch, std::span<const Spec> schema,
                    PlanOptions options)
{
    const SpecMatcher match = [schema](const Glob &glob) {
        std::vector<const Spec *> found;
        for (const Spec &spec : schema) {
            if (glob.matches(spec.name)) {
                found.push_back(&spec);
            }
        }
        return found;
    };
    return planBatch(batch, match, options);
}

} // namespace lutra::params
