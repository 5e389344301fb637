#pragma once
// lutra_glob(pattern, name): lctl glob matching (core/params/glob.h) inside SQL, so history and
// counter queries filter by parameter and instance globs in the database, with the same rules
// lutractl uses everywhere else.

#include <lutra/status.h>

#include "store/sqlite.h"

namespace lutra::ctld {

Status registerGlobFunction(sqlite::Connection &connection);

} // namespace lutra::ctld
