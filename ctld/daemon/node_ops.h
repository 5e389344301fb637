#pragma once
// What ctld does, without gRPC server plumbing: reads and changes the parameters of the node's
// datapath processes atomically per node, applies profiles, flushes jobs, and records every
// change. The gRPC service (api/) is a thin adapter over this class.

#include <lutra/status.h>

#include "core/params/glob.h"
#include "ctld/metrics/exposition.h"
#include "daemon/auth.h"
#include "daemon/instances.h"
#include "daemon/job_stats_text.h"
#include "lutra/params/v1/params.pb.h"
#include "store/records.h"

#include <mutex>

namespace lutra::ctld {

class Store;
class ProfileCatalog;

// One parameter change the node should make: `instance` empty means every instance with a
// matching parameter; patterns are lctl globs.
struct Target {
    std::string instance;
    std::string pattern;
    std::string value;
    std::string source; // where it was asked for: "set_param", "profile.yaml:12:3", "history 42"
};

struct ChangeRequest {
    std::vector<Target> targets;
    std::string principal;
    Action action = Action::set;
    std::string description; // for the history
    std::string profile;     // the profile applied, if any
    bool dryRun = false;
    DesiredUpdate desired; // committed with the outcome when everything applied
    // Patterns that match nothing on some instance are fine (reconcile of one instance);
    // otherwise each pattern must match somewhere on the node.
    bool allowUnmatched = false;
    std::string instanceGlob; // restricts the instances considered (empty: all)
    // Recovery: the pending point this change undoes. It gets no journal of its own and is
    // recorded together with that point's abort (Store::settleInterrupted).
    PointId undoes = 0;
};

// Test-only crash points; lutra-ctld never sets them (only the lutra-ctld-faults test binary
// reads them from its environment), so a production daemon cannot be made to kill itself.
struct FaultHooks {
    std::size_t killAfterInstances = 0; // SIGKILL once this many instances applied a change
};

// The schema of one instance (the parameters a pattern matched).
struct InstanceSpecs {
    std::string instance;
    std::vector<params::Spec> specs;
};

struct InstanceValue {
    std::string instance;
    std::string name;
    std::string value; // canonical text
};

// An instance that matched but gave no values: not connected, or did not answer in time.
struct InstanceFailure {
    std::string instance;
    std::string message;
};

// Values of every instance that answered, and each instance that matched but did not.
struct ParamValues {
    std::vector<InstanceValue> values;
    std::vector<InstanceFailure> failures;
};

// What a change means on one instance, parameter by parameter.
struct PlanEntry {
    std::string instance;
    std::string name;
    std::string live;    // canonical value before the change
    std::string desired; // canonical value asked for, or the action's word
    bool changed = true; // desired differs from live (an action always changes)
    std::string source;  // where it was asked for: "set_param", "profile.yaml:12:3", ...
};

// What one datapath process answered to its batch, in its own protocol (lutra.params.v1).
struct InstanceSetResult {
    std::string instance;
    params::v1::BatchResult result;
};

// What one datapath process's flush did.
struct InstanceFlushReport {
    std::string instance;
    Status error; // ok, or why this instance's flush failed
    std::uint64_t locksCancelled = 0;
    std::uint64_t pagesDropped = 0;
    std::uint64_t bytesWrittenBack = 0;
    std::uint64_t durationUs = 0;
    std::vector<std::string> errors; // problems the flush met but worked around
};

struct FlushResult {
    std::string jobId; // empty: every job
    bool ok = false;   // every instance flushed without error
    std::uint64_t durationUs = 0;
    std::vector<InstanceFlushReport> instances; // processes with a client cache
    std::uint64_t historyId = 0;
};

struct ChangeResult {
    bool applied = false;
    std::uint64_t historyId = 0;
    std::vector<PlanEntry> plan;              // per instance and parameter
    std::vector<InstanceSetResult> instances; // what each datapath process said
    std::vector<std::string> errors;          // node-level problems
};

class NodeOps {
public:
    NodeOps(const Config &config, Instances &instances, Store *store);

    const Config &config() const noexcept { return m_config; }
    void setFaultHooks(const FaultHooks &hooks) { m_faultHooks = hooks; }

    Result<std::vector<InstanceSpecs>> listParams(const std::string &pattern,
                                                  const std::string &instanceGlob);
    // A partial result when some instances did not answer or are not connected (each named in
    // `failures`); an error only when no matching instance gave a value.
    Result<ParamValues> getParams(const std::vector<std::string> &patterns,
                                  const std::string &instanceGlob);

    // Plans the change on every instance (validating every value against the instance's own
    // schema, reading the current values), then applies it instance by instance; when one fails,
    // what was already applied is restored. An invalid request changes nothing and says why.
    // Changes are serialised: two callers never interleave their batches on one node.
    Result<ChangeResult> change(const ChangeRequest &request);

    Result<FlushResult> flushJob(const std::string &job, bool all,
                                 std::chrono::milliseconds timeout, const std::string &principal);
    Result<std::vector<JobStat>> jobStats(const std::string &jobGlob);

    // Called for an instance that appeared or restarted: its matching desired parameters again.
    void reconcile(const std::shared_ptr<const Connection> &connection, bool restarted);
    // Applies interrupted by a crash of ctld are undone (the node goes back to all-old).
    Status recoverInterruptedApplies();

    // How long node-wide flushes took, for /metrics.
    metrics::DurationHistogram flushDurations() const;

    static constexpr std::chrono::milliseconds kCallTimeout{5000};

private:
    struct InstancePlan;
    Result<std::vector<InstancePlan>> plan(const ChangeRequest &request,
                                           std::vector<std::string> *errors);
    Status readCurrent(std::vector<InstancePlan> &plans);
    // Disconnected instances (within `instanceGlob`) whose last schema matches `glob`.
    std::vector<std::string> notConnectedMatching(const params::Glob &glob,
                                                  const std::string &instanceGlob) const;
    Status restore(const std::vector<InstancePlan> &plans, std::size_t count,
                   const std::string &principal, std::vector<std::string> *errors);

    const Config &m_config;
    Instances &m_instances;
    Store *m_store;
    FaultHooks m_faultHooks;
    // change() with m_changeMutex already held by the caller.
    Result<ChangeResult> changeLocked(const ChangeRequest &request);

    std::mutex m_changeMutex; // one change at a time per node
    mutable std::mutex m_flushMetricsMutex;
    metrics::DurationHistogram m_flushDurations = metrics::DurationHistogram::withDefaultBounds();
};

} // namespace lutra::ctld
