#include "core/params/glob.h"

namespace lutra::params {

namespace {

Status patternError(std::string_view pattern, std::size_t column, std::string_view what)
{
    std::string message = "bad pattern '";
    message += pattern;
    message += "' at column ";
    message += std::to_string(column + 1);
    message += ": ";
    message += what;
    return {Errc::invalid_argument, std::move(message)};
}

// Does bracket expression pattern[open, end) accept c?
bool bracketAccepts(std::string_view pattern, std::size_t open, std::size_t end, char c) noexcept
{
    std::size_t i = open + 1;
    const bool negate = pattern[i] == '!' || pattern[i] == '^';
    if (negate) {
        ++i;
    }
    const std::size_t close = end - 1; // the closing ']'
    bool matched = false;
    while (i < close) {
        if (i + 2 < close && pattern[i + 1] == '-') {
            matched = matched || (c >= pattern[i] && c <= pattern[i + 2]);
            i += 3;
        } else {
            matched = matched || c == pattern[i];
            ++i;
        }
    }
    return matched != negate;
}

struct Expander {
    std::string_view original;
    std::vector<std::string> out;
    Status status;

    // Expands the first top-level {..} of `pattern` and recurses on each alternative.
    // Columns in messages are exact for the first brace; later ones count within the partly
    // expanded text.
    bool expand(const std::string &pattern)
    {
        for (std::size_t i = 0; i < pattern.size(); ++i) {
            const char c = pattern[i];
            if (c == '\\') {
                ++i;
                continue;
            }
            if (c == '[') {
                const std::size_t end = bracketEnd(pattern, i);
                if (end == std::string_view::npos) {
                    return fail(i, "'[' is never closed");
                }
                i = end - 1;
                continue;
            }
            if (c == '}') {
                return fail(i, "'}' without a matching '{'");
            }
            if (c != '{') {
                continue;
            }
            // Find the matching '}' and the top-level commas.
            std::vector<std::size_t> cuts{i};
            int depth = 0;
            std::size_t j = i;
            for (; j < pattern.size(); ++j) {
                const char d = pattern[j];
                if (d == '\\') {
                    ++j;
                } else if (d == '[') {
                    const std::size_t end = bracketEnd(pattern, j);
                    if (end == std::string_view::npos) {
                        return fail(j, "'[' is never closed");
                    }
                    j = end - 1;
                } else if (d == '{') {
                    ++depth;
                } else if (d == '}') {
                    if (--depth == 0) {
                        break;
                    }
                } else if (d == ',' && depth == 1) {
                    cuts.push_back(j);
                }
            }
            if (j >= pattern.size()) {
                return fail(i, "'{' is never closed");
            }
            cuts.push_back(j);
            const std::string prefix = pattern.substr(0, i);
            const std::string suffix = pattern.substr(j + 1);
            for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
                const std::string alternative =
                    pattern.substr(cuts[k] + 1, cuts[k + 1] - cuts[k] - 1);
                if (!expand(prefix + alternative + suffix)) {
                    return false;
                }
            }
            return true;
        }
        if (out.size() >= Glob::kMaxAlternatives) {
            status = Status(Errc::invalid_argument,
                            "bad pattern '" + std::string(original) + "': more than " +
                                std::to_string(Glob::kMaxAlternatives) + " {..} alternatives");
            return false;
        }
        out.push_back(pattern);
        return true;
    }

    bool fail(std::size_t column, std::string_view what)
    {
        status = patternError(original, column, what);
        return false;
    }
};

// Splits at dots outside brackets and escapes.
std::vector<std::string> splitComponents(const std::string &pattern)
{
    std::vector<std::string> components(1);
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c == '\\' && i + 1 < pattern.size()) {
            components.back() += pattern.substr(i, 2);
            ++i;
        } else if (c == '[') {
            const std::size_t end = bracketEnd(pattern, i);
            components.back() += pattern.substr(i, end - i);
            i = end - 1;
        } else if (c == '.') {
            components.emplace_back();
        } else {
            components.back() += c;
        }
    }
    return components;
}

} // namespace

bool matchComponent(std::string_view pattern, std::string_view text) noexcept
{
    std::size_t p = 0;
    std::size_t t = 0;
    std::size_t starP = std::string_view::npos;
    std::size_t starT = 0;
    while (t < text.size()) {
        if (p < pattern.size()) {
            const char c = pattern[p];
            if (c == '*') {
                starP = p++;
                starT = t;
                continue;
            }
            if (c == '?') {
                ++p;
                ++t;
                continue;
            }
            if (c == '[') {
                const std::size_t end = bracketEnd(pattern, p);
                if (end != std::string_view::npos && bracketAccepts(pattern, p, end, text[t])) {
                    p = end;
                    ++t;
                    continue;
                }
            } else {
                const bool escaped = c == '\\' && p + 1 < pattern.size();
                const char literal = escaped ? pattern[p + 1] : c;
                if (literal == text[t]) {
                    p += escaped ? 2 : 1;
                    ++t;
                    continue;
                }
            }
        }
        // Mismatch: let the last star swallow one more character, if there was one.
        if (starP == std::string_view::npos) {
            return false;
        }
        p = starP + 1;
        t = ++starT;
    }
    while (p < pattern.size() && pattern[p] == '*') {
        ++p;
    }
    return p == pattern.size();
}

Result<Glob> Glob::compile(std::string_view pattern)
{
    if (pattern.empty()) {
        return Status(Errc::invalid_argument, "empty pattern");
    }
    if (pattern.size() > kMaxPatternLength) {
        return Status(Errc::invalid_argument,
                      "pattern longer than " + std::to_string(kMaxPatternLength) + " characters");
    }
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] == '\\' && ++i == pattern.size()) {
            return patternError(pattern, i - 1, "a trailing '\\' escapes nothing");
        }
    }
    Expander expander{pattern, {}, {}};
    if (!expander.expand(std::string(pattern))) {
        return expander.status;
    }
    Glob glob;
    glob.m_pattern = std::string(pattern);
    glob.m_hasWildcards = pattern.find_first_of("*?[{\\") != std::string_view::npos;
    for (const auto &expanded : expander.out) {
        auto components = splitComponents(expanded);
        for (const auto &component : components) {
            if (component.empty()) {
                return Status(Errc::invalid_argument,
                              "bad pattern '" + std::string(pattern) +
                                  "': empty component (two dots in a row, or a leading or "
                                  "trailing dot) in '" +
                                  expanded + "'");
            }
        }
        glob.m_alternatives.push_back(std::move(components));
    }
    return glob;
}

bool Glob::matchAlternative(const Components &pattern, std::string_view name,
                            bool allowLongerName) const noexcept
{
    std::size_t index = 0;
    while (index < pattern.size()) {
        const auto dot = name.find('.');
        const std::string_view component = name.substr(0, dot);
        if (!matchComponent(pattern[index], component)) {
            return false;
        }
        ++index;
        if (dot == std::string_view::npos) {
            return index == pattern.size();
        }
        name.remove_prefix(dot + 1);
    }
    return allowLongerName;
}

bool Glob::matches(std::string_view name) const noexcept
{
    for (const auto &alternative : m_alternatives) {
        if (matchAlternative(alternative, name, false)) {
            return true;
        }
    }
    return false;
}

bool Glob::matchesLeadingComponents(std::string_view name) const noexcept
{
    for (const auto &alternative : m_alternatives) {
        if (matchAlternative(alternative, name, true)) {
            return true;
        }
    }
    return false;
}

std::size_t bracketEnd(std::string_view pattern, std::size_t open) noexcept
{
    std::size_t i = open + 1;
    if (i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^')) {
        ++i;
    }
    if (i < pattern.size() && pattern[i] == ']') {
        ++i;
    }
    while (i < pattern.size() && pattern[i] != ']') {
        ++i;
    }
    return i < pattern.size() ? i + 1 : std::string_view::npos;
}

} // namespace lutra::params
