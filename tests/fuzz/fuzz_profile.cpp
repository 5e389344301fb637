// Fuzzes the profile parser and everything a parsed profile goes through: validation against a
// node's schema, the diff against live values, inheritance and node matching. Besides not
// crashing, every diagnostic must point into the input (a line and column >= 1, the source it
// was given), because an error an admin cannot locate is useless.
#include "core/params/catalog.h"
#include "core/params/value.h"
#include "ctld/profiles/parser.h"
#include "ctld/profiles/profile_set.h"
#include "ctld/profiles/schema_check.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

using namespace lutra::ctld::profiles;

const std::vector<lutra::params::Spec> &schema()
{
    static const auto all = [] {
        using namespace lutra::params;
        std::vector<Spec> list = catalog::oscSpecs("ost0");
        for (auto &spec : catalog::lliteSpecs("lutra")) {
            list.push_back(std::move(spec));
        }
        for (auto &spec : catalog::ldlmSpecs("ost0")) {
            list.push_back(std::move(spec));
        }
        for (auto &spec : catalog::jobidSpecs()) {
            list.push_back(std::move(spec));
        }
        return list;
    }();
    return all;
}

const LiveValues &live()
{
    static const auto values = [] {
        LiveValues map;
        for (const auto &spec : schema()) {
            map[spec.name] = lutra::params::formatValue(spec, spec.defaultValue);
        }
        return map;
    }();
    return values;
}

void checkLocated(const Diagnostics &diagnostics)
{
    for (const auto &diagnostic : diagnostics) {
        const auto &where = diagnostic.location;
        const bool wholeFile = where.line == 0 && where.column == 0;
        if (where.file != "fuzz.yaml" || (!wholeFile && (where.line < 1 || where.column < 1)) ||
            diagnostic.message.empty()) {
            std::abort();
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    ParseResult parsed = parseProfile(text, "fuzz.yaml");
    checkLocated(parsed.errors);
    if (!parsed.ok()) {
        return 0;
    }
    checkLocated(validateParams(parsed.profile.params, schema()));
    const Plan plan = diff(parsed.profile.params, schema(), live());
    checkLocated(plan.errors);
    for (const auto &entry : plan.entries) {
        if (entry.changed != (entry.live != entry.desired)) {
            std::abort(); // every live value is known here
        }
    }
    (void)parsed.profile.matches("node042", {{"role", "compute"}});

    // Inheritance from itself and from a parent of the same text under another name.
    ProfileSet set;
    const std::string name = parsed.profile.name;
    checkLocated(set.add(std::move(parsed.profile)));
    checkLocated(set.checkExtends());
    const Resolved resolved = set.resolve(name);
    checkLocated(resolved.errors);
    return 0;
}
