#include "daemon/profile_ops.h"

#include "ctld/profiles/parser.h"
#include "ctld/profiles/profile_set.h"
#include "ctld/profiles/schema_check.h"
#include "ctld/profiles/suggest.h"
#include "store/store.h"

#include <fstream>
#include <set>
#include <sstream>

namespace lutra::ctld {

namespace {

TimePoint fromNs(std::int64_t ns)
{
    return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(ns)));
}

std::string storedSource(std::string_view name)
{
    return "profile:" + std::string(name);
}

// Every profile the node knows: an inline document first (it wins over a namesake), then the
// stored ones, then those of profiles_dir. Load problems go to `errors`.
profiles::ProfileSet loadProfiles(const Config &config, Store &store, const std::string &inlineYaml,
                                  profiles::Diagnostics *errors, std::string *inlineName)
{
    profiles::ProfileSet set;
    std::set<std::string> taken;
    if (!inlineYaml.empty()) {
        auto parsed = profiles::parseProfile(inlineYaml, "inline");
        if (!parsed.ok()) {
            errors->insert(errors->end(), parsed.errors.begin(), parsed.errors.end());
            return set;
        }
        *inlineName = parsed.profile.name;
        taken.insert(parsed.profile.name);
        auto added = set.add(std::move(parsed.profile));
        errors->insert(errors->end(), added.begin(), added.end());
    }
    if (auto stored = store.listProfiles()) {
        for (const auto &profile : *stored) {
            if (taken.count(profile.name) != 0) {
                continue;
            }
            auto parsed = profiles::parseProfile(profile.text, storedSource(profile.name));
            if (!parsed.ok()) {
                errors->insert(errors->end(), parsed.errors.begin(), parsed.errors.end());
                continue;
            }
            taken.insert(parsed.profile.name);
            auto added = set.add(std::move(parsed.profile));
            errors->insert(errors->end(), added.begin(), added.end());
        }
    } else {
        errors->push_back({{"ctld.db", 0, 0}, stored.status().message(), stored.status().code()});
    }
    if (!config.profilesDir.empty()) {
        profiles::ProfileSet files;
        auto loaded = files.loadDirectory(config.profilesDir);
        errors->insert(errors->end(), loaded.begin(), loaded.end());
        for (const auto &name : files.names()) {
            if (taken.count(name) == 0) {
                auto added = set.add(*files.find(name));
                errors->insert(errors->end(), added.begin(), added.end());
            }
        }
    }
    return set;
}

// A shipped profile's file, byte for byte: the editor shows it as the admin wrote it.
Result<std::string> readProfileFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        return Status{Errc::io_error, "cannot read profile " + path};
    }
    return text.str();
}

profiles::Labels labelsOf(const Config &config)
{
    return {config.labels.begin(), config.labels.end()};
}

// The union of the schemas of every instance (a disconnected one with its last schema): a profile
// line must match somewhere; one that matches only a disconnected instance is refused by the plan
// as "not connected", not as an unknown parameter.
std::vector<params::Spec> nodeSchema(Instances &instances)
{
    std::vector<params::Spec> schema;
    std::set<std::string> names;
    auto connections = instances.connected();
    for (auto &connection : instances.disconnected()) {
        connections.push_back(std::move(connection));
    }
    for (const auto &connection : connections) {
        for (const auto &spec : connection->specs) {
            if (names.insert(spec.name).second) {
                schema.push_back(spec);
            }
        }
    }
    return schema;
}

} // namespace

ProfileOps::ProfileOps(const Config &config, NodeOps &node, Instances &instances, Store &store)
    : m_config(config), m_node(node), m_instances(instances), m_store(store)
{
}

Result<ProfileList> ProfileOps::list()
{
    ProfileList out;
    profiles::Diagnostics &errors = out.errors;
    std::string unused;
    auto set = loadProfiles(m_config, m_store, {}, &errors, &unused);
    // Unknown parents and extends cycles make profiles unusable: the listing says so.
    const auto extendsErrors = set.checkExtends();
    errors.insert(errors.end(), extendsErrors.begin(), extendsErrors.end());
    std::map<std::string, TimePoint> updated;
    if (auto stored = m_store.listProfiles()) {
        for (const auto &profile : *stored) {
            updated[profile.name] = profile.updated;
        }
    }
    for (const auto &name : set.names()) {
        const auto *profile = set.find(name);
        auto &summary = out.profiles.emplace_back();
        summary.name = name;
        summary.description = profile->description;
        for (const auto &parent : profile->extends) {
            summary.extends.push_back(parent.name);
        }
        summary.matchesNode = profile->matches(m_config.node, labelsOf(m_config));
        summary.source = updated.count(name) != 0 ? std::string("stored") : profile->source;
        if (updated.count(name) != 0) {
            summary.updated = updated[name];
        }
    }
    return out;
}

Result<ProfileDocument> ProfileOps::get(const std::string &name)
{
    if (name.empty()) {
        return Status{Errc::invalid_argument, "give the name of a profile"};
    }
    // The store first: loadProfiles lets a stored profile win over a file of the same name.
    auto stored = m_store.profile(name);
    if (stored) {
        return ProfileDocument{name, stored->text, "stored"};
    }
    if (stored.status().code() != Errc::not_found) {
        return stored.status();
    }
    if (!m_config.profilesDir.empty()) {
        profiles::ProfileSet files;
        (void)files.loadDirectory(m_config.profilesDir);
        if (const auto *shipped = files.find(name)) {
            auto text = readProfileFile(shipped->source);
            if (!text) {
                return text.status();
            }
            return ProfileDocument{name, std::move(*text), shipped->source};
        }
    }
    profiles::Diagnostics errors;
    std::string unused;
    const auto names = loadProfiles(m_config, m_store, {}, &errors, &unused).names();
    std::string known;
    for (const auto &other : names) {
        known += (known.empty() ? "" : ", ") + other;
    }
    std::string message = "no profile '" + name + "' on " + m_config.node;
    const std::vector<std::string_view> candidates(names.begin(), names.end());
    if (const auto close = profiles::closestWord(name, candidates); !close.empty()) {
        message += " (did you mean " + close + "?)";
    }
    return Status{Errc::not_found, message + " (known: " + (known.empty() ? "none" : known) + ")"};
}

Result<std::uint64_t> ProfileOps::remove(const std::string &name, const Caller &caller)
{
    if (name.empty()) {
        return Status{Errc::invalid_argument, "give the name of a stored profile to delete"};
    }
    const Audit audit{Clock::now(), m_config.node, caller.principal, "delete profile " + name};
    auto point = m_store.deleteProfile(audit, name);
    if (!point) {
        if (point.status().code() == Errc::not_found) {
            return Status{Errc::not_found,
                          "no stored profile '" + name +
                              "' (profiles in profiles_dir are files: remove the file)"};
        }
        return point.status();
    }
    return static_cast<std::uint64_t>(*point);
}

Result<StoredProfile> ProfileOps::put(const std::string &yaml, const Caller &caller)
{
    StoredProfile out;
    auto parsed = profiles::parseProfile(yaml, "inline");
    if (!parsed.ok()) {
        out.errors = std::move(parsed.errors);
        return out;
    }
    const std::string name = parsed.profile.name;
    out.name = name;
    if (!m_config.profilesDir.empty()) {
        profiles::ProfileSet files;
        (void)files.loadDirectory(m_config.profilesDir);
        if (const auto *shipped = files.find(name)) {
            return Status{Errc::already_exists, "profile '" + name + "' is managed by the file " +
                                                    shipped->source + "; edit that file instead"};
        }
    }
    // Parents must exist and not form a cycle with what is there.
    profiles::Diagnostics errors;
    std::string inlineName;
    auto set = loadProfiles(m_config, m_store, yaml, &errors, &inlineName);
    auto resolved = set.resolve(name);
    // A cycle or unknown parent found among stored profiles is reported at the document being
    // stored (its `extends`), which is the file the user gave; where it closes goes in the text.
    const profiles::Location here = parsed.profile.extends.empty()
                                        ? profiles::Location{"inline", 0, 0}
                                        : parsed.profile.extends.front().location;
    for (auto error : resolved.errors) {
        if (error.location.file != "inline") {
            error.message = error.message + " (at " + error.location.toString() + ")";
            error.location = here;
        }
        out.errors.push_back(std::move(error));
    }
    if (!resolved.ok()) {
        return out;
    }
    const Audit audit{Clock::now(), m_config.node, caller.principal, "store profile " + name};
    if (auto point = m_store.putProfile(audit, name, yaml); !point) {
        return point.status();
    }
    return out;
}

Result<ProfilePlan> ProfileOps::run(Mode mode, const ProfileRequest &request, const Caller &caller)
{
    if (request.name.empty() == request.yaml.empty()) {
        return Status{Errc::invalid_argument, "give a profile name or an inline YAML document"};
    }
    if (!request.yaml.empty() && mode == Mode::verify) {
        return Status{Errc::invalid_argument,
                      "verify works on a stored or shipped profile, by name"};
    }
    ProfilePlan out;
    profiles::Diagnostics loadErrors;
    std::string inlineName;
    auto set = loadProfiles(m_config, m_store, request.yaml, &loadErrors, &inlineName);
    const std::string name = request.yaml.empty() ? request.name : inlineName;
    out.profile = name;
    if (!request.yaml.empty() && name.empty()) {
        out.errors = std::move(loadErrors);
        return out;
    }
    const auto *profile = set.find(name);
    if (profile == nullptr) {
        std::string known;
        for (const auto &other : set.names()) {
            known += (known.empty() ? "" : ", ") + other;
        }
        return Status{Errc::not_found, "no profile '" + name + "' on " + m_config.node +
                                           " (known: " + (known.empty() ? "none" : known) + ")"};
    }
    const bool matches = profile->matches(m_config.node, labelsOf(m_config));
    out.matchesNode = matches;
    if (mode == Mode::apply && !matches && !request.force) {
        return Status{Errc::failed_precondition,
                      "profile '" + name + "' does not match node " + m_config.node +
                          " (its match: section excludes it); use force to "
                          "apply it anyway"};
    }
    auto resolved = set.resolve(name);
    auto errors = resolved.errors;
    if (resolved.ok()) {
        const auto schema = nodeSchema(m_instances);
        if (schema.empty()) {
            return Status{Errc::failed_precondition, "no datapath process is running on " +
                                                         m_config.node +
                                                         ": nothing to compare the profile with"};
        }
        auto invalid = profiles::validateParams(resolved.params, schema);
        errors.insert(errors.end(), invalid.begin(), invalid.end());
    }
    if (!errors.empty()) {
        out.errors = std::move(errors);
        return out;
    }

    ChangeRequest change;
    change.principal = caller.principal;
    change.action = Action::apply;
    change.profile = name;
    change.description = "apply profile " + name;
    change.dryRun = mode != Mode::apply;
    for (const auto &entry : resolved.params) {
        change.targets.push_back({{}, entry.pattern, entry.value, entry.location.toString()});
        change.desired.upserts.push_back({entry.pattern, entry.value, "profile:" + name});
    }
    auto outcome = m_node.change(change);
    if (!outcome) {
        return outcome.status();
    }
    for (const auto &entry : outcome->plan) {
        out.drift += entry.changed ? 1 : 0;
    }
    out.entries = std::move(outcome->plan);
    out.applied = mode == Mode::apply && outcome->applied;
    out.historyId = outcome->historyId;
    out.results = std::move(outcome->instances);
    for (const auto &error : outcome->errors) {
        // A node-level problem: "file" is the node, no line.
        out.errors.push_back({{m_config.node, 0, 0}, error, Errc::failed_precondition});
    }
    return out;
}

std::string ProfileOps::lastApplied()
{
    auto applications = m_store.profileApplications({}, 20);
    if (!applications) {
        return {};
    }
    for (const auto &application : *applications) {
        if (application.outcome == Outcome::ok) {
            return application.profile;
        }
    }
    return {};
}

HistoryOps::HistoryOps(NodeOps &node, Store &store) : m_node(node), m_store(store) {}

Result<HistoryList> HistoryOps::history(const HistoryRequest &request)
{
    HistoryQuery query;
    query.limit = request.limit == 0 ? 50 : request.limit;
    if (query.limit > HistoryQuery::kMaxLimit) {
        return Status{Errc::out_of_range, "history limit " + std::to_string(request.limit) +
                                              " is above " +
                                              std::to_string(HistoryQuery::kMaxLimit)};
    }
    if (request.beforeId != 0) {
        query.beforeId = static_cast<PointId>(request.beforeId);
    }
    if (request.sinceNs != 0) {
        query.since = fromNs(request.sinceNs);
    }
    if (request.untilNs != 0) {
        query.until = fromNs(request.untilNs);
    }
    query.principal = request.principal;
    if (!request.action.empty()) {
        auto action = parseAction(request.action);
        if (!action) {
            return action.status();
        }
        query.action = *action;
    }
    query.instanceGlob = request.instance;
    query.paramGlob = request.param;
    auto page = m_store.history(query);
    if (!page) {
        return page.status();
    }
    HistoryList out;
    for (auto &point : page->points) {
        auto &entry = out.points.emplace_back();
        entry.point = std::move(point);
        if (entry.point.changeCount == 0) {
            continue;
        }
        auto detail = m_store.point(entry.point.id);
        if (!detail) {
            return detail.status();
        }
        entry.changes = std::move(detail->changes);
    }
    out.nextBeforeId = page->nextBeforeId ? static_cast<std::uint64_t>(*page->nextBeforeId) : 0;
    return out;
}

Result<RollbackResult> HistoryOps::rollback(std::uint64_t historyId, bool dryRun,
                                            const Caller &caller)
{
    if (historyId == 0) {
        return Status{Errc::invalid_argument, "give the history point to roll back to (its id)"};
    }
    const auto target = static_cast<PointId>(historyId);
    if (auto point = m_store.point(target); !point) {
        return point.status();
    }
    auto values = m_store.valuesToRestore(target);
    if (!values) {
        return values.status();
    }
    if (values->empty()) {
        return Status{Errc::failed_precondition, "nothing changed after history point " +
                                                     std::to_string(target) +
                                                     ": nothing to roll back"};
    }
    ChangeRequest change;
    change.principal = caller.principal;
    change.action = Action::rollback;
    change.description = "roll back to point " + std::to_string(target);
    change.dryRun = dryRun;
    change.allowUnmatched = true; // values of processes that are gone went with them
    for (const auto &value : *values) {
        change.targets.push_back(
            {value.instance, value.param, value.value, "point " + std::to_string(value.changedBy)});
        change.desired.upserts.push_back(
            {value.param, value.value, "rollback:" + std::to_string(target)});
    }
    auto outcome = m_node.change(change);
    if (!outcome) {
        return outcome.status();
    }
    RollbackResult out;
    out.applied = !dryRun && outcome->applied;
    out.historyId = outcome->historyId;
    std::set<std::pair<std::string, std::string>> planned;
    for (const auto &entry : outcome->plan) {
        planned.insert({entry.instance, entry.name});
    }
    out.entries = std::move(outcome->plan);
    for (const auto &value : *values) {
        if (planned.count({value.instance, value.param}) == 0) {
            out.errors.emplace_back(Errc::not_found,
                                    value.instance + " " + value.param +
                                        ": not running now; nothing to restore there");
        }
    }
    out.results = std::move(outcome->instances);
    for (const auto &message : outcome->errors) {
        out.errors.emplace_back(Errc::failed_precondition, message);
    }
    return out;
}

Result<std::vector<CounterSeries>> HistoryOps::counterHistory(const CounterHistoryRequest &request)
{
    CounterQuery query;
    query.instanceGlob = request.instance;
    query.counterGlob = request.counter;
    const auto now = Clock::now();
    query.since = request.sinceNs != 0 ? fromNs(request.sinceNs) : now - std::chrono::hours(24);
    query.until = request.untilNs != 0 ? fromNs(request.untilNs) : TimePoint::max();
    query.maxPoints = 200'000;
    return m_store.counterHistory(query);
}

} // namespace lutra::ctld
