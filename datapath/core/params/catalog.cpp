#include "core/params/catalog.h"

#include <string>

namespace lutra::params::catalog {

std::vector<CounterDef> readAheadStatDefs()
{
    std::vector<CounterDef> defs;
    defs.reserve(kReadAheadStatNames.size());
    for (const auto name : kReadAheadStatNames) {
        defs.push_back({std::string(name), "pages", false});
    }
    return defs;
}

std::vector<CounterDef> counterDefs(const CounterGroup &group)
{
    std::vector<CounterDef> defs;
    defs.reserve(group.counters.size());
    for (const CounterDefinition &counter : group.counters) {
        if (counter.gauge) {
            continue;
        }
        defs.push_back(
            {std::string(counter.name), std::string(counter.unit), counter.withMinMaxSum});
    }
    return defs;
}

std::string paramName(const Group &group, std::string_view instance, std::string_view leaf)
{
    std::string name;
    if (!group.prefix.empty()) {
        name += group.prefix;
        name += '.';
        name += instance;
        name += '.';
    }
    name += leaf;
    return name;
}

std::vector<Spec> specs(const Group &group, std::string_view instance)
{
    std::vector<Spec> out;
    out.reserve(group.definitions.size());
    for (const Definition &definition : group.definitions) {
        Spec spec;
        spec.name = paramName(group, instance, definition.leaf);
        spec.type = definition.type;
        spec.unit = definition.unit;
        spec.min = definition.min;
        spec.max = definition.max;
        if (definition.type == Type::string) {
            spec.defaultValue = std::string(definition.defaultText);
        } else {
            spec.defaultValue = definition.defaultValue;
        }
        spec.writable = definition.writable;
        spec.help = std::string(definition.help);
        for (const auto value : definition.enumValues) {
            spec.enumValues.emplace_back(value);
        }
        for (const auto &special : definition.specialValues) {
            spec.specialValues.push_back({std::string(special.word), std::string(special.help)});
        }
        out.push_back(std::move(spec));
    }
    return out;
}

std::vector<Spec> oscSpecs(std::string_view target)
{
    return specs(kOsc, target);
}

std::vector<Spec> lliteSpecs(std::string_view fs)
{
    std::vector<Spec> out;
    for (const Group *group : {&kPageCache, &kReadahead, &kLliteEngine}) {
        for (Spec &spec : specs(*group, fs)) {
            if (spec.writable) {
                out.push_back(std::move(spec));
            }
        }
    }
    return out;
}

std::vector<Spec> ldlmSpecs(std::string_view ns)
{
    return specs(kLockNamespace, ns);
}

std::vector<Spec> jobidSpecs()
{
    return specs(kJobIds, {});
}

} // namespace lutra::params::catalog
