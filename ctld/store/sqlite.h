#pragma once
// Thin RAII over the SQLite C API: a connection, a prepared statement, a transaction. Errors
// come back as lutra::Status carrying SQLite's own message; the Store adds the file and the
// operation. Every value from outside is bound as a parameter, never pasted into SQL text.

#include <lutra/status.h>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

struct sqlite3;
struct sqlite3_stmt;

namespace lutra::ctld::sqlite {

// SQLite result code (primary or extended) -> lutra error category.
Errc errcFor(int sqliteCode) noexcept;

class Statement {
public:
    Statement() = default;
    Statement(sqlite3_stmt *statement, sqlite3 *db) noexcept : m_statement(statement), m_db(db) {}
    ~Statement();
    Statement(Statement &&other) noexcept;
    Statement &operator=(Statement &&other) noexcept;
    Statement(const Statement &) = delete;
    Statement &operator=(const Statement &) = delete;

    // Parameters are 1-based, as in SQL's ?1. A failed bind is remembered and returned by the
    // next step(), so call sites bind a row without checking each call.
    Statement &bind(int index, std::int64_t value);
    Statement &bind(int index, std::string_view text);
    Statement &bindNull(int index);
    template <typename T> Statement &bind(int index, const std::optional<T> &value)
    {
        return value ? bind(index, *value) : bindNull(index);
    }

    // true: a row is ready to read; false: the statement is done.
    Result<bool> step();
    // Steps to completion; for statements that return no rows.
    Status run();
    // Steps through the remaining rows, calling onRow(row) on each; stops at the first error,
    // SQLite's or one onRow returns (onRow may also return nothing).
    template <std::invocable<const Statement &> OnRow> Status forEachRow(OnRow &&onRow)
    {
        for (;;) {
            auto row = step();
            if (!row.ok()) {
                return row.status();
            }
            if (!*row) {
                return {};
            }
            if constexpr (std::is_void_v<std::invoke_result_t<OnRow &, const Statement &>>) {
                onRow(std::as_const(*this));
            } else if (Status status = onRow(std::as_const(*this)); !status.ok()) {
                return status;
            }
        }
    }
    // Ready for the next row of bindings (clears them too).
    void reset() noexcept;

    std::int64_t columnInt(int column) const noexcept;
    std::string columnText(int column) const;
    bool columnIsNull(int column) const noexcept;

private:
    Status lastError() const;

    sqlite3_stmt *m_statement = nullptr;
    sqlite3 *m_db = nullptr;
    int m_bindError = 0; // first failed bind since the last reset
};

class Connection {
public:
    Connection() = default;
    ~Connection();
    Connection(Connection &&other) noexcept;
    Connection &operator=(Connection &&other) noexcept;
    Connection(const Connection &) = delete;
    Connection &operator=(const Connection &) = delete;

    // flags: SQLITE_OPEN_* (the connection is always opened without SQLite's own mutex: the
    // owner serialises access).
    static Result<Connection> open(const std::string &path, int flags);

    // Runs constant SQL (one or more statements, no parameters): schema, pragmas, BEGIN/COMMIT.
    Status exec(const char *sql);
    Result<Statement> prepare(std::string_view sql);
    // Prepares `sql` and binds `values` to ?1, ?2, ... in order.
    template <typename... Values>
    Result<Statement> prepare(std::string_view sql, const Values &...values)
    {
        auto statement = prepare(sql);
        if (statement.ok()) {
            int index = 0;
            (statement->bind(++index, values), ...);
        }
        return statement;
    }
    // Prepares, binds and runs a statement that returns no rows.
    template <typename... Values> Status run(std::string_view sql, const Values &...values)
    {
        auto statement = prepare(sql, values...);
        return statement.ok() ? statement->run() : statement.status();
    }
    // Prepares, binds and steps to the first row: the statement on that row, or `none` when the
    // query returns no rows.
    template <typename... Values>
    Result<Statement> queryRow(std::string_view sql, const Status &none, const Values &...values)
    {
        auto statement = prepare(sql, values...);
        if (!statement.ok()) {
            return statement;
        }
        auto row = statement->step();
        if (!row.ok()) {
            return row.status();
        }
        if (!*row) {
            return none;
        }
        return statement;
    }
    // The single integer a query such as "PRAGMA user_version" returns.
    Result<std::int64_t> queryInt(std::string_view sql);

    std::int64_t lastInsertRowid() const noexcept;
    int changes() const noexcept;
    sqlite3 *handle() const noexcept { return m_db; }

    // The connection's last error as a Status.
    Status lastError() const;

private:
    explicit Connection(sqlite3 *db) noexcept : m_db(db) {}
    void close() noexcept;

    sqlite3 *m_db = nullptr;
};

// BEGIN ... COMMIT, rolled back on destruction unless committed.
class Transaction {
public:
    enum class Kind { deferred, immediate };

    static Result<Transaction> begin(Connection &connection, Kind kind);
    ~Transaction();
    Transaction(Transaction &&other) noexcept;
    Transaction &operator=(Transaction &&) = delete;
    Transaction(const Transaction &) = delete;
    Transaction &operator=(const Transaction &) = delete;

    Status commit();

private:
    explicit Transaction(Connection &connection) noexcept : m_connection(&connection) {}

    Connection *m_connection = nullptr; // null once committed or rolled back
};

} // namespace lutra::ctld::sqlite
