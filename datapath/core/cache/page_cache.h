#pragma once
// The client's page cache (llite's page cache + osc's LRU in one): 4 KiB pages from a
// registrable pool, a sharded index keyed by (object, page index), S3-FIFO-style replacement
// (a small probationary FIFO in front of a CLOCK main queue), a live max_cached_mb limit, batched
// release, write-back run collection and a lock-free-of-lists cached read fast path.
// See README.md in this folder for the contract and how the engine uses it.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "core/cache/page.h"
#include "core/cache/page_pool.h"
#include "core/params/catalog.h"
#include "core/params/counters.h"
#include "core/types.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string_view>
#include <vector>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::cache {

using core::JobTag;
using core::kPageShift;
using core::kPageSize;
using core::ObjectKey;
using core::PageIndex;

inline constexpr std::size_t kPagesPerMiB = (1u << 20) / kPageSize;
// Pages moved per lock hold on release and reclaim (Linux's folio_batch holds 31).
inline constexpr std::size_t kDefaultBatch = 31;
inline constexpr std::size_t kMaxBatch = 64;
inline constexpr std::uint64_t kNoPosition = std::numeric_limits<std::uint64_t>::max();

enum class Wait : bool { no, yes };
enum class Batching : bool { onePage, batched };

struct ReleaseCounts {
    std::size_t dropped = 0;   // pages moved to the free list
    std::size_t dirty = 0;     // matching pages kept because they are dirty or under write-back
    std::size_t busy = 0;      // matching pages kept because they are pinned or locked
    std::size_t lockHolds = 0; // index-shard lock holds that dropped pages
};

class PageCache;

// A pinned page: while a PageRef exists the page is neither reclaimed nor released. It may also
// hold the page lock (PG_locked): the right to change the page's data and flags. Move-only.
class PageRef {
public:
    PageRef() noexcept = default;
    PageRef(PageRef &&other) noexcept;
    PageRef &operator=(PageRef &&other) noexcept;
    PageRef(const PageRef &) = delete;
    PageRef &operator=(const PageRef &) = delete;
    ~PageRef() { reset(); }

    explicit operator bool() const noexcept { return m_page != nullptr; }

    std::span<std::byte, kPageSize> data() const noexcept
    {
        return std::span<std::byte, kPageSize>(m_page->data, kPageSize);
    }
    ObjectKey key() const noexcept { return m_page->key; }
    PageIndex index() const noexcept { return m_page->index; }
    // For transport::Segment: the page inside its registered chunk.
    transport::Segment segment() const noexcept
    {
        return {m_page->data, kPageSize, m_page->region};
    }

    bool uptodate() const noexcept { return flags() & Page::kUptodate; }
    bool dirty() const noexcept { return flags() & Page::kDirty; }
    bool underWriteback() const noexcept { return flags() & Page::kWriteback; }
    // Someone sleeps until the page lock or its write-back ends (the wake is paid only then).
    bool hasWaiters() const noexcept { return flags() & Page::kWaiters; }
    bool holdsLock() const noexcept { return m_locked; }

    JobTag job() const noexcept { return m_page->job.load(std::memory_order_relaxed); }
    std::uint64_t lockCookie() const noexcept
    {
        return m_page->lockCookie.load(std::memory_order_relaxed);
    }
    void setLockCookie(std::uint64_t cookie) noexcept
    {
        m_page->lockCookie.store(cookie, std::memory_order_relaxed);
    }

    // Takes the page lock. Waits (Wait::yes) or fails (Wait::no) while another holder has it or
    // the page is under write-back (stable pages: data in a write RPC must not change).
    bool lock(Wait wait) noexcept;
    // Drops the page lock and wakes waiters. Fill failed? Unlock without markUptodate: the next
    // grab gets the page locked and not uptodate and retries.
    void unlock() noexcept;
    // Both require the page lock. markDirty also makes the page uptodate (the writer filled or
    // read-modified all of it) and counts it in the target's dirty bytes.
    void markUptodate() noexcept;
    void markDirty() noexcept;
    // Clears the mark; true if it was set (this caller is the page's first reader).
    bool takeReadahead() noexcept;
    // A fill landed: uptodate, unlocked and, when `readahead`, marked read ahead — in one atomic
    // step (a fill's completion ran four locked instructions a page on the I/O thread). The mark
    // is PG_readahead's "unused": the page was read ahead and nobody has read it yet; the first
    // read clears it (readCached, or takeReadahead on the slow path), and a page dropped with it
    // still set is reported to Options::readaheadDiscarded. Count a readahead page first
    // (PageCache::expectReadahead), so no reader takes it before it is counted.
    void finishFill(bool readahead) noexcept;
    // Another pin of the same page, without the page lock (the copy-out after a fill that
    // unlocks the page).
    PageRef pin() const noexcept;

    // Unlocks if locked, then unpins.
    void reset() noexcept;

private:
    friend class PageCache;
    PageRef(PageCache *cache, Page *page, bool locked) noexcept
        : m_cache(cache), m_page(page), m_locked(locked)
    {
    }
    std::uint64_t flags() const noexcept { return m_page->state.load(std::memory_order_acquire); }

    PageCache *m_cache = nullptr;
    Page *m_page = nullptr;
    bool m_locked = false;
};

class PageCache {
public:
    struct Options {
        std::size_t limitPages = // llite.<fs>.max_cached_mb
            params::catalog::defaultOf(params::catalog::kPageCache, "max_cached_mb") * kPagesPerMiB;
        std::size_t chunkBytes = std::size_t{64} << 20;
        std::size_t shards = 16;                  // rounded up to a power of two
        unsigned probationPercent = 10;           // share of the limit for the probationary FIFO
        std::size_t releaseBatch = kDefaultBatch; // pages per lock hold, 1..kMaxBatch
        std::size_t reclaimBatch = kDefaultBatch; // pages reclaimed per grab at the limit
        std::size_t maxTargets = 256;             // ObjectKey::target must be below this
        ChunkHooks hooks;
        // Called with the number of pages dropped (reclaimed or released) while still marked
        // readahead-unread: read_but_discarded (LU-13312). Runs under the cache's LRU lock: it
        // must only count (atomics), never call back into the cache.
        std::function<void(std::size_t pages)> readaheadDiscarded;
    };

    // Counters of llite.<fs>.page_cache_stats, in this order.
    enum Counter : std::size_t {
        cache_hit,       // pages copied by readCached
        cache_miss,      // readCached calls that stopped short
        grab_hit,        // grab found the page
        grab_new,        // grab inserted a new page
        failed_grab,     // grab failed: nothing reclaimable (LU-13312: readahead backs off)
        reclaimed,       // pages reclaimed to stay under the limit
        reclaim_batch,   // pages per reclaim lock hold (min/max/sum)
        promoted,        // pages moved from the probationary FIFO to the main queue
        released,        // pages dropped by releaseObject/Lock/Job/All
        release_batch,   // pages per release lock hold (min/max/sum)
        writeback_pages, // pages handed out by collectDirtyRun
        reclaim_busy,    // droppable pages reclaim passed over: their index shard was busy
        reclaim_waits,   // reclaim scans that freed nothing but met a busy shard: the grab
                         // waited for that shard and scanned again instead of "cache full"
        counter_count,
    };
    static std::vector<params::CounterDef> counterDefs();

    explicit PageCache(Options options);
    ~PageCache(); // every PageRef must be gone
    PageCache(const PageCache &) = delete;
    PageCache &operator=(const PageCache &) = delete;

    // Publishes llite.<fs>.max_cached_mb (live limit), llite.<fs>.cached_pages,
    // llite.<fs>.dirty_pages (read-only) and llite.<fs>.page_cache_stats.
    Status publish(params::ParamGroup &group, std::string_view fs);

    // ---- fast path --------------------------------------------------------------------------
    // Copies the longest prefix of [offset, offset + out.size()) that is cached and uptodate and
    // returns the bytes copied. Takes no lock and writes nothing shared on a hit that changes no
    // page flag (a sequence check on the page's generation); no allocation. A page dropped,
    // locked or reused during the copy is not counted (the bytes past the return are garbage).
    // `prevPos`: where this reader's previous read ended (Linux's ra->prev_pos): a read that
    // continues inside that page does not count as a second reference to it, so a stream of
    // small reads does not look hot.
    std::size_t readCached(ObjectKey key, std::uint64_t offset, std::span<std::byte> out,
                           JobTag job, std::uint64_t prevPos = kNoPosition) noexcept
    {
        return readCached(key, offset, out, job, prevPos, nullptr);
    }
    // A reader's memory of the page it copied last (the client's per-thread fast read keeps
    // one): a read that starts in that page again skips the index. It is only a candidate,
    // checked like a page found in the index, so a page dropped or reused since costs a lookup,
    // never a wrong byte. Use it with this cache only.
    struct PageHint {
        Page *page = nullptr;
        params::CounterBlock::Mine counters; // this thread's cells in the cache's counters
    };
    // Inline (forced: compilers kept it out of line), so a stream's hit is no call.
    [[gnu::always_inline]] std::size_t readCached(ObjectKey key, std::uint64_t offset,
                                                  std::span<std::byte> out, JobTag job,
                                                  std::uint64_t prevPos, PageHint *hint) noexcept
    {
        if (hint != nullptr && hint->page != nullptr) {
            if (const std::size_t got = readHintedPage(*hint, key, offset, out, job, prevPos)) {
                return got;
            }
        }
        return readCachedLookup(key, offset, out, job, prevPos, hint);
    }
    bool contains(ObjectKey key, PageIndex index) const noexcept;
    // The fast read's copy of more than 8 bytes (glibc's memcpy, chosen for this CPU at run
    // time). Tests interpose one to land an invalidation inside a copy. Set it before any read.
    using CopyOut = void *(*)(void *, const void *, std::size_t);
    void setCopyOut(CopyOut copy) noexcept { m_copyOut = copy; }
    // The fast read's copy. GCC inlines a memcpy whose size it can bound (here <= 4096) as
    // `rep movsq`: slow to start for a few bytes and slower than glibc's vector copy for a page.
    // A few bytes are copied in place; more go to `copy` (glibc's memcpy, through a pointer).
    static void copyOut(std::byte *to, const std::byte *from, std::size_t n, CopyOut copy) noexcept
    {
        if (n <= 8) {
            for (std::size_t i = 0; i < n; ++i) {
                to[i] = from[i];
            }
            return;
        }
        copy(to, from, n);
    }

    // ---- slow path --------------------------------------------------------------------------
    // The page, pinned and locked (grab_cache_page): an existing page (check uptodate()) or a new
    // one, not uptodate, for the caller to fill. Errors: resource_exhausted ("cache full":
    // at the limit and nothing clean and unpinned to reclaim; count failed_grab_cache_page and
    // back off), unavailable ("page busy": Wait::no and the page is locked or under write-back),
    // out_of_range (target >= Options::maxTargets).
    Result<PageRef> grab(ObjectKey key, PageIndex index, JobTag job, Wait wait = Wait::yes);
    // grab(key, index, job, Wait::no) of up to kMaxGrabRun pages of one object at once, for
    // readahead's windows: the index shard is locked once shared and once exclusively and the
    // LRU lock taken twice for the whole run, not twice each per page (two ranks grabbing one
    // file's windows met on both). `out[i]` gets `indexes[i]`'s page pinned and locked when it
    // is new or cached but not uptodate (the caller fills it); stays empty when the page is
    // cached uptodate or busy (locked, under write-back). Returns how many of `indexes` it
    // handled: fewer when the cache ran full (failed_grab counted), 0 for a bad target.
    static constexpr std::size_t kMaxGrabRun = 64;
    std::size_t grabMany(ObjectKey key, std::span<const PageIndex> indexes, JobTag job,
                         std::span<PageRef> out);

    // ---- write-back ---------------------------------------------------------------------------
    // Pins and marks under write-back the first run of contiguous dirty pages of `key` at or
    // after `from` (up to out.size() pages, one bulk RPC), in index order; returns how many.
    // Locked pages and pages already under write-back end a run.
    std::size_t collectDirtyRun(ObjectKey key, PageIndex from, std::span<PageRef> out) noexcept;
    // After the RPC: written cleans the pages, otherwise they stay dirty (re-dirtied) for a retry.
    // Unpins them (the refs are reset).
    void endWriteback(std::span<PageRef> pages, bool written) noexcept;
    std::int64_t dirtyBytes(std::uint32_t target) const noexcept;

    // ---- release ------------------------------------------------------------------------------
    // Drops clean, unpinned, unlocked pages to the free list, `releaseBatch` pages per shard lock
    // hold (Batching::onePage: one per hold, the benchmark baseline). Dirty pages are never
    // dropped: they are counted in `dirty`; write them back first and call again.
    ReleaseCounts releaseObject(ObjectKey key, Batching batching = Batching::batched) noexcept;
    // Only the object's pages that carry this lock cookie (lock cancellation).
    ReleaseCounts releaseLock(ObjectKey key, std::uint64_t cookie,
                              Batching batching = Batching::batched) noexcept;
    // Only pages last touched by `job` (per-job cleanup).
    ReleaseCounts releaseJob(JobTag job, Batching batching = Batching::batched) noexcept;
    // Everything (lru_size=clear). Safe to call from several threads at once.
    ReleaseCounts releaseAll(Batching batching = Batching::batched) noexcept;

    // ---- limit and state ----------------------------------------------------------------------
    // Sets the limit (at least 1 page) and reclaims down to it; returns pages reclaimed.
    std::size_t setLimitPages(std::size_t pages);
    std::size_t limitPages() const noexcept { return m_limitPages.load(std::memory_order_relaxed); }
    std::size_t cachedPages() const noexcept { return m_cached.load(std::memory_order_relaxed); }
    std::size_t dirtyPages() const noexcept
    {
        return static_cast<std::size_t>(m_dirtyPages.load(std::memory_order_relaxed));
    }
    // `pages` fills are about to mark read ahead (PageRef::finishFill): counted once for all of
    // them, before any can be read.
    void expectReadahead(std::size_t pages) noexcept
    {
        m_readaheadUnread.fetch_add(static_cast<std::int64_t>(pages), std::memory_order_relaxed);
    }
    // Pages marked readahead and not read yet (readahead waiting in the cache).
    std::size_t readaheadUnreadPages() const noexcept
    {
        const std::int64_t n = m_readaheadUnread.load(std::memory_order_relaxed);
        return n > 0 ? static_cast<std::size_t>(n) : 0;
    }
    std::size_t poolPages() const noexcept { return m_pool.totalPages(); }
    std::size_t chunkCount() const { return m_pool.chunkCount(); }
    // Pages in the probationary FIFO and the main queue (for tests and the console).
    std::size_t probationPages() const;
    std::size_t mainPages() const;
    params::CounterBlock &counters() noexcept { return m_counters; }

    // Runs `whileHeld` with the index shard of `key` locked exclusively, as an insert or a
    // release holds it (tests: a reclaim meeting a busy shard).
    void holdShard(ObjectKey key, const std::function<void()> &whileHeld);

private:
    friend class PageRef;
    struct Shard;
    struct Queue {
        Page *head = nullptr; // newest
        Page *tail = nullptr; // oldest, next to scan
        std::size_t size = 0;
    };
    enum QueueId : std::uint8_t { q_none, q_small, q_main };
    // A page and its state as the caller saw it (a release: before it retired the page; a
    // hit: before it copied).
    struct SeenPage {
        Page *page;
        std::uint64_t state;
    };
    // Flags a hit sets and clears on a page, due once its copy is done (`seen`: the state
    // before the copy).
    struct DueMarks {
        Page *page;
        std::uint64_t seen;
        std::uint64_t set;
        std::uint64_t clear;
    };
    // Applies hits' marks to the pages still in the generation each hit saw; counts the
    // readahead pages read for the first time in one step.
    void applyMarks(std::span<const DueMarks> due) noexcept;
    template <typename FindRing, typename Filter>
    ReleaseCounts releaseRing(Shard &shard, FindRing findRing, RingLinks Page::*ring, Filter filter,
                              Batching b, ReleaseCounts counts = {});
    template <typename Filter> ReleaseCounts releaseScan(Filter filter, Batching b);

    // The out-of-line readCached: the index, several pages, flag changes, job moves.
    std::size_t readCachedLookup(ObjectKey key, std::uint64_t offset, std::span<std::byte> out,
                                 JobTag job, std::uint64_t prevPos, PageHint *hint) noexcept;
    // Inline, the hit of a stream of small reads: a read within the hinted page that goes on
    // from the previous read in it, of this job's page marked neither partial nor read ahead,
    // changes no page flag and moves no job (what readCachedLookup would find). The same
    // seqlock check as there; 0 when it cannot serve the read that way (nothing changed then).
    [[gnu::always_inline]] std::size_t readHintedPage(PageHint &hint, ObjectKey key,
                                                      std::uint64_t offset,
                                                      std::span<std::byte> out, JobTag job,
                                                      std::uint64_t prevPos) noexcept
    {
        Page &page = *hint.page;
        const PageIndex index = offset >> kPageShift;
        const std::size_t inPage = offset & (kPageSize - 1);
        if (out.empty() || inPage + out.size() > kPageSize || prevPos == kNoPosition ||
            prevPos == 0 || ((prevPos - 1) >> kPageShift) != index) {
            return 0;
        }
        constexpr std::uint64_t kMustBe =
            Page::kLocked | Page::kUptodate | Page::kCached | Page::kPartial | Page::kReadahead;
        const std::uint64_t seen = page.state.load(std::memory_order_acquire);
        if ((seen & kMustBe) != (Page::kUptodate | Page::kCached) || !page.holds(key, index) ||
            page.job.load(std::memory_order_relaxed) != job) {
            return 0;
        }
        copyOut(out.data(), page.data + inPage, out.size(), m_copyOut);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (Page::generation(page.state.load(std::memory_order_relaxed)) !=
            Page::generation(seen)) {
            return 0;
        }
        m_counters.add(hint.counters, cache_hit);
        return out.size();
    }

    Shard &shardFor(const ObjectKey &key) const noexcept;
    Result<Page *> allocPage();
    // Up to out.size() free pages under one LRU lock hold (counted cached); fewer when the cache
    // is full.
    std::size_t allocPages(std::span<Page *> out);
    // allocPage's work with the LRU lock held (it may drop and retake it).
    Result<Page *> allocLocked(std::unique_lock<std::mutex> &lock);
    // A free page made `index` of `key` before it goes on the index: pinned once, locked,
    // cached, tagged `job` (its generation kept: it moved when the page last left the index).
    void prepareNew(Page &page, ObjectKey key, PageIndex index, JobTag job) noexcept;
    // A page the caller found on the index and pinned, taken as a grab takes it: touched, moved
    // to `job`'s ring if it was another's, locked (`wait`); empty (unpinned) when it is busy.
    PageRef takeFound(Shard &shard, Page *page, JobTag job, Wait wait) noexcept;
    // Frees up to `want` clean pages; `busy` (if given) gets a shard it could not lock.
    std::size_t reclaimLocked(std::size_t want, Shard **busy = nullptr) noexcept;
    void dropLocked(Shard &shard, std::span<const SeenPage> pages) noexcept;
    // Moves pages to `job`'s ring (the job tag a hit or grab found different), under one hold
    // of the shard lock. `state`: what the caller saw of each page.
    void moveJob(Shard &shard, std::span<const SeenPage> pages, JobTag job) noexcept;
    void accountDirty(const Page &page, int delta) noexcept;
    static void markAccessed(Page &page) noexcept;
    // The page's readahead mark was just cleared by its first reader.
    void readaheadUsed() noexcept { m_readaheadUnread.fetch_sub(1, std::memory_order_relaxed); }

    void pushHead(Queue &queue, QueueId id, Page *page) noexcept;
    void pushTail(Queue &queue, QueueId id, Page *page) noexcept;
    void unlink(Page *page) noexcept;
    // `retired`: the page's state before it left the index (its readahead mark is counted).
    void pushFree(Page *page, std::uint64_t retired) noexcept;

    params::CounterBlock m_counters;
    CopyOut m_copyOut = std::memcpy; // not inlined: GCC's `rep movsq` is slow for a few bytes
    std::atomic<std::size_t> m_limitPages;
    std::size_t m_shardMask;
    unsigned m_probationPercent;
    std::size_t m_releaseBatch;
    std::size_t m_reclaimBatch;
    std::size_t m_maxTargets;
    std::unique_ptr<Shard[]> m_shards;

    // Per-target dirty bytes on their own cache lines (write-back enforces max_dirty_mb).
    struct alignas(64) TargetDirty {
        std::atomic<std::int64_t> bytes{0};
    };
    std::unique_ptr<TargetDirty[]> m_targetDirty;
    std::atomic<std::int64_t> m_dirtyPages{0};
    alignas(64) std::atomic<std::int64_t> m_readaheadUnread{0};
    std::function<void(std::size_t)> m_readaheadDiscarded;

    // The LRU lock: both queues, the free list, m_cached changes.
    mutable std::mutex m_lruMutex;
    Queue m_small;
    Queue m_main;
    Page *m_free = nullptr;
    std::atomic<std::size_t> m_cached{0};

    PagePool m_pool; // owns every page and its data
};

} // namespace lutra::cache
