#pragma once
// A profile's parameters against the schema of a node's live datapath processes: validation,
// and the plan (diff against live values) that dry-run, apply and verify are built on.

#include "core/params/registry.h"
#include "core/params/spec.h"
#include "ctld/profiles/diagnostic.h"
#include "ctld/profiles/profile.h"

#include <map>
#include <span>
#include <string>
#include <vector>

namespace lutra::ctld::profiles {

// Live values by parameter name, in canonical text (what get_param prints).
using LiveValues = std::map<std::string, std::string, std::less<>>;

// One parameter a profile sets on a node.
struct PlanEntry {
    std::string name;
    std::string live;      // canonical live value; "" when liveKnown is false
    std::string desired;   // canonical value the profile asks for
    bool liveKnown = true; // false when no live value was given for this parameter
    bool changed = false;  // desired differs from live (canonical forms compared): drift
    std::string pattern;   // the entry that decided the value (the last one matching)
    Location source;       // where that entry was written
};

struct Plan {
    std::vector<PlanEntry> entries; // by parameter name; empty when there are errors
    Diagnostics errors;

    bool ok() const noexcept { return errors.empty(); }
    std::size_t changedCount() const noexcept;
    // The changed entries as one batch (name = canonical desired value), ready for an atomic set.
    std::vector<params::Assignment> changes() const;
};

// Checks every entry against the schema, as the registry's batch set would:
//  - the pattern compiles and matches at least one parameter (else "unknown parameter", with
//    the closest name in the pattern's shape);
//  - every parameter it matches is writable;
//  - the value parses for every parameter it matches (the registry's own parser and messages);
//  - the value is a state, not an action: `lru_size=clear` is refused in a profile.
// Every problem is returned, each at the entry's (or its value's) location.
Diagnostics validateParams(std::span<const ParamEntry> params,
                           std::span<const params::Spec> schema);

// The per-parameter plan for a node: for each parameter some entry matches, the value of the
// last such entry (later entries override earlier ones, as in a batch set), compared with the
// live value in canonical form (16M and 4096 pages are the same max_pages_per_rpc).
Plan diff(std::span<const ParamEntry> params, std::span<const params::Spec> schema,
          const LiveValues &live);

} // namespace lutra::ctld::profiles
