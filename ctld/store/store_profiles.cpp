// Store: profiles (YAML text by name; each put and delete is a history point) and their
// applications (the view over apply points that name a profile).
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_internal.h"

#include <algorithm>

namespace lutra::ctld {

namespace {

constexpr std::size_t kMaxNameBytes = 256;
constexpr std::size_t kDefaultApplications = 100;
constexpr std::size_t kMaxApplications = 1000;

Status checkProfileName(std::string_view name)
{
    Status status = detail::checkField("profile name", name, true, kMaxNameBytes);
    if (!status.ok()) {
        return status;
    }
    for (std::size_t i = 0; i < name.size(); ++i) {
        const auto c = static_cast<unsigned char>(name[i]);
        if (c < 0x20 || c == 0x7f) {
            return {Errc::invalid_argument,
                    "profile name: control character at position " + std::to_string(i + 1)};
        }
    }
    return {};
}

Profile readProfile(const sqlite::Statement &statement)
{
    return Profile{statement.columnText(0), statement.columnText(1), statement.columnText(2),
                   detail::fromNs(statement.columnInt(3))};
}

} // namespace

Result<PointId> Store::putProfile(const Audit &audit, std::string_view name, std::string_view text)
{
    const std::string operation = "store profile '" + std::string(name) + "'";
    Status status = detail::checkAudit(audit);
    if (status.ok()) {
        status = checkProfileName(name);
    }
    if (status.ok()) {
        status = detail::checkField("profile text", text, true, detail::kMaxProfileBytes);
    }
    if (!status.ok()) {
        return failure(operation, status);
    }
    return write(operation, [&](sqlite::Connection &db) -> Result<PointId> {
        const Status stored = db.run(
            "INSERT INTO profiles (name, text, principal, updated_ns) VALUES (?1, ?2, ?3, ?4) "
            "ON CONFLICT (name) DO UPDATE SET text = excluded.text, "
            "principal = excluded.principal, updated_ns = excluded.updated_ns",
            name, text, audit.principal, detail::toNs(audit.time));
        if (!stored.ok()) {
            return stored;
        }
        return insertPoint({audit, Action::profile_put, std::string(name)}, Outcome::ok, {}, true);
    });
}

Result<PointId> Store::deleteProfile(const Audit &audit, std::string_view name)
{
    const std::string operation = "delete profile '" + std::string(name) + "'";
    Status status = detail::checkAudit(audit);
    if (status.ok()) {
        status = checkProfileName(name);
    }
    if (!status.ok()) {
        return failure(operation, status);
    }
    return write(operation, [&](sqlite::Connection &db) -> Result<PointId> {
        const Status removed = db.run("DELETE FROM profiles WHERE name = ?1", name);
        if (!removed.ok()) {
            return removed;
        }
        if (db.changes() == 0) {
            return Status(Errc::not_found, "no such profile");
        }
        return insertPoint({audit, Action::profile_delete, std::string(name)}, Outcome::ok, {},
                           true);
    });
}

Result<Profile> Store::profile(std::string_view name) const
{
    const std::string operation = "read profile '" + std::string(name) + "'";
    return read(operation, [&](sqlite::Connection &db) -> Result<Profile> {
        auto statement =
            db.queryRow("SELECT name, text, principal, updated_ns FROM profiles WHERE name = ?1",
                        Status(Errc::not_found, "no such profile"), name);
        if (!statement.ok()) {
            return statement.status();
        }
        return readProfile(*statement);
    });
}

Result<std::vector<Profile>> Store::listProfiles() const
{
    using Profiles = std::vector<Profile>;
    return read("list profiles", [](sqlite::Connection &db) -> Result<Profiles> {
        auto statement =
            db.prepare("SELECT name, text, principal, updated_ns FROM profiles ORDER BY name");
        if (!statement.ok()) {
            return statement.status();
        }
        Profiles profiles;
        const Status stepped = statement->forEachRow(
            [&](const sqlite::Statement &row) { profiles.push_back(readProfile(row)); });
        if (!stepped.ok()) {
            return stepped;
        }
        return profiles;
    });
}

Result<std::vector<ProfileApplication>> Store::profileApplications(std::string_view profile,
                                                                   std::size_t limit) const
{
    constexpr std::string_view kOperation = "list profile applications";
    if (Status status = detail::checkField("profile name", profile, false, kMaxNameBytes);
        !status.ok()) {
        return failure(kOperation, status);
    }
    limit = limit == 0 ? kDefaultApplications : std::min(limit, kMaxApplications);
    using Applications = std::vector<ProfileApplication>;
    return read(kOperation, [&](sqlite::Connection &db) -> Result<Applications> {
        auto statement =
            db.prepare("SELECT profile, point_id, node, outcome, time_ns FROM profile_applications "
                       "WHERE (?1 IS NULL OR profile = ?1) ORDER BY point_id DESC LIMIT ?2",
                       profile.empty() ? std::nullopt : std::optional<std::string_view>(profile),
                       static_cast<std::int64_t>(limit));
        if (!statement.ok()) {
            return statement.status();
        }
        Applications applications;
        const Status stepped = statement->forEachRow([&](const sqlite::Statement &row) -> Status {
            auto outcome = parseOutcome(row.columnText(3));
            if (!outcome.ok()) {
                return Status(Errc::failed_precondition, outcome.status().message());
            }
            applications.push_back({row.columnText(0), row.columnInt(1), row.columnText(2),
                                    *outcome, detail::fromNs(row.columnInt(4))});
            return {};
        });
        if (!stepped.ok()) {
            return stepped;
        }
        return applications;
    });
}

} // namespace lutra::ctld
