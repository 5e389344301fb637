#include "ctld/metrics/text_format.h"

#include <charconv>
#include <cmath>

namespace lutra::ctld::metrics {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD"; // U+FFFD

// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one (overlong
// forms, surrogates and code points above U+10FFFF are invalid too).
std::size_t validSequence(std::string_view text, std::size_t i) noexcept
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80) {
        return 1;
    }
    std::size_t length = 0;
    unsigned char low = 0x80;
    unsigned char high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        low = lead == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
        high = lead == 0xED ? 0x9F : 0xBF; // no surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        low = lead == 0xF0 ? 0x90 : 0x80;
        high = lead == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
    } else {
        return 0;
    }
    if (i + length > text.size() || byte(1) < low || byte(1) > high) {
        return 0;
    }
    for (std::size_t k = 2; k < length; ++k) {
        if (byte(k) < 0x80 || byte(k) > 0xBF) {
            return 0;
        }
    }
    return length;
}

std::string escape(std::string_view text, bool quotes)
{
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const char c = text[i];
        if (c == '\\') {
            out += "\\\\";
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '"' && quotes) {
            out += "\\\"";
        } else {
            const std::size_t length = validSequence(text, i);
            if (length == 0) {
                out += kReplacement;
                ++i;
                continue;
            }
            out.append(text.substr(i, length));
            i += length;
            continue;
        }
        ++i;
    }
    return out;
}

std::string_view typeName(MetricType type)
{
    switch (type) {
    case MetricType::counter: return "counter";
    case MetricType::gauge: return "gauge";
    case MetricType::histogram: return "histogram";
    case MetricType::summary: return "summary";
    }
    return "untyped";
}

} // namespace

std::string escapeLabelValue(std::string_view text)
{
    return escape(text, true);
}

std::string escapeHelp(std::string_view text)
{
    return escape(text, false);
}

std::string namePart(std::string_view text)
{
    std::string out(text);
    for (char &c : out) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        if (!ok) {
            c = '_';
        }
    }
    return out;
}

std::string formatNumber(double value)
{
    if (std::isnan(value)) {
        return "NaN";
    }
    if (std::isinf(value)) {
        return value > 0 ? "+Inf" : "-Inf";
    }
    // Whole numbers that a double holds exactly print as integers ("1073741824", not "1e+09").
    constexpr double kExact = 9007199254740992.0; // 2^53
    if (value == std::floor(value) && std::fabs(value) <= kExact) {
        return formatNumber(static_cast<std::int64_t>(value));
    }
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

std::string formatNumber(std::uint64_t value)
{
    return std::to_string(value);
}

std::string formatNumber(std::int64_t value)
{
    return std::to_string(value);
}

bool FamilySet::add(std::string_view family, MetricType type, std::string_view help,
                    std::string_view suffix, const Labels &labels, std::string_view value)
{
    auto found = m_families.find(family);
    if (found == m_families.end()) {
        found =
            m_families.emplace(std::string(family), Family{type, std::string(help), {}, {}}).first;
    } else if (found->second.type != type) {
        return false;
    }
    std::string line(family);
    line += suffix;
    if (!labels.empty()) {
        line += '{';
        for (std::size_t i = 0; i < labels.size(); ++i) {
            if (i > 0) {
                line += ',';
            }
            line += labels[i].first;
            line += "=\"";
            line += escapeLabelValue(labels[i].second);
            line += '"';
        }
        line += '}';
    }
    Family &f = found->second;
    if (!f.series.insert(line).second) {
        return false;
    }
    line += ' ';
    line += value;
    f.lines.push_back(std::move(line));
    return true;
}

std::string FamilySet::render() const
{
    std::string out;
    for (const auto &[name, family] : m_families) {
        out += "# HELP ";
        out += name;
        out += ' ';
        out += escapeHelp(family.help);
        out += "\n# TYPE ";
        out += name;
        out += ' ';
        out += typeName(family.type);
        out += '\n';
        for (const auto &line : family.lines) {
            out += line;
            out += '\n';
        }
    }
    return out;
}

} // namespace lutra::ctld::metrics
