#pragma once
// A tuning profile as written: name, description, parents, which nodes it is for, and its
// parameter assignments in the order they were written.

#include "ctld/profiles/diagnostic.h"
#include "ctld/profiles/node_pattern.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld::profiles {

using Labels = std::map<std::string, std::string, std::less<>>;

// One `pattern: value` line of `params`.
struct ParamEntry {
    std::string pattern;    // a parameter name or an lctl glob: "osc.*.max_pages_per_rpc"
    std::string value;      // the YAML scalar as written: "16M", "on", "2048"
    Location location;      // of the pattern
    Location valueLocation; // of the value
};

struct ParentRef {
    std::string name;
    Location location; // of this name in `extends`
};

// `match`: a node qualifies when its name matches one of `nodes` (or `nodes` is absent) and it
// carries every label of `labels` with exactly that value.
struct Match {
    std::vector<NodePattern> nodes;
    Labels labels;
    Location location;

    bool matches(std::string_view nodeName, const Labels &nodeLabels) const;
};

struct Profile {
    std::string name;
    std::string description;
    std::string source; // file path or "profile:<name>"
    Location location;  // of the name
    std::vector<ParentRef> extends;
    std::optional<Match> match; // absent: every node
    std::vector<ParamEntry> params;

    bool matches(std::string_view nodeName, const Labels &nodeLabels) const
    {
        return !match || match->matches(nodeName, nodeLabels);
    }
};

} // namespace lutra::ctld::profiles
