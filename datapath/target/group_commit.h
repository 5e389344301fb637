#pragma once
// GroupCommit: a write is acknowledged only once it is durable, and concurrent writers share the
// cost. Writers queue a node that lives on their own stack; one committer thread takes the whole
// queue as a batch, fdatasyncs each dirty file once, appends ONE fixed-size record for the batch
// to .lutra/commit.log, fdatasyncs the log, and wakes the batch's writers together. No
// allocation and no callback per write (LU-7251: per-transaction callbacks and allocations cost
// more than the sync they track).

#include <lutra/status.h>

#include "core/params/catalog.h"
#include "core/params/counters.h"
#include "target/object_store.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::target {

// One record per committed batch, appended to the commit log (host byte order).
struct CommitRecord {
    static constexpr std::uint32_t kMagic = 0x5243554c; // "LUCR"
    std::uint32_t magic = kMagic;
    std::uint32_t writes = 0; // writes acknowledged by this batch
    std::uint64_t sequence = 0;
    std::uint64_t bytes = 0;
    std::int64_t timeNs = 0; // wall clock when the batch became durable
};
static_assert(sizeof(CommitRecord) == 32, "commit records are fixed-size");

enum class CommitMode : std::uint8_t {
    batched,  // group commit
    perWrite, // one file sync + one record + one log sync per write: the unbatched baseline
};

class GroupCommit {
public:
    static constexpr std::string_view kLogName = "commit.log"; // in ObjectStore::kReservedDir
    static constexpr std::chrono::milliseconds kMaxWindow{
        params::catalog::maxOf(params::catalog::kGroupCommit, "commit_interval")};

    enum Counter : std::size_t {
        batches,        // batches attempted
        writes,         // writes those batches carried
        syncs,          // fdatasync calls, data files and log
        batch_writes,   // writes per batch: min / max / sum
        failed_batches, // batches whose writers got io_error
        counter_count,
    };

    // Opens (or creates) the commit log under the store's reserved directory and starts the
    // committer. Sequence numbers continue after the last complete record of an existing log.
    static Result<std::unique_ptr<GroupCommit>> open(ObjectStore &store, std::string target,
                                                     CommitMode mode = CommitMode::batched);
    ~GroupCommit();
    GroupCommit(const GroupCommit &) = delete;
    GroupCommit &operator=(const GroupCommit &) = delete;

    // Blocks until a batch holding the caller's preceding write to `handle` is durable. Every
    // writer of a batch whose sync failed gets io_error; after shutdown, unavailable.
    // `announced`: this write was announce()d, and this call consumes the announcement.
    Status commit(const ObjectHandle &handle, std::uint64_t bytes, bool announced = false);
    // pwritev + commit: what a bulk-write handler does. Consumes an announcement either way.
    Result<std::size_t> writeDurable(const ObjectHandle &handle, std::span<const iovec> buffers,
                                     std::uint64_t offset, bool announced = false);

    // Announces a write that has started (its data is still on the wire) and will reach
    // commit() soon. With no batch window set, the committer waits up to kSiblingWait for the
    // announced writers to arrive, so concurrent writers share one batch instead of each
    // starting the next (PostgreSQL's commit_siblings idea, without a fixed delay). Every
    // announce() is matched by one commit(..., true), writeDurable(..., true) or withdraw().
    void announce() noexcept;
    void withdraw() noexcept;
    static constexpr std::chrono::microseconds kSiblingWait{500};

    // How long the committer waits for more writers after the first one arrives (0: a batch is
    // whatever queued up while the previous one synced). Live; takes effect for the next batch.
    void setWindow(std::chrono::microseconds window);
    std::chrono::microseconds window() const noexcept;

    // Publishes obdfilter.<target>.commit_interval and obdfilter.<target>.commit_stats.
    Status publish(params::ParamGroup &group);

    // Commits everything already queued, then refuses new commits. Idempotent.
    void shutdown();

    const params::CounterBlock &stats() const noexcept { return m_stats; }
    CommitMode mode() const noexcept { return m_mode; }
    const std::string &target() const noexcept { return m_target; }
    std::uint64_t lastSequence() const;

    // --- test seams ---
    // Replaces fdatasync (data files and the log): returns 0 or an errno.
    void setSyncHook(std::function<int(int fd)> hook);
    // While held, the committer leaves the queue alone, so a test can line writers up.
    void holdBatches(bool hold);
    std::size_t queuedWrites() const;

private:
    struct Waiter {
        Waiter *next = nullptr;
        const ObjectHandle *handle = nullptr;
        std::uint64_t bytes = 0;
        std::uint64_t generation = 0; // the batch this waiter rides in
        bool done = false;
        Status status;
    };

    GroupCommit(std::string target, CommitMode mode, Fd log, std::uint64_t logOffset,
                std::uint64_t nextSequence);

    void run();
    // Syncs the batch's files and appends its record; the first failure, or ok.
    Status commitBatch(Waiter *head, std::uint64_t writeCount, std::uint64_t bytes);
    Status appendRecord(std::uint64_t writeCount, std::uint64_t bytes);
    int sync(int fd);
    Status commitOne(const ObjectHandle &handle, std::uint64_t bytes);

    const std::string m_target;
    const CommitMode m_mode;
    Fd m_log;
    mutable std::mutex m_logMutex; // guards the two below (uncontended in batched mode)
    std::uint64_t m_logOffset;
    std::uint64_t m_nextSequence;

    mutable std::mutex m_mutex;
    std::condition_variable m_work;    // committer: writers arrived, hold released, shutdown
    std::condition_variable m_done[2]; // writers, by batch generation parity
    Waiter *m_head = nullptr;
    Waiter *m_tail = nullptr;
    std::size_t m_queued = 0;
    std::size_t m_inbound = 0;          // announced writers not queued yet
    std::uint64_t m_openGeneration = 1; // the batch new writers join
    bool m_stopping = false;
    bool m_hold = false;

    std::atomic<std::int64_t> m_windowUs{0};
    std::atomic<bool> m_hasHook{false};
    std::mutex m_hookMutex; // guards m_syncHook
    std::function<int(int)> m_syncHook;
    std::mutex m_shutdownMutex;
    std::vector<const ObjectHandle *> m_syncScratch; // committer only; reused across batches

    params::CounterBlock m_stats;
    std::thread m_thread;
};

} // namespace lutra::target
