#include "core/params/spec.h"

#include <algorithm>

namespace lutra::params {

std::string_view typeName(Type type) noexcept
{
    switch (type) {
    case Type::integer: return "integer";
    case Type::size: return "size";
    case Type::boolean: return "boolean";
    case Type::enumeration: return "enum";
    case Type::duration: return "duration";
    case Type::string: return "string";
    case Type::counters: return "counters";
    }
    return "unknown";
}

std::string_view unitName(Unit unit) noexcept
{
    switch (unit) {
    case Unit::none: return "";
    case Unit::bytes: return "bytes";
    case Unit::mib: return "MiB";
    case Unit::pages: return "pages";
    case Unit::seconds: return "s";
    case Unit::milliseconds: return "ms";
    }
    return "";
}

std::string_view leafName(std::string_view name) noexcept
{
    const auto dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool isValidName(std::string_view name) noexcept
{
    if (name.empty() || name.size() > 256 || name.front() == '.' || name.back() == '.') {
        return false;
    }
    char previous = '\0';
    for (const char c : name) {
        const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!word && c != '.') {
            return false;
        }
        if (c == '.' && previous == '.') {
            return false;
        }
        previous = c;
    }
    return true;
}

} // namespace lutra::params
