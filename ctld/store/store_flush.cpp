// Store: flush reports. A flush is a history point (action "flush") with one report per
// datapath process, written in one transaction.
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_internal.h"

#include <algorithm>

namespace lutra::ctld {

namespace {

constexpr std::size_t kDefaultReports = 100;
constexpr std::size_t kMaxReports = 1000;

constexpr std::string_view kReportColumns =
    "SELECT point_id, time_ns, principal, job_id, instance, locks_cancelled, pages_dropped, "
    "bytes_written_back, duration_us, error FROM flush_reports ";

FlushReport readReport(const sqlite::Statement &statement)
{
    FlushReport report;
    report.point = statement.columnInt(0);
    report.time = detail::fromNs(statement.columnInt(1));
    report.principal = statement.columnText(2);
    report.jobId = statement.columnText(3);
    report.instance = statement.columnText(4);
    report.locksCancelled = detail::fromDbUnsigned(statement.columnInt(5));
    report.pagesDropped = detail::fromDbUnsigned(statement.columnInt(6));
    report.bytesWrittenBack = detail::fromDbUnsigned(statement.columnInt(7));
    report.durationUs = detail::fromDbUnsigned(statement.columnInt(8));
    report.error = statement.columnText(9);
    return report;
}

Result<std::vector<FlushReport>> readReports(sqlite::Statement &statement)
{
    std::vector<FlushReport> reports;
    const Status stepped = statement.forEachRow(
        [&](const sqlite::Statement &row) { reports.push_back(readReport(row)); });
    if (!stepped.ok()) {
        return stepped;
    }
    return reports;
}

} // namespace

Result<std::vector<FlushReport>> detail::readFlushReports(sqlite::Connection &connection,
                                                          PointId point)
{
    auto statement =
        connection.prepare(std::string(kReportColumns) + "WHERE point_id = ?1 ORDER BY id", point);
    if (!statement.ok()) {
        return statement.status();
    }
    return readReports(*statement);
}

Result<PointId> Store::recordFlush(const Audit &audit, Outcome outcome, std::string_view error,
                                   const std::vector<FlushReport> &reports)
{
    constexpr std::string_view kOperation = "record flush";
    Status status = detail::checkAudit(audit);
    if (status.ok() && outcome == Outcome::pending) {
        status = {Errc::invalid_argument, "outcome: a flush is recorded when it is over"};
    }
    if (status.ok()) {
        status = detail::checkField("error", error, false);
    }
    for (std::size_t i = 0; status.ok() && i < reports.size(); ++i) {
        const FlushReport &report = reports[i];
        status = detail::checkField("job id (\"all\" for every job)", report.jobId, true);
        if (status.ok()) {
            status = detail::checkField("instance", report.instance, true);
        }
        if (status.ok()) {
            status = detail::checkField("error", report.error, false);
        }
        status = status.withContext("flush report " + std::to_string(i + 1));
    }
    if (!status.ok()) {
        return failure(kOperation, status);
    }
    return write(kOperation, [&](sqlite::Connection &db) -> Result<PointId> {
        auto point = insertPoint({audit, Action::flush, {}}, outcome, error, true);
        if (!point.ok()) {
            return point.status();
        }
        auto insert =
            db.prepare("INSERT INTO flush_reports (point_id, time_ns, principal, job_id, instance, "
                       "locks_cancelled, pages_dropped, bytes_written_back, duration_us, error) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
        if (!insert.ok()) {
            return insert.status();
        }
        for (const FlushReport &report : reports) {
            insert->reset();
            insert->bind(1, *point)
                .bind(2, detail::toNs(audit.time))
                .bind(3, audit.principal)
                .bind(4, report.jobId)
                .bind(5, report.instance)
                .bind(6, detail::toDb(report.locksCancelled))
                .bind(7, detail::toDb(report.pagesDropped))
                .bind(8, detail::toDb(report.bytesWrittenBack))
                .bind(9, detail::toDb(report.durationUs))
                .bind(10, report.error);
            if (Status inserted = insert->run(); !inserted.ok()) {
                return inserted;
            }
        }
        return point;
    });
}

Result<std::vector<FlushReport>> Store::flushReports(std::string_view jobId,
                                                     std::size_t limit) const
{
    constexpr std::string_view kOperation = "list flush reports";
    if (Status status = detail::checkField("job id", jobId, false); !status.ok()) {
        return failure(kOperation, status);
    }
    limit = limit == 0 ? kDefaultReports : std::min(limit, kMaxReports);
    return read(kOperation, [&](sqlite::Connection &db) -> Result<std::vector<FlushReport>> {
        auto statement =
            db.prepare(std::string(kReportColumns) +
                           "WHERE (?1 IS NULL OR job_id = ?1) ORDER BY id DESC LIMIT ?2",
                       jobId.empty() ? std::nullopt : std::optional<std::string_view>(jobId),
                       static_cast<std::int64_t>(limit));
        if (!statement.ok()) {
            return statement.status();
        }
        return readReports(*statement);
    });
}

} // namespace lutra::ctld
