#pragma once
// Plain value types of the console. The net layer converts lutra.ctl.v1 messages into these;
// nothing past console/net sees protobuf. Field meanings follow ctld/api/proto/.../ctl.proto.

#include <QList>
#include <QMap>
#include <QMetaType>
#include <QString>
#include <QStringList>

namespace lutra::console {

// The caller's role on a node; decides which controls a view enables.
enum class Role { unknown, viewer, operator_, admin };
QString roleName(Role role); // "viewer", "operator", "admin", "unknown"

// The state of the console's connection to one node's lutra-ctld.
enum class ConnectionState { connecting, ready, unreachable };
QString connectionStateName(ConnectionState state); // "connecting", "ready", "unreachable"

struct NodeInfo {
    QString node; // the name ctld reports ("node001"), not the address
    QMap<QString, QString> labels;
    QString version;
    qint64 startTimeNs = 0;
    QString principal; // who this console is to the node
    Role role = Role::unknown;
    int instanceCount = 0;
    QString lastProfile;
};

struct InstanceInfo {
    QString id; // "<kind>-<name>": "target-ost0", "bench-job1001"
    QString kind;
    QString name;
    qint64 pid = 0;
    QString version;
    qint64 startTimeNs = 0;
    bool connected = false;
    qint64 seenSinceNs = 0;
    int restarts = 0;
};

enum class ParamType {
    unspecified,
    integer,
    size,
    boolean,
    enumeration,
    duration,
    string,
    counters
};

struct SpecialValue {
    QString word; // "clear"
    QString help;
};

// Everything an editor needs; ranges come from here, never from the console's own code.
struct ParamSpec {
    QString name; // "osc.ost0.max_pages_per_rpc"
    ParamType type = ParamType::unspecified;
    QString unit; // "pages", "MiB", "bytes", "s", "ms" or ""
    qint64 min = 0;
    qint64 max = 0;
    QString defaultValue;
    bool writable = false;
    QString help;
    QStringList choices; // enum values
    QList<SpecialValue> specialValues;
    QString allowed; // human description of accepted input
    bool textCommands = false;
};

struct InstanceSpecs {
    QString instance;
    QList<ParamSpec> specs;
};

struct InstanceValue {
    QString instance;
    QString name;
    QString value;
};

struct Counter {
    QString name; // "hits"
    QString unit;
    quint64 samples = 0;
    bool withMinMaxSum = false;
    qint64 min = 0;
    qint64 max = 0;
    qint64 sum = 0;
};

struct CounterBlock {
    QString name; // "llite.lutra.read_ahead_stats"
    qint64 snapshotTimeNs = 0;
    qint64 startTimeNs = 0; // creation or last clear: a change means the counters restarted
    QList<Counter> counters;
};

struct InstanceCounters {
    QString instance;
    QList<CounterBlock> blocks;
    QList<InstanceValue> gauges; // lock_count, lock_unused_count, lru_size, cached_mb ...
};

// One StreamCounters message: every instance of a node at one moment.
struct CounterUpdate {
    qint64 timeNs = 0;
    QList<InstanceCounters> instances;
};

// One stored series of GetCounterHistory: 10 s buckets, the last value of each, with the
// bucket's min and max (gauges move within a bucket; counters only grow).
struct HistorySeries {
    QString instance;
    QString counter; // "<block>.<counter>" or a gauge's parameter name
    QList<qint64> timeNs;
    QList<qint64> value;
    QList<qint64> min;
    QList<qint64> max;
};

// Outcome of one parameter of a set (old / requested / read-back, clamped, error).
struct SetEntry {
    QString name;
    QString oldValue;
    QString requested;
    QString readBack;
    bool special = false;
    bool clamped = false;
    bool rolledBack = false;
    QString error; // empty when applied
};

struct InstanceSetOutcome {
    QString instance;
    bool applied = false;
    QStringList errors;
    QList<SetEntry> entries;
};

// One parameter of one instance in a change: what is live, what is wanted.
struct PlanEntry {
    QString instance;
    QString name;
    QString live;
    QString desired;
    bool changed = false;
    QString source; // "compute.yaml:12:3": the profile line that wants it
};

// SetParams on one node: applied everywhere or nowhere.
struct SetOutcome {
    bool applied = false;
    bool dryRun = false;
    quint64 historyId = 0;
    QList<InstanceSetOutcome> instances;
    QStringList errors;    // node-level: patterns that matched nothing, restores
    QList<PlanEntry> plan; // per instance and parameter, dry runs included
};

struct Assignment {
    QString pattern; // name or lctl glob
    QString value;   // as the admin wrote it: "16M", "on", "clear"
};

// --- Profiles, jobs and the audit trail (console part 2) ---

struct ProfileSummary {
    QString name;
    QString description;
    QStringList extends;
    bool matchesNode = false;
    QString source; // file path, or "stored"
    qint64 updatedNs = 0;
};

// "file:line:col: message" — where in a profile document something is wrong.
struct ProfileError {
    QString file;
    int line = 0;
    int column = 0;
    QString message;
};
QString profileErrorText(const ProfileError &error); // "file:3:5: message" ("file: message")

struct ProfileList {
    QList<ProfileSummary> profiles;
    QList<ProfileError> errors; // profiles that failed to load on the node
};

// DiffProfile / ApplyProfile / VerifyProfile on one node.
struct ProfilePlan {
    QString profile;
    bool matchesNode = false;
    QList<ProfileError> errors; // validation errors: nothing was changed
    QList<PlanEntry> entries;
    bool applied = false;
    quint64 historyId = 0;
    QList<InstanceSetOutcome> results;
    int drift = 0;
};

struct RollbackOutcome {
    bool applied = false;
    quint64 historyId = 0; // the new point recording the rollback
    QList<PlanEntry> entries;
    QList<InstanceSetOutcome> results;
    QStringList errors;
};

struct InstanceFlushReport {
    QString instance;
    QString error; // empty when the instance flushed
    quint64 locksCancelled = 0;
    quint64 pagesDropped = 0;
    quint64 bytesWrittenBack = 0;
    quint64 durationUs = 0;
    QStringList problems; // worked around on the way (a retried write-back)
};

struct FlushOutcome {
    QString jobId;
    bool ok = false;
    quint64 durationUs = 0;
    QList<InstanceFlushReport> instances;
    quint64 historyId = 0;
};

struct JobStat {
    QString instance;
    QString block; // "llite.lutra.job_stats"
    QString jobId;
    qint64 snapshotTimeS = 0;
    QList<Counter> counters; // read_bytes, write_bytes (with sum), ops ...
};

struct HistoryChange {
    QString instance;
    QString name;
    QString oldValue;
    QString requested;
    QString readBack;
    bool ok = false;
    QString error;
};

struct HistoryPoint {
    quint64 id = 0;
    qint64 timeNs = 0;
    QString principal;
    QString action; // "set", "apply", "rollback", "reconcile", "flush"
    QString description;
    QString profile;
    QString outcome; // "ok", "partial" (some instances failed), "error", "aborted", "pending"
    QList<HistoryChange> changes;
};

struct HistoryQuery {
    int limit = 50;       // at most 1000
    quint64 beforeId = 0; // paging cursor: older than this id; 0: newest
    QString principal;    // exact
    QString action;
    QString param;    // glob on parameter names
    QString instance; // glob on instance ids
    qint64 sinceNs = 0;
    qint64 untilNs = 0;
};

struct HistoryPage {
    QList<HistoryPoint> points; // newest first
    quint64 nextBeforeId = 0;   // 0 when there is nothing older
};

} // namespace lutra::console

Q_DECLARE_METATYPE(lutra::console::NodeInfo)
Q_DECLARE_METATYPE(lutra::console::CounterUpdate)
