#include "client/engine.h"

#include "core/log.h"
#include "core/params/catalog.h"
#include "core/params/registry.h"
#include "core/readahead/readahead.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>

namespace lutra::client {

namespace {

using cache::PageRef;
using engine::kPageSize;

constexpr std::size_t kMaxSegments = transport::kMaxBulkSegments;

// Waits for a set of submitted RPCs; each completion reports into its own slot.
class RpcWaiter {
public:
    explicit RpcWaiter(std::size_t count) : m_bytes(count, 0), m_remaining(count) {}

    OscCompletion completionFor(std::size_t index)
    {
        return [this, index](const Status &status, std::uint32_t bytes) {
            std::lock_guard lock(m_mutex);
            m_bytes[index] = bytes;
            if (!status && m_status.ok()) {
                m_status = status;
            }
            if (--m_remaining == 0) {
                m_done.notify_all();
            }
        };
    }
    // A submission that was refused: its completion never runs.
    void refused(const Status &status)
    {
        std::lock_guard lock(m_mutex);
        if (m_status.ok()) {
            m_status = status;
        }
        if (--m_remaining == 0) {
            m_done.notify_all();
        }
    }
    Status wait()
    {
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [this] { return m_remaining == 0; });
        return m_status;
    }
    std::uint32_t bytes(std::size_t index) const { return m_bytes[index]; }

private:
    std::mutex m_mutex;
    std::condition_variable m_done;
    std::vector<std::uint32_t> m_bytes;
    std::size_t m_remaining;
    Status m_status;
};

// One bulk RPC's worth of pages: [first, first + count) of `pages`, and its memory segments
// (adjacent pages merged, at most kMaxSegments).
struct Piece {
    std::size_t first = 0;
    std::size_t count = 0;
    std::size_t segmentBegin = 0;
    std::size_t segmentCount = 0;
};

// Cuts `pages` (ascending indexes) into RPC pieces: contiguous indexes, at most `maxPages`
// pages and kMaxSegments memory segments each.
void planPieces(std::span<PageRef> pages, std::uint32_t maxPages, std::vector<Piece> &pieces,
                std::vector<transport::Segment> &segments)
{
    std::size_t i = 0;
    while (i < pages.size()) {
        Piece piece;
        piece.first = i;
        piece.segmentBegin = segments.size();
        while (i < pages.size()) {
            const bool contiguous =
                piece.count == 0 || pages[i].index() == pages[i - 1].index() + 1;
            if (!contiguous || piece.count == maxPages) {
                break;
            }
            const transport::Segment segment = pages[i].segment();
            // Only a piece that has pages has a last segment to extend.
            transport::Segment *last = piece.count > 0 ? &segments.back() : nullptr;
            const bool merges =
                last != nullptr &&
                static_cast<std::byte *>(last->address) + last->length == segment.address &&
                last->region == segment.region;
            if (!merges && piece.segmentCount == kMaxSegments) {
                break;
            }
            if (merges) {
                last->length += segment.length;
            } else {
                segments.push_back(segment);
                ++piece.segmentCount;
            }
            ++piece.count;
            ++i;
        }
        pieces.push_back(piece);
    }
}

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
                                                   std::uint64_t size)
{
    std::lock_guard lock(m_mutex);
    auto &entry = m_objects[objectId];
    if (!entry) {
        entry = std::make_shared<ObjectState>();
        entry->handle = handle;
        entry->size = size;
    } else {
        std::uint64_t known = entry->size.load();
        while (size > known && !entry->size.compare_exchange_weak(known, size)) {
        }
    }
    entry->handles.push_back(handle);
    return entry;
}

std::vector<std::pair<std::uint64_t, std::shared_ptr<ObjectState>>> TargetContext::openObjects()
{
    std::lock_guard lock(m_mutex);
    return {m_objects.begin(), m_objects.end()};
}

void TargetContext::closed(std::uint64_t objectId, std::uint64_t handle)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_objects.find(objectId);
    if (it == m_objects.end()) {
        return;
    }
    ObjectState &object = *it->second;
    std::erase(object.handles, handle);
    if (object.handles.empty()) {
        m_objects.erase(it);
    } else if (object.handle.load() == handle) {
        object.handle = object.handles.back(); // RPCs go on through a handle still open
    }
}

Result<locks::Grant> TargetContext::enqueue(const engine::ObjectKey &key, locks::LockMode mode,
                                            engine::JobTag job)
{
    const auto state = object(key.object);
    if (!state) {
        return Status(Errc::failed_precondition,
                      "lock enqueue: object " + std::to_string(key.object) + " is not open");
    }
    protocol::LockEnqueueRequest request;
    request.handle = state->handle.load();
    request.mode = mode == locks::LockMode::PW ? protocol::LockMode::pw : protocol::LockMode::pr;
    const std::string jobId = engine.jobs.name(job);
    auto reply = session.call(request, jobId.empty() ? std::string_view("lutra.lock") : jobId,
                              engine.deadline());
    if (!reply) {
        return reply.status();
    }
    return locks::Grant{reply->lockHandle, reply->mode == protocol::LockMode::pw
                                               ? locks::LockMode::PW
                                               : locks::LockMode::PR};
}

Status TargetContext::cancel(const engine::ObjectKey & /*key*/, locks::RemoteHandle handle)
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
    : cache([&registrar, &engineOptions] {
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
        auto osc = Osc::create(*sessions[t], group, {});
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
    for (auto &spec : params::catalog::lliteSpecs(engine->options.fsName)) {
        if (params::leafName(spec.name) != "fast_read") {
            continue;
        }
        params::Binding binding;
        binding.read = [self] { return params::Value(std::int64_t{self->fastRead.load()}); };
        binding.apply = [self](const params::Value &value) {
            self->fastRead = std::get<std::int64_t>(value) != 0;
            return Status{};
        };
        if (auto status = group.add(std::move(spec), std::move(binding)); !status) {
            return status;
        }
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
    for (auto &target : targets) {
        target->session.setBlockingCallbackHandler({});
        if (target->locks) {
            target->locks->shutdown(); // cancels what is cached: pages go with their locks
        }
    }
    targets.clear(); // Oscs and namespaces before the cache their work points into
}

Status Engine::fill(TargetContext &target, ObjectState &object, std::span<PageRef> pages,
                    std::uint64_t lockHandle, std::string_view job)
{
    std::vector<PageRef> scratch;
    // Only the locked, not uptodate pages need data; keep them contiguous in a span.
    std::vector<std::size_t> positions;
    for (std::size_t i = 0; i < pages.size(); ++i) {
        if (pages[i] && pages[i].holdsLock() && !pages[i].uptodate()) {
            positions.push_back(i);
        }
    }
    if (positions.empty()) {
        return {};
    }
    scratch.reserve(positions.size());
    for (const std::size_t i : positions) {
        scratch.push_back(std::move(pages[i]));
    }
    std::vector<Piece> pieces;
    std::vector<transport::Segment> segments;
    segments.reserve(scratch.size());
    planPieces(scratch, target.osc->maxPagesPerRpc(), pieces, segments);

    RpcWaiter waiter(pieces.size());
    for (std::size_t p = 0; p < pieces.size(); ++p) {
        const Piece &piece = pieces[p];
        const Status submitted = target.osc->submitRead(
            object.handle.load(), scratch[piece.first].index(),
            static_cast<std::uint32_t>(piece.count), static_cast<std::uint16_t>(kPageSize),
            std::span(segments).subspan(piece.segmentBegin, piece.segmentCount), job,
            waiter.completionFor(p));
        if (!submitted) {
            waiter.refused(submitted);
        }
    }
    const Status status = waiter.wait();
    for (std::size_t p = 0; p < pieces.size(); ++p) {
        const Piece &piece = pieces[p];
        const std::uint64_t bytes = waiter.bytes(p);
        for (std::size_t i = 0; i < piece.count; ++i) {
            PageRef &page = scratch[piece.first + i];
            if (!status) {
                page.unlock(); // not uptodate: the next reader retries
                continue;
            }
            // Past the object's end (or a hole the target skipped) reads as zeros.
            const std::uint64_t pageStart = i * kPageSize;
            if (bytes < pageStart + kPageSize) {
                const std::size_t valid = bytes > pageStart ? bytes - pageStart : 0;
                std::memset(page.data().data() + valid, 0, kPageSize - valid);
            }
            page.setLockCookie(lockHandle);
            page.markUptodate();
        }
    }
    for (std::size_t k = 0; k < positions.size(); ++k) {
        pages[positions[k]] = std::move(scratch[k]);
    }
    return status;
}

Result<std::size_t> Engine::readObject(FileData &file, std::uint32_t targetIndex,
                                       std::uint64_t offset, std::span<std::byte> out)
{
    TargetContext &target = *targets[targetIndex];
    ObjectState &object = *file.objects[targetIndex];
    const engine::ObjectKey key = file.keys[targetIndex];
    const std::string_view job = jobs.current();
    const engine::JobTag tag = jobs.currentTag();

    // Fast path: cached pages are covered by a lock (cancels drop them), so just copy.
    const std::uint64_t marker = file.markers[targetIndex].load(std::memory_order_relaxed);
    const bool touchesMarker = !out.empty() && marker >= offset / kPageSize &&
                               marker <= (offset + out.size() - 1) / kPageSize;
    std::size_t done =
        fastRead.load(std::memory_order_relaxed) && !touchesMarker
            ? cache.readCached(key, offset, out, tag, file.prevPos.load(std::memory_order_relaxed))
            : 0;
    if (done > 0) {
        // Lustre's `hits`: pages a read found in the cache.
        readahead.stats().add(params::catalog::ra_hits,
                              (offset + done - 1) / kPageSize - offset / kPageSize + 1);
    }
    if (done == out.size()) {
        file.prevPos.store(offset + done, std::memory_order_relaxed);
        return done;
    }
    readahead.onFastReadFailed();

    auto lock = target.locks->acquire(key, locks::LockMode::PR, tag);
    if (!lock) {
        return lock.status().withContext("read lock");
    }
    const std::uint64_t size = object.size.load();
    const std::uint64_t end = std::min<std::uint64_t>(offset + out.size(), size);
    if (offset + done >= end) {
        return done;
    }
    const engine::PageIndex first = (offset + done) / kPageSize;
    const engine::PageIndex last = (end - 1) / kPageSize;
    std::vector<PageRef> pages;
    pages.reserve(last - first + 1);
    std::uint64_t missing = 0;
    for (engine::PageIndex index = first; index <= last; ++index) {
        auto page = grabForIo(key, index, tag);
        if (!page) {
            return page.status().withContext("read");
        }
        if (page->uptodate()) {
            readahead.stats().add(params::catalog::ra_hits);
        } else {
            ++missing;
        }
        pages.push_back(std::move(page).value());
    }

    // Readahead rides along with the read's own fetch.
    readahead::ReadaheadPlan plan;
    {
        std::lock_guard guard(file.readaheadMutex);
        readahead::ReadInfo info;
        info.offset = offset;
        info.length = out.size();
        info.fileSize = size;
        info.maxPagesPerRpc = target.osc->maxPagesPerRpc();
        info.missingPages = missing;
        const std::size_t limit = cache.limitPages();
        const std::size_t cached = cache.cachedPages();
        info.cacheRoom = limit > cached ? limit - cached : 0;
        plan = file.readahead[targetIndex].onRead(info);
        file.markers[targetIndex].store(file.readahead[targetIndex].marker(),
                                        std::memory_order_relaxed);
    }
    std::uint64_t readAhead = 0;
    while (auto range = plan.next()) {
        for (engine::PageIndex index = range->first; index < range->end(); ++index) {
            if (index >= first && index <= last) {
                readahead.release(1);
                continue;
            }
            auto page = cache.grab(key, index, tag, cache::Wait::no);
            if (!page) {
                if (page.status().code() == Errc::resource_exhausted) {
                    readahead.onFailedGrab(range->end() - index);
                    break;
                }
                readahead.release(1); // busy: someone else is filling it
                continue;
            }
            if (page->uptodate()) {
                readahead.release(1);
                continue;
            }
            ++readAhead;
            pages.push_back(std::move(page).value());
        }
    }
    std::sort(pages.begin(), pages.end(),
              [](const PageRef &a, const PageRef &b) { return a.index() < b.index(); });
    const Status filled = fill(target, object, pages, lock->handle(), job);
    // Readahead here is fetched with the read, so its budget is free again once it has landed.
    readahead.release(readAhead);
    if (!filled) {
        return filled.withContext("read");
    }
    for (const PageRef &page : pages) {
        const std::uint64_t pageStart = page.index() * kPageSize;
        if (page.index() < first || page.index() > last) {
            continue;
        }
        const std::uint64_t from = std::max(pageStart, offset + done);
        const std::uint64_t to = std::min(pageStart + kPageSize, end);
        std::memcpy(out.data() + (from - offset), page.data().data() + (from - pageStart),
                    to - from);
    }
    file.prevPos.store(end, std::memory_order_relaxed);
    return end - offset;
}

Result<std::size_t> Engine::writeObject(FileData &file, std::uint32_t targetIndex,
                                        std::uint64_t offset, std::span<const std::byte> in)
{
    TargetContext &target = *targets[targetIndex];
    ObjectState &object = *file.objects[targetIndex];
    const engine::ObjectKey key = file.keys[targetIndex];
    const std::string_view job = jobs.current();
    const engine::JobTag tag = jobs.currentTag();
    {
        auto lock = target.locks->acquire(key, locks::LockMode::PW, tag);
        if (!lock) {
            return lock.status().withContext("write lock");
        }
        const std::uint64_t end = offset + in.size();
        for (engine::PageIndex index = offset / kPageSize; index * kPageSize < end; ++index) {
            const std::uint64_t pageStart = index * kPageSize;
            const std::uint64_t from = std::max(pageStart, offset);
            const std::uint64_t to = std::min(pageStart + kPageSize, end);
            auto page = grabForIo(key, index, tag);
            if (!page) {
                return page.status().withContext("write");
            }
            if (!page->uptodate()) {
                const bool whole = from == pageStart && to == pageStart + kPageSize;
                if (!whole && pageStart < object.size.load()) {
                    // Read-modify-write: the rest of the page must come from the target.
                    if (auto status =
                            fill(target, object, std::span(&*page, 1), lock->handle(), job);
                        !status) {
                        return status.withContext("write (reading the page first)");
                    }
                    if (!page->holdsLock() && !page->lock(cache::Wait::yes)) {
                        return Status(Errc::internal, "write: cannot relock a page");
                    }
                } else if (!whole) {
                    std::memset(page->data().data(), 0, kPageSize);
                }
            }
            std::memcpy(page->data().data() + (from - pageStart), in.data() + (from - offset),
                        to - from);
            page->setLockCookie(lock->handle());
            page->markDirty();
        }
        std::uint64_t known = object.size.load();
        while (end > known && !object.size.compare_exchange_weak(known, end)) {
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

Result<std::uint64_t> Engine::writeBack(TargetContext &target, const engine::ObjectKey &key,
                                        ObjectState &object, std::string_view job)
{
    if (job.empty()) {
        job = "lutra.writeback"; // every RPC carries a job id; a lock's last job may be unknown
    }
    std::lock_guard serial(object.writeback);
    std::uint64_t written = 0;
    const std::uint32_t maxPages =
        std::min<std::uint32_t>(target.osc->maxPagesPerRpc(), kMaxSegments);
    std::vector<PageRef> run(maxPages);
    engine::PageIndex from = 0;
    for (;;) {
        const std::size_t n = cache.collectDirtyRun(key, from, run);
        if (n == 0) {
            return written;
        }
        std::vector<Piece> pieces;
        std::vector<transport::Segment> segments;
        planPieces(std::span(run).first(n), maxPages, pieces, segments);
        const std::uint64_t size = object.size.load();
        const engine::PageIndex lastIndex = run[n - 1].index();
        RpcWaiter waiter(pieces.size());
        for (std::size_t p = 0; p < pieces.size(); ++p) {
            const Piece &piece = pieces[p];
            const engine::PageIndex pieceLast = run[piece.first + piece.count - 1].index();
            std::uint64_t lastBytes = kPageSize;
            if ((pieceLast + 1) * kPageSize > size && size > pieceLast * kPageSize) {
                lastBytes = size - pieceLast * kPageSize; // the object ends inside this page
            }
            const Status submitted = target.osc->submitWrite(
                object.handle.load(), run[piece.first].index(),
                static_cast<std::uint32_t>(piece.count), static_cast<std::uint16_t>(lastBytes),
                std::span(segments).subspan(piece.segmentBegin, piece.segmentCount), job,
                waiter.completionFor(p));
            if (!submitted) {
                waiter.refused(submitted);
            }
        }
        const Status status = waiter.wait();
        cache.endWriteback(std::span(run).first(n), status.ok());
        if (!status) {
            return status.withContext("write-back");
        }
        for (std::size_t p = 0; p < pieces.size(); ++p) {
            written += waiter.bytes(p);
        }
        from = lastIndex + 1;
    }
}

Result<PageRef> Engine::grabForIo(const engine::ObjectKey &key, engine::PageIndex index,
                                  engine::JobTag tag)
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
    while (!m_agingWake.wait_for(lock, std::chrono::seconds(1), [this] { return m_stopping; })) {
        lock.unlock();
        for (auto &target : targets) {
            (void)target->locks->tick(locks::LockNamespace::Clock::now());
        }
        lock.lock();
    }
}

Result<Engine::CleanupReport> Engine::cleanup(std::string_view job)
{
    CleanupReport report;
    const engine::JobTag tag = job.empty() ? 0 : jobs.tag(job);
    const std::string writer = job.empty() ? std::string("lutra.cleanup") : std::string(job);
    for (auto &target : targets) {
        // Dirty data first, whoever's lock covers it: nothing written is lost to a cleanup.
        for (auto &[objectId, object] : target->openObjects()) {
            auto written = writeBack(*target, {target->index, objectId}, *object, writer);
            if (!written) {
                return written.status().withContext("cleanup");
            }
            report.bytesWrittenBack += *written;
        }
        const locks::CancelReport cancelled =
            job.empty() ? target->locks->clear() : target->locks->cancelJob(tag);
        report.locksCancelled += cancelled.locksCancelled;
        report.pagesDropped += cancelled.pagesDropped;
        report.bytesWrittenBack += cancelled.bytesWritten;
    }
    const cache::ReleaseCounts released = job.empty() ? cache.releaseAll() : cache.releaseJob(tag);
    report.pagesDropped += released.dropped;
    return report;
}

locks::CancelOutcome Engine::onCancel(TargetContext &target, const locks::CancelInfo &info)
{
    locks::CancelOutcome outcome;
    const auto object = target.object(info.key.object);
    for (int attempt = 0; attempt < 3; ++attempt) {
        if (object && info.mode == locks::LockMode::PW) {
            auto written = writeBack(target, info.key, *object, jobs.name(info.job));
            if (!written) {
                outcome.status = written.status();
            } else {
                outcome.bytesWritten += *written;
            }
        }
        const cache::ReleaseCounts counts = cache.releaseLock(info.key, info.handle);
        outcome.pagesDropped += counts.dropped;
        if (counts.dirty == 0 || !object) {
            break;
        }
    }
    return outcome;
}

} // namespace lutra::client
