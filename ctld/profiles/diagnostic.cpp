#include "ctld/profiles/diagnostic.h"

namespace lutra::ctld::profiles {

std::string Location::toString() const
{
    std::string text = file;
    if (line > 0) {
        text += ':';
        text += std::to_string(line);
        text += ':';
        text += std::to_string(column);
    }
    return text;
}

std::string Diagnostic::toString() const
{
    return location.toString() + ": " + message;
}

Status toStatus(std::span<const Diagnostic> diagnostics)
{
    if (diagnostics.empty()) {
        return {};
    }
    std::string message;
    for (const auto &diagnostic : diagnostics) {
        if (!message.empty()) {
            message += '\n';
        }
        message += diagnostic.toString();
    }
    return {diagnostics.front().code, std::move(message)};
}

} // namespace lutra::ctld::profiles
