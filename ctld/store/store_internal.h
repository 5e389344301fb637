#pragma once
// Helpers shared by the store_*.cpp files: time and integer conversions, input checks, and
// reading a history point row.

#include <lutra/status.h>

#include "store/records.h"
#include "store/sqlite.h"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace lutra::ctld::detail {

// Limits on what clients may store (checked before anything is written).
inline constexpr std::size_t kMaxFieldBytes = std::size_t{64} << 10;  // names, values, descriptions
inline constexpr std::size_t kMaxProfileBytes = std::size_t{1} << 20; // a profile's YAML

inline std::int64_t toNs(TimePoint time) noexcept
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

inline TimePoint fromNs(std::int64_t ns) noexcept
{
    return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(ns)));
}

// SQLite integers are signed 64-bit; counters beyond 2^63 are clamped, not wrapped.
inline std::int64_t toDb(std::uint64_t value) noexcept
{
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    return static_cast<std::int64_t>(value > kMax ? kMax : value);
}

inline std::uint64_t fromDbUnsigned(std::int64_t value) noexcept
{
    return value < 0 ? 0 : static_cast<std::uint64_t>(value);
}

// "principal: must not be empty", "description: 70000 bytes, more than the limit of 65536".
Status checkField(std::string_view what, std::string_view value, bool required,
                  std::size_t limit = kMaxFieldBytes);
Status checkAudit(const Audit &audit);
Status checkChange(std::size_t index, const Change &change);
// Patterns must be valid lctl globs; errors name the entry and the column.
Status checkDesired(const DesiredUpdate &update);

// The columns readPoint() expects, in order, for a history_points row aliased p.
inline constexpr std::string_view kPointColumns =
    "p.id, p.time_ns, p.finished_ns, p.node, p.principal, p.action, p.description, p.profile, "
    "p.outcome, p.error, (SELECT count(*) FROM history_changes c WHERE c.point_id = p.id)";
Result<HistoryPoint> readPoint(const sqlite::Statement &statement);

Result<std::vector<Change>> readChanges(sqlite::Connection &connection, PointId point);
Result<std::vector<FlushReport>> readFlushReports(sqlite::Connection &connection, PointId point);

} // namespace lutra::ctld::detail
