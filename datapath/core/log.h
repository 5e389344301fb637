#pragma once
// Process-wide logging: one line per event, with a category per module ("target.ost0",
// "transport.tcp"). The default sink writes whole lines to stderr; hosts may replace it.

#include <string_view>

namespace lutra::log {

enum class Level : int { debug, info, warning, error };

using Sink = void (*)(Level level, std::string_view category, std::string_view text);

void setSink(Sink sink) noexcept;           // nullptr restores the stderr sink
void setMinimumLevel(Level level) noexcept; // default: info
bool enabled(Level level) noexcept;

void write(Level level, std::string_view category, std::string_view text);

inline void info(std::string_view category, std::string_view text)
{
    write(Level::info, category, text);
}
inline void warning(std::string_view category, std::string_view text)
{
    write(Level::warning, category, text);
}
inline void error(std::string_view category, std::string_view text)
{
    write(Level::error, category, text);
}

std::string_view levelName(Level level) noexcept;

} // namespace lutra::log
