#pragma once
// The store's schema: an ordered list of migrations, each applied in its own transaction and
// recorded in PRAGMA user_version. Migrations are append-only: a released one never changes.

#include <lutra/status.h>

#include "store/sqlite.h"

#include <cstdint>
#include <span>
#include <string_view>

namespace lutra::ctld::schema {

// PRAGMA application_id of a lutra-ctld database ("LUTR"): a SQLite file that belongs to
// something else is refused instead of being migrated into.
inline constexpr std::int64_t kApplicationId = 0x4c555452;

struct Migration {
    int version; // 1, 2, ... in order
    std::string_view purpose;
    const char *sql;
};

std::span<const Migration> migrations() noexcept;
int currentVersion() noexcept; // the newest version this build knows

// The schema version of an open file after checking that it is a lutra-ctld database (or an
// empty file) no newer than this build. Nothing is written.
Result<int> checkFile(sqlite::Connection &connection);

// Applies every migration above the file's version up to `targetVersion`.
Status migrate(sqlite::Connection &connection, int targetVersion);

} // namespace lutra::ctld::schema
