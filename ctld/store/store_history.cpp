// Store: reading the history (paged and filtered), one point in full, and rollback targets.
#include "core/params/glob.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_internal.h"

#include <algorithm>
#include <map>
#include <utility>

namespace lutra::ctld {

namespace {

std::optional<std::string> optionalText(const std::string &text)
{
    return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

Status checkGlob(std::string_view what, const std::string &pattern)
{
    if (pattern.empty()) {
        return {};
    }
    return params::Glob::compile(pattern).status().withContext(std::string(what) + " '" + pattern +
                                                               "'");
}

// Filters left NULL match everything. An instance filter matches a point through its changes
// or, for a flush, through its reports.
constexpr std::string_view kHistoryFilter =
    " FROM history_points p"
    " WHERE (?1 IS NULL OR p.id < ?1)"
    " AND (?2 IS NULL OR p.time_ns >= ?2)"
    " AND (?3 IS NULL OR p.time_ns < ?3)"
    " AND (?4 IS NULL OR p.principal = ?4)"
    " AND (?5 IS NULL OR p.action = ?5)"
    " AND ((?6 IS NULL AND ?7 IS NULL)"
    "   OR EXISTS (SELECT 1 FROM history_changes c WHERE c.point_id = p.id"
    "              AND (?6 IS NULL OR lutra_glob(?6, c.instance))"
    "              AND (?7 IS NULL OR lutra_glob(?7, c.param)))"
    "   OR (?7 IS NULL AND EXISTS (SELECT 1 FROM flush_reports f WHERE f.point_id = p.id"
    "              AND lutra_glob(?6, f.instance))))"
    " ORDER BY p.id DESC LIMIT ?8";

} // namespace

Result<HistoryPage> Store::history(const HistoryQuery &query) const
{
    constexpr std::string_view kOperation = "query history";
    Status status = checkGlob("instance glob", query.instanceGlob);
    if (status.ok()) {
        status = checkGlob("parameter glob", query.paramGlob);
    }
    if (status.ok()) {
        status = detail::checkField("principal", query.principal, false);
    }
    if (!status.ok()) {
        return failure(kOperation, status);
    }
    const std::size_t limit = query.limit == 0 ? HistoryQuery::kDefaultLimit
                                               : std::min(query.limit, HistoryQuery::kMaxLimit);

    auto ns = [](const std::optional<TimePoint> &time) {
        return time ? std::optional<std::int64_t>(detail::toNs(*time)) : std::nullopt;
    };
    return read(kOperation, [&](sqlite::Connection &db) -> Result<HistoryPage> {
        auto statement = db.prepare("SELECT " + std::string(detail::kPointColumns) +
                                    std::string(kHistoryFilter));
        if (!statement.ok()) {
            return statement.status();
        }
        statement->bind(1, query.beforeId)
            .bind(2, ns(query.since))
            .bind(3, ns(query.until))
            .bind(4, optionalText(query.principal))
            .bind(5, query.action
                         ? std::optional<std::string>(std::string(actionName(*query.action)))
                         : std::nullopt)
            .bind(6, optionalText(query.instanceGlob))
            .bind(7, optionalText(query.paramGlob))
            .bind(8, static_cast<std::int64_t>(limit + 1)); // one more: are there older ones?
        HistoryPage page;
        const Status stepped = statement->forEachRow([&](const sqlite::Statement &row) {
            if (page.points.size() == limit) {
                // The extra row (the last one, by LIMIT): older points exist.
                page.nextBeforeId = page.points.back().id;
                return Status();
            }
            auto point = detail::readPoint(row);
            if (point.ok()) {
                page.points.push_back(std::move(*point));
            }
            return point.status();
        });
        if (!stepped.ok()) {
            return stepped;
        }
        return page;
    });
}

Result<PointDetail> Store::point(PointId id) const
{
    const std::string operation = "read history point " + std::to_string(id);
    // One read transaction: the point, its changes and its reports from the same snapshot.
    return read(operation, [&](sqlite::Connection &db) -> Result<PointDetail> {
        auto statement = db.queryRow("SELECT " + std::string(detail::kPointColumns) +
                                         " FROM history_points p WHERE p.id = ?1",
                                     detail::noSuchPoint(), id);
        if (!statement.ok()) {
            return statement.status();
        }
        auto header = detail::readPoint(*statement);
        if (!header.ok()) {
            return header.status();
        }
        auto changes = detail::readChanges(db, id);
        if (!changes.ok()) {
            return changes.status();
        }
        auto flushes = detail::readFlushReports(db, id);
        if (!flushes.ok()) {
            return flushes.status();
        }
        return PointDetail{std::move(*header), std::move(*changes), std::move(*flushes)};
    });
}

Result<std::vector<RestoreValue>> Store::valuesToRestore(PointId target) const
{
    const std::string operation = "compute the values to restore point " + std::to_string(target);
    using Values = std::vector<RestoreValue>;
    return read(operation, [&](sqlite::Connection &db) -> Result<Values> {
        auto exists = db.queryRow("SELECT outcome FROM history_points WHERE id = ?1",
                                  detail::noSuchPoint(), target);
        if (!exists.ok()) {
            return exists.status();
        }
        if (exists->columnText(0) == outcomeName(Outcome::pending)) {
            return Status(Errc::failed_precondition,
                          "the point is still pending; it has no settled state");
        }
        if (auto retained = detail::checkRollbackTarget(db, target); !retained.ok()) {
            return retained;
        }
        // Changes in the order they happened; the first one per parameter holds the value it had.
        auto statement =
            db.prepare("SELECT c.instance, c.param, c.old_value, c.point_id FROM history_changes c"
                       " JOIN history_points p ON p.id = c.point_id"
                       " WHERE c.point_id > ?1 AND c.outcome = 'ok' AND p.action <> 'reconcile'"
                       " ORDER BY c.point_id, c.seq",
                       target);
        if (!statement.ok()) {
            return statement.status();
        }
        std::map<std::pair<std::string, std::string>, RestoreValue> earliest;
        const Status stepped = statement->forEachRow([&](const sqlite::Statement &row) {
            RestoreValue value{row.columnText(0), row.columnText(1), row.columnText(2),
                               row.columnInt(3)};
            auto key = std::make_pair(value.instance, value.param);
            earliest.try_emplace(std::move(key), std::move(value));
        });
        if (!stepped.ok()) {
            return stepped;
        }
        Values values;
        values.reserve(earliest.size());
        for (auto &[key, value] : earliest) {
            values.push_back(std::move(value));
        }
        return values;
    });
}

} // namespace lutra::ctld
