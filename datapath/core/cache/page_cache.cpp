#include "core/cache/page_cache.h"

#include "core/params/bind.h"
#include "core/params/registry.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <shared_mutex>
#include <string>
#include <thread>

namespace lutra::cache {

namespace {

std::size_t nextPow2(std::size_t n)
{
    std::size_t p = 1;
    while (p < n) {
        p <<= 1;
    }
    return p;
}

std::uint64_t mix(std::uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

std::size_t objectHash(const ObjectKey &key)
{
    return core::ObjectKeyHash{}(key);
}

// An object's pages take consecutive buckets from a start its hash picks (bits the shard
// choice, which uses the low ones, leaves free): no second hash per page, and a run of pages
// reads a run of buckets.
std::size_t pageSlot(std::size_t objectHash, PageIndex index)
{
    return static_cast<std::size_t>((objectHash >> 32) + index);
}

void setKey(Page &page, const ObjectKey &key, PageIndex index) noexcept
{
    std::atomic_ref<PageIndex>(page.index).store(index, std::memory_order_relaxed);
    std::atomic_ref<std::uint64_t>(page.key.object).store(key.object, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(page.key.target).store(key.target, std::memory_order_relaxed);
}

// A page nobody uses: the shard lock (exclusive) keeps new pins away while this holds.
bool droppable(const Page &page, std::uint64_t state)
{
    constexpr std::uint64_t kBusy = Page::kLocked | Page::kDirty | Page::kWriteback;
    return (state & kBusy) == 0 && page.pins.load(std::memory_order_acquire) == 0;
}

enum class Retire { done, dirty, busy };

// Takes a page off the index (the caller holds its shard lock exclusively and removes it next):
// clears its flags and moves its generation in one step, so a lock-free reader that found it
// before fails its check. Dirty, under write-back, locked or pinned pages stay. `old`: the
// state it had.
Retire retire(Page &page, std::uint64_t &old) noexcept
{
    std::uint64_t state = page.state.load(std::memory_order_acquire);
    for (;;) {
        if ((state & (Page::kDirty | Page::kWriteback)) != 0) {
            return Retire::dirty;
        }
        if (!droppable(page, state)) {
            return Retire::busy;
        }
        const std::uint64_t gone = (state & ~Page::kFlagMask) + Page::kGenerationOne;
        if (page.state.compare_exchange_weak(state, gone, std::memory_order_acq_rel,
                                             std::memory_order_acquire)) {
            old = state;
            return Retire::done;
        }
    }
}

// The flags a hit changes: first hit referenced, second active (not for a read that goes on in
// the page the previous one ended in), the partial mark set by a read of part of the page and
// cleared by a read that goes on in it, the readahead mark cleared by the page's first read --
// unless that read took only part of it and did not go on from the previous one (kPartlyRead):
// the rest is another reader's (transfers that are not a multiple of the page size share
// pages), so the page stays read ahead and unread, in the room readahead counts and in what
// reclaim keeps, until the next read (pressure 2 ranks x 4097 B fetched 1.22-1.24 pages per
// file page: a shared page lost its mark at its first reader and was evicted before its
// second; now 1.03).
struct HitMarks {
    std::uint64_t set = 0;
    std::uint64_t clear = 0;
};

HitMarks hitMarks(std::uint64_t state, bool samePageAsBefore, bool inPart) noexcept
{
    HitMarks marks;
    if (!samePageAsBefore) {
        if ((state & Page::kReferenced) == 0) {
            marks.set |= Page::kReferenced;
        } else if ((state & Page::kActive) == 0) {
            marks.set |= Page::kActive;
        }
        if (inPart && (state & Page::kPartial) == 0) {
            marks.set |= Page::kPartial;
        }
    } else if ((state & Page::kPartial) != 0) {
        marks.clear |= Page::kPartial;
    }
    if ((state & Page::kReadahead) != 0) {
        if (inPart && !samePageAsBefore && (state & Page::kPartlyRead) == 0) {
            marks.set |= Page::kPartlyRead;
        } else {
            marks.clear |= Page::kReadahead | (state & Page::kPartlyRead);
        }
    }
    return marks;
}

// Buckets of page hash chains, read without a lock. A table that grows stays allocated (a
// reader may still walk it) until the cache goes; the retired ones add up to less than the
// live one.
struct PageTable {
    explicit PageTable(std::size_t size)
        : mask(size - 1), buckets(std::make_unique<std::atomic<Page *>[]>(size))
    {
    }
    std::atomic<Page *> &bucket(std::size_t hash, PageIndex index) const noexcept
    {
        return buckets[pageSlot(hash, index) & mask];
    }
    std::size_t size() const noexcept { return mask + 1; }

    const std::size_t mask;
    const std::unique_ptr<std::atomic<Page *>[]> buckets;
};

struct ObjectRingKey {
    using Key = ObjectKey;
    static constexpr RingLinks Page::*links = &Page::objectRing;
    static ObjectKey of(const Page &page) noexcept { return page.key; }
    static std::size_t hash(const ObjectKey &key) noexcept { return objectHash(key) >> 20; }
};

struct JobRingKey {
    using Key = JobTag;
    static constexpr RingLinks Page::*links = &Page::jobRing;
    static JobTag of(const Page &page) noexcept { return page.job.load(std::memory_order_relaxed); }
    static std::size_t hash(JobTag job) noexcept { return static_cast<std::size_t>(mix(job)); }
};

// Rings of pages that share a key (an object's pages, the pages a job touched last), each ring
// found through its head page on a hash chain. Only under the shard lock. Grows (allocates) only
// when the number of rings doubles.
template <typename Ring> class RingTable {
public:
    using Key = typename Ring::Key;

    void reset(std::size_t size) { m_heads.assign(size, nullptr); }

    Page *find(const Key &key) const noexcept
    {
        for (Page *p = m_heads[Ring::hash(key) & (m_heads.size() - 1)]; p != nullptr;
             p = links(p).hashNext) {
            if (Ring::of(*p) == key) {
                return p;
            }
        }
        return nullptr;
    }

    static Page *next(const Page *page) noexcept { return (page->*Ring::links).next; }

    void insert(Page *page)
    {
        RingLinks &mine = links(page);
        const Key key = Ring::of(*page);
        if (Page *head = find(key)) {
            mine.head = false;
            mine.next = links(head).next;
            mine.prev = head;
            links(links(head).next).prev = page;
            links(head).next = page;
            return;
        }
        if (m_count >= m_heads.size() * 2) {
            grow();
        }
        Page *&bucket = m_heads[Ring::hash(key) & (m_heads.size() - 1)];
        mine.head = true;
        mine.next = page;
        mine.prev = page;
        mine.hashNext = bucket;
        bucket = page;
        ++m_count;
    }

    // Call while Ring::of(*page) is still the key it was inserted with.
    void remove(Page *page) noexcept
    {
        RingLinks &mine = links(page);
        if (mine.head) {
            Page **chain = &m_heads[Ring::hash(Ring::of(*page)) & (m_heads.size() - 1)];
            while (*chain != page) {
                chain = &links(*chain).hashNext;
            }
            if (mine.next == page) {
                *chain = mine.hashNext;
                --m_count;
            } else {
                // The next page of the ring takes the head's place in the chain.
                RingLinks &next = links(mine.next);
                next.head = true;
                next.hashNext = mine.hashNext;
                *chain = mine.next;
            }
            mine.head = false;
            mine.hashNext = nullptr;
        }
        links(mine.prev).next = mine.next;
        links(mine.next).prev = mine.prev;
        mine.next = nullptr;
        mine.prev = nullptr;
    }

private:
    static RingLinks &links(Page *page) noexcept { return page->*Ring::links; }

    void grow()
    {
        std::vector<Page *> bigger(m_heads.size() * 2, nullptr);
        for (Page *head : m_heads) {
            while (head != nullptr) {
                Page *next = links(head).hashNext;
                Page *&bucket = bigger[Ring::hash(Ring::of(*head)) & (bigger.size() - 1)];
                links(head).hashNext = bucket;
                bucket = head;
                head = next;
            }
        }
        m_heads.swap(bigger);
    }

    std::vector<Page *> m_heads;
    std::size_t m_count = 0;
};

constexpr int kMaxLockFreeWalk = 32;
// moveJob's `seen` for a page the caller has pinned (no cached page's state is 0).
constexpr std::uint64_t kPinnedByCaller = 0;

} // namespace

// All pages of one object live in one shard, so a cached read of a range looks in one shard
// and per-object release walks one ring. Pages by (key, index) in a table readers walk without
// the lock; object rings and job rings (per-job release) under the lock.
struct alignas(64) PageCache::Shard {
    // Held by whoever changes the index (exclusive) or pins a page it finds (shared); the fast
    // read takes none.
    mutable std::shared_mutex mutex;
    std::atomic<PageTable *> table{nullptr};
    std::vector<std::unique_ptr<PageTable>> tables; // the live one last
    std::size_t pageCount = 0;
    RingTable<ObjectRingKey> objects;
    RingTable<JobRingKey> jobs;

    void init(std::size_t pageBuckets, std::size_t objectBuckets)
    {
        tables.push_back(std::make_unique<PageTable>(pageBuckets));
        table.store(tables.back().get(), std::memory_order_release);
        objects.reset(objectBuckets);
        jobs.reset(16);
    }

    PageTable &live() const noexcept { return *tables.back(); }

    // Under the lock.
    Page *find(const ObjectKey &key, PageIndex index) const noexcept
    {
        for (Page *p = live().bucket(objectHash(key), index).load(std::memory_order_relaxed);
             p != nullptr; p = p->hashNext.load(std::memory_order_relaxed)) {
            if (p->holds(key, index)) {
                return p;
            }
        }
        return nullptr;
    }

    // Without the lock: the page that held (key, index) when this looked, or null. It may have
    // left or been reused since (the caller checks its state's generation), and a page moved
    // by a concurrent change can be missed (the caller then takes its slow path). A walk that
    // does not end soon (chains rewritten under it) asks again under the lock.
    Page *findLockFree(const ObjectKey &key, PageIndex index, std::size_t hash) const noexcept
    {
        const PageTable *current = table.load(std::memory_order_acquire);
        Page *p = current->bucket(hash, index).load(std::memory_order_acquire);
        for (int walked = 0; p != nullptr; ++walked) {
            if (walked == kMaxLockFreeWalk) {
                std::shared_lock lock(mutex);
                return find(key, index);
            }
            if (p->holds(key, index)) {
                return p;
            }
            p = p->hashNext.load(std::memory_order_acquire);
        }
        return nullptr;
    }

    // Starts loading the descriptor of the page that heads (key, index)'s bucket (usually that
    // page: an object's pages take consecutive buckets), and the buckets a cache line further
    // on, so a multi-page read's next lookups do not wait for them after the copy before.
    void prefetch(PageIndex index, std::size_t hash) const noexcept
    {
        constexpr PageIndex kBucketsPerLine = 64 / sizeof(std::atomic<Page *>);
        const PageTable *current = table.load(std::memory_order_acquire);
        __builtin_prefetch(&current->bucket(hash, index + kBucketsPerLine));
        if (Page *p = current->bucket(hash, index).load(std::memory_order_relaxed)) {
            __builtin_prefetch(p);
        }
    }

    // Tables double when they get loaded (allocation only while the cache grows).
    void rehashPages()
    {
        const PageTable &old = live();
        auto bigger = std::make_unique<PageTable>(old.size() * 2);
        for (std::size_t b = 0; b < old.size(); ++b) {
            Page *head = old.buckets[b].load(std::memory_order_relaxed);
            while (head != nullptr) {
                Page *next = head->hashNext.load(std::memory_order_relaxed);
                std::atomic<Page *> &bucket = bigger->bucket(objectHash(head->key), head->index);
                head->hashNext.store(bucket.load(std::memory_order_relaxed),
                                     std::memory_order_relaxed);
                bucket.store(head, std::memory_order_relaxed);
                head = next;
            }
        }
        table.store(bigger.get(), std::memory_order_release);
        tables.push_back(std::move(bigger));
    }

    void insert(Page *page)
    {
        if (pageCount >= live().size() * 2) {
            rehashPages();
        }
        std::atomic<Page *> &bucket = live().bucket(objectHash(page->key), page->index);
        page->hashNext.store(bucket.load(std::memory_order_relaxed), std::memory_order_relaxed);
        bucket.store(page, std::memory_order_release); // publishes the key to lock-free readers
        ++pageCount;
        objects.insert(page);
        jobs.insert(page);
    }

    // The page keeps its hashNext, so a lock-free reader standing on it walks on.
    void remove(Page *page) noexcept
    {
        std::atomic<Page *> *link = &live().bucket(objectHash(page->key), page->index);
        while (link->load(std::memory_order_relaxed) != page) {
            link = &link->load(std::memory_order_relaxed)->hashNext;
        }
        link->store(page->hashNext.load(std::memory_order_relaxed), std::memory_order_release);
        --pageCount;
        objects.remove(page);
        jobs.remove(page);
    }
};

// ---- PageRef ------------------------------------------------------------------------------

PageRef::PageRef(PageRef &&other) noexcept
    : m_cache(other.m_cache), m_page(other.m_page), m_locked(other.m_locked)
{
    other.m_page = nullptr;
    other.m_locked = false;
}

PageRef &PageRef::operator=(PageRef &&other) noexcept
{
    if (this != &other) {
        reset();
        m_cache = other.m_cache;
        m_page = other.m_page;
        m_locked = other.m_locked;
        other.m_page = nullptr;
        other.m_locked = false;
    }
    return *this;
}

bool PageRef::lock(Wait wait) noexcept
{
    assert(m_page != nullptr && !m_locked);
    std::atomic<std::uint64_t> &state = m_page->state;
    std::uint64_t current = state.load(std::memory_order_relaxed);
    for (;;) {
        if ((current & (Page::kLocked | Page::kWriteback)) != 0) {
            if (wait == Wait::no) {
                return false;
            }
            if ((current & Page::kWaiters) == 0 &&
                !state.compare_exchange_weak(current, current | Page::kWaiters,
                                             std::memory_order_relaxed)) {
                continue; // the state moved: look again
            }
            state.wait(current | Page::kWaiters, std::memory_order_relaxed);
            current = state.load(std::memory_order_relaxed);
            continue;
        }
        // A new generation: a lock-free copy that overlaps this lock (and the holder's writes)
        // fails its check.
        if (state.compare_exchange_weak(current, (current | Page::kLocked) + Page::kGenerationOne,
                                        std::memory_order_acquire, std::memory_order_relaxed)) {
            break;
        }
    }
    // The new generation is visible before any write to the page's data (seqlock writer).
    std::atomic_thread_fence(std::memory_order_release);
    m_locked = true;
    return true;
}

void PageRef::unlock() noexcept
{
    assert(m_locked);
    const std::uint64_t old =
        m_page->state.fetch_and(~(Page::kLocked | Page::kWaiters), std::memory_order_release);
    if ((old & Page::kWaiters) != 0) {
        m_page->state.notify_all();
    }
    m_locked = false;
}

void PageRef::markUptodate() noexcept
{
    assert(m_locked);
    m_page->state.fetch_or(Page::kUptodate, std::memory_order_release);
}

void PageRef::markDirty() noexcept
{
    assert(m_locked);
    const std::uint64_t old =
        m_page->state.fetch_or(Page::kDirty | Page::kUptodate, std::memory_order_acq_rel);
    if ((old & Page::kDirty) == 0) {
        m_cache->accountDirty(*m_page, 1);
    }
    if ((old & Page::kReadahead) != 0) {
        (void)takeReadahead(); // overwritten: used, not discarded
    }
}

void PageRef::finishFill(bool readahead) noexcept
{
    assert(m_locked);
    const std::uint64_t marks = Page::kUptodate | (readahead ? Page::kReadahead : 0);
    std::uint64_t state = m_page->state.load(std::memory_order_relaxed);
    while (!m_page->state.compare_exchange_weak(
        state, (state | marks) & ~(Page::kLocked | Page::kWaiters), std::memory_order_release,
        std::memory_order_relaxed)) {
    }
    if (readahead && (state & Page::kReadahead) != 0) {
        m_cache->m_readaheadUnread.fetch_sub(1, std::memory_order_relaxed); // counted twice
    }
    if ((state & Page::kWaiters) != 0) {
        m_page->state.notify_all();
    }
    m_locked = false;
}

bool PageRef::takeReadahead() noexcept
{
    if ((m_page->state.load(std::memory_order_relaxed) & Page::kReadahead) == 0) {
        return false;
    }
    const std::uint64_t old =
        m_page->state.fetch_and(~(Page::kReadahead | Page::kPartlyRead), std::memory_order_relaxed);
    if ((old & Page::kReadahead) == 0) {
        return false; // another reader was first
    }
    m_cache->readaheadUsed();
    return true;
}

PageRef PageRef::pin() const noexcept
{
    assert(m_page != nullptr);
    m_page->pins.fetch_add(1, std::memory_order_acquire);
    return PageRef(m_cache, m_page, false);
}

void PageRef::reset() noexcept
{
    if (m_page == nullptr) {
        return;
    }
    if (m_locked) {
        unlock();
    }
    m_page->pins.fetch_sub(1, std::memory_order_release);
    m_page = nullptr;
}

// ---- PageCache ----------------------------------------------------------------------------

namespace stats = params::catalog;
static_assert(
    stats::counterIndex(stats::kPageCacheStats, "cache_hit") == PageCache::cache_hit &&
    stats::counterIndex(stats::kPageCacheStats, "cache_miss") == PageCache::cache_miss &&
    stats::counterIndex(stats::kPageCacheStats, "grab_hit") == PageCache::grab_hit &&
    stats::counterIndex(stats::kPageCacheStats, "grab_new") == PageCache::grab_new &&
    stats::counterIndex(stats::kPageCacheStats, "failed_grab") == PageCache::failed_grab &&
    stats::counterIndex(stats::kPageCacheStats, "reclaimed") == PageCache::reclaimed &&
    stats::counterIndex(stats::kPageCacheStats, "reclaim_batch") == PageCache::reclaim_batch &&
    stats::counterIndex(stats::kPageCacheStats, "promoted") == PageCache::promoted &&
    stats::counterIndex(stats::kPageCacheStats, "released") == PageCache::released &&
    stats::counterIndex(stats::kPageCacheStats, "release_batch") == PageCache::release_batch &&
    stats::counterIndex(stats::kPageCacheStats, "writeback_pages") == PageCache::writeback_pages &&
    stats::counterIndex(stats::kPageCacheStats, "reclaim_busy") == PageCache::reclaim_busy &&
    stats::counterIndex(stats::kPageCacheStats, "reclaim_waits") == PageCache::reclaim_waits &&
    stats::kPageCacheStats.counters.size() == PageCache::counter_count);

std::vector<params::CounterDef> PageCache::counterDefs()
{
    return stats::counterDefs(stats::kPageCacheStats);
}

PageCache::PageCache(Options options)
    : m_counters(counterDefs()), m_limitPages(std::max<std::size_t>(options.limitPages, 1)),
      m_shardMask(nextPow2(std::max<std::size_t>(options.shards, 1)) - 1),
      m_probationPercent(std::min(options.probationPercent, 100u)),
      m_releaseBatch(std::clamp<std::size_t>(options.releaseBatch, 1, kMaxBatch)),
      m_reclaimBatch(std::clamp<std::size_t>(options.reclaimBatch, 1, kMaxBatch)),
      m_maxTargets(std::max<std::size_t>(options.maxTargets, 1)),
      m_shards(std::make_unique<Shard[]>(m_shardMask + 1)),
      m_targetDirty(std::make_unique<TargetDirty[]>(m_maxTargets)),
      m_readaheadDiscarded(std::move(options.readaheadDiscarded)),
      m_pool(options.chunkBytes, std::move(options.hooks))
{
    // Sized for the limit up front, so steady state never rehashes.
    const std::size_t perShard = nextPow2(std::max<std::size_t>(
        64, m_limitPages.load(std::memory_order_relaxed) / (m_shardMask + 1)));
    for (std::size_t i = 0; i <= m_shardMask; ++i) {
        m_shards[i].init(perShard, std::max<std::size_t>(16, perShard / 16));
    }
}

PageCache::~PageCache() = default;

PageCache::Shard &PageCache::shardFor(const ObjectKey &key) const noexcept
{
    return m_shards[objectHash(key) & m_shardMask];
}

void PageCache::markAccessed(Page &page) noexcept
{
    // First hit: referenced; second: active. Only a set bit is written, so a hot page's line is
    // not dirtied again and again.
    const std::uint64_t state = page.state.load(std::memory_order_relaxed);
    if ((state & Page::kReferenced) == 0) {
        page.state.fetch_or(Page::kReferenced, std::memory_order_relaxed);
    } else if ((state & Page::kActive) == 0) {
        page.state.fetch_or(Page::kActive, std::memory_order_relaxed);
    }
}

void PageCache::accountDirty(const Page &page, int delta) noexcept
{
    m_dirtyPages.fetch_add(delta, std::memory_order_relaxed);
    m_targetDirty[page.key.target].bytes.fetch_add(delta * static_cast<std::int64_t>(kPageSize),
                                                   std::memory_order_relaxed);
}

std::int64_t PageCache::dirtyBytes(std::uint32_t target) const noexcept
{
    if (target >= m_maxTargets) {
        return 0;
    }
    return m_targetDirty[target].bytes.load(std::memory_order_relaxed);
}

void PageCache::pushHead(Queue &queue, QueueId id, Page *page) noexcept
{
    page->queue = id;
    page->lruPrev = nullptr;
    page->lruNext = queue.head;
    if (queue.head != nullptr) {
        queue.head->lruPrev = page;
    } else {
        queue.tail = page;
    }
    queue.head = page;
    ++queue.size;
}

void PageCache::unlink(Page *page) noexcept
{
    Queue &queue = page->queue == q_small ? m_small : m_main;
    if (page->lruPrev != nullptr) {
        page->lruPrev->lruNext = page->lruNext;
    } else {
        queue.head = page->lruNext;
    }
    if (page->lruNext != nullptr) {
        page->lruNext->lruPrev = page->lruPrev;
    } else {
        queue.tail = page->lruPrev;
    }
    page->lruNext = nullptr;
    page->lruPrev = nullptr;
    page->queue = q_none;
    --queue.size;
}

void PageCache::pushFree(Page *page, std::uint64_t retired) noexcept
{
    if ((retired & Page::kReadahead) != 0) {
        m_readaheadUnread.fetch_sub(1, std::memory_order_relaxed);
        // Read ahead and thrown away before anyone read it (a page read in part was used).
        if ((retired & Page::kPartlyRead) == 0 && m_readaheadDiscarded) {
            m_readaheadDiscarded(1);
        }
    }
    // Flags off, the generation kept: it only moves on, so a stale reader never matches again.
    page->state.fetch_and(~Page::kFlagMask, std::memory_order_relaxed);
    page->lruNext = m_free;
    m_free = page;
}

std::size_t PageCache::probationPages() const
{
    std::lock_guard lock(m_lruMutex);
    return m_small.size;
}

std::size_t PageCache::mainPages() const
{
    std::lock_guard lock(m_lruMutex);
    return m_main.size;
}

void PageCache::pushTail(Queue &queue, QueueId id, Page *page) noexcept
{
    page->queue = id;
    page->lruNext = nullptr;
    page->lruPrev = queue.tail;
    if (queue.tail != nullptr) {
        queue.tail->lruNext = page;
    } else {
        queue.head = page;
    }
    queue.tail = page;
    ++queue.size;
}

// S3-FIFO with a two-touch promotion threshold: new pages enter the small FIFO; at its tail a
// page hit twice (active) moves to the main queue, anything else is reclaimed, so a one-time
// stream never reaches main. Main is a CLOCK: a hit page gets another round. Pages that cannot
// go (dirty, pinned, locked) rotate to their queue's head. A droppable page whose shard is busy
// (lock order is shard -> LRU, so only a try here) keeps its place: it is set aside for this
// scan and put back at the tail, still the next to go; `busy` gets its shard so the caller can
// wait for it. Called with m_lruMutex.
std::size_t PageCache::reclaimLocked(std::size_t want, Shard **busy) noexcept
{
    const std::size_t cached = m_cached.load(std::memory_order_relaxed);
    if (cached == 0 ||
        static_cast<std::size_t>(m_dirtyPages.load(std::memory_order_relaxed)) >= cached) {
        return 0; // everything is dirty: fail fast, write-back must run first
    }
    const std::size_t limit = m_limitPages.load(std::memory_order_relaxed);
    const std::size_t smallTarget = std::max<std::size_t>(1, limit * m_probationPercent / 100);
    const std::size_t budget = 2 * (m_small.size + m_main.size) + 2;
    std::size_t done = 0;
    std::size_t promotedCount = 0;
    std::size_t busyCount = 0;
    // Pages of each queue this scan rotated because they cannot go now (locked: in flight;
    // pinned; dirty). They do not count towards the FIFO's share: a FIFO holding more than its
    // target in pages being filled sent every scan round it again and again while main held
    // thousands of clean pages ("cache full" under readahead, LU-13312).
    std::size_t stuckSmall = 0;
    std::size_t stuckMain = 0;
    // Set aside, newest first (linked through lruNext): put back at the tails below.
    Page *asideSmall = nullptr;
    Page *asideMain = nullptr;
    for (std::size_t scanned = 0; done < want && scanned < budget; ++scanned) {
        const bool smallLeft = m_small.size > stuckSmall;
        const bool mainLeft = m_main.size > stuckMain;
        if (!smallLeft && !mainLeft) {
            break; // every page went round once and none can go
        }
        const bool fromSmall = smallLeft && (m_small.size - stuckSmall >= smallTarget || !mainLeft);
        Queue &queue = fromSmall ? m_small : m_main;
        Page *page = queue.tail;
        if (page == nullptr) {
            break;
        }
        const QueueId id = fromSmall ? q_small : q_main;
        const std::uint64_t state = page->state.load(std::memory_order_acquire);
        // Small: a page hit twice moves to main, and so does a page read ahead and not read
        // yet (its reader is on the way: evicting it now would waste the read, LU-13312) or a
        // page read in part (another reader wants the rest); it gets main's one round, so
        // readahead nobody reads still goes.
        const std::uint64_t keep = fromSmall ? (Page::kActive | Page::kReadahead | Page::kPartial)
                                             : (Page::kActive | Page::kReferenced);
        if ((state & keep) != 0) {
            page->state.fetch_and(~(Page::kActive | Page::kReferenced | Page::kPartial),
                                  std::memory_order_relaxed);
            if (fromSmall && (state & Page::kActive) == 0) {
                // Promoted because a reader is still to come (read ahead, or read in part):
                // one more round in main than a page nobody waits for.
                page->state.fetch_or(Page::kReferenced, std::memory_order_relaxed);
            }
            unlink(page);
            pushHead(m_main, q_main, page);
            promotedCount += fromSmall ? 1 : 0;
            continue;
        }
        if (!droppable(*page, state)) {
            unlink(page);
            pushHead(queue, id, page);
            ++(fromSmall ? stuckSmall : stuckMain);
            continue;
        }
        Shard &shard = shardFor(page->key);
        if (!shard.mutex.try_lock()) {
            unlink(page);
            Page *&aside = fromSmall ? asideSmall : asideMain;
            page->lruNext = aside;
            aside = page;
            ++busyCount;
            if (busy != nullptr && *busy == nullptr) {
                *busy = &shard;
            }
            continue;
        }
        std::uint64_t old = 0;
        if (retire(*page, old) != Retire::done) {
            shard.mutex.unlock();
            unlink(page);
            pushHead(queue, id, page);
            ++(fromSmall ? stuckSmall : stuckMain);
            continue;
        }
        shard.remove(page);
        shard.mutex.unlock();
        unlink(page);
        pushFree(page, old);
        m_cached.fetch_sub(1, std::memory_order_relaxed);
        ++done;
    }
    // Newest first onto the tail, so the oldest set aside ends up last in line again.
    for (Page *page = asideSmall; page != nullptr;) {
        Page *next = page->lruNext;
        pushTail(m_small, q_small, page);
        page = next;
    }
    for (Page *page = asideMain; page != nullptr;) {
        Page *next = page->lruNext;
        pushTail(m_main, q_main, page);
        page = next;
    }
    if (promotedCount != 0) {
        m_counters.add(promoted, promotedCount);
    }
    if (busyCount != 0) {
        m_counters.add(reclaim_busy, busyCount);
    }
    if (done != 0) {
        m_counters.add(reclaimed, done);
        m_counters.sample(reclaim_batch, static_cast<std::int64_t>(done));
    }
    return done;
}

// How often one allocation waits for a busy shard before it reports "cache full": a shard is
// held for one batch at most, so a few waits see it free unless every clean page is pinned.
constexpr int kBusyShardWaits = 4;

Result<Page *> PageCache::allocPage()
{
    std::unique_lock lock(m_lruMutex);
    return allocLocked(lock);
}

std::size_t PageCache::allocPages(std::span<Page *> out)
{
    std::unique_lock lock(m_lruMutex);
    std::size_t got = 0;
    while (got < out.size()) {
        Result<Page *> page = allocLocked(lock);
        if (!page.ok()) {
            break;
        }
        out[got++] = *page;
    }
    return got;
}

Result<Page *> PageCache::allocLocked(std::unique_lock<std::mutex> &lock)
{
    int waits = 0;
    for (;;) {
        if (m_cached.load(std::memory_order_relaxed) <
            m_limitPages.load(std::memory_order_relaxed)) {
            if (m_free != nullptr) {
                Page *page = m_free;
                m_free = page->lruNext;
                page->lruNext = nullptr;
                m_cached.fetch_add(1, std::memory_order_relaxed);
                return page;
            }
            // Below the limit with no free page: the pool grows by a chunk (not steady state).
            lock.unlock();
            Result<std::span<Page>> chunk = m_pool.addChunk();
            lock.lock();
            if (!chunk.ok()) {
                return chunk.status();
            }
            // Pushed last page first, so they are taken in address order: a file filled in
            // order lies in ascending memory (the copy-out streams forward; adjacent pages merge
            // into one bulk segment).
            for (auto page = chunk->rbegin(); page != chunk->rend(); ++page) {
                pushFree(&*page, 0);
            }
            continue;
        }
        Shard *busy = nullptr;
        if (reclaimLocked(m_reclaimBatch, &busy) != 0) {
            continue;
        }
        // Nothing freed. Only busy shards in the way is contention, not a full cache (a "cache
        // full" halves every file's readahead cap): wait, outside the LRU lock (lock order is
        // shard -> LRU), until that shard's holder is done, and scan again.
        if (busy == nullptr || waits == kBusyShardWaits) {
            return Status(Errc::resource_exhausted, "cache full");
        }
        ++waits;
        m_counters.add(reclaim_waits);
        lock.unlock();
        {
            std::shared_lock wait(busy->mutex);
        }
        std::this_thread::yield();
        lock.lock();
    }
}

void PageCache::holdShard(ObjectKey key, const std::function<void()> &whileHeld)
{
    std::unique_lock lock(shardFor(key).mutex);
    whileHeld();
}

Result<PageRef> PageCache::grab(ObjectKey key, PageIndex index, JobTag job, Wait wait)
{
    if (key.target >= m_maxTargets) {
        return Status(Errc::out_of_range, "bad target");
    }
    Shard &shard = shardFor(key);
    Page *page = nullptr;
    {
        std::shared_lock lock(shard.mutex);
        page = shard.find(key, index);
        if (page != nullptr) {
            page->pins.fetch_add(1, std::memory_order_acquire);
        }
    }
    if (page == nullptr) {
        Result<Page *> fresh = allocPage();
        if (!fresh.ok()) {
            m_counters.add(failed_grab);
            return fresh.status();
        }
        Page *created = *fresh;
        prepareNew(*created, key, index, job);
        std::unique_lock lock(shard.mutex);
        page = shard.find(key, index);
        if (page == nullptr) {
            shard.insert(created);
            {
                std::lock_guard lru(m_lruMutex);
                pushHead(m_small, q_small, created);
            }
            m_counters.add(grab_new);
            return PageRef(this, created, true);
        }
        // Lost a race with another grab of the same page: use theirs.
        page->pins.fetch_add(1, std::memory_order_acquire);
        lock.unlock();
        created->pins.store(0, std::memory_order_relaxed);
        std::lock_guard lru(m_lruMutex);
        pushFree(created, 0);
        m_cached.fetch_sub(1, std::memory_order_relaxed);
    }
    PageRef ref = takeFound(shard, page, job, wait);
    if (!ref) {
        return Status(Errc::unavailable, "page busy");
    }
    return ref;
}

void PageCache::prepareNew(Page &page, ObjectKey key, PageIndex index, JobTag job) noexcept
{
    setKey(page, key, index);
    page.job.store(job, std::memory_order_relaxed);
    page.lockCookie.store(0, std::memory_order_relaxed);
    page.pins.store(1, std::memory_order_relaxed);
    page.state.fetch_or(Page::kLocked | Page::kCached, std::memory_order_release);
}

PageRef PageCache::takeFound(Shard &shard, Page *page, JobTag job, Wait wait) noexcept
{
    markAccessed(*page);
    if (page->job.load(std::memory_order_relaxed) != job) {
        const SeenPage pinned{page, kPinnedByCaller};
        moveJob(shard, std::span(&pinned, 1), job);
    }
    PageRef ref(this, page, false);
    if (!ref.lock(wait)) {
        return {}; // unpinned as ref goes
    }
    m_counters.add(grab_hit);
    return ref;
}

std::size_t PageCache::grabMany(ObjectKey key, std::span<const PageIndex> indexes, JobTag job,
                                std::span<PageRef> out)
{
    const std::size_t count = std::min({indexes.size(), out.size(), kMaxGrabRun});
    if (count == 0 || key.target >= m_maxTargets) {
        return 0;
    }
    Shard &shard = shardFor(key);
    std::array<Page *, kMaxGrabRun> found{}; // cached pages, pinned
    std::size_t missing = 0;
    {
        std::shared_lock lock(shard.mutex);
        for (std::size_t i = 0; i < count; ++i) {
            found[i] = shard.find(key, indexes[i]);
            if (found[i] != nullptr) {
                found[i]->pins.fetch_add(1, std::memory_order_acquire);
            } else {
                ++missing;
            }
        }
    }
    std::array<Page *, kMaxGrabRun> fresh{};
    const std::size_t allocated = missing == 0 ? 0 : allocPages({fresh.data(), missing});
    // With fewer pages than missing ones, the run ends before the first missing page left
    // without one.
    std::size_t handled = count;
    if (allocated < missing) {
        m_counters.add(failed_grab);
        std::size_t seen = 0;
        for (std::size_t i = 0; i < count; ++i) {
            if (found[i] == nullptr && seen++ == allocated) {
                handled = i;
                break;
            }
        }
        for (std::size_t i = handled; i < count; ++i) {
            if (found[i] != nullptr) {
                PageRef unpin(this, found[i], false);
                found[i] = nullptr;
            }
        }
    }
    std::array<Page *, kMaxGrabRun> inserted{};
    std::size_t insertedCount = 0;
    std::size_t used = 0;
    if (allocated > 0) {
        std::unique_lock lock(shard.mutex);
        for (std::size_t i = 0; i < handled; ++i) {
            if (found[i] != nullptr) {
                continue;
            }
            if (Page *theirs = shard.find(key, indexes[i]); theirs != nullptr) {
                // Another grab inserted it since: use theirs, as grab() does.
                theirs->pins.fetch_add(1, std::memory_order_acquire);
                found[i] = theirs;
                continue;
            }
            Page *created = fresh[used++];
            prepareNew(*created, key, indexes[i], job);
            shard.insert(created);
            inserted[insertedCount++] = created;
            out[i] = PageRef(this, created, true);
        }
    }
    if (allocated > 0) {
        std::lock_guard lru(m_lruMutex);
        for (std::size_t k = 0; k < insertedCount; ++k) {
            pushHead(m_small, q_small, inserted[k]);
        }
        for (std::size_t k = used; k < allocated; ++k) {
            pushFree(fresh[k], 0); // lost races: never on the index
        }
        m_cached.fetch_sub(allocated - used, std::memory_order_relaxed);
    }
    m_counters.add(grab_new, insertedCount);
    // Cached pages: as grab(Wait::no) takes them; the caller fills only what is not uptodate.
    for (std::size_t i = 0; i < handled; ++i) {
        if (found[i] == nullptr) {
            continue;
        }
        PageRef ref = takeFound(shard, found[i], job, Wait::no);
        if (ref && !ref.uptodate()) {
            out[i] = std::move(ref);
        }
    }
    return handled;
}

std::size_t PageCache::readCachedLookup(ObjectKey key, std::uint64_t offset,
                                        std::span<std::byte> out, JobTag job, std::uint64_t prevPos,
                                        PageHint *hint) noexcept
{
    if (out.empty()) {
        return 0;
    }
    // The object's shard, only when a lookup needs it (a hint's hit needs no hash). Out of line:
    // inlined, the compiler computed the hash up front for every read.
    std::size_t hash = 0;
    Shard *shard = nullptr;
    const auto shardOfKey = [&]() __attribute__((noinline))->Shard &
    {
        if (shard == nullptr) {
            hash = objectHash(key);
            shard = &m_shards[hash & m_shardMask];
        }
        return *shard;
    };
    std::size_t copied = 0;
    std::size_t pages = 0;
    std::array<SeenPage, 16> moves;
    std::size_t moving = 0;
    std::array<DueMarks, 16> dueMarks;
    std::size_t marking = 0;
    while (copied < out.size()) {
        const std::uint64_t pos = offset + copied;
        const PageIndex index = pos >> kPageShift;
        Page *page =
            copied == 0 && hint != nullptr && hint->page != nullptr && hint->page->holds(key, index)
                ? hint->page
                : shardOfKey().findLockFree(key, index, hash);
        if (page == nullptr) {
            break;
        }
        // A seqlock read: the page must be cached, uptodate and unlocked before the copy, still
        // hold this key, and its generation must not have moved by the end of the copy (a lock,
        // a drop or a reuse moves it): then the bytes are the page's, not a torn or stale copy.
        const std::uint64_t seen = page->state.load(std::memory_order_acquire);
        if ((seen & (Page::kLocked | Page::kUptodate | Page::kCached)) !=
                (Page::kUptodate | Page::kCached) ||
            !page->holds(key, index)) {
            break;
        }
        const std::size_t inPage = pos & (kPageSize - 1);
        const std::size_t n = std::min(kPageSize - inPage, out.size() - copied);
        if (copied + n < out.size()) {
            shardOfKey().prefetch(index + 1, hash);
        }
        copyOut(out.data() + copied, page->data + inPage, n, m_copyOut);
        std::atomic_thread_fence(std::memory_order_acquire);
        const std::uint64_t now = page->state.load(std::memory_order_relaxed);
        if (Page::generation(now) != Page::generation(seen)) {
            break;
        }
        // A page read in part by a read that did not go on from the previous one in it is
        // shared with another reader's transfer (or this reader comes back): keep it past the
        // probation FIFO. A reader going on in the page says it was its own.
        const bool samePageAsBefore = copied == 0 && prevPos != kNoPosition && prevPos != 0 &&
                                      ((prevPos - 1) >> kPageShift) == index;
        const bool inPart = inPage != 0 || inPage + n < kPageSize;
        const HitMarks marks = hitMarks(now, samePageAsBefore, inPart);
        if ((marks.set | marks.clear) != 0) {
            // Marked after the copies, a batch at a time: a locked instruction waits until the
            // copy's stores have left the store buffer, which cost a cold read ~100 ns a page.
            dueMarks[marking++] = DueMarks{page, seen, marks.set, marks.clear};
            if (marking == dueMarks.size()) {
                applyMarks(dueMarks);
                marking = 0;
            }
        }
        if (page->job.load(std::memory_order_relaxed) != job) {
            // Another job's page: moved to this job's ring after the copies, in one lock hold.
            moves[moving++] = SeenPage{page, seen};
            if (moving == moves.size()) {
                moveJob(shardOfKey(), moves, job);
                moving = 0;
            }
        }
        copied += n;
        ++pages;
        if (hint != nullptr) {
            hint->page = page;
        }
    }
    if (marking != 0) {
        applyMarks(std::span(dueMarks).first(marking));
    }
    if (moving != 0) {
        moveJob(shardOfKey(), std::span(moves).first(moving), job);
    }
    if (pages != 0) {
        if (hint != nullptr) {
            m_counters.add(hint->counters, cache_hit, pages);
        } else {
            m_counters.add(cache_hit, pages);
        }
    }
    if (copied < out.size()) {
        m_counters.add(cache_miss);
    }
    return copied;
}

void PageCache::applyMarks(std::span<const DueMarks> due) noexcept
{
    std::int64_t readaheadRead = 0;
    for (const auto &[page, seen, set, clear] : due) {
        // Only on the same generation: a page locked or dropped since is not this hit's.
        std::uint64_t state = page->state.load(std::memory_order_relaxed);
        while (Page::generation(state) == Page::generation(seen) &&
               !page->state.compare_exchange_weak(state, (state | set) & ~clear,
                                                  std::memory_order_relaxed)) {
        }
        if (Page::generation(state) == Page::generation(seen) &&
            (state & clear & Page::kReadahead) != 0) {
            ++readaheadRead; // the first read of a page read ahead
        }
    }
    if (readaheadRead != 0) {
        m_readaheadUnread.fetch_sub(readaheadRead, std::memory_order_relaxed);
    }
}

void PageCache::moveJob(Shard &shard, std::span<const SeenPage> pages, JobTag job) noexcept
{
    std::unique_lock lock(shard.mutex);
    for (const auto &[page, seen] : pages) {
        const std::uint64_t state = page->state.load(std::memory_order_acquire);
        // On the index still, the same page the caller saw (a pinned page cannot leave it);
        // otherwise the tag is a hint not worth chasing.
        if ((state & Page::kCached) == 0 ||
            (seen != kPinnedByCaller && Page::generation(state) != Page::generation(seen)) ||
            page->job.load(std::memory_order_relaxed) == job) {
            continue;
        }
        shard.jobs.remove(page);
        page->job.store(job, std::memory_order_relaxed);
        shard.jobs.insert(page);
    }
}

bool PageCache::contains(ObjectKey key, PageIndex index) const noexcept
{
    const Shard &shard = shardFor(key);
    std::shared_lock lock(shard.mutex);
    return shard.find(key, index) != nullptr;
}

std::size_t PageCache::collectDirtyRun(ObjectKey key, PageIndex from,
                                       std::span<PageRef> out) noexcept
{
    if (out.empty()) {
        return 0;
    }
    const Shard &shard = shardFor(key);
    std::shared_lock lock(shard.mutex);
    constexpr std::uint64_t kUnavailable = Page::kLocked | Page::kWriteback;
    const auto collectable = [](const Page &page) {
        const std::uint64_t state = page.state.load(std::memory_order_relaxed);
        return (state & Page::kDirty) != 0 && (state & kUnavailable) == 0;
    };
    bool found = false;
    PageIndex start = 0;
    Page *page = shard.find(key, from);
    if (page != nullptr && collectable(*page)) {
        // The run goes on at `from` (the next run of a write-back, a sequential writer's pages):
        // one lookup, not a walk over every cached page of the object (which made write-back
        // quadratic in the object's cached pages: 7.8 % of ior-easy's write phase).
        start = from;
        found = true;
    } else {
        Page *head = shard.objects.find(key);
        if (head == nullptr) {
            return 0;
        }
        page = head;
        do {
            if (page->index >= from && collectable(*page) && (!found || page->index < start)) {
                start = page->index;
                found = true;
            }
            page = RingTable<ObjectRingKey>::next(page);
        } while (page != head);
    }
    if (!found) {
        return 0;
    }
    std::size_t n = 0;
    for (PageIndex index = start; n < out.size(); ++index) {
        page = shard.find(key, index);
        if (page == nullptr) {
            break;
        }
        // Same word as the page lock, so write-back and a writer exclude each other.
        std::uint64_t state = page->state.load(std::memory_order_relaxed);
        bool taken = false;
        while ((state & Page::kDirty) != 0 && (state & kUnavailable) == 0) {
            if (page->state.compare_exchange_weak(state, state | Page::kWriteback,
                                                  std::memory_order_acq_rel)) {
                taken = true;
                break;
            }
        }
        if (!taken) {
            break;
        }
        page->pins.fetch_add(1, std::memory_order_acquire);
        out[n++] = PageRef(this, page, false);
    }
    if (n != 0) {
        m_counters.add(writeback_pages, n);
    }
    return n;
}

void PageCache::endWriteback(std::span<PageRef> pages, bool written) noexcept
{
    for (PageRef &ref : pages) {
        Page *page = ref.m_page;
        if (page == nullptr) {
            continue;
        }
        const std::uint64_t cleared =
            Page::kWriteback | Page::kWaiters | (written ? Page::kDirty : std::uint64_t{0});
        const std::uint64_t old = page->state.fetch_and(~cleared, std::memory_order_acq_rel);
        if (written && (old & Page::kDirty) != 0) {
            accountDirty(*page, -1);
        }
        if ((old & Page::kWaiters) != 0) {
            page->state.notify_all();
        }
        ref.reset();
    }
}

// Unhashes `pages` (retired; the shard lock is held exclusively) and frees them under one LRU
// lock hold.
void PageCache::dropLocked(Shard &shard, std::span<const SeenPage> pages) noexcept
{
    for (const SeenPage &victim : pages) {
        shard.remove(victim.page);
    }
    {
        std::lock_guard lru(m_lruMutex);
        for (const SeenPage &victim : pages) {
            unlink(victim.page);
            pushFree(victim.page, victim.state);
        }
        m_cached.fetch_sub(pages.size(), std::memory_order_relaxed);
    }
    m_counters.add(released, pages.size());
    m_counters.sample(release_batch, static_cast<std::int64_t>(pages.size()));
}

// Releases the pages of one ring (an object's, or a job's in one shard) that pass `filter`,
// `batch` pages per exclusive hold of the shard lock. A hold walks the ring only until its batch
// is full and one more page to drop is seen; the last hold walks all of it and counts what stays.
template <typename FindRing, typename Filter>
ReleaseCounts PageCache::releaseRing(Shard &shard, FindRing findRing, RingLinks Page::*ring,
                                     Filter filter, Batching batching, ReleaseCounts counts)
{
    const std::size_t batch = batching == Batching::batched ? m_releaseBatch : 1;
    std::array<SeenPage, kMaxBatch> victims{};
    std::size_t dirty = 0;
    std::size_t busy = 0;
    for (;;) {
        std::unique_lock lock(shard.mutex);
        Page *head = findRing();
        dirty = 0;
        busy = 0;
        if (head == nullptr) {
            break;
        }
        std::size_t n = 0;
        bool more = false;
        Page *page = head;
        do {
            if (filter(*page)) {
                const std::uint64_t state = page->state.load(std::memory_order_acquire);
                if ((state & (Page::kDirty | Page::kWriteback)) != 0) {
                    ++dirty;
                } else if (!droppable(*page, state)) {
                    ++busy;
                } else if (n == batch) {
                    // The batch is full and more follow: stop here rather than walk the rest
                    // of the ring on every hold (O(pages^2) for one page per hold).
                    more = true;
                    break;
                } else if (const Retire r = retire(*page, victims[n].state); r == Retire::done) {
                    victims[n++].page = page;
                } else {
                    ++(r == Retire::dirty ? dirty : busy);
                }
            }
            page = (page->*ring).next;
        } while (page != head);
        if (n == 0) {
            break;
        }
        dropLocked(shard, std::span<const SeenPage>(victims.data(), n));
        counts.dropped += n;
        ++counts.lockHolds;
        if (!more) {
            break;
        }
    }
    counts.dirty += dirty;
    counts.busy += busy;
    return counts;
}

template <typename Filter> ReleaseCounts PageCache::releaseScan(Filter filter, Batching batching)
{
    const std::size_t batch = batching == Batching::batched ? m_releaseBatch : 1;
    ReleaseCounts counts;
    std::array<SeenPage, kMaxBatch> victims{};
    for (std::size_t s = 0; s <= m_shardMask; ++s) {
        Shard &shard = m_shards[s];
        std::size_t bucket = 0;
        for (;;) {
            std::unique_lock lock(shard.mutex);
            const PageTable &table = shard.live();
            std::size_t n = 0;
            bool full = false;
            while (bucket < table.size() && !full) {
                std::size_t dirty = 0;
                std::size_t busy = 0;
                for (Page *page = table.buckets[bucket].load(std::memory_order_relaxed);
                     page != nullptr; page = page->hashNext.load(std::memory_order_relaxed)) {
                    if (!filter(*page)) {
                        continue;
                    }
                    const std::uint64_t state = page->state.load(std::memory_order_acquire);
                    if ((state & (Page::kDirty | Page::kWriteback)) != 0) {
                        ++dirty;
                    } else if (!droppable(*page, state)) {
                        ++busy;
                    } else if (n == batch) {
                        full = true;
                        break;
                    } else if (const Retire r = retire(*page, victims[n].state);
                               r == Retire::done) {
                        victims[n++].page = page;
                    } else {
                        ++(r == Retire::dirty ? dirty : busy);
                    }
                }
                if (!full) {
                    // The bucket is done: what is left in it stays, count it once.
                    counts.dirty += dirty;
                    counts.busy += busy;
                    ++bucket;
                }
            }
            if (n != 0) {
                dropLocked(shard, std::span<const SeenPage>(victims.data(), n));
                counts.dropped += n;
                ++counts.lockHolds;
            }
            if (bucket >= shard.live().size()) {
                break;
            }
        }
    }
    return counts;
}

ReleaseCounts PageCache::releaseObject(ObjectKey key, Batching batching) noexcept
{
    Shard &shard = shardFor(key);
    return releaseRing(
        shard, [&] { return shard.objects.find(key); }, &Page::objectRing,
        [](const Page &) { return true; }, batching);
}

ReleaseCounts PageCache::releaseLock(ObjectKey key, std::uint64_t cookie,
                                     Batching batching) noexcept
{
    Shard &shard = shardFor(key);
    return releaseRing(
        shard, [&] { return shard.objects.find(key); }, &Page::objectRing,
        [cookie](const Page &page) {
            return page.lockCookie.load(std::memory_order_relaxed) == cookie;
        },
        batching);
}

// The job's ring in each shard: proportional to the job's pages (plus one lookup per shard),
// not to the cache.
ReleaseCounts PageCache::releaseJob(JobTag job, Batching batching) noexcept
{
    ReleaseCounts counts;
    for (std::size_t s = 0; s <= m_shardMask; ++s) {
        Shard &shard = m_shards[s];
        counts = releaseRing(
            shard, [&] { return shard.jobs.find(job); }, &Page::jobRing,
            [](const Page &) { return true; }, batching, counts);
    }
    return counts;
}

ReleaseCounts PageCache::releaseAll(Batching batching) noexcept
{
    return releaseScan([](const Page &) { return true; }, batching);
}

std::size_t PageCache::setLimitPages(std::size_t pages)
{
    pages = std::max<std::size_t>(pages, 1);
    m_limitPages.store(pages, std::memory_order_relaxed);
    std::size_t total = 0;
    for (;;) {
        // One batch per LRU lock hold, so grabs and releases get in between.
        std::lock_guard lock(m_lruMutex);
        const std::size_t cached = m_cached.load(std::memory_order_relaxed);
        if (cached <= pages) {
            break;
        }
        const std::size_t done = reclaimLocked(std::min(m_reclaimBatch, cached - pages));
        if (done == 0) {
            break;
        }
        total += done;
    }
    return total;
}

Status PageCache::publish(params::ParamGroup &group, std::string_view fs)
{
    params::Binding maxCachedMb;
    maxCachedMb.read = [this] {
        return params::Value(static_cast<std::int64_t>(limitPages() / kPagesPerMiB));
    };
    maxCachedMb.apply = [this](const params::Value &value) {
        setLimitPages(static_cast<std::size_t>(std::get<std::int64_t>(value)) * kPagesPerMiB);
        return Status{};
    };
    params::Binding cachedPagesNow;
    cachedPagesNow.read = [this] {
        return params::Value(static_cast<std::int64_t>(cachedPages()));
    };
    params::Binding dirtyPagesNow;
    dirtyPagesNow.read = [this] { return params::Value(static_cast<std::int64_t>(dirtyPages())); };
    std::vector<params::BindRow> rows;
    rows.push_back({"max_cached_mb", std::move(maxCachedMb), {}});
    rows.push_back({"cached_pages", std::move(cachedPagesNow), {}});
    rows.push_back({"dirty_pages", std::move(dirtyPagesNow), {}});
    if (Status status = params::bindGroup(group, params::catalog::kPageCache, fs, std::move(rows));
        !status.ok()) {
        return status;
    }
    const std::string prefix = "llite." + std::string(fs) + ".";
    return group.addStats(prefix + std::string(stats::kPageCacheStats.leaf),
                          std::string(stats::kPageCacheStats.help), m_counters);
}

} // namespace lutra::cache
