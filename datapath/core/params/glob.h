#pragma once
// lctl-style glob patterns over dotted parameter names.

#include <lutra/status.h>

#include <string>
#include <string_view>
#include <vector>

namespace lutra::params {

// A compiled pattern. `*`, `?` and `[..]` (with `!`/`^` negation and ranges) match within one
// dotted component, as lctl's globbing over /proc paths does: `osc.*.max_pages_per_rpc` matches
// every target, `*` never crosses a dot. `{a,b}` alternatives may span components and nest.
// A backslash makes the next character literal.
class Glob {
public:
    static constexpr std::size_t kMaxPatternLength = 1024;
    static constexpr std::size_t kMaxAlternatives = 1024; // after brace expansion

    // Errors say what is wrong and at which column (1-based).
    static Result<Glob> compile(std::string_view pattern);

    // The whole dotted name matches.
    bool matches(std::string_view name) const noexcept;
    // The pattern matches the leading components of name ("osc.ost0" covers
    // "osc.ost0.max_pages_per_rpc"): what recursive listing uses.
    bool matchesLeadingComponents(std::string_view name) const noexcept;

    const std::string &pattern() const noexcept { return m_pattern; }
    bool hasWildcards() const noexcept { return m_hasWildcards; }

private:
    using Components = std::vector<std::string>;
    bool matchAlternative(const Components &pattern, std::string_view name,
                          bool allowLongerName) const noexcept;

    std::string m_pattern;
    std::vector<Components> m_alternatives;
    bool m_hasWildcards = false;
};

// Matches one component (no dots involved) against one component pattern.
bool matchComponent(std::string_view pattern, std::string_view text) noexcept;

// Index just past the bracket expression that starts at `open` (pattern[open] == '['), or npos
// when it is not terminated. A ']' right after '[' or '[!' is a literal member.
std::size_t bracketEnd(std::string_view pattern, std::size_t open) noexcept;

} // namespace lutra::params
