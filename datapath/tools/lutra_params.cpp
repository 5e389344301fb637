// lutra-params: the parameter catalogue every datapath process publishes, explorable offline.
// It builds a registry holding the catalogue's parameters at their defaults (no engine behind
// them) so admins and scripts can list names, see types and ranges, and try lctl-style values
// against the real parser and the real atomic batch set.

#include "core/params/catalog.h"
#include "core/params/registry.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <deque>
#include <iostream>
#include <nlohmann/json.hpp>

namespace {

using namespace lutra;
using namespace lutra::params;
using nlohmann::json;

// Holds the values of a registry that has no live engine behind it.
class Catalogue {
public:
    Catalogue(const std::vector<std::string> &targets, const std::vector<std::string> &filesystems)
        : m_readAheadStats(catalog::readAheadStatDefs())
    {
        for (const auto &target : targets) {
            addAll(catalog::oscSpecs(target));
            addAll(catalog::ldlmSpecs(target));
        }
        for (const auto &fs : filesystems) {
            addAll(catalog::lliteSpecs(fs));
            check(m_registry.addStats("llite." + fs + ".read_ahead_stats",
                                      std::string(catalog::kReadAheadStatsHelp), m_readAheadStats));
        }
        addAll(catalog::jobidSpecs());
    }

    Registry &registry() { return m_registry; }

private:
    void addAll(std::vector<Spec> specs)
    {
        for (auto &spec : specs) {
            Value &cell = m_values.emplace_back(spec.defaultValue);
            Binding binding;
            binding.read = [&cell] { return cell; };
            if (spec.writable) {
                binding.apply = [&cell](const Value &value) {
                    cell = value;
                    return Status{};
                };
            }
            if (!spec.specialValues.empty()) {
                binding.action = [](std::string_view) { return Status{}; };
            }
            check(m_registry.add(std::move(spec), std::move(binding)));
        }
    }

    static void check(const Status &status)
    {
        if (!status) {
            std::fprintf(stderr, "lutra-params: internal error: %s\n", status.toString().c_str());
            std::exit(70);
        }
    }

    Registry m_registry;
    std::deque<Value> m_values; // stable addresses for the bindings
    CounterBlock m_readAheadStats;
};

json specToJson(const Spec &spec)
{
    json out{{"name", spec.name},           {"type", typeName(spec.type)},
             {"unit", unitName(spec.unit)}, {"writable", spec.writable},
             {"help", spec.help},           {"allowed", describeAllowed(spec)}};
    if (spec.type == Type::integer || spec.type == Type::size || spec.type == Type::duration) {
        out["min"] = spec.min;
        out["max"] = spec.max;
    }
    if (spec.type != Type::counters) {
        out["default"] = formatValue(spec, spec.defaultValue);
    }
    if (!spec.enumValues.empty()) {
        out["choices"] = spec.enumValues;
    }
    for (const auto &special : spec.specialValues) {
        out["special"][special.word] = special.help;
    }
    return out;
}

int listCommand(Registry &registry, const std::string &pattern, bool asJson)
{
    auto specs = registry.list(pattern, true);
    if (!specs) {
        std::fprintf(stderr, "error: %s\n", specs.status().message().c_str());
        return 1;
    }
    if (asJson) {
        json out = json::array();
        for (const auto &spec : *specs) {
            out.push_back(specToJson(spec));
        }
        std::cout << out.dump(2) << '\n';
        return 0;
    }
    for (const auto &spec : *specs) {
        const std::string access = spec.writable ? "rw" : "ro";
        std::string shape(typeName(spec.type));
        if (spec.unit != Unit::none) {
            shape += " [" + std::string(unitName(spec.unit)) + "]";
        }
        std::printf("%-48s %s %-16s %s\n", spec.name.c_str(), access.c_str(), shape.c_str(),
                    spec.help.c_str());
        if (spec.writable) {
            std::printf("%-48s    allowed: %s\n", "", describeAllowed(spec).c_str());
        }
    }
    return 0;
}

int getCommand(Registry &registry, const std::vector<std::string> &patterns, bool valuesOnly,
               bool asJson)
{
    json out = json::object();
    int rc = 0;
    for (const auto &pattern : patterns) {
        auto readings = registry.get(pattern);
        if (!readings) {
            std::fprintf(stderr, "error: %s\n", readings.status().message().c_str());
            rc = 1;
            continue;
        }
        for (const auto &reading : *readings) {
            if (asJson) {
                out[reading.name] = reading.value;
                continue;
            }
            const bool multiLine = reading.value.find('\n') != std::string::npos;
            if (valuesOnly) {
                std::cout << reading.value << (multiLine ? "" : "\n");
            } else {
                std::cout << reading.name << '=' << (multiLine ? "\n" : "") << reading.value
                          << (multiLine ? "" : "\n");
            }
        }
    }
    if (asJson) {
        std::cout << out.dump(2) << '\n';
    }
    return rc;
}

int setCommand(Registry &registry, const std::vector<std::string> &assignments, bool asJson)
{
    std::vector<Assignment> batch;
    for (const auto &text : assignments) {
        const auto eq = text.find('=');
        if (eq == std::string::npos || eq == 0) {
            std::fprintf(stderr, "error: '%s' is not NAME=VALUE\n", text.c_str());
            return 2;
        }
        batch.push_back({text.substr(0, eq), text.substr(eq + 1)});
    }
    const BatchResult result = registry.set(batch, "lutra-params");
    if (asJson) {
        json out{{"ok", result.status.ok()}, {"errors", json::array()}, {"results", json::array()}};
        for (const auto &error : result.errors) {
            out["errors"].push_back(
                {{"code", errcName(error.code())}, {"message", error.message()}});
        }
        for (const auto &r : result.results) {
            out["results"].push_back({{"name", r.name},
                                      {"old", r.oldValue},
                                      {"requested", r.requested},
                                      {"read_back", r.readBack},
                                      {"clamped", r.clamped},
                                      {"rolled_back", r.rolledBack},
                                      {"status", r.status.toString()}});
        }
        std::cout << out.dump(2) << '\n';
        return result.status.ok() ? 0 : 1;
    }
    for (const auto &error : result.errors) {
        std::fprintf(stderr, "error: %s\n", error.message().c_str());
    }
    if (!result.status.ok()) {
        std::fprintf(stderr, "nothing changed\n");
        return 1;
    }
    for (const auto &r : result.results) {
        std::printf("%s: %s -> %s%s\n", r.name.c_str(), r.oldValue.c_str(), r.requested.c_str(),
                    r.clamped ? (" (kept " + r.readBack + ": clamped)").c_str() : "");
    }
    return 0;
}

std::vector<std::string> splitList(const std::string &text)
{
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto end = comma == std::string::npos ? text.size() : comma;
        if (end > start) {
            out.push_back(text.substr(start, end - start));
        }
        start = end + 1;
    }
    return out;
}

bool validInstances(const char *option, const std::vector<std::string> &names)
{
    for (const auto &name : names) {
        if (!isValidName(name) || name.find('.') != std::string::npos) {
            std::fprintf(stderr,
                         "error: %s: '%s' is not a valid instance name (letters, digits, "
                         "'_' and '-')\n",
                         option, name.c_str());
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"lutra-params: list, get and try setting the parameters every lutra datapath "
                 "process publishes (catalogue at defaults, no engine behind it)"};
    app.require_subcommand(1);
    std::string targets = "ost0,ost1";
    std::string filesystems = "lutra";
    bool asJson = false;
    app.add_option("--targets", targets, "comma-separated object targets to instantiate")
        ->capture_default_str();
    app.add_option("--fs", filesystems, "comma-separated file system names to instantiate")
        ->capture_default_str();
    app.add_flag("--json", asJson, "print JSON for scripts");

    auto *list = app.add_subcommand("list", "list parameters with type, range and help");
    std::string listPattern = "*";
    list->add_option("pattern", listPattern, "glob or prefix, e.g. 'osc.*' or osc.ost0");

    auto *get = app.add_subcommand("get", "print values, as lctl get_param does");
    std::vector<std::string> getPatterns;
    bool valuesOnly = false;
    get->add_option("pattern", getPatterns, "names or globs, e.g. 'osc.*.max_pages_per_rpc'")
        ->required();
    get->add_flag("-n", valuesOnly, "print values only");

    auto *set = app.add_subcommand("set", "validate and apply NAME=VALUE assignments atomically");
    std::vector<std::string> assignments;
    set->add_option("assignment", assignments, "e.g. 'osc.*.max_pages_per_rpc=16M'")->required();

    CLI11_PARSE(app, argc, argv);

    const auto targetList = splitList(targets);
    const auto fsList = splitList(filesystems);
    if (!validInstances("--targets", targetList) || !validInstances("--fs", fsList)) {
        return 2;
    }
    Catalogue catalogue(targetList, fsList);
    if (*list) {
        return listCommand(catalogue.registry(), listPattern, asJson);
    }
    if (*get) {
        return getCommand(catalogue.registry(), getPatterns, valuesOnly, asJson);
    }
    return setCommand(catalogue.registry(), assignments, asJson);
}
