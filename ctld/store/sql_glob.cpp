#include "store/sql_glob.h"

#include "core/params/glob.h"

#include <sqlite3.h>

#include <string_view>

namespace lutra::ctld {

namespace {

std::string_view textArgument(sqlite3_value *value)
{
    const auto *text = sqlite3_value_text(value);
    const int size = sqlite3_value_bytes(value);
    return text ? std::string_view(reinterpret_cast<const char *>(text),
                                   static_cast<std::size_t>(size))
                : std::string_view();
}

void globFunction(sqlite3_context *context, int, sqlite3_value **arguments)
{
    if (sqlite3_value_type(arguments[0]) == SQLITE_NULL ||
        sqlite3_value_type(arguments[1]) == SQLITE_NULL) {
        sqlite3_result_null(context);
        return;
    }
    // The pattern is the same for every row of a statement: compile it once and keep it as
    // SQLite auxiliary data for as long as the argument stays constant.
    if (const auto *glob = static_cast<const params::Glob *>(sqlite3_get_auxdata(context, 0))) {
        sqlite3_result_int(context, glob->matches(textArgument(arguments[1])) ? 1 : 0);
        return;
    }
    auto compiled = params::Glob::compile(textArgument(arguments[0]));
    if (!compiled.ok()) {
        const std::string message = compiled.status().toString();
        sqlite3_result_error(context, message.c_str(), static_cast<int>(message.size()));
        return;
    }
    sqlite3_result_int(context, compiled->matches(textArgument(arguments[1])) ? 1 : 0);
    // Last: SQLite may destroy the data before set_auxdata returns.
    sqlite3_set_auxdata(context, 0, new params::Glob(std::move(*compiled)),
                        [](void *data) { delete static_cast<params::Glob *>(data); });
}

} // namespace

Status registerGlobFunction(sqlite::Connection &connection)
{
    const int rc = sqlite3_create_function_v2(connection.handle(), "lutra_glob", 2,
                                              SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                                              globFunction, nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK) {
        return connection.lastError().withContext("register lutra_glob");
    }
    return {};
}

} // namespace lutra::ctld
