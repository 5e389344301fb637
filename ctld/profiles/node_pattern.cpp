#include "ctld/profiles/node_pattern.h"

#include "core/params/glob.h"

#include <algorithm>
#include <charconv>

namespace lutra::ctld::profiles {

namespace {

Status patternError(std::string_view pattern, std::size_t offset, std::string_view what)
{
    std::string message = "bad node pattern '";
    message += pattern;
    message += "' at column ";
    message += std::to_string(offset + 1);
    message += ": ";
    message += what;
    return {Errc::invalid_argument, std::move(message)};
}

bool isDigit(char c) noexcept
{
    return c >= '0' && c <= '9';
}

bool isRangeList(std::string_view inside) noexcept
{
    return !inside.empty() && std::all_of(inside.begin(), inside.end(), [](char c) {
        return isDigit(c) || c == ',' || c == '-';
    });
}

constexpr std::size_t kMaxDigits = 18; // always fits in 64 bits

} // namespace

Result<NodePattern> NodePattern::compile(std::string_view pattern)
{
    if (pattern.empty()) {
        return Status(Errc::invalid_argument, "empty node pattern");
    }
    if (pattern.size() > kMaxLength) {
        return Status(Errc::invalid_argument,
                      "node pattern longer than " + std::to_string(kMaxLength) + " characters");
    }
    NodePattern compiled;
    compiled.m_text = pattern;
    std::string glob;
    std::size_t i = 0;
    while (i < pattern.size()) {
        const char c = pattern[i];
        if (c == '\\') {
            if (i + 1 >= pattern.size()) {
                return patternError(pattern, i, "a backslash must be followed by a character");
            }
            glob.append(pattern.substr(i, 2));
            i += 2;
            continue;
        }
        if (c == ']') {
            return patternError(pattern, i, "']' without '['");
        }
        if (c != '[') {
            glob += c;
            ++i;
            continue;
        }
        const std::size_t end = params::bracketEnd(pattern, i);
        if (end == std::string_view::npos) {
            return patternError(pattern, i, "'[' is not closed");
        }
        const std::string_view inside = pattern.substr(i + 1, end - i - 2);
        if (!isRangeList(inside)) {
            glob.append(pattern.substr(i, end - i)); // a glob character class
            i = end;
            continue;
        }
        Segment numeric;
        std::size_t itemStart = i + 1;
        for (std::size_t pos = 0; pos <= inside.size();) {
            const std::size_t comma = std::min(inside.find(',', pos), inside.size());
            const std::string_view item = inside.substr(pos, comma - pos);
            const std::size_t dash = item.find('-');
            const std::string_view lowText = item.substr(0, dash);
            const std::string_view highText =
                dash == std::string_view::npos ? lowText : item.substr(dash + 1);
            if (lowText.empty() || highText.empty() ||
                highText.find('-') != std::string_view::npos) {
                return patternError(pattern, itemStart + pos,
                                    "a hostlist range is N or N-M, separated by commas");
            }
            if (lowText.size() > kMaxDigits || highText.size() > kMaxDigits) {
                return patternError(pattern, itemStart + pos, "number too large");
            }
            Range range;
            std::from_chars(lowText.data(), lowText.data() + lowText.size(), range.low);
            std::from_chars(highText.data(), highText.data() + highText.size(), range.high);
            range.width = lowText.size();
            if (range.low > range.high) {
                return patternError(pattern, itemStart + pos,
                                    "range " + std::string(item) + " is empty (low > high)");
            }
            numeric.ranges.push_back(range);
            pos = comma + 1;
        }
        if (!glob.empty()) {
            compiled.m_segments.push_back({std::move(glob), {}});
            glob.clear();
        }
        compiled.m_segments.push_back(std::move(numeric));
        i = end;
    }
    if (!glob.empty() || compiled.m_segments.empty()) {
        compiled.m_segments.push_back({std::move(glob), {}});
    }
    return compiled;
}

bool NodePattern::numberMatches(const Segment &segment, std::string_view digits) const noexcept
{
    if (digits.empty() || digits.size() > kMaxDigits) {
        return false;
    }
    std::uint64_t number = 0;
    std::from_chars(digits.data(), digits.data() + digits.size(), number);
    const std::size_t natural = std::to_string(number).size();
    return std::any_of(segment.ranges.begin(), segment.ranges.end(), [&](const Range &range) {
        // As written with the range's zero padding: node[01-64] is node07, not node7 or node007.
        return number >= range.low && number <= range.high &&
               digits.size() == std::max(range.width, natural);
    });
}

bool NodePattern::matches(std::string_view name) const
{
    if (m_segments.size() == 1 && m_segments.front().ranges.empty()) {
        return params::matchComponent(m_segments.front().glob, name);
    }
    // reachable[s][p]: segments [0, s) can consume exactly name[0, p). Names are short (a host
    // name is at most 253 characters), so this table stays small and matching polynomial.
    const std::size_t width = name.size() + 1;
    std::vector<char> reachable((m_segments.size() + 1) * width, 0);
    reachable[0] = 1;
    for (std::size_t s = 0; s < m_segments.size(); ++s) {
        const Segment &segment = m_segments[s];
        for (std::size_t from = 0; from <= name.size(); ++from) {
            if (!reachable[s * width + from]) {
                continue;
            }
            for (std::size_t to = from; to <= name.size(); ++to) {
                const std::string_view piece = name.substr(from, to - from);
                const bool ok = segment.ranges.empty() ? params::matchComponent(segment.glob, piece)
                                                       : numberMatches(segment, piece);
                if (ok) {
                    reachable[(s + 1) * width + to] = 1;
                }
                if (!segment.ranges.empty() && to < name.size() && !isDigit(name[to])) {
                    break; // a number cannot reach past a non-digit
                }
            }
        }
    }
    return reachable[m_segments.size() * width + name.size()] != 0;
}

std::vector<std::pair<std::string, std::size_t>> splitHostlist(std::string_view text)
{
    std::vector<std::pair<std::string, std::size_t>> items;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i + 1 < text.size() && text[i] == '\\') {
            ++i; // the escaped character is never a separator
            continue;
        }
        if (i == text.size() || (text[i] == ',' && depth == 0)) {
            std::string_view item = text.substr(start, i - start);
            std::size_t offset = start;
            while (!item.empty() && item.front() == ' ') {
                item.remove_prefix(1);
                ++offset;
            }
            while (!item.empty() && item.back() == ' ') {
                item.remove_suffix(1);
            }
            items.emplace_back(std::string(item), offset);
            start = i + 1;
        } else if (text[i] == '[') {
            ++depth;
        } else if (text[i] == ']' && depth > 0) {
            --depth;
        }
    }
    return items;
}

} // namespace lutra::ctld::profiles
