// Store: desired parameters, an ordered list replayed onto every matching datapath process.
#include "core/params/glob.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_internal.h"

namespace lutra::ctld {

Status detail::checkDesired(const DesiredUpdate &update)
{
    for (std::size_t i = 0; i < update.upserts.size(); ++i) {
        const DesiredParam &param = update.upserts[i];
        const std::string where = "desired parameter " + std::to_string(i + 1);
        Status status = checkField("pattern", param.pattern, true);
        if (status.ok()) {
            status = params::Glob::compile(param.pattern)
                         .status()
                         .withContext("pattern '" + param.pattern + "'");
        }
        if (status.ok()) {
            status = checkField("value", param.value, false);
        }
        if (status.ok()) {
            status = checkField("source", param.source, false);
        }
        if (!status.ok()) {
            return status.withContext(where);
        }
    }
    for (std::size_t i = 0; i < update.removals.size(); ++i) {
        if (Status status = checkField("pattern", update.removals[i], true); !status.ok()) {
            return status.withContext("desired parameter removal " + std::to_string(i + 1));
        }
    }
    return {};
}

namespace {

// A later pattern that covers an exact name makes the name's own entry dead: it would always be
// overwritten in the replay. Drop such entries so the list shows what really takes effect.
Status dropShadowedNames(sqlite::Connection &connection, const params::Glob &glob,
                         std::int64_t newSeq)
{
    auto select =
        connection.prepare("SELECT seq, pattern FROM desired_params WHERE seq < ?1", newSeq);
    if (!select.ok()) {
        return select.status();
    }
    std::vector<std::int64_t> shadowed;
    const Status stepped = select->forEachRow([&](const sqlite::Statement &row) {
        const std::string pattern = row.columnText(1);
        auto compiled = params::Glob::compile(pattern);
        if (compiled.ok() && !compiled->hasWildcards() && glob.matches(pattern)) {
            shadowed.push_back(row.columnInt(0));
        }
    });
    if (!stepped.ok()) {
        return stepped;
    }
    auto remove = connection.prepare("DELETE FROM desired_params WHERE seq = ?1");
    if (!remove.ok()) {
        return remove.status();
    }
    for (std::int64_t seq : shadowed) {
        remove->reset();
        remove->bind(1, seq);
        if (Status status = remove->run(); !status.ok()) {
            return status;
        }
    }
    return {};
}

} // namespace

Status Store::applyDesired(PointId point, const Audit &audit, const DesiredUpdate &desired)
{
    if (desired.empty()) {
        return {};
    }
    auto remove = m_write->prepare("DELETE FROM desired_params WHERE pattern = ?1");
    if (!remove.ok()) {
        return remove.status();
    }
    for (const std::string &pattern : desired.removals) {
        remove->reset();
        remove->bind(1, pattern);
        if (Status status = remove->run(); !status.ok()) {
            return status;
        }
    }
    auto insert = m_write->prepare(
        "INSERT INTO desired_params (pattern, value, source, principal, time_ns, point_id) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    if (!insert.ok()) {
        return insert.status();
    }
    for (const DesiredParam &param : desired.upserts) {
        // Delete and insert rather than update: the entry moves to the end of the replay order.
        remove->reset();
        remove->bind(1, param.pattern);
        if (Status status = remove->run(); !status.ok()) {
            return status;
        }
        insert->reset();
        insert->bind(1, param.pattern)
            .bind(2, param.value)
            .bind(3, param.source)
            .bind(4, audit.principal)
            .bind(5, detail::toNs(audit.time))
            .bind(6, point);
        if (Status status = insert->run(); !status.ok()) {
            return status;
        }
        auto glob = params::Glob::compile(param.pattern); // checked by checkDesired()
        if (glob.ok() && glob->hasWildcards()) {
            if (Status status = dropShadowedNames(*m_write, *glob, m_write->lastInsertRowid());
                !status.ok()) {
                return status;
            }
        }
    }
    return {};
}

Result<std::vector<DesiredEntry>> Store::listDesired() const
{
    using Entries = std::vector<DesiredEntry>;
    return read("list desired parameters", [](sqlite::Connection &db) -> Result<Entries> {
        auto statement = db.prepare("SELECT pattern, value, source, principal, time_ns, point_id "
                                    "FROM desired_params ORDER BY seq");
        if (!statement.ok()) {
            return statement.status();
        }
        Entries entries;
        const Status stepped = statement->forEachRow([&](const sqlite::Statement &row) {
            entries.push_back({{row.columnText(0), row.columnText(1), row.columnText(2)},
                               row.columnText(3),
                               detail::fromNs(row.columnInt(4)),
                               row.columnInt(5)});
        });
        if (!stepped.ok()) {
            return stepped;
        }
        return entries;
    });
}

} // namespace lutra::ctld
