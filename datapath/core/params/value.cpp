#include "core/params/value.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

namespace lutra::params {

namespace {

__extension__ using u128 = unsigned __int128; // exact size arithmetic without overflow

constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();

std::string_view trim(std::string_view text) noexcept
{
    const auto isSpace = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
    while (!text.empty() && isSpace(text.front())) {
        text.remove_prefix(1);
    }
    while (!text.empty() && isSpace(text.back())) {
        text.remove_suffix(1);
    }
    return text;
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) noexcept
{
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
               return std::tolower(static_cast<unsigned char>(x)) ==
                      std::tolower(static_cast<unsigned char>(y));
           });
}

// Size of one base unit, in bytes (sizes) or milliseconds (durations).
std::int64_t unitScale(Unit unit) noexcept
{
    switch (unit) {
    case Unit::mib: return std::int64_t{1} << 20;
    case Unit::pages: return kPageSize;
    case Unit::seconds: return 1000;
    case Unit::none:
    case Unit::bytes:
    case Unit::milliseconds: return 1;
    }
    return 1;
}

// Multiplier of a suffix, in bytes or milliseconds; 0 when the suffix is not allowed for type.
std::int64_t suffixScale(Type type, std::string_view suffix) noexcept
{
    if (type == Type::size && suffix.size() == 1) {
        switch (std::tolower(static_cast<unsigned char>(suffix[0]))) {
        case 'k': return std::int64_t{1} << 10;
        case 'm': return std::int64_t{1} << 20;
        case 'g': return std::int64_t{1} << 30;
        case 't': return std::int64_t{1} << 40;
        case 'p': return std::int64_t{1} << 50;
        default: return 0;
        }
    }
    if (type == Type::duration) {
        if (equalsIgnoreCase(suffix, "s")) {
            return 1000;
        }
        if (equalsIgnoreCase(suffix, "ms")) {
            return 1;
        }
    }
    return 0;
}

std::string rangeText(const Spec &spec)
{
    std::string unit(unitName(spec.unit));
    std::string text = std::to_string(spec.min);
    if (spec.max == kMaxInt) {
        text += " or more";
    } else {
        text += "..";
        text += std::to_string(spec.max);
    }
    if (!unit.empty()) {
        text += ' ';
        text += unit;
    }
    return text;
}

Status error(Errc code, const Spec &spec, std::string_view text, std::string_view reason)
{
    std::string message = spec.name;
    message += "=";
    message += text;
    message += ": ";
    message += reason;
    message += "; allowed: ";
    message += describeAllowed(spec);
    return {code, std::move(message)};
}

Result<std::int64_t> parseNumber(const Spec &spec, std::string_view text)
{
    std::string_view rest = text;
    bool negative = false;
    if (!rest.empty() && (rest.front() == '-' || rest.front() == '+')) {
        negative = rest.front() == '-';
        rest.remove_prefix(1);
    }
    const auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
    const auto intEnd = std::find_if_not(rest.begin(), rest.end(), isDigit);
    const std::string_view intDigits = rest.substr(0, static_cast<size_t>(intEnd - rest.begin()));
    rest.remove_prefix(intDigits.size());
    if (intDigits.empty()) {
        return error(Errc::invalid_argument, spec, text, "not a number");
    }
    std::string_view fracDigits;
    if (!rest.empty() && rest.front() == '.') {
        rest.remove_prefix(1);
        const auto fracEnd = std::find_if_not(rest.begin(), rest.end(), isDigit);
        fracDigits = rest.substr(0, static_cast<size_t>(fracEnd - rest.begin()));
        rest.remove_prefix(fracDigits.size());
        if (fracDigits.empty()) {
            return error(Errc::invalid_argument, spec, text, "no digits after the decimal point");
        }
    }
    const std::string_view suffix = rest;

    if (spec.type == Type::integer && !suffix.empty()) {
        return error(Errc::invalid_argument, spec, text, "an integer takes no unit suffix");
    }
    if (spec.type == Type::integer && !fracDigits.empty()) {
        return error(Errc::invalid_argument, spec, text, "not a whole number");
    }
    std::int64_t scale = 1;
    if (!suffix.empty()) {
        scale = suffixScale(spec.type, suffix);
        if (scale == 0) {
            return error(Errc::invalid_argument, spec, text,
                         "unknown unit suffix '" + std::string(suffix) + "'");
        }
    }
    // 19 integer digits always fit in 64 bits; more is certainly out of range.
    if (intDigits.size() > 19) {
        return error(Errc::out_of_range, spec, text, "number too large");
    }
    if (fracDigits.size() > 9) {
        return error(Errc::invalid_argument, spec, text, "more than 9 decimal places");
    }
    std::uint64_t whole = 0;
    std::from_chars(intDigits.data(), intDigits.data() + intDigits.size(), whole);
    std::uint64_t fraction = 0;
    std::uint64_t fractionScale = 1;
    for (const char c : fracDigits) {
        fraction = fraction * 10 + static_cast<std::uint64_t>(c - '0');
        fractionScale *= 10;
    }

    // value (in base units) = (whole + fraction/fractionScale) * scale / unitScale, exactly.
    const u128 numerator =
        (static_cast<u128>(whole) * fractionScale + fraction) * static_cast<u128>(scale);
    const u128 denominator = static_cast<u128>(fractionScale) *
                             static_cast<u128>(suffix.empty() ? 1 : unitScale(spec.unit));
    if (numerator % denominator != 0) {
        std::string unit(unitName(spec.unit));
        return error(Errc::invalid_argument, spec, text,
                     "not a whole number of " + (unit.empty() ? std::string("units") : unit));
    }
    const u128 magnitude = numerator / denominator;
    if (magnitude > static_cast<u128>(kMaxInt)) {
        return error(Errc::out_of_range, spec, text, "number too large");
    }
    const auto value = static_cast<std::int64_t>(magnitude);
    return negative ? -value : value;
}

Result<std::int64_t> parseBoolean(const Spec &spec, std::string_view text)
{
    static constexpr std::array<std::string_view, 5> kTrue{"1", "on", "yes", "true", "y"};
    static constexpr std::array<std::string_view, 5> kFalse{"0", "off", "no", "false", "n"};
    for (const auto word : kTrue) {
        if (equalsIgnoreCase(text, word)) {
            return std::int64_t{1};
        }
    }
    for (const auto word : kFalse) {
        if (equalsIgnoreCase(text, word)) {
            return std::int64_t{0};
        }
    }
    return error(Errc::invalid_argument, spec, text, "not a boolean");
}

} // namespace

Result<ParsedValue> parseValue(const Spec &spec, std::string_view rawText)
{
    const std::string_view text = trim(rawText);
    for (const auto &special : spec.specialValues) {
        if (text == special.word) {
            return ParsedValue{std::int64_t{0}, special.word};
        }
    }
    if (text.empty() && spec.type != Type::string) {
        return error(Errc::invalid_argument, spec, text, "empty value");
    }
    switch (spec.type) {
    case Type::integer:
    case Type::size:
    case Type::duration: {
        auto number = parseNumber(spec, text);
        if (!number) {
            return number.status();
        }
        if (*number < spec.min || *number > spec.max) {
            return error(Errc::out_of_range, spec, text, "out of range");
        }
        return ParsedValue{*number, {}};
    }
    case Type::boolean: {
        auto flag = parseBoolean(spec, text);
        if (!flag) {
            return flag.status();
        }
        return ParsedValue{*flag, {}};
    }
    case Type::enumeration: {
        const auto found = std::find(spec.enumValues.begin(), spec.enumValues.end(), text);
        if (found == spec.enumValues.end()) {
            return error(Errc::invalid_argument, spec, text, "not a known choice");
        }
        return ParsedValue{static_cast<std::int64_t>(found - spec.enumValues.begin()), {}};
    }
    case Type::string: {
        if (text.size() > kMaxStringLength) {
            return error(Errc::invalid_argument, spec, text.substr(0, 32), "text too long");
        }
        const bool printable = std::all_of(text.begin(), text.end(), [](char c) {
            return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
        });
        if (!printable) {
            return error(Errc::invalid_argument, spec, "<binary>",
                         "contains unprintable characters");
        }
        return ParsedValue{std::string(text), {}};
    }
    case Type::counters:
        if (spec.textCommands && !text.empty() && text.size() <= kMaxStringLength &&
            std::all_of(text.begin(), text.end(), [](char c) {
                return static_cast<unsigned char>(c) > 0x20 && static_cast<unsigned char>(c) < 0x7f;
            })) {
            return ParsedValue{std::int64_t{0}, std::string(text)};
        }
        return error(Errc::invalid_argument, spec, text, "a counter block cannot be set");
    }
    return Status(Errc::internal, spec.name + ": unknown parameter type");
}

std::string formatValue(const Spec &spec, const Value &value)
{
    if (const auto *text = std::get_if<std::string>(&value)) {
        return *text;
    }
    const std::int64_t number = std::get<std::int64_t>(value);
    if (spec.type == Type::enumeration) {
        if (number >= 0 && static_cast<std::size_t>(number) < spec.enumValues.size()) {
            return spec.enumValues[static_cast<std::size_t>(number)];
        }
    }
    return std::to_string(number);
}

std::string describeAllowed(const Spec &spec)
{
    std::string text;
    switch (spec.type) {
    case Type::integer: text = "an integer, " + rangeText(spec); break;
    case Type::size:
        text = rangeText(spec) + ", or a size with a K/M/G/T/P suffix";
        if (spec.unit == Unit::pages) {
            text += " (16M = 4096 pages)";
        } else if (spec.unit == Unit::mib) {
            text += " (converted to MiB)";
        }
        break;
    case Type::duration: text = rangeText(spec) + ", or a duration with an s or ms suffix"; break;
    case Type::boolean: text = "0 or 1 (also on/off, yes/no, true/false)"; break;
    case Type::enumeration:
        text = "one of";
        for (std::size_t i = 0; i < spec.enumValues.size(); ++i) {
            text += i == 0 ? " " : ", ";
            text += spec.enumValues[i];
        }
        break;
    case Type::string:
        text = "printable text of at most " + std::to_string(kMaxStringLength) + " characters";
        break;
    case Type::counters:
        text =
            spec.textCommands ? "a name to act on (no spaces)" : "nothing but its special values";
        break;
    }
    for (const auto &special : spec.specialValues) {
        text += "; or '" + special.word + "' (" + special.help + ")";
    }
    return text;
}

} // namespace lutra::params
