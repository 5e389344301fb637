#pragma once
// "did you mean …?" for misspelled keys and parameter names.

#include "core/params/spec.h"

#include <span>
#include <string>
#include <string_view>

namespace lutra::ctld::profiles {

// Levenshtein distance (insert, delete, substitute one character).
std::size_t editDistance(std::string_view a, std::string_view b);

// The word closest to `word` within a small distance, or "" when none is close.
std::string closestWord(std::string_view word, std::span<const std::string_view> candidates);

// The closest parameter for a pattern that matched nothing, written in the pattern's own shape:
// for "osc.*.max_pages_per_rpcs" it is "osc.*.max_pages_per_rpc" (the wildcard kept), not one
// instance's name. "" when nothing is close.
std::string closestParameter(std::string_view pattern, std::span<const params::Spec> schema);

} // namespace lutra::ctld::profiles
