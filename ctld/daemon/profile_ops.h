#pragma once
// Profiles on a node: the ones shipped in profiles_dir and the ones stored in the database,
// validated against the live schema of the node's datapath processes, diffed, applied
// (all-or-nothing, through NodeOps) and verified.

#include "ctld/profiles/diagnostic.h"
#include "daemon/auth.h"
#include "daemon/node_ops.h"

#include <optional>

namespace lutra::ctld {

class Store;

struct ProfileSummary {
    std::string name;
    std::string description;
    std::vector<std::string> extends;
    bool matchesNode = false;
    std::string source;               // file path or "stored"
    std::optional<TimePoint> updated; // stored profiles
};

struct ProfileList {
    std::vector<ProfileSummary> profiles;
    profiles::Diagnostics errors; // profiles that failed to load or resolve
};

struct ProfileDocument {
    std::string name;
    std::string yaml;   // exactly as stored or as in the file
    std::string source; // "stored", or the file's path
};

struct StoredProfile {
    std::string name;
    profiles::Diagnostics errors; // stored only when empty
};

// A profile by name, or an inline document (diff only).
struct ProfileRequest {
    std::string name;
    std::string yaml;
    bool force = false; // apply even when the profile's `match` excludes this node
};

struct ProfilePlan {
    std::string profile;
    bool matchesNode = false;
    profiles::Diagnostics errors; // validation errors (nothing changed), or node-level problems
    std::vector<PlanEntry> entries;
    bool applied = false;        // apply: all changes applied
    std::uint64_t historyId = 0; // apply: the history point
    std::vector<InstanceSetResult> results;
    std::uint32_t drift = 0; // changed entries
};

class ProfileOps {
public:
    enum class Mode { diff, apply, verify };

    ProfileOps(const Config &config, NodeOps &node, Instances &instances, Store &store);

    Result<ProfileList> list();
    // The document as written: a stored one (source "stored") before a shipped file of the same
    // name, as everywhere else. NOT_FOUND names the known profiles.
    Result<ProfileDocument> get(const std::string &name);
    Result<StoredProfile> put(const std::string &yaml, const Caller &caller);
    // Deletes a stored profile (a history point, returned); shipped files are not touched.
    Result<std::uint64_t> remove(const std::string &name, const Caller &caller);
    // Validation problems are returned in the plan's errors (with file:line:column), not as a
    // failed call: a client shows them all. Nothing changes when there are any.
    Result<ProfilePlan> run(Mode mode, const ProfileRequest &request, const Caller &caller);
    std::string lastApplied();

private:
    const Config &m_config;
    NodeOps &m_node;
    Instances &m_instances;
    Store &m_store;
};

// A page of the audit trail as asked for (ListHistory's fields, checked by HistoryOps).
struct HistoryRequest {
    std::uint32_t limit = 0; // 0: 50
    std::uint64_t beforeId = 0;
    std::string principal;
    std::string action; // "set", "apply", ...; empty: any
    std::string param;
    std::string instance;
    std::int64_t sinceNs = 0;
    std::int64_t untilNs = 0;
};

struct HistoryEntry {
    HistoryPoint point;
    std::vector<Change> changes;
};

struct HistoryList {
    std::vector<HistoryEntry> points; // newest first
    std::uint64_t nextBeforeId = 0;   // 0 when there is nothing older
};

struct RollbackResult {
    bool applied = false;
    std::uint64_t historyId = 0; // the point recording the rollback
    std::vector<PlanEntry> entries;
    std::vector<InstanceSetResult> results;
    std::vector<Status> errors; // values with no process to restore them, node-level problems
};

struct CounterHistoryRequest {
    std::string instance;     // glob; empty: all
    std::string counter;      // glob on "<block>.<counter>"; empty: all
    std::int64_t sinceNs = 0; // 0: 24 h ago
    std::int64_t untilNs = 0; // 0: now
};

// History: the audit trail, rollback to a point, and counter history.
class HistoryOps {
public:
    HistoryOps(NodeOps &node, Store &store);

    Result<HistoryList> history(const HistoryRequest &request);
    Result<RollbackResult> rollback(std::uint64_t historyId, bool dryRun, const Caller &caller);
    Result<std::vector<CounterSeries>> counterHistory(const CounterHistoryRequest &request);

private:
    NodeOps &m_node;
    Store &m_store;
};

} // namespace lutra::ctld
