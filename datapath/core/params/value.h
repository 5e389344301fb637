#pragma once
// Parsing and printing parameter values the way lctl does.

#include <lutra/status.h>

#include "core/params/spec.h"

#include <string>
#include <string_view>

namespace lutra::params {

// A value as written by an admin, checked against its Spec.
struct ParsedValue {
    Value value;         // meaningful when special is empty
    std::string special; // the special word ("clear") when one was written

    bool isSpecial() const noexcept { return !special.empty(); }
};

// Parses `text` for `spec`:
//  - sizes take binary K M G T P suffixes and fractions (1.5G); without a suffix the number is in
//    the parameter's base unit (MiB for *_mb, pages for max_pages_per_rpc, else bytes), with one
//    it is converted exactly (max_pages_per_rpc=16M is 4096 pages);
//  - durations take `s` and `ms`; booleans 0/1/on/off (also yes/no/true/false);
//  - enumerations take one of their names; strings any printable text up to 255 characters;
//  - counter blocks accept only their special values.
// Errors name the parameter, the value, and what is allowed; range is checked here too.
Result<ParsedValue> parseValue(const Spec &spec, std::string_view text);

// The canonical text of a value ("4096", "1", "crc32c"): what get_param prints and what
// parseValue accepts back.
std::string formatValue(const Spec &spec, const Value &value);

// What the parameter accepts, for errors and help: "1..4096 pages, or a size with a K/M/G/T/P
// suffix (converted to pages)".
std::string describeAllowed(const Spec &spec);

} // namespace lutra::params
