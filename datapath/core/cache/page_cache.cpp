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
    return engine::ObjectKeyHash{}(key);
}

std::size_t pageHash(const ObjectKey &key, PageIndex index)
{
    return static_cast<std::size_t>(mix(objectHash(key) ^ (index * 0x9e3779b97f4a7c15ULL)));
}

// A page nobody uses: the shard lock (exclusive) keeps new pins and readers away while this
// holds.
bool droppable(const Page &page, std::uint32_t state)
{
    constexpr std::uint32_t kBusy =
        Page::kLocked | Page::kDirty | Page::kWriteback | Page::kReaderMask;
    return (state & kBusy) == 0 && page.pins.load(std::memory_order_acquire) == 0;
}

// The fast read's copy. GCC inlines a memcpy whose size it can bound (here <= 4096) as
// `rep movsq`: slow to start for a few bytes and slower than glibc's vector copy for a page.
// A few bytes are copied in place; more go to glibc's memcpy, chosen for this CPU at run time.
void copyOut(std::byte *to, const std::byte *from, std::size_t n) noexcept
{
    if (n <= 8) {
        for (std::size_t i = 0; i < n; ++i) {
            to[i] = from[i];
        }
        return;
    }
    static void *(*const volatile libcMemcpy)(void *, const void *, std::size_t) = std::memcpy;
    libcMemcpy(to, from, n);
}

} // namespace

// All pages of one object live in one shard, so a cached read of a range takes one shard lock
// and per-object release walks one ring. Two intrusive hash tables: pages by (key, index),
// object rings by key.
struct alignas(64) PageCache::Shard {
    mutable std::shared_mutex mutex;
    std::vector<Page *> pages;
    std::vector<Page *> objects;
    std::size_t pageCount = 0;
    std::size_t objectCount = 0;

    Page *find(const ObjectKey &key, PageIndex index) const noexcept
    {
        for (Page *p = pages[pageHash(key, index) & (pages.size() - 1)]; p != nullptr;
             p = p->hashNext) {
            if (p->index == index && p->key == key) {
                return p;
            }
        }
        return nullptr;
    }

    Page *findObject(const ObjectKey &key) const noexcept
    {
        for (Page *p = objects[(objectHash(key) >> 20) & (objects.size() - 1)]; p != nullptr;
             p = p->objectHashNext) {
            if (p->key == key) {
                return p;
            }
        }
        return nullptr;
    }

    // Tables double when they get loaded (allocation only while the cache grows).
    void rehashPages()
    {
        std::vector<Page *> bigger(pages.size() * 2, nullptr);
        for (Page *head : pages) {
            while (head != nullptr) {
                Page *next = head->hashNext;
                Page *&bucket = bigger[pageHash(head->key, head->index) & (bigger.size() - 1)];
                head->hashNext = bucket;
                bucket = head;
                head = next;
            }
        }
        pages.swap(bigger);
    }

    void rehashObjects()
    {
        std::vector<Page *> bigger(objects.size() * 2, nullptr);
        for (Page *head : objects) {
            while (head != nullptr) {
                Page *next = head->objectHashNext;
                Page *&bucket = bigger[(objectHash(head->key) >> 20) & (bigger.size() - 1)];
                head->objectHashNext = bucket;
                bucket = head;
                head = next;
            }
        }
        objects.swap(bigger);
    }

    void insert(Page *page)
    {
        if (pageCount >= pages.size() * 2) {
            rehashPages();
        }
        Page *&bucket = pages[pageHash(page->key, page->index) & (pages.size() - 1)];
        page->hashNext = bucket;
        bucket = page;
        ++pageCount;

        if (Page *head = findObject(page->key)) {
            page->objectHead = false;
            page->objectNext = head->objectNext;
            page->objectPrev = head;
            head->objectNext->objectPrev = page;
            head->objectNext = page;
            return;
        }
        if (objectCount >= objects.size() * 2) {
            rehashObjects();
        }
        Page *&objectBucket = objects[(objectHash(page->key) >> 20) & (objects.size() - 1)];
        page->objectHead = true;
        page->objectNext = page;
        page->objectPrev = page;
        page->objectHashNext = objectBucket;
        objectBucket = page;
        ++objectCount;
    }

    void remove(Page *page) noexcept
    {
        Page **link = &pages[pageHash(page->key, page->index) & (pages.size() - 1)];
        while (*link != page) {
            link = &(*link)->hashNext;
        }
        *link = page->hashNext;
        page->hashNext = nullptr;
        --pageCount;

        if (page->objectHead) {
            Page **head = &objects[(objectHash(page->key) >> 20) & (objects.size() - 1)];
            while (*head != page) {
                head = &(*head)->objectHashNext;
            }
            if (page->objectNext == page) {
                *head = page->objectHashNext;
                --objectCount;
            } else {
                // The next page of the ring takes the head's place in the chain.
                Page *next = page->objectNext;
                next->objectHead = true;
                next->objectHashNext = page->objectHashNext;
                *head = next;
            }
            page->objectHead = false;
            page->objectHashNext = nullptr;
        }
        page->objectPrev->objectNext = page->objectNext;
        page->objectNext->objectPrev = page->objectPrev;
        page->objectNext = nullptr;
        page->objectPrev = nullptr;
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
    std::atomic<std::uint32_t> &state = m_page->state;
    std::uint32_t current = state.load(std::memory_order_relaxed);
    for (;;) {
        if ((current & (Page::kLocked | Page::kWriteback)) != 0) {
            if (wait == Wait::no) {
                return false;
            }
            state.wait(current, std::memory_order_relaxed);
            current = state.load(std::memory_order_relaxed);
            continue;
        }
        if (state.compare_exchange_weak(current, current | Page::kLocked, std::memory_order_acquire,
                                        std::memory_order_relaxed)) {
            break;
        }
    }
    // Copy-out readers that got in before the lock finish their memcpy (a few hundred ns).
    while ((state.load(std::memory_order_acquire) & Page::kReaderMask) != 0) {
        std::this_thread::yield();
    }
    m_locked = true;
    return true;
}

void PageRef::unlock() noexcept
{
    assert(m_locked);
    m_page->state.fetch_and(~Page::kLocked, std::memory_order_release);
    m_page->state.notify_all();
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
    const std::uint32_t old =
        m_page->state.fetch_or(Page::kDirty | Page::kUptodate, std::memory_order_acq_rel);
    if ((old & Page::kDirty) == 0) {
        m_cache->accountDirty(*m_page, 1);
    }
    if ((old & Page::kReadahead) != 0) {
        (void)takeReadahead(); // overwritten: used, not discarded
    }
}

void PageRef::markReadahead() noexcept
{
    assert(m_locked);
    const std::uint32_t old = m_page->state.fetch_or(Page::kReadahead, std::memory_order_relaxed);
    if ((old & Page::kReadahead) == 0) {
        m_cache->m_readaheadUnread.fetch_add(1, std::memory_order_relaxed);
    }
}

bool PageRef::takeReadahead() noexcept
{
    if ((m_page->state.load(std::memory_order_relaxed) & Page::kReadahead) == 0) {
        return false;
    }
    const std::uint32_t old = m_page->state.fetch_and(~Page::kReadahead, std::memory_order_relaxed);
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

std::vector<params::CounterDef> PageCache::counterDefs()
{
    return {
        {"cache_hit", "pages"},
        {"cache_miss", "reqs"},
        {"grab_hit", "pages"},
        {"grab_new", "pages"},
        {"failed_grab", "reqs"},
        {"reclaimed", "pages"},
        {"reclaim_batch", "pages", true},
        {"promoted", "pages"},
        {"released", "pages"},
        {"release_batch", "pages", true},
        {"writeback_pages", "pages"},
    };
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
        m_shards[i].pages.assign(perShard, nullptr);
        m_shards[i].objects.assign(std::max<std::size_t>(16, perShard / 16), nullptr);
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
    const std::uint32_t state = page.state.load(std::memory_order_relaxed);
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

void PageCache::pushFree(Page *page) noexcept
{
    if ((page->state.load(std::memory_order_relaxed) & Page::kReadahead) != 0) {
        // Read ahead and thrown away before anyone read it.
        m_readaheadUnread.fetch_sub(1, std::memory_order_relaxed);
        if (m_readaheadDiscarded) {
            m_readaheadDiscarded(1);
        }
    }
    page->state.store(0, std::memory_order_relaxed);
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

// S3-FIFO with a two-touch promotion threshold: new pages enter the small FIFO; at its tail a
// page hit twice (active) moves to the main queue, anything else is reclaimed, so a one-time
// stream never reaches main. Main is a CLOCK: a hit page gets another round. Pages that cannot
// go (dirty, pinned, locked, shard busy) rotate to their queue's head. Called with m_lruMutex.
std::size_t PageCache::reclaimLocked(std::size_t want) noexcept
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
    for (std::size_t scanned = 0; done < want && scanned < budget; ++scanned) {
        const bool fromSmall =
            m_small.size > 0 && (m_small.size >= smallTarget || m_main.size == 0);
        Queue &queue = fromSmall ? m_small : m_main;
        Page *page = queue.tail;
        if (page == nullptr) {
            break;
        }
        const QueueId id = fromSmall ? q_small : q_main;
        const std::uint32_t state = page->state.load(std::memory_order_acquire);
        // Small: a page hit twice moves to main, and so does a page read ahead and not read
        // yet (its reader is on the way: evicting it now would waste the read, LU-13312) or a
        // page read in part (another reader wants the rest); it gets main's one round, so
        // readahead nobody reads still goes.
        const std::uint32_t keep = fromSmall ? (Page::kActive | Page::kReadahead | Page::kPartial)
                                             : (Page::kActive | Page::kReferenced);
        if ((state & keep) != 0) {
            page->state.fetch_and(~(Page::kActive | Page::kReferenced | Page::kPartial),
                                  std::memory_order_relaxed);
            unlink(page);
            pushHead(m_main, q_main, page);
            promotedCount += fromSmall ? 1 : 0;
            continue;
        }
        if (!droppable(*page, state)) {
            unlink(page);
            pushHead(queue, id, page);
            continue;
        }
        // Lock order is shard -> LRU everywhere else, so only try here.
        Shard &shard = shardFor(page->key);
        if (!shard.mutex.try_lock()) {
            unlink(page);
            pushHead(queue, id, page);
            continue;
        }
        if (!droppable(*page, page->state.load(std::memory_order_acquire))) {
            shard.mutex.unlock();
            unlink(page);
            pushHead(queue, id, page);
            continue;
        }
        shard.remove(page);
        shard.mutex.unlock();
        unlink(page);
        pushFree(page);
        m_cached.fetch_sub(1, std::memory_order_relaxed);
        ++done;
    }
    if (promotedCount != 0) {
        m_counters.add(promoted, promotedCount);
    }
    if (done != 0) {
        m_counters.add(reclaimed, done);
        m_counters.sample(reclaim_batch, static_cast<std::int64_t>(done));
    }
    return done;
}

Result<Page *> PageCache::allocPage()
{
    std::unique_lock lock(m_lruMutex);
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
                pushFree(&*page);
            }
            continue;
        }
        if (reclaimLocked(m_reclaimBatch) == 0) {
            return Status(Errc::resource_exhausted, "cache full");
        }
    }
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
        created->key = key;
        created->index = index;
        created->job.store(job, std::memory_order_relaxed);
        created->lockCookie.store(0, std::memory_order_relaxed);
        created->pins.store(1, std::memory_order_relaxed);
        created->state.store(Page::kLocked | Page::kCached, std::memory_order_relaxed);
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
        pushFree(created);
        m_cached.fetch_sub(1, std::memory_order_relaxed);
    }
    markAccessed(*page);
    if (page->job.load(std::memory_order_relaxed) != job) {
        page->job.store(job, std::memory_order_relaxed);
    }
    PageRef ref(this, page, false);
    if (!ref.lock(wait)) {
        return Status(Errc::unavailable, "page busy");
    }
    m_counters.add(grab_hit);
    return ref;
}

std::size_t PageCache::readCached(ObjectKey key, std::uint64_t offset, std::span<std::byte> out,
                                  JobTag job, std::uint64_t prevPos) noexcept
{
    if (out.empty()) {
        return 0;
    }
    const Shard &shard = shardFor(key);
    std::size_t copied = 0;
    std::size_t pages = 0;
    {
        std::shared_lock lock(shard.mutex);
        while (copied < out.size()) {
            const std::uint64_t pos = offset + copied;
            const PageIndex index = pos >> kPageShift;
            Page *page = shard.find(key, index);
            if (page == nullptr) {
                break;
            }
            // Announce the copy; a locker waits for it, and a locked page is not ours to read.
            const std::uint32_t state = page->state.fetch_add(1, std::memory_order_acquire);
            if ((state & Page::kLocked) != 0 || (state & Page::kUptodate) == 0) {
                page->state.fetch_sub(1, std::memory_order_release);
                break;
            }
            const std::size_t inPage = pos & (kPageSize - 1);
            const std::size_t n = std::min(kPageSize - inPage, out.size() - copied);
            copyOut(out.data() + copied, page->data + inPage, n);
            page->state.fetch_sub(1, std::memory_order_release);
            if ((state & Page::kReadahead) != 0 &&
                (page->state.fetch_and(~Page::kReadahead, std::memory_order_relaxed) &
                 Page::kReadahead) != 0) {
                readaheadUsed(); // the first read of a page read ahead
            }
            const bool samePageAsBefore = copied == 0 && prevPos != kNoPosition && prevPos != 0 &&
                                          ((prevPos - 1) >> kPageShift) == index;
            if (!samePageAsBefore) {
                markAccessed(*page);
            }
            // A page read in part by a read that did not go on from the previous one in it is
            // shared with another reader's transfer (or this reader comes back): keep it past
            // the probation FIFO. A reader going on in the page says it was its own.
            const bool inPart = inPage != 0 || inPage + n < kPageSize;
            if (samePageAsBefore ? (state & Page::kPartial) != 0
                                 : inPart && (state & Page::kPartial) == 0) {
                if (samePageAsBefore) {
                    page->state.fetch_and(~Page::kPartial, std::memory_order_relaxed);
                } else {
                    page->state.fetch_or(Page::kPartial, std::memory_order_relaxed);
                }
            }
            if (page->job.load(std::memory_order_relaxed) != job) {
                page->job.store(job, std::memory_order_relaxed);
            }
            copied += n;
            ++pages;
        }
    }
    if (pages != 0) {
        m_counters.add(cache_hit, pages);
    }
    if (copied < out.size()) {
        m_counters.add(cache_miss);
    }
    return copied;
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
    Page *head = shard.findObject(key);
    if (head == nullptr) {
        return 0;
    }
    constexpr std::uint32_t kUnavailable = Page::kLocked | Page::kWriteback;
    bool found = false;
    PageIndex start = 0;
    Page *page = head;
    do {
        const std::uint32_t state = page->state.load(std::memory_order_relaxed);
        if (page->index >= from && (state & Page::kDirty) != 0 && (state & kUnavailable) == 0 &&
            (!found || page->index < start)) {
            start = page->index;
            found = true;
        }
        page = page->objectNext;
    } while (page != head);
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
        std::uint32_t state = page->state.load(std::memory_order_relaxed);
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
        if (written) {
            const std::uint32_t old = page->state.fetch_and(~(Page::kDirty | Page::kWriteback),
                                                            std::memory_order_acq_rel);
            if ((old & Page::kDirty) != 0) {
                accountDirty(*page, -1);
            }
        } else {
            page->state.fetch_and(~Page::kWriteback, std::memory_order_release);
        }
        page->state.notify_all();
        ref.reset();
    }
}

// Unhashes `pages` (the shard lock is held exclusively) and frees them under one LRU lock hold.
void PageCache::dropLocked(Shard &shard, std::span<Page *const> pages) noexcept
{
    for (Page *page : pages) {
        shard.remove(page);
    }
    {
        std::lock_guard lru(m_lruMutex);
        for (Page *page : pages) {
            unlink(page);
            pushFree(page);
        }
        m_cached.fetch_sub(pages.size(), std::memory_order_relaxed);
    }
    m_counters.add(released, pages.size());
    m_counters.sample(release_batch, static_cast<std::int64_t>(pages.size()));
}

template <typename Filter>
ReleaseCounts PageCache::releaseRing(ObjectKey key, Filter filter, Batching batching)
{
    const std::size_t batch = batching == Batching::batched ? m_releaseBatch : 1;
    Shard &shard = shardFor(key);
    ReleaseCounts counts;
    std::array<Page *, kMaxBatch> victims{};
    for (;;) {
        std::unique_lock lock(shard.mutex);
        Page *head = shard.findObject(key);
        if (head == nullptr) {
            counts.dirty = 0;
            counts.busy = 0;
            break;
        }
        std::size_t n = 0;
        std::size_t dirty = 0;
        std::size_t busy = 0;
        bool more = false;
        Page *page = head;
        do {
            if (filter(*page)) {
                const std::uint32_t state = page->state.load(std::memory_order_acquire);
                if ((state & (Page::kDirty | Page::kWriteback)) != 0) {
                    ++dirty;
                } else if (!droppable(*page, state)) {
                    ++busy;
                } else if (n < batch) {
                    victims[n++] = page;
                } else {
                    // The batch is full and more follow: stop here rather than walk the rest
                    // of the ring on every hold (O(pages^2) for one page per hold). The last
                    // hold walks the whole ring and counts what stays.
                    more = true;
                    break;
                }
            }
            page = page->objectNext;
        } while (page != head);
        counts.dirty = dirty;
        counts.busy = busy;
        if (n == 0) {
            break;
        }
        dropLocked(shard, std::span<Page *const>(victims.data(), n));
        counts.dropped += n;
        ++counts.lockHolds;
        if (!more) {
            break;
        }
    }
    return counts;
}

template <typename Filter> ReleaseCounts PageCache::releaseScan(Filter filter, Batching batching)
{
    const std::size_t batch = batching == Batching::batched ? m_releaseBatch : 1;
    ReleaseCounts counts;
    std::array<Page *, kMaxBatch> victims{};
    for (std::size_t s = 0; s <= m_shardMask; ++s) {
        Shard &shard = m_shards[s];
        std::size_t bucket = 0;
        for (;;) {
            std::unique_lock lock(shard.mutex);
            std::size_t n = 0;
            bool full = false;
            while (bucket < shard.pages.size() && !full) {
                std::size_t dirty = 0;
                std::size_t busy = 0;
                for (Page *page = shard.pages[bucket]; page != nullptr; page = page->hashNext) {
                    if (!filter(*page)) {
                        continue;
                    }
                    const std::uint32_t state = page->state.load(std::memory_order_acquire);
                    if ((state & (Page::kDirty | Page::kWriteback)) != 0) {
                        ++dirty;
                    } else if (!droppable(*page, state)) {
                        ++busy;
                    } else if (n < batch) {
                        victims[n++] = page;
                    } else {
                        full = true;
                        break;
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
                dropLocked(shard, std::span<Page *const>(victims.data(), n));
                counts.dropped += n;
                ++counts.lockHolds;
            }
            if (bucket >= shard.pages.size()) {
                break;
            }
        }
    }
    return counts;
}

ReleaseCounts PageCache::releaseObject(ObjectKey key, Batching batching) noexcept
{
    return releaseRing(
        key, [](const Page &) { return true; }, batching);
}

ReleaseCounts PageCache::releaseLock(ObjectKey key, std::uint64_t cookie,
                                     Batching batching) noexcept
{
    return releaseRing(
        key,
        [cookie](const Page &page) {
            return page.lockCookie.load(std::memory_order_relaxed) == cookie;
        },
        batching);
}

ReleaseCounts PageCache::releaseJob(JobTag job, Batching batching) noexcept
{
    return releaseScan(
        [job](const Page &page) { return page.job.load(std::memory_order_relaxed) == job; },
        batching);
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
    return group.addStats(prefix + "page_cache_stats",
                          "page cache hits, misses, reclaim and release (write 'clear' to reset)",
                          m_counters);
}

} // namespace lutra::cache
