#include "store/store_internal.h"

namespace lutra::ctld::detail {

Status checkField(std::string_view what, std::string_view value, bool required, std::size_t limit)
{
    if (required && value.empty()) {
        return {Errc::invalid_argument, std::string(what) + ": must not be empty"};
    }
    if (value.size() > limit) {
        return {Errc::out_of_range, std::string(what) + ": " + std::to_string(value.size()) +
                                        " bytes, more than the limit of " + std::to_string(limit)};
    }
    return {};
}

Status checkAudit(const Audit &audit)
{
    for (const Status &status :
         {checkField("principal", audit.principal, true), checkField("node", audit.node, false),
          checkField("description", audit.description, false)}) {
        if (!status.ok()) {
            return status;
        }
    }
    return {};
}

Status checkChange(std::size_t index, const Change &change)
{
    const std::string where = "change " + std::to_string(index + 1);
    for (const Status &status :
         {checkField("instance", change.instance, true), checkField("param", change.param, true),
          checkField("old value", change.oldValue, false),
          checkField("requested value", change.requested, false),
          checkField("read-back value", change.readBack, false),
          checkField("error", change.error, false)}) {
        if (!status.ok()) {
            return status.withContext(where);
        }
    }
    return {};
}

Result<HistoryPoint> readPoint(const sqlite::Statement &statement)
{
    HistoryPoint point;
    point.id = statement.columnInt(0);
    point.time = fromNs(statement.columnInt(1));
    if (!statement.columnIsNull(2)) {
        point.finished = fromNs(statement.columnInt(2));
    }
    point.node = statement.columnText(3);
    point.principal = statement.columnText(4);
    const std::string where = "history point " + std::to_string(point.id);
    auto action = parseAction(statement.columnText(5));
    if (!action.ok()) {
        return Status(Errc::failed_precondition, action.status().message()).withContext(where);
    }
    point.action = *action;
    point.description = statement.columnText(6);
    point.profile = statement.columnText(7);
    auto outcome = parseOutcome(statement.columnText(8));
    if (!outcome.ok()) {
        return Status(Errc::failed_precondition, outcome.status().message()).withContext(where);
    }
    point.outcome = *outcome;
    point.error = statement.columnText(9);
    point.changeCount = statement.columnInt(10);
    return point;
}

Result<std::vector<Change>> readChanges(sqlite::Connection &connection, PointId point)
{
    auto statement = connection.prepare(
        "SELECT instance, param, old_value, requested, read_back, outcome, error "
        "FROM history_changes WHERE point_id = ?1 ORDER BY seq",
        point);
    if (!statement.ok()) {
        return statement.status();
    }
    std::vector<Change> changes;
    const Status stepped = statement->forEachRow([&](const sqlite::Statement &row) -> Status {
        auto outcome = parseChangeOutcome(row.columnText(5));
        if (!outcome.ok()) {
            return Status(Errc::failed_precondition, outcome.status().message())
                .withContext("history point " + std::to_string(point));
        }
        changes.push_back({row.columnText(0), row.columnText(1), row.columnText(2),
                           row.columnText(3), row.columnText(4), *outcome, row.columnText(6)});
        return {};
    });
    if (!stepped.ok()) {
        return stepped;
    }
    return changes;
}

} // namespace lutra::ctld::detail
