// History retention: deletes old audit points in small batches, never one that desired state
// or the apply journal still needs, and remembers how far it went so that a rollback to a point
// whose later changes are partly gone is refused instead of restoring the wrong values.
#include "store/store.h"
#include "store/store_internal.h"

#include <algorithm>

namespace lutra::ctld {

namespace {

// Prunable: finished (a pending point is the crash journal), not the point a desired parameter
// came from, and beyond the count limit or older than the age limit. ?1 = the oldest id the
// count limit keeps, ?2 = the age cutoff (ns), ?3 = the newest id either limit can reach.
constexpr std::string_view kPrunable =
    "SELECT id FROM history_points"
    " WHERE id <= ?3 AND (id < ?1 OR time_ns < ?2) AND outcome <> 'pending'"
    "   AND id NOT IN (SELECT point_id FROM desired_params)"
    " ORDER BY id LIMIT ?4";

struct Limits {
    std::int64_t oldestKeptByCount = 0; // ids below it are over the count limit
    std::int64_t ageCutoffNs = 0;       // points older than this are over the age limit
    std::int64_t newestReachable = 0;   // no id above it is over either limit
};

Result<Limits> limitsFor(sqlite::Connection &db, const HistoryRetention &retention, TimePoint now)
{
    Limits limits;
    if (retention.maxPoints > 0) {
        // The maxPoints-th newest point; none: fewer points than the limit.
        auto row = db.queryRow("SELECT id FROM history_points ORDER BY id DESC LIMIT 1 OFFSET ?1",
                               Status(Errc::not_found, ""),
                               static_cast<std::int64_t>(retention.maxPoints - 1));
        if (row.ok()) {
            limits.oldestKeptByCount = row->columnInt(0);
        } else if (row.status().code() != Errc::not_found) {
            return row.status();
        }
    }
    if (retention.maxAge.count() > 0) {
        limits.ageCutoffNs = detail::toNs(now - retention.maxAge);
        auto row = db.queryRow("SELECT coalesce(max(id), 0) FROM history_points WHERE time_ns < ?1",
                               Status(Errc::not_found, "no row"), limits.ageCutoffNs);
        if (!row.ok()) {
            return row.status();
        }
        limits.newestReachable = row->columnInt(0);
    }
    limits.newestReachable = std::max(limits.newestReachable, limits.oldestKeptByCount - 1);
    return limits;
}

} // namespace

namespace detail {

Status checkRollbackTarget(sqlite::Connection &db, PointId target)
{
    auto row = db.queryRow("SELECT pruned_through FROM history_retention WHERE id = 1",
                           Status(Errc::not_found, "never pruned"));
    if (!row.ok()) {
        return row.status().code() == Errc::not_found ? Status() : row.status();
    }
    const PointId prunedThrough = row->columnInt(0);
    if (target < prunedThrough) {
        return {Errc::failed_precondition,
                "point " + std::to_string(target) +
                    " is older than the retained history: retention deleted points up to " +
                    std::to_string(prunedThrough) +
                    ", so the changes made since are not all known; roll back to a later point "
                    "(ctld.yaml audit_retention)"};
    }
    return {};
}

} // namespace detail

Result<PruneReport> Store::pruneHistory(const HistoryRetention &retention, TimePoint now)
{
    if (retention.maxPoints == 0 && retention.maxAge.count() <= 0) {
        return PruneReport{};
    }
    const auto batchSize = static_cast<std::int64_t>(std::max<std::size_t>(1, retention.batchSize));
    PruneReport report;
    // Whether a batch would delete anything, asked on the read connection: the usual answer,
    // "no", never takes the write lock.
    const auto anythingToPrune = [&]() {
        return read("prune history", [&](sqlite::Connection &db) -> Result<bool> {
            auto limits = limitsFor(db, retention, now);
            if (!limits.ok()) {
                return limits.status();
            }
            auto row = db.queryRow("SELECT count(*) FROM (" + std::string(kPrunable) + ")",
                                   Status(Errc::not_found, "no row"), limits->oldestKeptByCount,
                                   limits->ageCutoffNs, limits->newestReachable, std::int64_t{1});
            if (!row.ok()) {
                return row.status();
            }
            return row->columnInt(0) > 0;
        });
    };
    // One transaction per batch: between batches the write lock is free for requests.
    for (;;) {
        auto any = anythingToPrune();
        if (!any.ok()) {
            return any.status();
        }
        if (!*any) {
            break;
        }
        auto deleted = write("prune history", [&](sqlite::Connection &db) -> Result<std::int64_t> {
            auto limits = limitsFor(db, retention, now);
            if (!limits.ok()) {
                return limits.status();
            }
            auto batch = db.queryRow("SELECT count(*), coalesce(max(id), 0) FROM (" +
                                         std::string(kPrunable) + ")",
                                     Status(Errc::not_found, "no row"), limits->oldestKeptByCount,
                                     limits->ageCutoffNs, limits->newestReachable, batchSize);
            if (!batch.ok()) {
                return batch.status();
            }
            const std::int64_t count = batch->columnInt(0);
            const PointId newest = batch->columnInt(1);
            if (count == 0) {
                return std::int64_t{0};
            }
            // Changes and flush reports go with their points (ON DELETE CASCADE).
            if (auto status = db.run("DELETE FROM history_points WHERE id IN (" +
                                         std::string(kPrunable) + ")",
                                     limits->oldestKeptByCount, limits->ageCutoffNs,
                                     limits->newestReachable, batchSize);
                !status.ok()) {
                return status;
            }
            if (auto status =
                    db.run("INSERT INTO history_retention (id, pruned_through)"
                           " VALUES (1, ?1) ON CONFLICT (id) DO UPDATE SET"
                           " pruned_through = max(pruned_through, excluded.pruned_through)",
                           newest);
                !status.ok()) {
                return status;
            }
            report.prunedThrough = std::max(report.prunedThrough, newest);
            return count;
        });
        if (!deleted.ok()) {
            return deleted.status();
        }
        if (*deleted == 0) {
            break;
        }
        report.pointsDeleted += static_cast<std::uint64_t>(*deleted);
        ++report.batches;
        if (*deleted < batchSize) {
            break;
        }
    }
    return report;
}

} // namespace lutra::ctld
