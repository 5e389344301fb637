#pragma once
// The client engine: where a mount's reads and writes meet the page cache, readahead, the lock
// namespaces and the bulk RPC engines of its targets. Files are striped; everything here works
// on one stripe object at a time (an ObjectKey: target index + object id on that target).
//
// Coherence: a page is cached only under a lock of its object (PR to read, PW to write) and
// carries the lock's handle as its cookie; cancelling a lock — for any reason — writes back its
// dirty pages and drops its pages. So a cached page is valid data, and the fast read path can
// copy it without taking a lock (LU-9749).

#include <lutra/status.h>

#include "client/jobid.h"
#include "client/layout.h"
#include "client/osc.h"
#include "client/page_fill.h"
#include "client/rpc_session.h"
#include "core/cache/page_cache.h"
#include "core/jobs/job_stats.h"
#include "core/locks/lock_namespace.h"
#include "core/params/catalog.h"
#include "core/readahead/readahead.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace lutra::client {

// Raises `value` to at least `atLeast` (sizes only grow through here); true when it did.
inline bool raiseTo(std::atomic<std::uint64_t> &value, std::uint64_t atLeast) noexcept
{
    std::uint64_t seen = value.load();
    while (atLeast > seen) {
        if (value.compare_exchange_weak(seen, atLeast)) {
            return true;
        }
    }
    return false;
}

// The readers of one file on this client, kept on its first stripe object's state: where each
// one's last read ended (FileData::prevPos). A reader further ahead of the slowest than the cache
// holds waits for it (Engine::waitForTrailingReader).
class FileReaders {
public:
    void add(const std::atomic<std::uint64_t> &position);
    void remove(const std::atomic<std::uint64_t> &position);
    // Where the reader furthest behind, `self` aside, ended its last read (file offset);
    // cache::kNoPosition when no other reader has read.
    std::uint64_t slowest(const std::atomic<std::uint64_t> &self) const;
    // Where every other reader has read past (file offset): 0 when there is none, or one has
    // not read yet.
    std::uint64_t passedByOthers(const std::atomic<std::uint64_t> &self) const;

private:
    // The lowest position of the readers but `self`, one that has not read counting as
    // `notReadYet`; cache::kNoPosition when there is none.
    std::uint64_t lowestOther(const std::atomic<std::uint64_t> &self,
                              std::uint64_t notReadYet) const;

    mutable std::mutex m_mutex; // one file's opens and closes, and readers far ahead
    std::vector<const std::atomic<std::uint64_t> *> m_positions;
};

// A stripe object this client has open.
struct ObjectState {
    // An open handle on its target that RPCs use: one of the open files' handles, a writable one
    // whenever one is open (write-back goes through it). It is closed only with the object's
    // last open: RPCs of other opens may be in flight through it (TargetContext::closed).
    std::atomic<std::uint64_t> handle{0};
    struct OpenHandle {
        std::uint64_t handle = 0; // on the target
        bool writable = false;    // the handle's rights
        // The open this entry stands for: the handle it was opened with (an open that closes
        // while its handle carries the RPCs leaves it to another open, whose own closes instead).
        std::uint64_t open = 0;
    };
    std::vector<OpenHandle> handles; // one per open (guarded by the target's mutex)
    // handles.size(), read without that mutex: readahead gives a file's only reader a larger
    // share of the cache's room.
    std::atomic<std::uint32_t> opens{0};
    std::atomic<std::uint64_t> size{0}; // bytes, as far as this client knows
    // Set when a lock on the object is cancelled: from then on nothing protects `size` (another
    // client may truncate it), so the next read asks the targets and takes their answer, as
    // Lustre's glimpse does. `writtenEnd` is where this client's own writes since then end:
    // the answer never cuts below them.
    std::atomic<bool> sizeStale{false};
    std::atomic<std::uint64_t> writtenEnd{0};
    // How far the target may hold bytes of the object: the size its opens and lock grants
    // reported (a grant's after conflicting holders wrote back), raised as this client sends its
    // own write-backs.
    // Under this client's write lock a page wholly past it is zeros on the target, so a write in
    // part of it need not read it first; one before it must (another client's bytes, or this
    // client's written back and dropped).
    std::atomic<std::uint64_t> sizeOnTarget{0};
    std::timed_mutex writeback; // one write-back of this object at a time
    // A file's writes hold its first object's guard shared and its truncates exclusively, so a
    // write lands wholly before or wholly after a truncate (the kernel's i_rwsem): a write that
    // started as a truncate's reply came in was otherwise cut at the truncate's size.
    std::shared_mutex resizeGuard;
    // Jobs that dirtied pages since the last write-back began, one bit per tag % 64 (a shared
    // bit only costs an extra write-back): a job's flush writes back these objects only.
    std::atomic<std::uint64_t> dirtiedBy{0};
    FileReaders readers; // the file's, on its first stripe object only

    static std::uint64_t jobBit(core::JobTag tag) noexcept
    {
        return std::uint64_t{1} << (tag % 64);
    }
};

class Engine;

// One target of the mount: its session, bulk RPC engine, lock namespace and open objects.
class TargetContext final : public locks::LockRpc {
public:
    TargetContext(Engine &engine, std::uint32_t index, RpcSession &session);
    ~TargetContext() override;

    Result<locks::Grant> enqueue(const core::ObjectKey &key, locks::LockMode mode, core::JobTag job,
                                 locks::OnConflict onConflict) override;
    Status cancel(const core::ObjectKey &key, locks::RemoteHandle handle) override;

    std::shared_ptr<ObjectState> object(std::uint64_t objectId);
    // Every object open on this target, with its id.
    std::vector<std::pair<std::uint64_t, std::shared_ptr<ObjectState>>> openObjects();
    // Registers an open of `objectId` through `handle` (writable: the target lets it write);
    // returns the shared state.
    std::shared_ptr<ObjectState> opened(std::uint64_t objectId, std::uint64_t handle,
                                        std::uint64_t size, bool writable);
    // Forgets the open of `objectId` made through `open` (the handle it was opened with) and
    // returns the handle to close on the target now: its own, or, when its own carries the
    // object's RPCs and other opens remain, another open's, which no RPC uses.
    std::uint64_t closed(std::uint64_t objectId, std::uint64_t open);

    Engine &engine;
    const std::uint32_t index;
    RpcSession &session;
    std::unique_ptr<Osc> osc;
    std::unique_ptr<locks::LockNamespace> locks;

private:
    std::mutex m_mutex;
    std::unordered_map<std::uint64_t, std::shared_ptr<ObjectState>> m_objects;
};

// Per open file: its stripe objects and its readahead state. Readahead works in file offsets,
// as Lustre's llite does, so a pattern keeps its shape across stripes (a stride in the file is
// no stride within one stripe object); the plan's pages are then mapped onto the objects.
struct FileData {
    explicit FileData(readahead::ReadaheadMount &mount) : readahead(mount) {}

    std::vector<core::ObjectKey> keys; // per target
    std::vector<std::shared_ptr<ObjectState>> objects;
    std::mutex readaheadMutex;
    readahead::FileReadahead readahead; // guarded by readaheadMutex
    // The readahead marker, a file page (PG_readahead): the fast path steps aside for a read
    // that touches it, so the slow path can start the next window before it is needed.
    std::atomic<std::uint64_t> marker{readahead::FileReadahead::kNoMarker};
    // The first reads of an open that the per-thread fast read declines (reads across stripes)
    // go the slow way even when they hit, so readahead sees the pattern from its start (a stride
    // is trusted at the third read, or the first when the file's opens give it: ior-hard's ranks
    // of 1 MiB+1 whose first reads hit another rank's window showed readahead nothing until they
    // missed). Reads within a stripe keep the
    // fast path from the first (a cached small file opened, read and closed). Counted down by the
    // slow path under readaheadMutex.
    static constexpr std::uint32_t kLearningReads = readahead::FileReadahead::kStrideTrust + 1;
    std::atomic<std::uint32_t> learningReads{kLearningReads};
    std::atomic<std::uint64_t> position{0}; // for read()/write()
    // Where the last read ended (file offset): the fast path's stream hint (racy by design).
    std::atomic<std::uint64_t> prevPos{cache::kNoPosition};
    // Waits for the file's trailing reader that ran out in a row. A trailing reader that keeps
    // its own pace (idle, or another stream of the file) makes every wait run out: after
    // kTrailingWaitsInVain of them this open waits for nobody again.
    static constexpr std::uint32_t kTrailingWaitsInVain = 4;
    std::atomic<std::uint32_t> trailingWaitsInVain{0};
};

class Engine {
public:
    struct Options {
        std::string fsName;
        StripeLayout layout;
        std::size_t maxCachedMb =
            params::catalog::defaultOf(params::catalog::kPageCache, "max_cached_mb");
        std::chrono::milliseconds rpcTimeout{30000};
    };

    // Builds the engine over the mount's sessions (one per target, in stripe order) and
    // publishes its parameters into `group`, which must be destroyed before the engine.
    static Result<std::unique_ptr<Engine>> create(Options options,
                                                  std::vector<RpcSession *> sessions, JobIds &jobs,
                                                  transport::Transport &registrar,
                                                  params::ParamGroup &group);
    ~Engine(); // files must be closed

    // Reads [offset, offset + out.size()) of the file into `out` (not empty, within the file's
    // size): holes and object bytes past an object's known end read as zeros.
    Status readFile(FileData &file, std::uint64_t offset, std::span<std::byte> out,
                    std::uint64_t fileSize);
    Result<std::size_t> writeObject(FileData &file, std::uint32_t target, std::uint64_t offset,
                                    std::span<const std::byte> in);
    // Writes back every dirty page of the object (fsync, close, dirty limit, lock cancel). With
    // a `deadline` (a job's flush) what is not written by then stays dirty: Errc::timeout.
    Result<std::uint64_t> writeBack(TargetContext &target, const core::ObjectKey &key,
                                    ObjectState &object, std::string_view job,
                                    transport::Deadline deadline = transport::Deadline::max());

    // Per-job cleanup: write back, cancel the job's unused locks (all unused locks for an empty
    // job), drop the job's (or every) clean page, in batches. A write-back that fails keeps its
    // data and its lock (tried again later) and is reported in `errors`; the rest goes on.
    // Every wait ends at `deadline`: what is left then (dirty data, lock cancels, readahead in
    // flight) stays for later and is named in `errors`; clean pages are dropped regardless.
    struct CleanupReport {
        std::uint64_t locksCancelled = 0;
        std::uint64_t pagesDropped = 0;
        std::uint64_t bytesWrittenBack = 0;
        std::vector<std::string> errors;
    };
    Result<CleanupReport> cleanup(std::string_view job,
                                  transport::Deadline deadline = transport::Deadline::max());

    jobs::JobStats jobStats{jobs::JobStats::targetDefs()}; // llite.<fs>.job_stats
    // llite.<fs>.fast_read
    std::atomic<bool> fastRead{
        params::catalog::defaultOf(params::catalog::kLliteEngine, "fast_read") != 0};
    // Moves when a thread's fast-read context may be wrong (client/fast_read.h): a lock
    // cancelled, a truncate, a size refresh that changed a size, a file closed.
    // Starts at a value no other engine of this process had (the high 32 bits), so a context
    // of an engine that was at the same address never matches.
    std::atomic<std::uint64_t> fastEpoch{fastEpochStart()};
    static std::uint64_t fastEpochStart() noexcept; // client/fast_read.cpp
    // llite.<fs>.trailing_reader_wait_ms, and what the waits did (trailing_reader_waits,
    // trailing_reader_wait_timeouts).
    std::atomic<std::int64_t> trailingReaderWaitMs{
        params::catalog::defaultOf(params::catalog::kLliteEngine, "trailing_reader_wait_ms")};
    std::atomic<std::uint64_t> trailingReaderWaits{0};
    std::atomic<std::uint64_t> trailingReaderWaitTimeouts{0};
    // Reads the fast path found short of cached pages, that reached the readahead marker or are
    // an open's first, and the time readers spent in them (slow_reads, slow_read_us).
    std::atomic<std::uint64_t> slowReads{0};
    std::atomic<std::uint64_t> slowReadMicroseconds{0};

    std::vector<std::unique_ptr<TargetContext>> targets;
    cache::PageCache cache;
    readahead::ReadaheadMount readahead;
    FillPool fills{readahead, cache}; // page reads in flight, readahead included
    JobIds &jobs;
    const Options options;

private:
    friend class TargetContext;
    Engine(Options options, JobIds &jobs, transport::Transport &registrar);
    locks::CancelOutcome onCancel(TargetContext &target, const locks::CancelInfo &info);
    // The part of a read the fast path could not serve, from file offset `from`.
    Status readSlow(FileData &file, std::uint64_t offset, std::span<std::byte> out,
                    std::uint64_t from, std::uint64_t fileSize, bool touchesMarker);
    // A read of `length` bytes at `offset` more than a third of the cache (and a read per open)
    // ahead of its file's slowest reader on this client waits for it (yielding, at most
    // trailing_reader_wait_ms): the pages between them would be evicted before that reader took
    // its part of them, and fetched again.
    void waitForTrailingReader(FileData &file, std::uint64_t offset, std::uint64_t length);
    // Reads one locked, not uptodate page from the target and waits for it; on success the page
    // is uptodate and locked again.
    Status fillOne(TargetContext &target, ObjectState &object, cache::PageRef &page,
                   const locks::LockRef &lock, std::string_view job);
    transport::Deadline deadline() const { return transport::deadlineIn(options.rpcTimeout); }
    // grab for the demand path: when the cache is full of dirty pages, write back and retry
    // (readers and writers wait for room, they do not fail).
    Result<cache::PageRef> grabForIo(const core::ObjectKey &key, core::PageIndex index,
                                     core::JobTag tag);
    // Ages the lock LRUs (lru_max_age) about once a second.
    void ageLocks();
    std::mutex m_agingMutex;
    std::condition_variable m_agingWake;
    bool m_stopping = false;
    std::thread m_aging;
};

} // namespace lutra::client
