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
    std::lock_guard lock(m_writeMutex);
    if (!m_write) {
        return closedError(operation);
    }
    auto transaction = sqlite::Transaction::begin(*m_write, sqlite::Transaction::Kind::immediate);
    if (!transaction.ok()) {
        return failure(operation, transaction.status());
    }
    auto upsert = m_write->prepare(
        "INSERT INTO profiles (name, text, principal, updated_ns) VALUES (?1, ?2, ?3, ?4) "
        "ON CONFLICT (name) DO UPDATE SET text = excluded.text, principal = excluded.principal, "
        "updated_ns = excluded.updated_ns");
    if (!upsert.ok()) {
        return failure(operation, upsert.status());
    }
    upsert->bind(1, name).bind(2, text).bind(3, audit.principal).bind(4, detail::toNs(audit.time));
    if (status = upsert->run(); !status.ok()) {
        return failure(operation, status);
    }
    auto point =
        insertPoint({audit, Action::profile_put, std::string(name)}, Outcome::ok, {}, true);
    if (!point.ok()) {
        return failure(operation, point.status());
    }
    if (status = transaction->commit(); !status.ok()) {
        return failure(operation, status);
    }
    return point;
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
    std::lock_guard lock(m_writeMutex);
    if (!m_write) {
        return closedError(operation);
    }
    auto transaction = sqlite::Transaction::begin(*m_write, sqlite::Transaction::Kind::immediate);
    if (!transaction.ok()) {
        return failure(operation, transaction.status());
    }
    auto remove = m_write->prepare("DELETE FROM profiles WHERE name = ?1");
    if (!remove.ok()) {
        return failure(operation, remove.status());
    }
    remove->bind(1, name);
    if (status = remove->run(); !status.ok()) {
        return failure(operation, status);
    }
    if (m_write->changes() == 0) {
        return failure(operation, Status(Errc::not_found, "no such profile"));
    }
    auto point =
        insertPoint({audit, Action::profile_delete, std::string(name)}, Outcome::ok, {}, true);
    if (!point.ok()) {
        return failure(operation, point.status());
    }
    if (status = transaction->commit(); !status.ok()) {
        return failure(operation, status);
    }
    return point;
}

Result<Profile> Store::profile(std::string_view name) const
{
    const std::string operation = "read profile '" + std::string(name) + "'";
    std::lock_guard lock(m_readMutex);
    if (!m_read) {
        return closedError(operation);
    }
    auto statement =
        m_read->prepare("SELECT name, text, principal, updated_ns FROM profiles WHERE name = ?1");
    if (!statement.ok()) {
        return failure(operation, statement.status());
    }
    statement->bind(1, name);
    auto row = statement->step();
    if (!row.ok()) {
        return failure(operation, row.status());
    }
    if (!*row) {
        return failure(operation, Status(Errc::not_found, "no such profile"));
    }
    return readProfile(*statement);
}

Result<std::vector<Profile>> Store::listProfiles() const
{
    constexpr std::string_view kOperation = "list profiles";
    std::lock_guard lock(m_readMutex);
    if (!m_read) {
        return closedError(kOperation);
    }
    auto statement =
        m_read->prepare("SELECT name, text, principal, updated_ns FROM profiles ORDER BY name");
    if (!statement.ok()) {
        return failure(kOperation, statement.status());
    }
    std::vector<Profile> profiles;
    for (;;) {
        auto row = statement->step();
        if (!row.ok()) {
            return failure(kOperation, row.status());
        }
        if (!*row) {
            return profiles;
        }
        profiles.push_back(readProfile(*statement));
    }
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
    std::lock_guard lock(m_readMutex);
    if (!m_read) {
        return closedError(kOperation);
    }
    auto statement = m_read->prepare(
        "SELECT profile, point_id, node, outcome, time_ns FROM profile_applications "
        "WHERE (?1 IS NULL OR profile = ?1) ORDER BY point_id DESC LIMIT ?2");
    if (!statement.ok()) {
        return failure(kOperation, statement.status());
    }
    statement->bind(1, profile.empty() ? std::nullopt : std::optional<std::string_view>(profile))
        .bind(2, static_cast<std::int64_t>(limit));
    std::vector<ProfileApplication> applications;
    for (;;) {
        auto row = statement->step();
        if (!row.ok()) {
            return failure(kOperation, row.status());
        }
        if (!*row) {
            return applications;
        }
        auto outcome = parseOutcome(statement->columnText(3));
        if (!outcome.ok()) {
            return failure(kOperation,
                           Status(Errc::failed_precondition, outcome.status().message()));
        }
        applications.push_back({statement->columnText(0), statement->columnInt(1),
                                statement->columnText(2), *outcome,
                                detail::fromNs(statement->columnInt(4))});
    }
}

} // namespace lutra::ctld
