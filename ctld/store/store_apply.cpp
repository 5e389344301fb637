// Store: history points with their changes, and the apply journal (a point whose outcome is
// still "pending" with its planned changes, committed before any datapath process is touched).
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace lutra::ctld {

using detail::checkAudit;
using detail::checkChange;
using detail::checkField;
using detail::toNs;

namespace {

Status checkDraft(const PointDraft &draft)
{
    Status status = checkAudit(draft.audit);
    if (status.ok()) {
        status = checkField("profile", draft.profile, false);
    }
    return status;
}

Status checkChanges(const std::vector<Change> &changes)
{
    for (std::size_t i = 0; i < changes.size(); ++i) {
        if (Status status = checkChange(i, changes[i]); !status.ok()) {
            return status;
        }
    }
    return {};
}

Status checkFinalOutcome(Outcome outcome)
{
    if (outcome == Outcome::pending) {
        return {
            Errc::invalid_argument,
            "outcome: 'pending' is only for beginApply(); a recorded point has a final outcome"};
    }
    return {};
}

} // namespace

Result<PointId> Store::insertPoint(const PointDraft &draft, Outcome outcome, std::string_view error,
                                   bool finished)
{
    auto statement = m_write->prepare(
        "INSERT INTO history_points (time_ns, finished_ns, node, principal, action, description, "
        "profile, outcome, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!statement.ok()) {
        return statement.status();
    }
    const std::int64_t timeNs = toNs(draft.audit.time);
    statement->bind(1, timeNs)
        .bind(2, finished ? std::optional<std::int64_t>(timeNs) : std::nullopt)
        .bind(3, draft.audit.node)
        .bind(4, draft.audit.principal)
        .bind(5, actionName(draft.action))
        .bind(6, draft.audit.description)
        .bind(7, draft.profile)
        .bind(8, outcomeName(outcome))
        .bind(9, error);
    if (Status status = statement->run(); !status.ok()) {
        return status;
    }
    return m_write->lastInsertRowid();
}

Status Store::insertChanges(PointId point, const std::vector<Change> &changes)
{
    auto statement = m_write->prepare(
        "INSERT INTO history_changes (point_id, seq, instance, param, old_value, requested, "
        "read_back, outcome, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    if (!statement.ok()) {
        return statement.status();
    }
    std::int64_t seq = 0;
    for (const Change &change : changes) {
        statement->reset();
        statement->bind(1, point)
            .bind(2, ++seq)
            .bind(3, change.instance)
            .bind(4, change.param)
            .bind(5, change.oldValue)
            .bind(6, change.requested)
            .bind(7, change.readBack)
            .bind(8, changeOutcomeName(change.outcome))
            .bind(9, change.error);
        if (Status status = statement->run(); !status.ok()) {
            return status;
        }
    }
    return {};
}

Result<PointId> Store::beginApply(const PointDraft &draft,
                                  const std::vector<PlannedChange> &planned)
{
    constexpr std::string_view kOperation = "begin apply";
    std::vector<Change> rows;
    rows.reserve(planned.size());
    for (const PlannedChange &change : planned) {
        rows.push_back({change.instance,
                        change.param,
                        change.oldValue,
                        change.newValue,
                        {},
                        ChangeOutcome::pending,
                        {}});
    }
    Status status = checkDraft(draft);
    if (status.ok()) {
        status = checkChanges(rows);
    }
    if (!status.ok()) {
        return failure(kOperation, status);
    }
    return write(kOperation, [&](sqlite::Connection &) -> Result<PointId> {
        auto point = insertPoint(draft, Outcome::pending, {}, false);
        if (!point.ok()) {
            return point.status();
        }
        if (Status inserted = insertChanges(*point, rows); !inserted.ok()) {
            return inserted;
        }
        return point;
    });
}

Status Store::finishApply(PointId point, const ApplyResult &result)
{
    const std::string operation = "finish apply of history point " + std::to_string(point);
    Status status = checkFinalOutcome(result.outcome);
    if (status.ok()) {
        status = checkField("error", result.error, false);
    }
    if (status.ok()) {
        status = checkChanges(result.changes);
    }
    if (status.ok()) {
        status = detail::checkDesired(result.desired);
    }
    if (!status.ok()) {
        return failure(operation, status);
    }
    return write(operation, [&](sqlite::Connection &db) -> Status {
        auto select = db.queryRow("SELECT outcome, principal FROM history_points WHERE id = ?1",
                                  detail::noSuchPoint(), point);
        if (!select.ok()) {
            return select.status();
        }
        const std::string outcome = select->columnText(0);
        const std::string principal = select->columnText(1);
        select->reset();
        if (outcome != outcomeName(Outcome::pending)) {
            return Status(Errc::failed_precondition,
                          "the point is not pending (its outcome is " + outcome + ")");
        }
        Status written = db.run("DELETE FROM history_changes WHERE point_id = ?1", point);
        if (written.ok()) {
            written = insertChanges(point, result.changes);
        }
        if (written.ok()) {
            written =
                db.run("UPDATE history_points SET outcome = ?2, error = ?3, finished_ns = ?4 "
                       "WHERE id = ?1",
                       point, outcomeName(result.outcome), result.error, toNs(result.finished));
        }
        if (written.ok()) {
            written =
                applyDesired(point, Audit{result.finished, {}, principal, {}}, result.desired);
        }
        return written;
    });
}

Result<std::vector<PendingApply>> Store::pendingApplies() const
{
    using Pending = std::vector<PendingApply>;
    return read("list pending applies", [](sqlite::Connection &db) -> Result<Pending> {
        auto statement = db.prepare("SELECT " + std::string(detail::kPointColumns) +
                                    " FROM history_points p WHERE p.outcome = 'pending' "
                                    "ORDER BY p.id DESC");
        if (!statement.ok()) {
            return statement.status();
        }
        Pending pending;
        const Status stepped = statement->forEachRow([&](const sqlite::Statement &row) {
            auto point = detail::readPoint(row);
            if (point.ok()) {
                pending.push_back({std::move(*point), {}});
            }
            return point.status();
        });
        if (!stepped.ok()) {
            return stepped;
        }
        for (PendingApply &apply : pending) {
            auto changes = detail::readChanges(db, apply.point.id);
            if (!changes.ok()) {
                return changes.status();
            }
            for (Change &change : *changes) {
                apply.planned.push_back({std::move(change.instance), std::move(change.param),
                                         std::move(change.oldValue), std::move(change.requested)});
            }
        }
        return pending;
    });
}

Result<PointId> Store::settleInterrupted(PointId interrupted, const PointDraft &undo,
                                         const ApplyResult &result, std::string_view note)
{
    const std::string operation = "settle interrupted history point " + std::to_string(interrupted);
    Status status = checkDraft(undo);
    if (status.ok()) {
        status = checkFinalOutcome(result.outcome);
    }
    if (status.ok()) {
        status = checkField("error", result.error, false);
    }
    if (status.ok()) {
        status = checkField("note", note, false);
    }
    if (status.ok()) {
        status = checkChanges(result.changes);
    }
    if (!status.ok()) {
        return failure(operation, status);
    }
    return write(operation, [&](sqlite::Connection &db) -> Result<PointId> {
        auto select = db.queryRow("SELECT outcome FROM history_points WHERE id = ?1",
                                  detail::noSuchPoint(), interrupted);
        if (!select.ok()) {
            return select.status();
        }
        const std::string outcome = select->columnText(0);
        select->reset();
        if (outcome != outcomeName(Outcome::pending)) {
            return Status(Errc::failed_precondition,
                          "the point is not pending (its outcome is " + outcome + ")");
        }
        auto point = insertPoint(undo, result.outcome, result.error, true);
        if (!point.ok()) {
            return point.status();
        }
        Status written = insertChanges(*point, result.changes);
        if (written.ok()) {
            written = db.run("UPDATE history_changes SET outcome = ?2 WHERE point_id = ?1",
                             interrupted, changeOutcomeName(ChangeOutcome::reverted));
        }
        if (written.ok()) {
            written =
                db.run("UPDATE history_points SET outcome = ?2, error = ?3, finished_ns = ?4 "
                       "WHERE id = ?1",
                       interrupted, outcomeName(Outcome::aborted), note, toNs(result.finished));
        }
        if (!written.ok()) {
            return written;
        }
        return point;
    });
}

Result<PointId> Store::recordPoint(const PointDraft &draft, Outcome outcome, std::string_view error,
                                   const std::vector<Change> &changes, const DesiredUpdate &desired)
{
    const std::string operation = "record " + std::string(actionName(draft.action));
    Status status = checkDraft(draft);
    if (status.ok()) {
        status = checkFinalOutcome(outcome);
    }
    if (status.ok()) {
        status = checkField("error", error, false);
    }
    if (status.ok()) {
        status = checkChanges(changes);
    }
    if (status.ok()) {
        status = detail::checkDesired(desired);
    }
    if (!status.ok()) {
        return failure(operation, status);
    }
    return write(operation, [&](sqlite::Connection &) -> Result<PointId> {
        auto point = insertPoint(draft, outcome, error, true);
        if (!point.ok()) {
            return point.status();
        }
        Status written = insertChanges(*point, changes);
        if (written.ok()) {
            written = applyDesired(*point, draft.audit, desired);
        }
        if (!written.ok()) {
            return written;
        }
        return point;
    });
}

} // namespace lutra::ctld
