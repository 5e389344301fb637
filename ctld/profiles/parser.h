#pragma once
// Reading one profile from YAML text. Every problem is reported, each with file, line and
// column, and nothing is thrown.

#include "ctld/profiles/diagnostic.h"
#include "ctld/profiles/profile.h"

#include <string_view>

namespace lutra::ctld::profiles {

inline constexpr std::size_t kMaxProfileBytes = std::size_t{1} << 20;
inline constexpr std::size_t kMaxProfileNameLength = 64;

struct ParseResult {
    Profile profile;    // complete only when errors is empty
    Diagnostics errors; // every problem found, in file order

    bool ok() const noexcept { return errors.empty(); }
};

// Parses `text`; `source` names it in diagnostics (a file path, or "profile:<name>" for a
// profile stored by ctld). Checks the structure only: parameter names and values are checked
// against a node's schema by validateParams (schema_check.h).
ParseResult parseProfile(std::string_view text, std::string_view source);

// Profile names: letters, digits, '.', '_' and '-', at most kMaxProfileNameLength characters,
// not starting with '.' or '-'.
bool isValidProfileName(std::string_view name) noexcept;

// User text for a message: single-quoted, control characters escaped, long text shortened.
std::string inQuotes(std::string_view text);

} // namespace lutra::ctld::profiles
