#pragma once
// Helpers shared by the store_*.cpp files: Store::write() and Store::read(), time and integer
// conversions, input checks, and reading history rows.

#include <lutra/status.h>

#include "store/records.h"
#include "store/sqlite.h"
#include "store/store.h"

#include <concepts>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <string_view>
#include <type_traits>

namespace lutra::ctld::detail {

// The error of a Status or a Result<T>, for code that handles both.
inline const Status &statusOf(const Status &status) noexcept
{
    return status;
}

template <typename T> Status statusOf(const Result<T> &result)
{
    return result.status();
}

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

inline Status noSuchPoint()
{
    return {Errc::not_found, "no such history point"};
}

// The columns readPoint() expects, in order, for a history_points row aliased p.
inline constexpr std::string_view kPointColumns =
    "p.id, p.time_ns, p.finished_ns, p.node, p.principal, p.action, p.description, p.profile, "
    "p.outcome, p.error, (SELECT count(*) FROM history_changes c WHERE c.point_id = p.id)";
Result<HistoryPoint> readPoint(const sqlite::Statement &statement);

// failed_precondition when retention deleted points after `target` (store_retention.cpp).
Status checkRollbackTarget(sqlite::Connection &connection, PointId target);

Result<std::vector<Change>> readChanges(sqlite::Connection &connection, PointId point);
Result<std::vector<FlushReport>> readFlushReports(sqlite::Connection &connection, PointId point);

} // namespace lutra::ctld::detail

namespace lutra::ctld {

// Store::write() and Store::read(), declared in store.h: the lock, the closed check, the
// transaction and the error context of every call that touches the database.
template <std::invocable<sqlite::Connection &> Body>
auto Store::write(std::string_view operation, Body &&body)
{
    using Returned = std::invoke_result_t<Body &, sqlite::Connection &>;
    std::lock_guard lock(m_writeMutex);
    if (!m_write) {
        return Returned(closedError(operation));
    }
    auto transaction = sqlite::Transaction::begin(*m_write, sqlite::Transaction::Kind::immediate);
    if (!transaction.ok()) {
        return Returned(failure(operation, transaction.status()));
    }
    Returned result = body(*m_write);
    const Status status = result.ok() ? transaction->commit() : detail::statusOf(result);
    if (!status.ok()) {
        return Returned(failure(operation, status));
    }
    return result;
}

template <std::invocable<sqlite::Connection &> Body>
auto Store::read(std::string_view operation, Body &&body) const
{
    using Returned = std::invoke_result_t<Body &, sqlite::Connection &>;
    std::lock_guard lock(m_readMutex);
    if (!m_read) {
        return Returned(closedError(operation));
    }
    auto transaction = sqlite::Transaction::begin(*m_read, sqlite::Transaction::Kind::deferred);
    if (!transaction.ok()) {
        return Returned(failure(operation, transaction.status()));
    }
    Returned result = body(*m_read); // nothing to commit: the snapshot ends with `transaction`
    if (!result.ok()) {
        return Returned(failure(operation, detail::statusOf(result)));
    }
    return result;
}

} // namespace lutra::ctld
