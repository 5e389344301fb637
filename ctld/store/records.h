#pragma once
// The values the ctld store keeps, as plain structs: no SQLite in sight.

#include <lutra/status.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld {

using Clock = std::chrono::system_clock;
using TimePoint = Clock::time_point; // stored as nanoseconds since the epoch
using PointId = std::int64_t;        // history points: 1, 2, ... never reused

// What a history point did. Stored as its name, so the file stays readable with sqlite3.
enum class Action : std::uint8_t {
    set,            // set_param: desired state and live values
    unset,          // desired parameters removed
    apply,          // a profile applied
    rollback,       // values restored to those of an earlier point
    reconcile,      // desired state re-applied to a datapath process that (re)appeared
    flush,          // a job's (or every job's) pages and locks released
    clear,          // counters cleared
    profile_put,    // a profile created or replaced
    profile_delete, // a profile deleted
};
std::string_view actionName(Action action) noexcept;
Result<Action> parseAction(std::string_view name);

enum class Outcome : std::uint8_t {
    pending, // beginApply() committed, finishApply() not yet: the crash journal
    ok,
    partial, // some instances succeeded, some failed (flush, reconcile)
    error,
    aborted, // an interrupted apply, undone after a restart
};
std::string_view outcomeName(Outcome outcome) noexcept;
Result<Outcome> parseOutcome(std::string_view name);

enum class ChangeOutcome : std::uint8_t {
    pending,  // planned by beginApply(), not yet reported
    ok,       // applied and read back
    error,    // the datapath process refused it
    reverted, // applied, then restored because the apply as a whole failed
    skipped,  // not attempted because the apply stopped earlier
};
std::string_view changeOutcomeName(ChangeOutcome outcome) noexcept;
Result<ChangeOutcome> parseChangeOutcome(std::string_view name);

// Who did what, when, where: recorded with every mutation.
struct Audit {
    TimePoint time;
    std::string node;        // the node's name at the time
    std::string principal;   // "token:alice", "cert:CN=ops", "unix:uid=0"
    std::string description; // one line for history listings
};

struct PointDraft {
    Audit audit;
    Action action = Action::set;
    std::string profile; // the profile applied, if any
};

struct HistoryPoint {
    PointId id = 0;
    TimePoint time;
    std::optional<TimePoint> finished; // empty while pending
    std::string node;
    std::string principal;
    Action action = Action::set;
    std::string description;
    std::string profile;
    Outcome outcome = Outcome::pending;
    std::string error;
    std::int64_t changeCount = 0;
};

// One parameter of one datapath process touched by a point.
struct Change {
    std::string instance; // datapath process: "target-ost0"
    std::string param;    // "osc.ost0.max_pages_per_rpc"
    std::string oldValue;
    std::string requested;
    std::string readBack; // what the process reports after the set (clamps show here)
    ChangeOutcome outcome = ChangeOutcome::ok;
    std::string error;
};

// What beginApply() journals before any datapath process is touched.
struct PlannedChange {
    std::string instance;
    std::string param;
    std::string oldValue; // what restoring "all-old" writes back
    std::string newValue;
};

struct PendingApply {
    HistoryPoint point;
    std::vector<PlannedChange> planned;
};

// The value to write back to return (instance, param) to how it was at a point.
struct RestoreValue {
    std::string instance;
    std::string param;
    std::string value;
    PointId changedBy = 0; // the first later point that changed it
};

// A desired parameter: replayed in order onto every matching datapath process.
struct DesiredParam {
    std::string pattern; // a name or an lctl glob
    std::string value;
    std::string source; // "set_param", "profile:hpc-io"
};

struct DesiredEntry {
    DesiredParam param;
    std::string principal;
    TimePoint time;
    PointId point = 0; // the point that set it
};

// Removals are applied first, then upserts in order.
struct DesiredUpdate {
    std::vector<DesiredParam> upserts; // in order; later entries win
    std::vector<std::string> removals; // patterns; absent ones are ignored
    bool empty() const noexcept { return upserts.empty() && removals.empty(); }
};

// What finishApply() records.
struct ApplyResult {
    TimePoint finished;
    Outcome outcome = Outcome::ok;
    std::string error;
    std::vector<Change> changes; // replaces the planned rows
    DesiredUpdate desired;       // committed together with the outcome
};

struct Profile {
    std::string name;
    std::string text; // the YAML as written
    std::string principal;
    TimePoint updated;
};

struct ProfileApplication {
    std::string profile;
    PointId point = 0;
    std::string node;
    Outcome outcome = Outcome::pending;
    TimePoint time; // when it finished (when it started, while pending)
};

struct FlushReport {
    std::string jobId; // the job, or "all"
    std::string instance;
    std::uint64_t locksCancelled = 0;
    std::uint64_t pagesDropped = 0;
    std::uint64_t bytesWrittenBack = 0;
    std::uint64_t durationUs = 0;
    std::string error; // empty when the flush succeeded
    // Filled when read back; taken from the point when written.
    PointId point = 0;
    TimePoint time;
    std::string principal;
};

struct PointDetail {
    HistoryPoint point;
    std::vector<Change> changes; // planned rows (outcome pending) while the point is pending
    std::vector<FlushReport> flushes;
};

struct HistoryQuery {
    static constexpr std::size_t kDefaultLimit = 100;
    static constexpr std::size_t kMaxLimit = 1000;

    std::size_t limit = kDefaultLimit; // 0: the default; above kMaxLimit: kMaxLimit
    std::optional<PointId> beforeId;   // paging cursor: points older than this one
    std::optional<TimePoint> since;    // time >= since
    std::optional<TimePoint> until;    // time < until
    std::string principal;             // exact; empty: any
    std::optional<Action> action;      // empty: any
    std::string instanceGlob;          // touched an instance matching; empty: any
    std::string paramGlob;             // touched a parameter matching; empty: any
};

struct HistoryPage {
    std::vector<HistoryPoint> points;    // newest first
    std::optional<PointId> nextBeforeId; // set when older matching points exist
};

// Counter history.
struct CounterValue {
    std::string_view name; // "llite.lutra.read_ahead_stats.hits"
    std::int64_t value = 0;
};

// One downsampled bucket of one series. Counters are monotonic, so `last` (with its exact time)
// gives rates between buckets; min/max keep peaks of gauges within the bucket.
struct CounterPoint {
    TimePoint bucketStart;
    TimePoint lastTime;
    std::int64_t last = 0;
    std::int64_t min = 0;
    std::int64_t max = 0;
    friend bool operator==(const CounterPoint &, const CounterPoint &) = default;
};

struct CounterSeries {
    std::string instance;
    std::string counter;
    std::vector<CounterPoint> points; // oldest first
};

struct CounterQuery {
    static constexpr std::size_t kDefaultMaxPoints = 1'000'000;

    std::string instanceGlob;                  // empty: every instance
    std::string counterGlob;                   // empty: every counter
    TimePoint since;                           // buckets that contain `since` or start later ...
    TimePoint until = TimePoint::max();        // ... and start before `until`
    std::size_t maxPoints = kDefaultMaxPoints; // more is an error, not a silent cut
};

} // namespace lutra::ctld
