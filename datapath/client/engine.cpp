#include "client/engine.h"

#include "core/log.h"
#include "core/params/bind.h"
#include "core/params/registry.h"
#include "core/readahead/readahead.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <limits>
#include <optional>

namespace lutra::client {

namespace {

using cache::PageRef;
using core::kPageSize;

// A reader waits for its file's slowest reader once it is this share of the cache ahead of it
// (Engine::waitForTrailingReader).
constexpr std::uint64_t kTrailingReachShare = 3;
// Only reads shorter than this wait: what a trailing rank loses to a leader far ahead is the pages
// its chunks share with other ranks' (two per chunk) and the chunks read ahead for it, which
// matter for chunks of a few pages. `pressure` 3 and 8 x 1 MiB + 1 (their pages are fetched once
// either way) waited 14-37 times a round for nothing, 0.86-0.97 of unpressured against 0.96-1.05.
constexpr std::uint64_t kTrailingWaitMaxRead = 16 * kPageSize;

// Waits for a set of submitted write RPCs; each completion reports into its own slot. Reused
// across calls (reset keeps the vectors' capacity).
class RpcWaiter {
public:
    void reset(std::size_t count)
    {
        m_bytes.assign(count, 0);
        m_failed.assign(count, 0);
        m_remaining = count;
        m_status = {};
    }

    OscCompletion completionFor(std::size_t index)
    {
        return [this, index](const Status &status, std::uint32_t bytes) {
            std::lock_guard lock(m_mutex);
            m_bytes[index] = bytes;
            settle(index, status);
        };
    }
    // A submission that was refused: its completion never runs.
    void refused(std::size_t index, const Status &status)
    {
        std::lock_guard lock(m_mutex);
        settle(index, status);
    }
    Status wait()
    {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [this] { return m_remaining == 0; });
        return m_status;
    }
    std::uint32_t bytes(std::size_t index) const { return m_bytes[index]; }
    bool failed(std::size_t index) const { return m_failed[index] != 0; }

private:
    void settle(std::size_t index, const Status &status)
    {
        if (!status) {
            m_failed[index] = 1;
            if (m_status.ok()) {
                m_status = status;
            }
        }
        if (--m_remaining == 0) {
            m_done.notify_all();
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_done;
    std::vector<std::uint32_t> m_bytes;
    std::vector<std::uint8_t> m_failed;
    std::size_t m_remaining = 0;
    Status m_status;
};

// Per-thread scratch of the slow paths, reused across calls so they allocate only while growing.
// A nested use on the same thread (not expected) gets a fresh one instead.
template <typename T> class ThreadScratch {
public:
    ThreadScratch() : m_scratch(t_busy ? m_own : t_scratch), m_outer(!t_busy) { t_busy = true; }
    ~ThreadScratch()
    {
        m_scratch.clear(); // pins and page locks go now, never at thread exit
        if (m_outer) {
            t_busy = false;
        }
    }
    ThreadScratch(const ThreadScratch &) = delete;
    ThreadScratch &operator=(const ThreadScratch &) = delete;
    T *operator->() noexcept { return &m_scratch; }
    T &operator*() noexcept { return m_scratch; }

private:
    static thread_local T t_scratch;
    static thread_local bool t_busy;
    T m_own;
    T &m_scratch;
    bool m_outer;
};
template <typename T> thread_local T ThreadScratch<T>::t_scratch;
template <typename T> thread_local bool ThreadScratch<T>::t_busy = false;

// One stripe piece of a slow read.
struct SlowPiece {
    std::uint32_t target = 0;
    std::uint64_t fileOffset = 0;
    std::uint64_t objectOffset = 0;
    std::uint64_t length = 0;    // bytes of the read in this piece
    std::uint64_t valid = 0;     // of them, within the object's known size (the rest is zeros)
    std::size_t firstPinned = 0; // its pages in SlowRead::pinned
};

// A slow read's state, per thread and reused: the read's pages (pinned, unlocked, in file
// order) and, per target, the lock held, the fill being built and the object pages of the read.
struct SlowRead {
    std::vector<PageRef> pinned;
    std::vector<SlowPiece> pieces;
    std::vector<locks::LockRef> locks;
    std::vector<PageFill *> fills;
    std::vector<core::PageIndex> demandFirst;
    std::vector<core::PageIndex> demandLast;
    std::vector<std::uint8_t> noLock; // readahead found no lock to read this target under
    // Per target, readahead's object pages not grabbed yet (PageCache::grabMany takes a run).
    std::vector<std::vector<core::PageIndex>> toGrab;
    std::array<PageRef, cache::PageCache::kMaxGrabRun> grabbed;

    void prepare(std::size_t targets)
    {
        locks.resize(targets);
        fills.assign(targets, nullptr);
        demandFirst.assign(targets, 1);
        demandLast.assign(targets, 0);
        noLock.assign(targets, 0);
        toGrab.resize(targets);
        for (auto &pages : toGrab) {
            pages.clear();
        }
    }
    void clear()
    {
        pinned.clear();
        pieces.clear();
        for (locks::LockRef &lock : locks) {
            lock.release();
        }
    }
};

struct WriteBackScratch {
    std::vector<PageRef> run;
    std::vector<RpcPiece> pieces;
    std::vector<transport::Segment> segments;
    RpcWaiter waiter;
    void clear()
    {
        for (PageRef &page : run) {
            page.reset();
        }
        pieces.clear();
        segments.clear();
    }
};

} // namespace

// ---- TargetContext
// -------------------------------------------------------------------------------

TargetContext::TargetContext(Engine &owner, std::uint32_t targetIndex, RpcSession &rpcSession)
    : engine(owner), index(targetIndex), session(rpcSession)
{
}

TargetContext::~TargetContext() = default;

std::shared_ptr<ObjectState> TargetContext::object(std::uint64_t objectId)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_objects.find(objectId);
    return it == m_objects.end() ? nullptr : it->second;
}

std::shared_ptr<ObjectState> TargetContext::opened(std::uint64_t objectId, std::uint64_t handle,
                                                   std::uint64_t size, bool writable)
{
    std::lock_guard lock(m_mutex);
    auto &entry = m_objects[objectId];
    if (!entry) {
        entry = std::make_shared<ObjectState>();
        entry->handle = handle;
    } else {
        // A read-only open came first: write-back through its handle would be refused.
        const bool currentWritable =
            std::ranges::any_of(entry->handles, [&entry](const ObjectState::OpenHandle &open) {
                return open.handle == entry->handle.load() && open.writable;
            });
        if (writable && !currentWritable) {
            entry->handle = handle;
        }
    }
    raiseTo(entry->size, size);
    // What the target holds now: a write lock cached from an earlier open is used without a
    // new grant, so the open's size is the first this state hears of it.
    raiseTo(entry->sizeOnTarget, size);
    entry->handles.push_back({handle, writable, handle});
    entry->opens.store(static_cast<std::uint32_t>(entry->handles.size()));
    return entry;
}

std::vector<std::pair<std::uint64_t, std::shared_ptr<ObjectState>>> TargetContext::openObjects()
{
    std::lock_guard lock(m_mutex);
    return {m_objects.begin(), m_objects.end()};
}

std::uint64_t TargetContext::closed(std::uint64_t objectId, std::uint64_t open)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_objects.find(objectId);
    if (it == m_objects.end()) {
        return open;
    }
    ObjectState &object = *it->second;
    const auto mine = std::ranges::find(object.handles, open, &ObjectState::OpenHandle::open);
    if (mine == object.handles.end()) {
        return open;
    }
    std::uint64_t toClose = mine->handle;
    if (mine->handle == object.handle.load() && object.handles.size() > 1) {
        // Reads, write-backs and lock enqueues of the other opens may be in flight through this
        // handle (switching them to another and closing this one failed a rank's close with
        // "handle is not open"): it stays, and another open's handle, which no RPC uses, closes
        // in its place. That open stands on this one from now on; the rights go with the handle,
        // and this one is writable whenever any open is.
        auto other = mine == object.handles.begin() ? std::next(mine) : object.handles.begin();
        toClose = other->handle;
        other->handle = mine->handle;
        other->writable = mine->writable;
    }
    object.handles.erase(mine);
    object.opens.store(static_cast<std::uint32_t>(object.handles.size()));
    if (object.handles.empty()) {
        m_objects.erase(it);
    }
    return toClose;
}

Result<locks::Grant> TargetContext::enqueue(const core::ObjectKey &key, locks::LockMode mode,
                                            core::JobTag job, locks::OnConflict onConflict)
{
    const auto state = object(key.object);
    if (!state) {
        return Status(Errc::failed_precondition,
                      "lock enqueue: object " + std::to_string(key.object) + " is not open");
    }
    protocol::LockEnqueueRequest request;
    request.handle = state->handle.load();
    request.mode = mode == locks::LockMode::PW ? protocol::LockMode::pw : protocol::LockMode::pr;
    request.flags = onConflict == locks::OnConflict::refuse ? protocol::kLockNonBlocking : 0;
    const std::string jobId = engine.jobs.name(job);
    auto reply = session.call(request, jobId.empty() ? std::string_view("lutra.lock") : jobId,
                              engine.deadline());
    if (!reply) {
        return reply.status();
    }
    // A version 1 target does not say (kSizeUnknown, the largest value): every write in part of
    // a page then reads the page first.
    raiseTo(state->sizeOnTarget, reply->objectSize);
    return locks::Grant{reply->lockHandle, reply->mode == protocol::LockMode::pw
                                               ? locks::LockMode::PW
                                               : locks::LockMode::PR};
}

Status TargetContext::cancel(const core::ObjectKey & /*key*/, locks::RemoteHandle handle)
{
    protocol::LockCancelRequest request;
    request.lockHandle = handle;
    auto reply = session.call(request, "lutra.lock", engine.deadline());
    if (!reply && reply.status().code() != Errc::not_found) {
        return reply.status(); // not_found: the target already dropped it (eviction)
    }
    return {};
}

// ---- Engine
// --------------------------------------------------------------------------------------

Engine::Engine(Options engineOptions, JobIds &jobIds, transport::Transport &registrar)
    : cache([this, &registrar, &engineOptions] {
          cache::PageCache::Options cacheOptions;
          cacheOptions.limitPages = engineOptions.maxCachedMb * cache::kPagesPerMiB;
          // Register every pool chunk once, so bulk RPCs move data straight into pages.
          cacheOptions.hooks.added = [&registrar](void *base,
                                                  std::size_t length) -> Result<std::uint64_t> {
              auto region = registrar.registerMemory(base, length);
              if (!region) {
                  return region.status();
              }
              return region->id;
          };
          cacheOptions.hooks.removed = [&registrar](std::uint64_t region, void *base,
                                                    std::size_t length) {
              registrar.deregisterMemory({region, base, length});
          };
          // The budget of those pages went back when they landed (FillPool::complete).
          cacheOptions.readaheadDiscarded = [this](std::size_t pages) {
              readahead.onDiscarded(pages, false);
          };
          return cacheOptions;
      }()),
      jobs(jobIds), options(std::move(engineOptions))
{
}

Result<std::unique_ptr<Engine>> Engine::create(Options options, std::vector<RpcSession *> sessions,
                                               JobIds &jobs, transport::Transport &registrar,
                                               params::ParamGroup &group)
{
    std::unique_ptr<Engine> engine(new Engine(std::move(options), jobs, registrar));
    Engine *self = engine.get();
    for (std::size_t t = 0; t < sessions.size(); ++t) {
        auto target =
            std::make_unique<TargetContext>(*self, static_cast<std::uint32_t>(t), *sessions[t]);
        Osc::Options oscOptions;
        oscOptions.rpcTimeout = self->options.rpcTimeout;
        auto osc = Osc::create(*sessions[t], group, oscOptions);
        if (!osc) {
            return osc.status();
        }
        target->osc = std::move(osc).value();
        TargetContext *context = target.get();
        target->locks =
            std::make_unique<locks::LockNamespace>(sessions[t]->negotiated().targetName, *context,
                                                   [self, context](const locks::CancelInfo &info) {
                                                       return self->onCancel(*context, info);
                                                   });
        if (auto status = target->locks->publish(group); !status) {
            return status;
        }
        locks::LockNamespace *ns = target->locks.get();
        sessions[t]->setBlockingCallbackHandler(
            [ns](std::uint64_t handle, protocol::LockMode) { ns->onBlockingCallback(handle); });
        engine->targets.push_back(std::move(target));
    }
    if (auto status = engine->cache.publish(group, engine->options.fsName); !status) {
        return status;
    }
    if (auto status =
            readahead::bindReadaheadParams(engine->readahead, group, engine->options.fsName);
        !status) {
        return status;
    }
    params::Binding fastRead;
    fastRead.read = [self] { return params::Value(std::int64_t{self->fastRead.load()}); };
    fastRead.apply = [self](const params::Value &value) {
        self->fastRead = std::get<std::int64_t>(value) != 0;
        return Status{};
    };
    params::Binding trailingWait;
    trailingWait.read = [self] { return params::Value(self->trailingReaderWaitMs.load()); };
    trailingWait.apply = [self](const params::Value &value) {
        self->trailingReaderWaitMs = std::get<std::int64_t>(value);
        return Status{};
    };
    params::Binding trailingWaits;
    trailingWaits.read = [self] {
        return params::Value(static_cast<std::int64_t>(self->trailingReaderWaits.load()));
    };
    params::Binding trailingTimeouts;
    trailingTimeouts.read = [self] {
        return params::Value(static_cast<std::int64_t>(self->trailingReaderWaitTimeouts.load()));
    };
    params::Binding slowReads;
    slowReads.read = [self] {
        return params::Value(static_cast<std::int64_t>(self->slowReads.load()));
    };
    params::Binding slowReadTime;
    slowReadTime.read = [self] {
        return params::Value(static_cast<std::int64_t>(self->slowReadMicroseconds.load()));
    };
    std::vector<params::BindRow> rows;
    rows.push_back({"fast_read", std::move(fastRead), {}});
    rows.push_back({"trailing_reader_wait_ms", std::move(trailingWait), {}});
    rows.push_back({"trailing_reader_waits", std::move(trailingWaits), {}});
    rows.push_back({"trailing_reader_wait_timeouts", std::move(trailingTimeouts), {}});
    rows.push_back({"slow_reads", std::move(slowReads), {}});
    rows.push_back({"slow_read_us", std::move(slowReadTime), {}});
    if (auto status = params::bindGroup(group, params::catalog::kLliteEngine,
                                        engine->options.fsName, std::move(rows));
        !status) {
        return status;
    }
    if (auto status =
            engine->jobStats.publish(group, "llite." + engine->options.fsName + ".job_stats");
        !status) {
        return status;
    }
    engine->m_aging = std::thread([self] { self->ageLocks(); });
    return engine;
}

Engine::~Engine()
{
    {
        std::lock_guard lock(m_agingMutex);
        m_stopping = true;
    }
    m_agingWake.notify_all();
    if (m_aging.joinable()) {
        m_aging.join();
    }
    fills.waitIdle(); // readahead in flight holds pages and lock references
    for (auto &target : targets) {
        target->session.setBlockingCallbackHandler({});
        if (target->locks) {
            target->locks->shutdown(); // cancels what is cached: pages go with their locks
        }
    }
    targets.clear(); // Oscs and namespaces before the cache their work points into
}

Status Engine::fillOne(TargetContext &target, ObjectState &object, PageRef &page,
                       const locks::LockRef &lock, std::string_view job)
{
    PageRef mine = page.pin();
    PageFill &fill = fills.start();
    fill.pages.push_back(std::move(page));
    const core::PageIndex index = mine.index();
    if (auto status = fills.run(fill, *target.osc, object.handle.load(), job, lock, index, index);
        !status) {
        return status;
    }
    page = std::move(mine);
    if (!page.lock(cache::Wait::yes)) {
        return Status(Errc::internal, "cannot lock a page again");
    }
    return {};
}

Status Engine::readFile(FileData &file, std::uint64_t offset, std::span<std::byte> out,
                        std::uint64_t fileSize)
{
    const StripeLayout &layout = options.layout;
    const core::JobTag tag = jobs.currentTag();
    const core::PageIndex firstPage = offset / kPageSize;
    const core::PageIndex lastPage = (offset + out.size() - 1) / kPageSize;
    const std::uint64_t marker = file.marker.load(std::memory_order_relaxed);
    const bool touchesMarker = marker >= firstPage && marker <= lastPage;

    // Fast path: cached pages are covered by a lock (cancels drop them), so just copy.
    std::uint64_t done = 0;
    const bool fastOn = fastRead.load(std::memory_order_relaxed);
    if (fastOn && !touchesMarker && file.learningReads.load(std::memory_order_relaxed) == 0) {
        // A read that continues in the page the previous one ended in is not a new reference.
        const std::uint64_t prev = file.prevPos.load(std::memory_order_relaxed);
        const bool continues =
            prev != cache::kNoPosition && prev != 0 && (prev - 1) / kPageSize == firstPage;
        while (done < out.size()) {
            const auto piece = layout.pieceAt(offset + done, out.size() - done);
            const std::size_t got = cache.readCached(
                file.keys[piece.target], piece.objectOffset, out.subspan(done, piece.length), tag,
                done == 0 && continues ? piece.objectOffset + 1 : cache::kNoPosition);
            if (got > 0) {
                // Lustre's `hits`: pages a read found in the cache.
                readahead.stats().add(params::catalog::ra_hits,
                                      (piece.objectOffset + got - 1) / kPageSize -
                                          piece.objectOffset / kPageSize + 1);
            }
            done += got;
            if (got < piece.length) {
                break;
            }
        }
        if (done == out.size()) {
            file.prevPos.store(offset + done, std::memory_order_relaxed);
            return {};
        }
    }
    readahead.onFastReadFailed();
    if (!fastOn && !touchesMarker) {
        return readSlow(file, offset, out, offset + done, fileSize, touchesMarker);
    }
    // What a read that missed, reached the marker or is one of an open's first costs its reader
    // (waits for its pages, locks and a trailing reader included). Not every read with
    // fast_read=0: two clock reads cost those ~20 % (small-read's fast_read_off baseline).
    const auto started = std::chrono::steady_clock::now();
    Status status = readSlow(file, offset, out, offset + done, fileSize, touchesMarker);
    slowReadMicroseconds.fetch_add(
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - started)
                                       .count()),
        std::memory_order_relaxed);
    slowReads.fetch_add(1, std::memory_order_relaxed);
    return status;
}

void FileReaders::add(const std::atomic<std::uint64_t> &position)
{
    std::lock_guard guard(m_mutex);
    m_positions.push_back(&position);
}

void FileReaders::remove(const std::atomic<std::uint64_t> &position)
{
    std::lock_guard guard(m_mutex);
    std::erase(m_positions, &position);
}

std::uint64_t FileReaders::lowestOther(const std::atomic<std::uint64_t> &self,
                                       std::uint64_t notReadYet) const
{
    std::lock_guard guard(m_mutex);
    std::uint64_t lowest = cache::kNoPosition;
    for (const std::atomic<std::uint64_t> *position : m_positions) {
        if (position != &self) {
            const std::uint64_t at = position->load(std::memory_order_relaxed);
            lowest = std::min(lowest, at == cache::kNoPosition ? notReadYet : at);
        }
    }
    return lowest;
}

std::uint64_t FileReaders::slowest(const std::atomic<std::uint64_t> &self) const
{
    return lowestOther(self, cache::kNoPosition);
}

std::uint64_t FileReaders::passedByOthers(const std::atomic<std::uint64_t> &self) const
{
    const std::uint64_t passed = lowestOther(self, 0);
    return passed == cache::kNoPosition ? 0 : passed;
}

void Engine::waitForTrailingReader(FileData &file, std::uint64_t offset, std::uint64_t length)
{
    ObjectState &first = *file.objects[0];
    const std::int64_t waitMs = trailingReaderWaitMs.load(std::memory_order_relaxed);
    const std::uint64_t opens = first.opens.load(std::memory_order_relaxed);
    if (waitMs == 0 || length >= kTrailingWaitMaxRead || opens < 2 ||
        file.trailingWaitsInVain.load(std::memory_order_relaxed) >=
            FileData::kTrailingWaitsInVain) {
        return;
    }
    // A third of the cache: what lies between the readers, what is read ahead of the first
    // (readahead's share for a file's ranks) and the turnover of pages already read. Plus a
    // transfer per open: ranks reading in turns are that far apart when in step (8 x 1 MiB + 1
    // with a 16 MiB cache waited on every read without it, 0.67-0.70 of unpressured, was 1.0).
    const std::uint64_t reach =
        cache.limitPages() / kTrailingReachShare * kPageSize + opens * length;
    const auto withinReach = [&] {
        const std::uint64_t slowest = first.readers.slowest(file.prevPos);
        return slowest == cache::kNoPosition || offset <= slowest + reach;
    };
    if (withinReach()) {
        return;
    }
    trailingReaderWaits.fetch_add(1, std::memory_order_relaxed);
    // Yielding, not sleeping: with more ranks than cores the trailing rank is what should run
    // next. Woken by a condition variable from the trailing reader's reads, the leader came back
    // late (`pressure` 8 x 4097 B: 0.52 of unpressured against 0.70 yielding).
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(waitMs);
    do {
        std::this_thread::yield();
        if (withinReach()) {
            file.trailingWaitsInVain.store(0, std::memory_order_relaxed);
            return;
        }
    } while (std::chrono::steady_clock::now() < until);
    trailingReaderWaitTimeouts.fetch_add(1, std::memory_order_relaxed);
    file.trailingWaitsInVain.fetch_add(1, std::memory_order_relaxed);
}

Status Engine::readSlow(FileData &file, std::uint64_t offset, std::span<std::byte> out,
                        std::uint64_t from, std::uint64_t fileSize, bool touchesMarker)
{
    waitForTrailingReader(file, offset, out.size());
    const StripeLayout &layout = options.layout;
    const std::string_view job = jobs.current();
    const core::JobTag tag = jobs.currentTag();
    const std::uint64_t end = offset + out.size();
    ThreadScratch<SlowRead> scratch;
    SlowRead &read = *scratch;
    read.prepare(targets.size());
    const auto fillFor = [&](std::uint32_t target) -> PageFill & {
        if (read.fills[target] == nullptr) {
            read.fills[target] = &fills.start();
        }
        return *read.fills[target];
    };
    const auto abandonFills = [&] {
        for (PageFill *&fill : read.fills) {
            if (fill != nullptr) {
                fills.abandon(*fill);
                fill = nullptr;
            }
        }
    };

    // The read's pieces, and per target the object pages they cover (a contiguous file range
    // is a contiguous range of each object).
    for (std::uint64_t pos = from; pos < end;) {
        const auto piece = layout.pieceAt(pos, end - pos);
        read.pieces.push_back({piece.target, pos, piece.objectOffset, piece.length, 0, 0});
        const core::PageIndex first = piece.objectOffset / kPageSize;
        const core::PageIndex last = (piece.objectOffset + piece.length - 1) / kPageSize;
        if (read.demandFirst[piece.target] > read.demandLast[piece.target]) {
            read.demandFirst[piece.target] = first;
        }
        read.demandLast[piece.target] = last;
        pos += piece.length;
    }
    // Locks in target order, so two readers never wait for each other's locks crosswise;
    // all of them before any page lock.
    for (std::uint32_t t = 0; t < targets.size(); ++t) {
        if (read.demandFirst[t] > read.demandLast[t]) {
            continue;
        }
        auto lock = targets[t]->locks->acquire(file.keys[t], locks::LockMode::PR, tag);
        if (!lock) {
            return lock.status().withContext("read lock");
        }
        read.locks[t] = std::move(lock).value();
    }

    // The read's own pages: cached (or filled while this read waited for their lock), or
    // missing and fetched now.
    std::uint64_t missing = 0;
    for (SlowPiece &piece : read.pieces) {
        const std::uint64_t size = file.objects[piece.target]->size.load();
        piece.valid =
            size > piece.objectOffset ? std::min(piece.length, size - piece.objectOffset) : 0;
        piece.firstPinned = read.pinned.size();
        const core::ObjectKey key = file.keys[piece.target];
        for (core::PageIndex index = piece.objectOffset / kPageSize;
             index * kPageSize < piece.objectOffset + piece.valid; ++index) {
            auto page = grabForIo(key, index, tag);
            if (!page) {
                abandonFills();
                return page.status().withContext("read");
            }
            if (page->uptodate()) {
                readahead.stats().add(params::catalog::ra_hits);
                (void)page->takeReadahead();
                page->unlock(); // the pin is enough to copy it
                read.pinned.push_back(std::move(page).value());
            } else {
                ++missing;
                read.pinned.push_back(page->pin());
                fillFor(piece.target).pages.push_back(std::move(page).value());
            }
        }
    }

    // What to read ahead, in file pages. A read that found all its pages (some perhaps still
    // in flight) and is not at the marker is a hit, as on the fast path: readahead plans nothing
    // for it (Linux's filemap_read waits on a locked page without calling readahead), but the
    // pattern goes on through it (onHit), so a stride shows through hits too.
    readahead::ReadaheadPlan plan;
    {
        std::lock_guard guard(file.readaheadMutex);
        readahead::ReadInfo info;
        info.offset = offset;
        info.length = out.size();
        info.fileSize = fileSize;
        info.maxPagesPerRpc = std::numeric_limits<std::uint32_t>::max(); // fills cut the RPCs
        info.missingPages = missing;
        info.fileOpens = file.objects[0]->opens.load(std::memory_order_relaxed);
        info.otherReaders = info.fileOpens > 1;
        // A hit only moves the pattern on, unless it starts a stride: count the room only
        // when a plan follows (a hit with fast_read=0 paid for it on every read).
        const bool miss = missing != 0 || touchesMarker;
        if (miss || file.readahead.hitStartsStride(info)) {
            // LU-13312: the room readahead may use is what is neither dirty nor read ahead and
            // still unread; what is unread counts in flight (the budget) and in the cache.
            const std::uint64_t unread = readahead.pagesInUse() + cache.readaheadUnreadPages();
            const std::uint64_t held = cache.dirtyPages() + unread;
            const std::uint64_t limit = cache.limitPages();
            info.cacheRoom = limit > held ? limit - held : 0;
            info.unreadPages = unread;
            // Windows held by the room end where every target's RPC ends: a row of stripes
            // (ended at each stripe, 2 ranks x 4097 B under `pressure` sent more, smaller
            // windows and more 1-2-page miss RPCs: readahead README).
            info.rpcBoundaryPages = layout.rowPages(targets[0]->osc->maxPagesPerRpc(), kPageSize);
            plan = miss ? file.readahead.onRead(info) : file.readahead.startStride(info);
        }
        if (const std::uint32_t learning = file.learningReads.load(std::memory_order_relaxed);
            learning != 0) {
            file.learningReads.store(learning - 1, std::memory_order_relaxed);
        }
        file.marker.store(file.readahead.marker(), std::memory_order_relaxed);
    }
    const core::PageIndex readFirst = from / kPageSize;
    const core::PageIndex readLast = (end - 1) / kPageSize;
    // readahead_pages: only pages sent for. A page the plan names that is cached or being filled
    // (a page two ranks' chunks share, another reader's window) is given back, not fetched again.
    std::uint64_t fetched = 0;
    // Grabs target t's pages gathered so far, a run at a time; false when the cache ran full
    // (the pages it could not grab are counted failed).
    const auto grabGathered = [&](std::uint32_t t) {
        std::vector<core::PageIndex> &indexes = read.toGrab[t];
        if (indexes.empty()) {
            return true;
        }
        const std::span<PageRef> refs = std::span(read.grabbed).first(indexes.size());
        const std::size_t handled = cache.grabMany(file.keys[t], indexes, tag, refs);
        for (std::size_t i = 0; i < handled; ++i) {
            if (!refs[i]) {
                // Cached already (another rank's window, a page two ranks' chunks share), or
                // busy: being filled or written back. Not marked as read ahead again: the cache
                // keeps a page read in part past its probation (kPartial); marked again, pages
                // stayed "unread" in the room estimate and were evicted as read_but_discarded
                // (pressure 8 ranks x 4097 B: 13-17 % discarded, 0.15-0.34 of unpressured;
                // unmarked 0.01-0.5 %, 0.58-0.88).
                readahead.release(1);
                continue;
            }
            fillFor(t).pages.push_back(std::move(refs[i]));
            ++fetched;
        }
        const std::size_t failed = indexes.size() - handled;
        indexes.clear();
        if (failed != 0) {
            readahead.onFailedGrab(failed);
            return false;
        }
        return true;
    };
    std::optional<std::uint64_t> passedByOthers;
    while (auto range = plan.next()) {
        for (core::PageIndex filePage = range->first; filePage < range->end(); ++filePage) {
            if (filePage >= readFirst && filePage <= readLast) {
                readahead.release(1); // the read's own
                continue;
            }
            if (plan.inGap(filePage)) {
                // Another rank's chunk that every other reader has read past: read already,
                // nobody reads it again (evicted after it was read, a trailing rank's window
                // fetched it again: 2 ranks x 47008 B under `pressure`, ~19 RPCs a round).
                if (!passedByOthers) {
                    passedByOthers = file.objects[0]->readers.passedByOthers(file.prevPos);
                }
                if ((filePage + 1) * kPageSize <= *passedByOthers) {
                    readahead.release(1);
                    continue;
                }
            }
            const auto at = layout.pieceAt(filePage * kPageSize, kPageSize);
            const std::uint32_t t = at.target;
            if (!read.locks[t]) {
                // Readahead reads under a lock it can have without waiting for this client's
                // own lock state (it holds page locks now); else it skips the object (Lustre's
                // failed_lock_match).
                if (read.noLock[t] == 0) {
                    auto lock =
                        targets[t]->locks->tryAcquire(file.keys[t], locks::LockMode::PR, tag);
                    if (lock) {
                        read.locks[t] = std::move(lock).value();
                    }
                    read.noLock[t] = read.locks[t] ? 0 : 1;
                }
                if (read.noLock[t] != 0) {
                    readahead.onFailedLockMatch(1);
                    continue;
                }
            }
            read.toGrab[t].push_back(at.objectOffset / kPageSize);
            if (read.toGrab[t].size() == cache::PageCache::kMaxGrabRun && !grabGathered(t)) {
                // Cache full: the rest of this range is not fetched (the next may find room).
                readahead.onFailedGrab(range->end() - filePage - 1);
                break;
            }
        }
    }
    for (std::uint32_t t = 0; t < targets.size(); ++t) {
        (void)grabGathered(t);
    }
    readahead.onFetched(fetched);

    // Every target's RPCs go out before any is waited for; only the read's own are waited for.
    for (std::uint32_t t = 0; t < targets.size(); ++t) {
        if (read.fills[t] != nullptr) {
            fills.submit(*read.fills[t], *targets[t]->osc, file.objects[t]->handle.load(), job,
                         read.locks[t], read.demandFirst[t], read.demandLast[t]);
        }
    }
    Status filled;
    for (PageFill *&fill : read.fills) {
        if (fill != nullptr) {
            const Status status = fills.wait(*fill);
            fill = nullptr;
            if (!status && filled.ok()) {
                filled = status;
            }
        }
    }
    if (!filled) {
        return filled.withContext("read");
    }
    for (const SlowPiece &piece : read.pieces) {
        std::byte *dest = out.data() + (piece.fileOffset - offset);
        std::size_t k = piece.firstPinned;
        for (std::uint64_t pos = piece.objectOffset; pos < piece.objectOffset + piece.valid; ++k) {
            const PageRef &page = read.pinned[k];
            const std::uint64_t pageStart = page.index() * kPageSize;
            const std::uint64_t to =
                std::min(pageStart + kPageSize, piece.objectOffset + piece.valid);
            std::memcpy(dest + (pos - piece.objectOffset), page.data().data() + (pos - pageStart),
                        to - pos);
            pos = to;
        }
        // A hole, or past the object's end: zeros.
        std::memset(dest + piece.valid, 0, piece.length - piece.valid);
    }
    file.prevPos.store(end, std::memory_order_relaxed);
    return {};
}

Result<std::size_t> Engine::writeObject(FileData &file, std::uint32_t targetIndex,
                                        std::uint64_t offset, std::span<const std::byte> in)
{
    TargetContext &target = *targets[targetIndex];
    ObjectState &object = *file.objects[targetIndex];
    const core::ObjectKey key = file.keys[targetIndex];
    const std::string_view job = jobs.current();
    const core::JobTag tag = jobs.currentTag();
    {
        auto lock = target.locks->acquire(key, locks::LockMode::PW, tag);
        if (!lock) {
            return lock.status().withContext("write lock");
        }
        const std::uint64_t end = offset + in.size();
        // After the pages are dirty, also when the write fails part-way: a write-back that
        // cleared the bit first then finds them, and a job's flush finds the object. Set before
        // the lock goes (declared after it), so a cancel's write-back sees it.
        struct MarkDirtied {
            ObjectState &object;
            std::uint64_t bit;
            bool any = false;
            ~MarkDirtied()
            {
                if (any) {
                    object.dirtiedBy.fetch_or(bit, std::memory_order_release);
                }
            }
        } dirtied{object, ObjectState::jobBit(tag)};
        for (core::PageIndex index = offset / kPageSize; index * kPageSize < end; ++index) {
            const std::uint64_t pageStart = index * kPageSize;
            const std::uint64_t from = std::max(pageStart, offset);
            const std::uint64_t to = std::min(pageStart + kPageSize, end);
            auto page = grabForIo(key, index, tag);
            if (!page) {
                return page.status().withContext("write");
            }
            if (!page->uptodate()) {
                const bool whole = from == pageStart && to == pageStart + kPageSize;
                if (!whole && pageStart < object.sizeOnTarget.load()) {
                    // Read-modify-write: the rest of the page must come from the target (a page
                    // past the size this client knew had another client's bytes lost here).
                    if (auto status = fillOne(target, object, *page, *lock, job); !status) {
                        return status.withContext("write (reading the page first)");
                    }
                } else if (!whole) {
                    std::memset(page->data().data(), 0, kPageSize);
                }
            }
            std::memcpy(page->data().data() + (from - pageStart), in.data() + (from - offset),
                        to - from);
            // The size covers the page's bytes before the page is dirty: a write-back that finds
            // it (a flush, or this writer's own when the cache is full) cuts the object's last
            // page at the size, and would call the bytes past an older size written. writtenEnd
            // before size: a size refresh that read the old writtenEnd then fails its
            // compare-exchange on the size and looks again.
            raiseTo(object.writtenEnd, to);
            raiseTo(object.size, to);
            page->setLockCookie(lock->handle());
            page->markDirty();
            dirtied.any = true;
        }
    }
    // Writers wait, they don't fail: past max_dirty_mb this writer writes back its object.
    const auto limit = static_cast<std::int64_t>(target.osc->maxDirtyMb().load() << 20);
    if (cache.dirtyBytes(targetIndex) > limit) {
        if (auto written = writeBack(target, key, object, job); !written) {
            return written.status();
        }
    }
    return in.size();
}

Result<std::uint64_t> Engine::writeBack(TargetContext &target, const core::ObjectKey &key,
                                        ObjectState &object, std::string_view job,
                                        transport::Deadline deadline)
{
    if (job.empty()) {
        job = "lutra.writeback"; // every RPC carries a job id; a lock's last job may be unknown
    }
    std::unique_lock serial(object.writeback, std::defer_lock);
    if (deadline == transport::Deadline::max()) {
        serial.lock();
    } else if (!serial.try_lock_until(deadline)) {
        return Status(Errc::timeout, "object " + std::to_string(key.object) +
                                         ": another write-back of it still ran at the deadline");
    }
    // No dirty page on the whole target (each is counted before its writer returns): nothing to
    // find, and no walk over the object's cached pages, which costs a cache miss per page — the
    // close of a large file that was only read.
    if (cache.dirtyBytes(target.index) == 0) {
        return std::uint64_t{0};
    }
    // Whatever is dirty now is written below; a writer from here on sets its bit again.
    const std::uint64_t dirtiedBy = object.dirtiedBy.exchange(0, std::memory_order_acq_rel);
    ThreadScratch<WriteBackScratch> scratch;
    std::uint64_t written = 0;
    const std::uint32_t maxPages = std::min<std::uint32_t>(
        target.osc->maxPagesPerRpc(), static_cast<std::uint32_t>(transport::kMaxBulkSegments));
    // Several runs in flight at once (up to max_rpcs_in_flight, at most kWriteBackDepth): a
    // flush or fsync pays about one round trip per `depth` runs, not one per run.
    constexpr std::uint32_t kWriteBackDepth = 8;
    const std::uint32_t depth = std::clamp(target.osc->maxRpcsInFlight(), 1u, kWriteBackDepth);
    if (scratch->run.size() < std::size_t{maxPages} * depth) {
        scratch->run.resize(std::size_t{maxPages} * depth);
    }
    Status firstError;
    core::PageIndex from = 0;
    for (;;) {
        std::size_t n = 0;
        for (std::uint32_t runs = 0; runs < depth; ++runs) {
            const std::size_t got =
                cache.collectDirtyRun(key, from, std::span(scratch->run).subspan(n, maxPages));
            if (got == 0) {
                break;
            }
            n += got;
            from = scratch->run[n - 1].index() + 1;
        }
        if (n == 0) {
            break;
        }
        const std::span<PageRef> run = std::span(scratch->run).first(n);
        scratch->pieces.clear();
        scratch->segments.clear();
        planPieces(run.first(n), maxPages, scratch->pieces, scratch->segments);
        const std::uint64_t size = object.size.load();
        RpcWaiter &waiter = scratch->waiter;
        waiter.reset(scratch->pieces.size());
        for (std::size_t p = 0; p < scratch->pieces.size(); ++p) {
            const RpcPiece &piece = scratch->pieces[p];
            const core::PageIndex pieceLast = run[piece.first + piece.count - 1].index();
            std::uint64_t lastBytes = kPageSize;
            if ((pieceLast + 1) * kPageSize > size && size > pieceLast * kPageSize) {
                lastBytes = size - pieceLast * kPageSize; // the object ends inside this page
            }
            // Before it is sent: a write in part of these pages after they leave the cache
            // reads them back (ObjectState::sizeOnTarget).
            raiseTo(object.sizeOnTarget, pieceLast * kPageSize + lastBytes);
            const Status submitted = target.osc->submitWrite(
                object.handle.load(), run[piece.first].index(),
                static_cast<std::uint32_t>(piece.count), static_cast<std::uint16_t>(lastBytes),
                std::span(scratch->segments).subspan(piece.segmentBegin, piece.segmentCount), job,
                waiter.completionFor(p), transport::Deadline::max(), deadline);
            if (!submitted) {
                waiter.refused(p, submitted);
            }
        }
        const Status status = waiter.wait();
        // Each RPC on its own: what the target took is clean, the rest stays dirty for a retry.
        for (std::size_t p = 0; p < scratch->pieces.size(); ++p) {
            const RpcPiece &piece = scratch->pieces[p];
            cache.endWriteback(run.subspan(piece.first, piece.count), !waiter.failed(p));
            written += waiter.failed(p) ? 0 : waiter.bytes(p);
        }
        if (!status) {
            // Go on with the rest of the object: one bad range must not hold back the others.
            if (firstError.ok()) {
                firstError = status;
            }
            if (transport::Clock::now() >= deadline) {
                break; // the rest stays dirty too; the caller has given up
            }
        }
    }
    if (!firstError.ok()) {
        // Still dirty: the jobs' flushes must find this object again.
        object.dirtiedBy.fetch_or(dirtiedBy, std::memory_order_release);
        return firstError.withContext("write-back");
    }
    return written;
}

Result<PageRef> Engine::grabForIo(const core::ObjectKey &key, core::PageIndex index,
                                  core::JobTag tag)
{
    constexpr int kAttempts = 200;
    for (int attempt = 0;; ++attempt) {
        auto page = cache.grab(key, index, tag, cache::Wait::yes);
        if (page || page.status().code() != Errc::resource_exhausted || attempt == kAttempts) {
            return page;
        }
        // Everything cached is dirty or pinned: write back what this client has open, so
        // reclaim finds clean pages; then wait briefly for pinned ones to be let go.
        for (auto &target : targets) {
            for (auto &[objectId, object] : target->openObjects()) {
                (void)writeBack(*target, {target->index, objectId}, *object, "lutra.reclaim");
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void Engine::ageLocks()
{
    std::unique_lock lock(m_agingMutex);
    jobStats.tick(); // job_stats stamps updates with the tick, not a clock read per I/O
    while (!m_agingWake.wait_for(lock, std::chrono::seconds(1), [this] { return m_stopping; })) {
        lock.unlock();
        jobStats.tick();
        for (auto &target : targets) {
            (void)target->locks->tick(locks::LockNamespace::Clock::now());
        }
        lock.lock();
    }
}

Result<Engine::CleanupReport> Engine::cleanup(std::string_view job, transport::Deadline deadline)
{
    CleanupReport report;
    const core::JobTag tag = job.empty() ? 0 : jobs.tag(job);
    const std::string writer = job.empty() ? std::string("lutra.cleanup") : std::string(job);
    const auto pastDeadline = [&] { return transport::Clock::now() >= deadline; };
    // Readahead in flight lands first, so it can be dropped with the rest.
    if (!fills.quiesce(deadline)) {
        report.errors.push_back("reads in flight had not landed at the deadline: their pages "
                                "stay cached");
    }
    std::size_t objectsLeft = 0;
    std::size_t targetsLeft = 0;
    for (auto &target : targets) {
        // Dirty data first, whoever's lock covers it: nothing written is lost to a cleanup.
        // A job's flush writes back only the objects that job dirtied (the others' data is
        // theirs to flush, and writing it here made a flush's cost the whole client's).
        for (auto &[objectId, object] : target->openObjects()) {
            if (!job.empty() && (object->dirtiedBy.load(std::memory_order_acquire) &
                                 ObjectState::jobBit(tag)) == 0) {
                continue;
            }
            if (pastDeadline()) {
                ++objectsLeft; // stays dirty, flushed by a later flush, fsync or lock cancel
                continue;
            }
            auto written = writeBack(*target, {target->index, objectId}, *object, writer, deadline);
            if (!written) {
                // Kept dirty, under its lock: the lock's cancel below fails and keeps it too.
                report.errors.push_back(written.status().toString());
                continue;
            }
            report.bytesWrittenBack += *written;
        }
        if (pastDeadline()) {
            ++targetsLeft; // its locks stay cached; cancelling one would write back first
            continue;
        }
        const locks::CancelReport cancelled =
            job.empty() ? target->locks->clear(deadline) : target->locks->cancelJob(tag, deadline);
        report.locksCancelled += cancelled.locksCancelled;
        report.pagesDropped += cancelled.pagesDropped;
        report.bytesWrittenBack += cancelled.bytesWritten;
        report.errors.insert(report.errors.end(), cancelled.messages.begin(),
                             cancelled.messages.end());
    }
    if (objectsLeft != 0 || targetsLeft != 0) {
        report.errors.push_back(
            "deadline reached: " + std::to_string(objectsLeft) +
            " objects not written back and the locks on " + std::to_string(targetsLeft) +
            " targets not cancelled (their data stays cached and dirty, written back later)");
    }
    const cache::ReleaseCounts released = job.empty() ? cache.releaseAll() : cache.releaseJob(tag);
    report.pagesDropped += released.dropped;
    if (released.dirty != 0) {
        // Pages dirtied while the flush ran (the job still writing) or whose write-back failed
        // (already in the errors above): kept, not lost, and not an error of this flush.
        log::info("llite." + options.fsName,
                  std::to_string(released.dirty) +
                      " dirty pages stay cached after the flush (written after it began or "
                      "kept for a retry)");
    }
    return report;
}

locks::CancelOutcome Engine::onCancel(TargetContext &target, const locks::CancelInfo &info)
{
    locks::CancelOutcome outcome;
    // Before the pages go: a fast read's cached size may be another client's to change now.
    fastEpoch.fetch_add(1, std::memory_order_acq_rel);
    const auto object = target.object(info.key.object);
    std::size_t dirty = 0;
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (object && info.mode == locks::LockMode::PW) {
            auto written = writeBack(target, info.key, *object, jobs.name(info.job));
            if (!written) {
                outcome.status = written.status();
                break; // the pages stay cached and dirty, under this lock
            }
            outcome.bytesWritten += *written;
        }
        const cache::ReleaseCounts counts = cache.releaseLock(info.key, info.handle);
        outcome.pagesDropped += counts.dropped;
        dirty = counts.dirty;
        if (dirty == 0 || !object) {
            break;
        }
    }
    if (outcome.status.ok() && dirty == 0) {
        if (object) {
            // Everything this client wrote is on the target; without the lock the size is
            // another client's to change.
            object->writtenEnd.store(0);
            object->sizeStale.store(true);
        }
        if (info.retry) {
            log::info("llite." + options.fsName,
                      "object " + std::to_string(info.key.object) +
                          ": data kept after a failed write-back is written now");
        }
        return outcome;
    }
    if (outcome.status.ok()) {
        outcome.status =
            Status(Errc::io_error, std::to_string(dirty) + " dirty pages remain after write-back");
    }
    const std::string what = "object " + std::to_string(info.key.object) + " on " +
                             target.session.negotiated().targetName + ", lock " +
                             std::string(locks::cancelReasonName(info.reason)) + " cancel: ";
    if (info.reason == locks::CancelReason::shutdown) {
        // Unmounting: there is no later. Say loudly what is lost.
        log::error("llite." + options.fsName,
                   what + "unwritten data dropped at unmount: " + outcome.status.toString());
        return outcome;
    }
    // Keep the lock and the dirty pages; the namespace tries again (aging tick, callback,
    // clear, per-job cleanup). Said once, not at every retry.
    outcome.keep = true;
    if (!info.retry) {
        log::warning("llite." + options.fsName,
                     what + "write-back failed, lock and dirty pages kept for a retry: " +
                         outcome.status.toString());
    }
    return outcome;
}

} // namespace lutra::client
