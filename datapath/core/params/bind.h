#pragma once
// Binding a catalog group to a component as one table: a row per leaf. bindGroup checks the table
// against the group before registering anything, so a spec without a binding, or a binding
// without a spec, fails at startup (and in test_param_bind) instead of being skipped silently.

#include <lutra/status.h>

#include "core/params/catalog.h"
#include "core/params/registry.h"

#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace lutra::params {

struct BindRow {
    std::string_view leaf;
    Binding binding;
    // Changes the catalog's spec for this instance before it is registered, when the live
    // component knows better (Osc: max_pages_per_rpc capped at the negotiated bulk size).
    std::function<void(Spec &)> adjust;
};

// Ok, or one error naming the group and every spec without a row, row without a spec and leaf
// bound twice.
Status checkBindTable(const catalog::Group &group, std::string_view instance,
                      std::span<const BindRow> rows);

// Registers every spec of `group`'s `instance` into `params` with its row. Checks the table
// first: when it fails, nothing is registered.
Status bindGroup(ParamGroup &params, const catalog::Group &group, std::string_view instance,
                 std::vector<BindRow> rows);

} // namespace lutra::params
