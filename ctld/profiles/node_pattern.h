#pragma once
// Which nodes a profile is for: node-name globs and Slurm-style hostlists.

#include <lutra/status.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld::profiles {

// One node pattern. `*`, `?` and `[abc]`/`[a-z]`/`[!x]` are globs as in the parameter names;
// a bracket holding only digits, commas and dashes is a hostlist range as in Slurm:
// `node[01-64]` matches node01 … node64 (the lower bound's width pads: node7 does not match),
// `gpu[1-4,8]` matches gpu1 … gpu4 and gpu8, `rack[1-2]n[01-16]` combines ranges.
class NodePattern {
public:
    static constexpr std::size_t kMaxLength = 1024;

    // Errors say what is wrong and at which column of the pattern (1-based).
    static Result<NodePattern> compile(std::string_view pattern);

    bool matches(std::string_view nodeName) const;
    const std::string &text() const noexcept { return m_text; }

private:
    struct Range {
        std::uint64_t low = 0;
        std::uint64_t high = 0;
        std::size_t width = 1; // digits of the lower bound as written: zero padding
    };
    // A piece of the pattern: glob text (matched with the parameter glob's component matcher)
    // or a set of numeric ranges.
    struct Segment {
        std::string glob;
        std::vector<Range> ranges; // non-empty: a numeric segment
    };

    bool numberMatches(const Segment &segment, std::string_view digits) const noexcept;

    std::string m_text;
    std::vector<Segment> m_segments;
};

// Splits a hostlist written as one string at the commas outside brackets:
// "node[01-04,08],login1" -> {"node[01-04,08]", "login1"}. Returns each item's offset too.
std::vector<std::pair<std::string, std::size_t>> splitHostlist(std::string_view text);

} // namespace lutra::ctld::profiles
