#include "store/sqlite.h"

#include <sqlite3.h>

#include <climits>
#include <utility>

namespace lutra::ctld::sqlite {

Errc errcFor(int sqliteCode) noexcept
{
    switch (sqliteCode & 0xff) {
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE: return Errc::ok;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return Errc::unavailable;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
    case SQLITE_TOOBIG: return Errc::resource_exhausted;
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH: return Errc::permission_denied;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL: return Errc::io_error;
    case SQLITE_CONSTRAINT: return Errc::failed_precondition;
    case SQLITE_INTERRUPT: return Errc::cancelled;
    default: return Errc::internal;
    }
}

namespace {

Status statusFor(sqlite3 *db, int code)
{
    const char *message = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
    return {errcFor(code), message ? message : sqlite3_errstr(code)};
}

} // namespace

// ---- Statement ----

Statement::~Statement()
{
    sqlite3_finalize(m_statement);
}

Statement::Statement(Statement &&other) noexcept
    : m_statement(std::exchange(other.m_statement, nullptr)),
      m_db(std::exchange(other.m_db, nullptr)), m_bindError(other.m_bindError)
{
}

Statement &Statement::operator=(Statement &&other) noexcept
{
    if (this != &other) {
        sqlite3_finalize(m_statement);
        m_statement = std::exchange(other.m_statement, nullptr);
        m_db = std::exchange(other.m_db, nullptr);
        m_bindError = other.m_bindError;
    }
    return *this;
}

Statement &Statement::bind(int index, std::int64_t value)
{
    const int rc = sqlite3_bind_int64(m_statement, index, value);
    if (rc != SQLITE_OK && m_bindError == SQLITE_OK) {
        m_bindError = rc;
    }
    return *this;
}

Statement &Statement::bind(int index, std::string_view text)
{
    int rc = SQLITE_TOOBIG;
    if (text.size() <= static_cast<std::size_t>(INT_MAX)) {
        // Empty views may carry a null data pointer, which SQLite would store as NULL.
        rc = sqlite3_bind_text(m_statement, index, text.empty() ? "" : text.data(),
                               static_cast<int>(text.size()), SQLITE_TRANSIENT);
    }
    if (rc != SQLITE_OK && m_bindError == SQLITE_OK) {
        m_bindError = rc;
    }
    return *this;
}

Statement &Statement::bindNull(int index)
{
    const int rc = sqlite3_bind_null(m_statement, index);
    if (rc != SQLITE_OK && m_bindError == SQLITE_OK) {
        m_bindError = rc;
    }
    return *this;
}

Status Statement::lastError() const
{
    return statusFor(m_db, sqlite3_extended_errcode(m_db));
}

Result<bool> Statement::step()
{
    if (m_bindError != SQLITE_OK) {
        return Status(errcFor(m_bindError),
                      std::string("binding a value: ") + sqlite3_errstr(m_bindError));
    }
    const int rc = sqlite3_step(m_statement);
    if (rc == SQLITE_ROW) {
        return true;
    }
    if (rc == SQLITE_DONE) {
        return false;
    }
    return lastError();
}

Status Statement::run()
{
    return forEachRow([](const Statement &) {});
}

void Statement::reset() noexcept
{
    sqlite3_reset(m_statement);
    sqlite3_clear_bindings(m_statement);
    m_bindError = SQLITE_OK;
}

std::int64_t Statement::columnInt(int column) const noexcept
{
    return sqlite3_column_int64(m_statement, column);
}

std::string Statement::columnText(int column) const
{
    const auto *text = sqlite3_column_text(m_statement, column);
    const int size = sqlite3_column_bytes(m_statement, column);
    return text ? std::string(reinterpret_cast<const char *>(text), static_cast<std::size_t>(size))
                : std::string();
}

bool Statement::columnIsNull(int column) const noexcept
{
    return sqlite3_column_type(m_statement, column) == SQLITE_NULL;
}

// ---- Connection ----

Connection::~Connection()
{
    close();
}

Connection::Connection(Connection &&other) noexcept : m_db(std::exchange(other.m_db, nullptr)) {}

Connection &Connection::operator=(Connection &&other) noexcept
{
    if (this != &other) {
        close();
        m_db = std::exchange(other.m_db, nullptr);
    }
    return *this;
}

void Connection::close() noexcept
{
    // Every Statement is finalised before its connection goes (the owners order their members
    // so), so close_v2 closes at once.
    sqlite3_close_v2(m_db);
    m_db = nullptr;
}

Result<Connection> Connection::open(const std::string &path, int flags)
{
    sqlite3 *db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        Status status = statusFor(db, rc);
        sqlite3_close_v2(db);
        return status;
    }
    sqlite3_extended_result_codes(db, 1);
    return Connection(db);
}

Status Connection::exec(const char *sql)
{
    const int rc = sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr);
    return rc == SQLITE_OK ? Status{} : lastError();
}

Result<Statement> Connection::prepare(std::string_view sql)
{
    sqlite3_stmt *statement = nullptr;
    const int rc =
        sqlite3_prepare_v2(m_db, sql.data(), static_cast<int>(sql.size()), &statement, nullptr);
    if (rc != SQLITE_OK) {
        return lastError();
    }
    return Statement(statement, m_db);
}

Result<std::int64_t> Connection::queryInt(std::string_view sql)
{
    auto statement = queryRow(sql, Status(Errc::internal, std::string(sql) + " returned no row"));
    if (!statement.ok()) {
        return statement.status();
    }
    return statement->columnInt(0);
}

std::int64_t Connection::lastInsertRowid() const noexcept
{
    return sqlite3_last_insert_rowid(m_db);
}

int Connection::changes() const noexcept
{
    return sqlite3_changes(m_db);
}

Status Connection::lastError() const
{
    return statusFor(m_db, sqlite3_extended_errcode(m_db));
}

// ---- Transaction ----

Result<Transaction> Transaction::begin(Connection &connection, Kind kind)
{
    const Status begun =
        connection.exec(kind == Kind::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    if (!begun.ok()) {
        return begun.withContext("begin transaction");
    }
    return Transaction(connection);
}

Transaction::Transaction(Transaction &&other) noexcept
    : m_connection(std::exchange(other.m_connection, nullptr))
{
}

Transaction::~Transaction()
{
    if (m_connection) {
        // A failed statement may already have ended the transaction; then this is a no-op.
        if (!sqlite3_get_autocommit(m_connection->handle())) {
            sqlite3_exec(m_connection->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        }
    }
}

Status Transaction::commit()
{
    Connection *connection = std::exchange(m_connection, nullptr);
    const Status committed = connection->exec("COMMIT");
    if (!committed.ok()) {
        // A failed COMMIT (disk full, I/O error) may leave the transaction open: end it.
        if (!sqlite3_get_autocommit(connection->handle())) {
            sqlite3_exec(connection->handle(), "ROLLBACK", nullptr, nullptr, nullptr);
        }
        return committed.withContext("commit");
    }
    return {};
}

} // namespace lutra::ctld::sqlite
