#pragma once
// Shared by the ctld store tests: fixed times, audits, and raw looks into a database file.

#include "store/sqlite.h"
#include "store/store.h"

#include <QTest>

#include <sqlite3.h>

#include <chrono>
#include <string>

namespace lutra::ctld::test {

// A fixed, bucket-aligned base time: tests never depend on the wall clock.
inline TimePoint at(std::int64_t seconds)
{
    return TimePoint(std::chrono::seconds(1'700'000'000 + seconds));
}

inline Audit audit(std::string principal, std::int64_t second, std::string description = {})
{
    return Audit{at(second), "node01", std::move(principal), std::move(description)};
}

inline PointDraft draft(std::string principal, std::int64_t second, Action action,
                        std::string profile = {})
{
    return PointDraft{audit(std::move(principal), second, "test"), action, std::move(profile)};
}

inline Change change(std::string instance, std::string param, std::string oldValue,
                     const std::string &newValue, ChangeOutcome outcome = ChangeOutcome::ok)
{
    return Change{std::move(instance),
                  std::move(param),
                  std::move(oldValue),
                  newValue,
                  newValue,
                  outcome,
                  {}};
}

// One integer from a query on a separate connection to the file.
inline std::int64_t rawInt(const std::string &path, const std::string &sql)
{
    auto connection = sqlite::Connection::open(path, SQLITE_OPEN_READWRITE);
    if (!connection.ok()) {
        qFatal("open %s: %s", path.c_str(), connection.status().toString().c_str());
    }
    auto value = connection->queryInt(sql);
    if (!value.ok()) {
        qFatal("%s: %s", sql.c_str(), value.status().toString().c_str());
    }
    return *value;
}

inline void rawExec(const std::string &path, const char *sql)
{
    auto connection = sqlite::Connection::open(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!connection.ok()) {
        qFatal("open %s: %s", path.c_str(), connection.status().toString().c_str());
    }
    const Status status = connection->exec(sql);
    if (!status.ok()) {
        qFatal("%s: %s", sql, status.toString().c_str());
    }
}

} // namespace lutra::ctld::test

namespace lutra::ctld::test {
inline Status statusOf(const Status &status)
{
    return status;
}
template <typename T> Status statusOf(const Result<T> &result)
{
    return result.status();
}
} // namespace lutra::ctld::test

// QVERIFY2 with the Status text as the message; works for Status and Result<T>.
#define LUTRA_VERIFY_OK(expr)                                                                      \
    do {                                                                                           \
        const ::lutra::Status lutraStatus_ = ::lutra::ctld::test::statusOf(expr);                  \
        QVERIFY2(lutraStatus_.ok(), lutraStatus_.toString().c_str());                              \
    } while (false)
