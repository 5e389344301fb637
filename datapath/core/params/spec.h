#pragma once
// What a parameter is: its name, type, unit, range, default and help. Pure data, no binding.

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace lutra::params {

enum class Type : std::uint8_t { integer, size, boolean, enumeration, duration, string, counters };

// The unit a value is stored and shown in ("base unit"). Sizes and durations written with a
// suffix are converted into it exactly; a value that is not a whole number of base units is an
// error rather than a silent rounding.
enum class Unit : std::uint8_t { none, bytes, mib, pages, seconds, milliseconds };

inline constexpr std::int64_t kPageSize = 4096;
inline constexpr std::size_t kMaxStringLength = 255;

std::string_view typeName(Type type) noexcept;
std::string_view unitName(Unit unit) noexcept; // "pages", "MiB", "s", ... ("" for none)

// A typed value in its base unit. integer, size, duration, boolean (0/1) and enumeration (index
// into Spec::enumValues) are numbers; string values and rendered counter blocks are text.
using Value = std::variant<std::int64_t, std::string>;

// A word that triggers an action instead of storing a value (`lru_size=clear`).
struct SpecialValue {
    std::string word;
    std::string help;
};

struct Spec {
    std::string name; // dotted, with the instance: "osc.ost0.max_pages_per_rpc"
    Type type = Type::integer;
    Unit unit = Unit::none;
    std::int64_t min = 0;
    std::int64_t max = std::numeric_limits<std::int64_t>::max();
    Value defaultValue = std::int64_t{0};
    bool writable = true;
    std::string help;
    std::vector<std::string> enumValues;
    std::vector<SpecialValue> specialValues;
    // Counter blocks only: any other printable text is a command argument handed to the action
    // (Lustre's `job_stats=<job id>` forgets one job).
    bool textCommands = false;
};

// The last dotted component: "max_pages_per_rpc".
std::string_view leafName(std::string_view name) noexcept;

// Names are dot-separated components of [A-Za-z0-9_-]; checked when a parameter is registered.
bool isValidName(std::string_view name) noexcept;

} // namespace lutra::params
