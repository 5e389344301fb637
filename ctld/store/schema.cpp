#include "store/schema.h"

#include <array>
#include <string>

namespace lutra::ctld::schema {

namespace {

// Times are integer nanoseconds since the epoch; enums are stored by name (records.h).
constexpr const char *kVersion1 = R"sql(
PRAGMA application_id = 1280660562;

CREATE TABLE history_points (
    id          INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: paging cursors stay valid
    time_ns     INTEGER NOT NULL,
    finished_ns INTEGER,                           -- NULL while pending
    node        TEXT NOT NULL,
    principal   TEXT NOT NULL,
    action      TEXT NOT NULL,
    description TEXT NOT NULL,
    profile     TEXT NOT NULL,
    outcome     TEXT NOT NULL,
    error       TEXT NOT NULL
);
CREATE INDEX history_points_time ON history_points (time_ns);
-- The apply journal: points begun and not finished. Tiny, because finished points leave it.
CREATE INDEX history_points_pending ON history_points (id) WHERE outcome = 'pending';

CREATE TABLE history_changes (
    point_id  INTEGER NOT NULL REFERENCES history_points (id) ON DELETE CASCADE,
    seq       INTEGER NOT NULL,
    instance  TEXT NOT NULL,
    param     TEXT NOT NULL,
    old_value TEXT NOT NULL,
    requested TEXT NOT NULL,
    read_back TEXT NOT NULL,
    outcome   TEXT NOT NULL,
    error     TEXT NOT NULL,
    PRIMARY KEY (point_id, seq)
) WITHOUT ROWID;
CREATE INDEX history_changes_param ON history_changes (instance, param, point_id);

CREATE TABLE desired_params (
    seq       INTEGER PRIMARY KEY, -- replay order: a re-set pattern moves to the end
    pattern   TEXT NOT NULL UNIQUE,
    value     TEXT NOT NULL,
    source    TEXT NOT NULL,
    principal TEXT NOT NULL,
    time_ns   INTEGER NOT NULL,
    point_id  INTEGER NOT NULL REFERENCES history_points (id)
);

CREATE TABLE profiles (
    name       TEXT PRIMARY KEY,
    text       TEXT NOT NULL,
    principal  TEXT NOT NULL,
    updated_ns INTEGER NOT NULL
) WITHOUT ROWID;

-- An application is a history point; a view keeps the two from disagreeing.
CREATE VIEW profile_applications AS
    SELECT profile, id AS point_id, node, outcome, COALESCE(finished_ns, time_ns) AS time_ns
    FROM history_points WHERE action = 'apply' AND profile <> '';

CREATE TABLE flush_reports (
    id                 INTEGER PRIMARY KEY,
    point_id           INTEGER NOT NULL REFERENCES history_points (id) ON DELETE CASCADE,
    time_ns            INTEGER NOT NULL,
    principal          TEXT NOT NULL,
    job_id             TEXT NOT NULL,
    instance           TEXT NOT NULL,
    locks_cancelled    INTEGER NOT NULL,
    pages_dropped      INTEGER NOT NULL,
    bytes_written_back INTEGER NOT NULL,
    duration_us        INTEGER NOT NULL,
    error              TEXT NOT NULL
);
CREATE INDEX flush_reports_point ON flush_reports (point_id);
CREATE INDEX flush_reports_job ON flush_reports (job_id, id);
)sql";

constexpr const char *kVersion2 = R"sql(
CREATE TABLE counter_series (
    id       INTEGER PRIMARY KEY,
    instance TEXT NOT NULL,
    counter  TEXT NOT NULL,
    UNIQUE (instance, counter)
);

-- One row per series per bucket: the last value (and its time), min and max in the bucket.
CREATE TABLE counter_buckets (
    series_id   INTEGER NOT NULL REFERENCES counter_series (id) ON DELETE CASCADE,
    bucket_ns   INTEGER NOT NULL,
    last_ns     INTEGER NOT NULL,
    last_value  INTEGER NOT NULL,
    min_value   INTEGER NOT NULL,
    max_value   INTEGER NOT NULL,
    PRIMARY KEY (series_id, bucket_ns)
) WITHOUT ROWID;
-- Retention deletes by age across all series.
CREATE INDEX counter_buckets_age ON counter_buckets (bucket_ns);
)sql";

// How far history retention has deleted: a rollback needs every point after its target.
constexpr const char *kVersion3 = R"sql(
CREATE TABLE history_retention (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    pruned_through INTEGER NOT NULL -- the newest history point id retention deleted
);
)sql";

constexpr std::array<Migration, 3> kMigrations{{
    {1, "history, apply journal, desired parameters, profiles, flush reports", kVersion1},
    {2, "downsampled counter history", kVersion2},
    {3, "history retention watermark", kVersion3},
}};

static_assert(kApplicationId == 1280660562, "kVersion1 spells the application id in decimal");

} // namespace

std::span<const Migration> migrations() noexcept
{
    return kMigrations;
}

int currentVersion() noexcept
{
    return kMigrations.back().version;
}

Result<int> checkFile(sqlite::Connection &connection)
{
    // The first read of the file: a file that is not SQLite fails here.
    auto applicationId = connection.queryInt("PRAGMA application_id");
    if (!applicationId.ok()) {
        return applicationId.status().withContext("read the file header");
    }
    auto version = connection.queryInt("PRAGMA user_version");
    if (!version.ok()) {
        return version.status().withContext("read the schema version");
    }
    auto objects = connection.queryInt("SELECT count(*) FROM sqlite_schema");
    if (!objects.ok()) {
        return objects.status().withContext("read the schema");
    }
    if (*applicationId != kApplicationId && (*applicationId != 0 || *objects != 0)) {
        return Status(Errc::failed_precondition,
                      "not a lutra-ctld database (SQLite application_id " +
                          std::to_string(*applicationId) + ", " + std::to_string(*objects) +
                          " schema objects); refusing to change it");
    }
    if (*version > currentVersion()) {
        return Status(Errc::failed_precondition,
                      "schema version " + std::to_string(*version) +
                          " is newer than this lutra-ctld knows (" +
                          std::to_string(currentVersion()) +
                          "); run a newer lutra-ctld or restore a backup of the database");
    }
    if (*version < 0) {
        return Status(Errc::failed_precondition,
                      "invalid schema version " + std::to_string(*version));
    }
    return static_cast<int>(*version);
}

Status migrate(sqlite::Connection &connection, int targetVersion)
{
    for (const Migration &migration : kMigrations) {
        if (migration.version > targetVersion) {
            break;
        }
        auto transaction =
            sqlite::Transaction::begin(connection, sqlite::Transaction::Kind::immediate);
        if (!transaction.ok()) {
            return transaction.status();
        }
        // Read under the write lock: another process may have migrated meanwhile.
        auto version = connection.queryInt("PRAGMA user_version");
        if (!version.ok()) {
            return version.status().withContext("read the schema version");
        }
        if (*version >= migration.version) {
            continue;
        }
        const std::string context = "migrate to schema version " +
                                    std::to_string(migration.version) + " (" +
                                    std::string(migration.purpose) + ")";
        Status applied = connection.exec(migration.sql);
        if (applied.ok()) {
            const std::string setVersion =
                "PRAGMA user_version = " + std::to_string(migration.version);
            applied = connection.exec(setVersion.c_str());
        }
        if (applied.ok()) {
            applied = transaction->commit();
        }
        if (!applied.ok()) {
            return applied.withContext(context);
        }
    }
    return {};
}

} // namespace lutra::ctld::schema
