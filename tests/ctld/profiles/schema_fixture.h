#pragma once
// The schema a node with two targets (ost0, ost1) and one mount (lutra) reports, built from the
// catalogue as the datapath processes build theirs.

#include "core/params/catalog.h"
#include "core/params/spec.h"

#include <vector>

inline std::vector<lutra::params::Spec> nodeSchema()
{
    using namespace lutra::params;
    std::vector<Spec> schema;
    const auto append = [&schema](std::vector<Spec> specs) {
        for (auto &spec : specs) {
            schema.push_back(std::move(spec));
        }
    };
    append(catalog::oscSpecs("ost0"));
    append(catalog::oscSpecs("ost1"));
    append(catalog::lliteSpecs("lutra"));
    append(catalog::ldlmSpecs("ost0"));
    append(catalog::ldlmSpecs("ost1"));
    append(catalog::jobidSpecs());
    // A counter block, as Registry::addStats describes one.
    Spec stats;
    stats.name = "llite.lutra.read_ahead_stats";
    stats.type = Type::counters;
    stats.defaultValue = std::string();
    stats.help = std::string(catalog::kReadAheadStatsHelp);
    stats.specialValues = {{"clear", "reset every counter of the block"}};
    schema.push_back(std::move(stats));
    return schema;
}
