// Fuzzes the glob compiler/matcher and the value parser. Input: a pattern, '\n', a value.
// Besides not crashing, it checks that any value that parses prints back to text that parses
// to the same value (the round trip get_param | set_param relies on).
#include "core/params/catalog.h"
#include "core/params/glob.h"
#include "core/params/value.h"

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace {

const std::vector<lutra::params::Spec> &specs()
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
        Spec negative;
        negative.name = "test.signed";
        negative.min = -1000;
        negative.max = 1000;
        list.push_back(negative);
        return list;
    }();
    return all;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const auto cut = input.find('\n');
    const std::string_view pattern = input.substr(0, cut);
    const std::string_view value = cut == std::string_view::npos ? "" : input.substr(cut + 1);

    if (auto glob = lutra::params::Glob::compile(pattern)) {
        for (const auto &spec : specs()) {
            (void)glob->matches(spec.name);
            (void)glob->matchesLeadingComponents(spec.name);
        }
        (void)glob->matches(value);
    }
    for (const auto &spec : specs()) {
        auto parsed = lutra::params::parseValue(spec, value);
        if (!parsed || parsed->isSpecial()) {
            continue;
        }
        const std::string text = lutra::params::formatValue(spec, parsed->value);
        auto again = lutra::params::parseValue(spec, text);
        if (!again || again->value != parsed->value) {
            std::abort();
        }
    }
    return 0;
}
