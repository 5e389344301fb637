#include "ctld/profiles/schema_check.h"

#include "core/params/plan.h"
#include "ctld/profiles/parser.h"
#include "ctld/profiles/suggest.h"

#include <algorithm>
#include <optional>

namespace lutra::ctld::profiles {

namespace {

struct Decision {
    const params::Spec *spec = nullptr;
    const ParamEntry *entry = nullptr;
    std::string desired;
};

struct Bound {
    std::map<std::string_view, Decision> decisions; // by parameter name; the last entry wins
    Diagnostics errors;
};

std::string unknownParameter(const ParamEntry &entry, std::span<const params::Spec> schema)
{
    std::string message = "unknown parameter " + inQuotes(entry.pattern) + " (no parameter matches";
    if (const std::string close = closestParameter(entry.pattern, schema); !close.empty()) {
        message += "; did you mean " + close + "?";
    }
    return message + ")";
}

std::string readOnly(const ParamEntry &entry, const std::vector<const params::Spec *> &specs)
{
    if (specs.size() == 1 && specs.front()->name == entry.pattern) {
        return "parameter " + specs.front()->name + " is read-only";
    }
    std::string message =
        inQuotes(entry.pattern) + " matches read-only parameter " + specs.front()->name;
    if (specs.size() > 1) {
        message += " (and " + std::to_string(specs.size() - 1) + " more)";
    }
    return message;
}

std::string action(const params::Spec &spec, const ParamEntry &entry, const std::string &word)
{
    std::string help = "a command for the counter block";
    for (const auto &special : spec.specialValues) {
        if (special.word == word) {
            help = special.help;
        }
    }
    return spec.name + "=" + word + ": an action, not a value (" + help +
           "); a profile describes a desired state, so run actions with lutractl set_param" +
           (entry.value == word ? "" : " (written " + inQuotes(entry.value) + ")");
}

// The registry's messages start with the parameter's name; the rest is the same for every
// instance a glob matches, so one message per distinct rest is enough.
std::string withoutName(const std::string &message, const std::string &name)
{
    return message.starts_with(name) ? message.substr(name.size()) : message;
}

// The batch the profile's entries make, planned with the registry's own planning step; its
// problems are reported at the entries, in a profile's words.
Bound bind(std::span<const ParamEntry> params, std::span<const params::Spec> schema)
{
    std::vector<params::Assignment> batch;
    batch.reserve(params.size());
    for (const auto &entry : params) {
        batch.push_back({entry.pattern, entry.value});
    }
    const params::BatchPlan plan = params::planBatch(batch, schema);

    // Per entry: its pattern's problem, or its read-only matches (one message), then its value
    // problems (one per distinct message) and the actions it asks for.
    struct EntryProblems {
        std::vector<const params::Spec *> readOnly;
        std::vector<std::pair<const params::Spec *, Status>> values;
        std::optional<Diagnostic> pattern;
    };
    std::vector<EntryProblems> problems(params.size());
    for (const auto &error : plan.errors) {
        const ParamEntry &entry = params[error.assignment];
        auto &mine = problems[error.assignment];
        switch (error.problem) {
        case params::PlanProblem::bad_pattern:
            mine.pattern = Diagnostic{entry.location, error.status.message(), error.status.code()};
            break;
        case params::PlanProblem::no_match:
            mine.pattern =
                Diagnostic{entry.location, unknownParameter(entry, schema), Errc::not_found};
            break;
        case params::PlanProblem::read_only: mine.readOnly.push_back(error.spec); break;
        case params::PlanProblem::bad_value:
            mine.values.emplace_back(error.spec, error.status);
            break;
        }
    }
    Bound bound;
    for (const auto &item : plan.items) {
        const ParamEntry &entry = params[item.assignment];
        if (item.isSpecial()) {
            problems[item.assignment].values.emplace_back(
                item.spec,
                Status(Errc::invalid_argument, action(*item.spec, entry, item.value.special)));
        } else {
            bound.decisions[item.spec->name] = {item.spec, &entry, item.requested};
        }
    }
    for (std::size_t index = 0; index < params.size(); ++index) {
        const ParamEntry &entry = params[index];
        const auto &mine = problems[index];
        if (mine.pattern) {
            bound.errors.push_back(*mine.pattern);
            continue;
        }
        if (!mine.readOnly.empty()) {
            bound.errors.push_back(
                {entry.location, readOnly(entry, mine.readOnly), Errc::permission_denied});
        }
        std::vector<std::string> seen; // the same problem on another instance is said once
        for (const auto &[spec, status] : mine.values) {
            std::string key = withoutName(status.message(), spec->name);
            if (std::find(seen.begin(), seen.end(), key) == seen.end()) {
                seen.push_back(std::move(key));
                bound.errors.push_back({entry.valueLocation, status.message(), status.code()});
            }
        }
    }
    return bound;
}

// The live value in canonical form; as given when it does not parse (it then differs).
std::string canonicalLive(const params::Spec &spec, const std::string &live)
{
    auto parsed = params::parseValue(spec, live);
    if (!parsed || parsed->isSpecial()) {
        return live;
    }
    return params::formatValue(spec, parsed->value);
}

} // namespace

std::size_t Plan::changedCount() const noexcept
{
    return static_cast<std::size_t>(std::count_if(entries.begin(), entries.end(),
                                                  [](const PlanEntry &e) { return e.changed; }));
}

std::vector<params::Assignment> Plan::changes() const
{
    std::vector<params::Assignment> batch;
    for (const auto &entry : entries) {
        if (entry.changed) {
            batch.push_back({entry.name, entry.desired});
        }
    }
    return batch;
}

Diagnostics validateParams(std::span<const ParamEntry> params, std::span<const params::Spec> schema)
{
    return bind(params, schema).errors;
}

Plan diff(std::span<const ParamEntry> params, std::span<const params::Spec> schema,
          const LiveValues &live)
{
    Bound bound = bind(params, schema);
    Plan plan;
    if (!bound.errors.empty()) {
        plan.errors = std::move(bound.errors);
        return plan;
    }
    plan.entries.reserve(bound.decisions.size());
    for (const auto &[name, decision] : bound.decisions) {
        PlanEntry entry;
        entry.name = decision.spec->name;
        entry.desired = decision.desired;
        entry.pattern = decision.entry->pattern;
        entry.source = decision.entry->location;
        const auto found = live.find(name);
        entry.liveKnown = found != live.end();
        if (entry.liveKnown) {
            entry.live = canonicalLive(*decision.spec, found->second);
        }
        entry.changed = !entry.liveKnown || entry.live != entry.desired;
        plan.entries.push_back(std::move(entry));
    }
    return plan;
}

} // namespace lutra::ctld::profiles
