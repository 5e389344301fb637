#pragma once
// What a batch of assignments means against a schema: which parameters each assignment sets,
// with which canonical value, and everything wrong with it. Registry::set, ctld (against each
// instance's schema), ctld's profile checks and the console all plan with this one function, so
// they can never disagree about what a batch means.

#include <lutra/status.h>

#include "core/params/glob.h"
#include "core/params/spec.h"
#include "core/params/value.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace lutra::params {

struct Assignment {
    std::string pattern; // a name or a glob
    std::string value;   // as the admin wrote it
};

// One parameter a batch sets (or acts on).
struct PlannedValue {
    const Spec *spec = nullptr;
    std::size_t assignment = 0; // index in the batch of the assignment that decided it
    ParsedValue value;
    std::string requested; // canonical text of the value, or the special word

    bool isSpecial() const noexcept { return value.isSpecial(); }
};

enum class PlanProblem {
    bad_pattern, // the pattern does not compile
    no_match,    // the pattern matches no parameter
    read_only,   // a parameter it matches is not writable
    bad_value,   // the value does not parse (or is out of range) for a parameter it matches
};

struct PlanError {
    std::size_t assignment = 0;
    PlanProblem problem = PlanProblem::bad_value;
    const Spec *spec = nullptr; // the parameter, for read_only and bad_value
    Status status;              // the message the registry reports
};

struct BatchPlan {
    // In the order the parameters were first assigned. Per parameter at most one value (a later
    // assignment replaces an earlier one, as with lctl) and at most one action (`clear`): an
    // action is not a value, so it is kept beside one.
    std::vector<PlannedValue> items;
    std::vector<PlanError> errors; // in batch order; empty when the batch is valid
    std::vector<bool> matched;     // per assignment: it matched at least one parameter

    bool ok() const noexcept { return errors.empty(); }
};

// The schema's parameters a glob matches, in a stable order.
using SpecMatcher = std::function<std::vector<const Spec *>(const Glob &)>;

struct PlanOptions {
    // A pattern that matches nothing is not an error (ctld plans per instance and checks that
    // each pattern matched somewhere on the node); `matched` says which did.
    bool allowUnmatched = false;
};

// One value for one parameter: writable, parses, in range; canonical text.
Result<PlannedValue> planValue(const Spec &spec, std::string_view text);

// Plans `batch`: each pattern compiles and matches something, every parameter it matches is
// writable and takes the value. Every problem is listed, not only the first.
BatchPlan planBatch(std::span<const Assignment> batch, const SpecMatcher &match,
                    PlanOptions options = {});
// The same over a list of specs (a schema as ctld or the console holds it).
BatchPlan planBatch(std::span<const Assignment> batch, std::span<const Spec> schema,
                    PlanOptions options = {});

} // namespace lutra::params
