#include "core/param_check.h"

#include "core/params/value.h"

#include <optional>

namespace lutra::console {

namespace {

// Unspecified has no registry counterpart: the caller gets an error rather than a guess.
std::optional<params::Type> registryType(ParamType type)
{
    switch (type) {
    case ParamType::integer: return params::Type::integer;
    case ParamType::size: return params::Type::size;
    case ParamType::boolean: return params::Type::boolean;
    case ParamType::enumeration: return params::Type::enumeration;
    case ParamType::duration: return params::Type::duration;
    case ParamType::string: return params::Type::string;
    case ParamType::counters: return params::Type::counters;
    case ParamType::unspecified: return std::nullopt;
    }
    return std::nullopt;
}

// The wire carries params::unitName's strings; matching them back keeps one spelling.
params::Unit registryUnit(const QString &unit)
{
    for (const auto candidate : {params::Unit::bytes, params::Unit::mib, params::Unit::pages,
                                 params::Unit::seconds, params::Unit::milliseconds}) {
        if (unit == QLatin1String(params::unitName(candidate))) {
            return candidate;
        }
    }
    return params::Unit::none;
}

} // namespace

params::Spec toRegistrySpec(const ParamSpec &spec)
{
    params::Spec out;
    out.name = spec.name.toStdString();
    out.type = registryType(spec.type).value_or(params::Type::string);
    out.unit = registryUnit(spec.unit);
    out.min = spec.min;
    out.max = spec.max;
    out.writable = spec.writable;
    out.help = spec.help.toStdString();
    out.textCommands = spec.textCommands;
    out.enumValues.reserve(static_cast<std::size_t>(spec.choices.size()));
    for (const QString &choice : spec.choices) {
        out.enumValues.push_back(choice.toStdString());
    }
    out.specialValues.reserve(static_cast<std::size_t>(spec.specialValues.size()));
    for (const SpecialValue &special : spec.specialValues) {
        out.specialValues.push_back({special.word.toStdString(), special.help.toStdString()});
    }
    return out;
}

ValueCheck checkValue(const ParamSpec &spec, const QString &text)
{
    ValueCheck check;
    const auto type = registryType(spec.type);
    if (!type) {
        check.error = spec.name + QStringLiteral(": unknown parameter type");
        return check;
    }
    const params::Spec registry = toRegistrySpec(spec);
    const auto parsed = params::parseValue(registry, text.toStdString());
    if (!parsed) {
        check.error = QString::fromStdString(parsed.status().message());
        return check;
    }
    check.ok = true;
    check.special = parsed->isSpecial();
    check.canonical = check.special
                          ? QString::fromStdString(parsed->special)
                          : QString::fromStdString(params::formatValue(registry, parsed->value));
    return check;
}

} // namespace lutra::console
