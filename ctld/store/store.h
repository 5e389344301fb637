#pragma once
// Store: lutra-ctld's SQLite database (WAL, synchronous=FULL, versioned schema). Desired
// parameters, the audit history of every change with its apply journal, profiles, flush reports
// and downsampled counter history. See README.md for the schema and the durability choices.
//
// Every mutation commits before it returns: what a client was told is done survives a crash of
// ctld and a power loss. Counter samples are the exception by design: they are buffered in
// memory and written in one transaction per flushSamples().
//
// Thread-safe. Mutations share one connection (serialised); reads use a second, read-only
// connection, so a long history query never delays a mutation and vice versa.

#include <lutra/status.h>

#include "store/records.h"

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld {

namespace sqlite {
class Connection;
}
class CounterBuffer;
struct BucketRow;

struct StoreOptions {
    std::chrono::seconds bucketWidth{10};         // counter history resolution
    std::chrono::seconds retention{24 * 60 * 60}; // counter history kept
    std::size_t maxBufferedBuckets = 200'000;     // unflushed buckets; the oldest go beyond
    std::chrono::milliseconds busyTimeout{5000};  // waiting for another process's lock
};

struct StoreStats {
    std::uint64_t commits = 0;       // write transactions committed (any kind)
    std::uint64_t sampleFlushes = 0; // flushSamples() that committed
    std::uint64_t sampleFlushFailures = 0;
    std::uint64_t samplesRecorded = 0;
    std::uint64_t bucketsBuffered = 0; // waiting for the next flush
    std::uint64_t bucketsWritten = 0;
    std::uint64_t bucketsDropped = 0; // over maxBufferedBuckets, or older than the retention
    std::uint64_t bucketsPruned = 0;  // deleted from the database by retention
};

// History retention (ctld.yaml audit_retention); 0 turns a limit off.
struct HistoryRetention {
    std::size_t maxPoints = 0;      // keep the newest N points
    std::chrono::seconds maxAge{0}; // keep points younger than this
    std::size_t batchSize = 1000;   // points deleted per transaction
};

struct PruneReport {
    std::uint64_t pointsDeleted = 0;
    std::uint64_t batches = 0; // transactions that deleted points
    PointId prunedThrough = 0; // newest point this call deleted (0: none)
};

class Store {
public:
    // Opens or creates the database (mode 0640 when created), refuses files that are not
    // lutra-ctld databases or are newer than this build, and migrates older ones.
    static Result<std::unique_ptr<Store>> open(const std::string &path, StoreOptions options = {});
    ~Store(); // flushes buffered samples (best effort) and closes the database
    Store(const Store &) = delete;
    Store &operator=(const Store &) = delete;

    const std::string &path() const noexcept { return m_path; }
    int schemaVersion() const noexcept { return m_schemaVersion; }
    StoreStats stats() const;
    // Writes buffered samples and closes; later calls fail with failed_precondition.
    Status close();

    // ---- Changes to datapath processes: the apply journal ----

    // Records a pending point with its planned changes, committed before any datapath process
    // is touched: after a crash, pendingApplies() says what to restore.
    Result<PointId> beginApply(const PointDraft &draft, const std::vector<PlannedChange> &planned);
    // Records the outcome, the per-parameter results (replacing the plan) and the desired-state
    // update in one transaction. The point must be pending; the outcome must not be.
    Status finishApply(PointId point, const ApplyResult &result);
    // Points begun and never finished (ctld died in between), newest first: undoing them in
    // this order unwinds them like a stack, whatever mix of changes and undos was interrupted.
    Result<std::vector<PendingApply>> pendingApplies() const;
    // Settles a pending point whose changes were undone after a crash, in one transaction: the
    // undo is recorded as a finished point (`undo`, `result`) and `interrupted` becomes aborted
    // with `note`. The undo has no journal of its own (its target, the interrupted point's old
    // values, is in the interrupted point's journal), so a crash before this commit leaves only
    // the interrupted point pending and the next start repeats the same undo.
    Result<PointId> settleInterrupted(PointId interrupted, const PointDraft &undo,
                                      const ApplyResult &result, std::string_view note);

    // A mutation that needs no journal, recorded in one transaction with its changes and the
    // desired-state update: e.g. desired parameters edited with no live process to apply to.
    Result<PointId> recordPoint(const PointDraft &draft, Outcome outcome, std::string_view error,
                                const std::vector<Change> &changes,
                                const DesiredUpdate &desired = {});

    // ---- Desired parameters ----
    Result<std::vector<DesiredEntry>> listDesired() const; // in replay order

    // ---- History ----
    Result<HistoryPage> history(const HistoryQuery &query) const;
    Result<PointDetail> point(PointId id) const;
    // What to write to get back to how things were right after point `target`: for every
    // (instance, param) changed successfully by a later point, the old value of its earliest
    // such change. Reconcile points are left out: they re-establish desired state, they do not
    // change it. Sorted by instance, then param.
    Result<std::vector<RestoreValue>> valuesToRestore(PointId target) const;
    // Deletes points over the count or age limit, oldest first, batchSize points per transaction
    // (requests run in between), never a pending point (the apply journal) nor one a desired
    // parameter came from. A rollback to a point older than the newest deleted one is refused
    // from then on (failed_precondition): the changes since are no longer all known.
    Result<PruneReport> pruneHistory(const HistoryRetention &retention,
                                     TimePoint now = Clock::now());

    // ---- Profiles (each put and delete is a history point) ----
    Result<PointId> putProfile(const Audit &audit, std::string_view name, std::string_view text);
    Result<PointId> deleteProfile(const Audit &audit, std::string_view name);
    Result<Profile> profile(std::string_view name) const;
    Result<std::vector<Profile>> listProfiles() const; // by name
    // Newest first; an empty name means every profile.
    Result<std::vector<ProfileApplication>> profileApplications(std::string_view profile,
                                                                std::size_t limit) const;

    // ---- Flush reports (a flush is a history point with one report per instance) ----
    Result<PointId> recordFlush(const Audit &audit, Outcome outcome, std::string_view error,
                                const std::vector<FlushReport> &reports);
    // Newest first; an empty job id means every job.
    Result<std::vector<FlushReport>> flushReports(std::string_view jobId, std::size_t limit) const;

    // ---- Counter history ----

    // Buffers samples in memory (downsampled into buckets as they arrive); no SQLite.
    Status recordSamples(std::string_view instance, TimePoint time,
                         std::span<const CounterValue> values);
    // Writes every buffered bucket and prunes buckets older than the retention, in ONE
    // transaction. On failure the buckets stay buffered for the next call.
    Status flushSamples(TimePoint now = Clock::now());
    // Stored and still-buffered buckets of matching series, by instance and counter.
    Result<std::vector<CounterSeries>> counterHistory(const CounterQuery &query) const;

private:
    Store(std::string path, StoreOptions options);
    Status openConnections();
    Status closedError(std::string_view operation) const;

    // "<path>: <operation>: <error>"
    Status failure(std::string_view operation, const Status &status) const;

    // The frame of every call that touches the database: takes the connection's lock, fails
    // with closedError() once closed, runs body(connection) in a transaction and returns what
    // body returns (Status or Result<T>), errors as failure(operation, ...). write() runs an
    // IMMEDIATE transaction and commits it if body succeeds; read() a DEFERRED one, so all of
    // body's statements see one snapshot. Defined in store_internal.h.
    template <std::invocable<sqlite::Connection &> Body>
    auto write(std::string_view operation, Body &&body);
    template <std::invocable<sqlite::Connection &> Body>
    auto read(std::string_view operation, Body &&body) const;

    // Parts of the public mutations, run on the write connection inside write().
    Result<PointId> insertPoint(const PointDraft &draft, Outcome outcome, std::string_view error,
                                bool finished);
    Status insertChanges(PointId point, const std::vector<Change> &changes);
    Status applyDesired(PointId point, const Audit &audit, const DesiredUpdate &desired);
    Result<std::uint64_t> writeBuckets(const std::vector<BucketRow> &rows, std::int64_t cutoffNs);

    const std::string m_path;
    const StoreOptions m_options;
    int m_schemaVersion = 0;

    // Each connection with its own lock; null once closed. Never held together except by
    // close(), which takes the write lock first.
    mutable std::mutex m_writeMutex;
    std::unique_ptr<sqlite::Connection> m_write;
    mutable std::mutex m_readMutex;
    std::unique_ptr<sqlite::Connection> m_read;
    std::unique_ptr<CounterBuffer> m_counters;
    std::mutex m_flushMutex; // one flushSamples() at a time; taken before m_writeMutex
    std::atomic<bool> m_closed{false};

    std::atomic<std::uint64_t> m_commits{0};
    std::atomic<std::uint64_t> m_sampleFlushes{0};
    std::atomic<std::uint64_t> m_sampleFlushFailures{0};
    std::atomic<std::uint64_t> m_bucketsWritten{0};
    std::atomic<std::uint64_t> m_bucketsPruned{0};
};

} // namespace lutra::ctld
