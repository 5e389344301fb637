// Store: opening (pragmas, checks, migrations), closing, statistics.
#include "store/store.h"

#include "core/log.h"
#include "store/counter_buffer.h"
#include "store/schema.h"
#include "store/sql_glob.h"
#include "store/sqlite.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lutra::ctld {

namespace {

constexpr std::string_view kLogCategory = "ctld.store";
// A WAL larger than this is truncated back after a checkpoint (one flush after a long outage
// may write a lot; it should not keep the disk space for ever).
constexpr std::int64_t kJournalSizeLimit = std::int64_t{64} << 20;

int commitHook(void *counter)
{
    static_cast<std::atomic<std::uint64_t> *>(counter)->fetch_add(1, std::memory_order_relaxed);
    return 0; // let the commit happen
}

// Creates a missing database file with 0640 (root and the lutra group; the audit trail is not
// for everyone), so SQLite's -wal and -shm files, which copy the database's mode, match.
Status createIfMissing(const std::string &path)
{
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
    if (fd >= 0) {
        ::close(fd);
        return {};
    }
    if (errno == EEXIST) {
        return {};
    }
    const int error = errno;
    return {error == EACCES || error == EPERM ? Errc::permission_denied : Errc::io_error,
            std::string("create: ") + std::strerror(error)};
}

Status configure(sqlite::Connection &connection, std::chrono::milliseconds busyTimeout)
{
    sqlite3_busy_timeout(connection.handle(), static_cast<int>(busyTimeout.count()));
    // No writable_schema tricks and the like from SQL: the schema is ours.
    sqlite3_db_config(connection.handle(), SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    return registerGlobFunction(connection);
}

Status enableWal(sqlite::Connection &connection)
{
    auto statement = connection.prepare("PRAGMA journal_mode = WAL");
    if (!statement.ok()) {
        return statement.status();
    }
    auto row = statement->step();
    if (!row.ok()) {
        return row.status();
    }
    const std::string mode = *row ? statement->columnText(0) : std::string();
    if (mode != "wal") {
        return {Errc::failed_precondition,
                "cannot use write-ahead logging (journal mode stays '" + mode +
                    "'); is the file on a file system without shared memory support?"};
    }
    return {};
}

} // namespace

Store::Store(std::string path, StoreOptions options)
    : m_path(std::move(path)), m_options(options),
      m_counters(std::make_unique<CounterBuffer>(options.bucketWidth, options.maxBufferedBuckets))
{
}

Store::~Store()
{
    const Status closed = close();
    if (!closed.ok() && closed.code() != Errc::failed_precondition) {
        log::warning(kLogCategory, closed.toString());
    }
}

Result<std::unique_ptr<Store>> Store::open(const std::string &path, StoreOptions options)
{
    if (path.empty()) {
        return Status(Errc::invalid_argument, "database path must not be empty");
    }
    if (options.bucketWidth.count() <= 0 || options.retention < options.bucketWidth ||
        options.maxBufferedBuckets == 0 || options.busyTimeout.count() < 0 ||
        options.busyTimeout > std::chrono::hours(1)) {
        return Status(Errc::invalid_argument,
                      path + ": open: bad store options (the bucket width must be positive, the "
                             "retention at least one bucket, the buffer bound positive and the "
                             "busy timeout between 0 and 1 h)");
    }
    std::unique_ptr<Store> store(new Store(path, options));
    const Status opened = store->openConnections();
    if (!opened.ok()) {
        return opened;
    }
    return store;
}

Status Store::openConnections()
{
    const Status created = createIfMissing(m_path);
    if (!created.ok()) {
        return failure("open", created);
    }
    auto write = sqlite::Connection::open(m_path, SQLITE_OPEN_READWRITE);
    if (!write.ok()) {
        return failure("open", write.status());
    }
    Status status = configure(*write, m_options.busyTimeout);
    if (!status.ok()) {
        return failure("open", status);
    }
    // Checked before anything is written, so a refused file is left exactly as it was.
    auto version = schema::checkFile(*write);
    if (!version.ok()) {
        return failure("open", version.status());
    }
    status = enableWal(*write);
    if (status.ok()) {
        // FULL: in WAL mode every commit syncs the log, so an acknowledged change survives a
        // power loss too, not only a crash of ctld. Mutations are rare and counter samples are
        // batched, so the cost is one sync per batch (README.md).
        status = write->exec("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;");
    }
    if (status.ok()) {
        const std::string limit =
            "PRAGMA journal_size_limit = " + std::to_string(kJournalSizeLimit);
        status = write->exec(limit.c_str());
    }
    if (status.ok()) {
        status = schema::migrate(*write, schema::currentVersion());
    }
    if (!status.ok()) {
        return failure("open", status);
    }
    sqlite3_commit_hook(write->handle(), commitHook, &m_commits);

    auto read = sqlite::Connection::open(m_path, SQLITE_OPEN_READONLY);
    if (!read.ok()) {
        return failure("open a read connection", read.status());
    }
    status = configure(*read, m_options.busyTimeout);
    if (!status.ok()) {
        return failure("open a read connection", status);
    }
    m_schemaVersion = schema::currentVersion();
    m_write = std::make_unique<sqlite::Connection>(std::move(*write));
    m_read = std::make_unique<sqlite::Connection>(std::move(*read));
    return {};
}

Status Store::close()
{
    Status flushed;
    {
        std::lock_guard lock(m_writeMutex);
        if (!m_write) {
            return closedError("close");
        }
    }
    flushed = flushSamples();
    m_closed.store(true, std::memory_order_relaxed);
    std::lock_guard writeLock(m_writeMutex);
    {
        std::lock_guard readLock(m_readMutex);
        m_read.reset();
    }
    // The write connection goes last: as the last connection it checkpoints the WAL into the
    // database and removes it.
    m_write.reset();
    return flushed;
}

StoreStats Store::stats() const
{
    const CounterBuffer::Stats buffer = m_counters->stats();
    StoreStats stats;
    stats.commits = m_commits.load(std::memory_order_relaxed);
    stats.sampleFlushes = m_sampleFlushes.load(std::memory_order_relaxed);
    stats.sampleFlushFailures = m_sampleFlushFailures.load(std::memory_order_relaxed);
    stats.samplesRecorded = buffer.samplesRecorded;
    stats.bucketsBuffered = buffer.bucketsBuffered;
    stats.bucketsWritten = m_bucketsWritten.load(std::memory_order_relaxed);
    stats.bucketsDropped = buffer.bucketsDropped + buffer.bucketsExpired;
    stats.bucketsPruned = m_bucketsPruned.load(std::memory_order_relaxed);
    return stats;
}

Status Store::failure(std::string_view operation, const Status &status) const
{
    std::string message = m_path;
    message += ": ";
    message += operation;
    message += ": ";
    message += status.message();
    return {status.code(), std::move(message)};
}

Status Store::closedError(std::string_view operation) const
{
    return failure(operation, Status(Errc::failed_precondition, "the store is closed"));
}

} // namespace lutra::ctld
