#include "core/params/bind.h"

#include <algorithm>
#include <string>

namespace lutra::params {

namespace {

const BindRow *findRow(std::span<const BindRow> rows, std::string_view leaf)
{
    const auto found = std::ranges::find(rows, leaf, &BindRow::leaf);
    return found == rows.end() ? nullptr : &*found;
}

bool inGroup(const catalog::Group &group, std::string_view leaf)
{
    return std::ranges::find(group.definitions, leaf, &catalog::Definition::leaf) !=
           group.definitions.end();
}

} // namespace

Status checkBindTable(const catalog::Group &group, std::string_view instance,
                      std::span<const BindRow> rows)
{
    std::vector<std::string> problems;
    for (const catalog::Definition &definition : group.definitions) {
        if (findRow(rows, definition.leaf) == nullptr) {
            problems.push_back(catalog::paramName(group, instance, definition.leaf) +
                               ": catalog spec has no binding");
        }
    }
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::string name = catalog::paramName(group, instance, rows[i].leaf);
        if (!inGroup(group, rows[i].leaf)) {
            problems.push_back(name + ": binding names no catalog spec");
        } else if (findRow(rows.first(i), rows[i].leaf) != nullptr) {
            problems.push_back(name + ": bound twice");
        }
    }
    if (problems.empty()) {
        return {};
    }
    std::string message = "parameter group '" + std::string(group.name) + "'";
    if (!instance.empty()) {
        message += " of " + std::string(instance);
    }
    message += " does not match its catalog: ";
    for (std::size_t i = 0; i < problems.size(); ++i) {
        message += (i == 0 ? "" : "; ") + problems[i];
    }
    return {Errc::internal, message};
}

Status bindGroup(ParamGroup &params, const catalog::Group &group, std::string_view instance,
                 std::vector<BindRow> rows)
{
    if (Status status = checkBindTable(group, instance, rows); !status.ok()) {
        return status;
    }
    for (Spec &spec : catalog::specs(group, instance)) {
        // checkBindTable found exactly one row for every spec.
        BindRow &row = *std::ranges::find(rows, leafName(spec.name), &BindRow::leaf);
        if (row.adjust) {
            row.adjust(spec);
        }
        if (Status status = params.add(std::move(spec), std::move(row.binding)); !status.ok()) {
            return status;
        }
    }
    return {};
}

} // namespace lutra::params
