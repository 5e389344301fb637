// The page cache: insertion and lookup, the exact eviction order of the probationary FIFO and the
// main CLOCK, scan resistance, live limit changes through llite.<fs>.max_cached_mb, failed grabs
// when nothing is reclaimable, pages per release lock hold (31), per-object / per-lock / per-job
// / global release counts, a run grabbed at once (grabMany), dirty-run collection and accounting,
// chunk registration hooks, and no heap allocation on the hit, grab and release paths in steady
// state.
#include "allocation_counter.h"
#include "core/cache/page_cache.h"
#include "core/params/registry.h"

#include <QTest>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

using namespace lutra;
using namespace lutra::cache;

namespace {

constexpr ObjectKey kA{1, 100};
constexpr ObjectKey kB{2, 200};
constexpr ObjectKey kC{2, 300};

PageCache::Options smallCache(std::size_t limitPages)
{
    PageCache::Options options;
    options.limitPages = limitPages;
    options.chunkBytes = 64 * kPageSize;
    options.shards = 4;
    return options;
}

std::byte pattern(const ObjectKey &key, PageIndex index)
{
    return static_cast<std::byte>((key.object * 131 + index * 7 + 1) & 0xff);
}

// Grabs, fills with the page's pattern, marks uptodate (or dirty) and unlocks.
bool fill(PageCache &cache, ObjectKey key, PageIndex index, JobTag job = 0, bool dirty = false)
{
    Result<PageRef> ref = cache.grab(key, index, job);
    if (!ref.ok()) {
        return false;
    }
    if (!ref->uptodate() || dirty) {
        std::memset(ref->data().data(), static_cast<int>(pattern(key, index)), kPageSize);
        if (dirty) {
            ref->markDirty();
        } else {
            ref->markUptodate();
        }
    }
    return true;
}

// Reads one whole page through the fast path (one reference).
bool touch(PageCache &cache, ObjectKey key, PageIndex index)
{
    std::vector<std::byte> buffer(kPageSize);
    return cache.readCached(key, index * kPageSize, buffer, 0) == kPageSize;
}

std::vector<PageIndex> present(const PageCache &cache, ObjectKey key, PageIndex end)
{
    std::vector<PageIndex> out;
    for (PageIndex i = 0; i < end; ++i) {
        if (cache.contains(key, i)) {
            out.push_back(i);
        }
    }
    return out;
}

params::CounterReading reading(PageCache &cache, PageCache::Counter counter)
{
    return cache.counters().snapshot().counters.at(counter);
}

} // namespace

class TestPageCache : public QObject {
    Q_OBJECT

private slots:
    void insertAndLookup()
    {
        PageCache cache(smallCache(64));
        Result<PageRef> ref = cache.grab(kA, 5, 9);
        QVERIFY(ref.ok());
        QVERIFY(ref->holdsLock());
        QVERIFY(!ref->uptodate());
        QCOMPARE(ref->key(), kA);
        QCOMPARE(ref->index(), PageIndex{5});
        QCOMPARE(ref->job(), JobTag{9});
        QVERIFY(cache.contains(kA, 5));
        QVERIFY(!cache.contains(kA, 6));
        QVERIFY(!cache.contains(kB, 5));

        // Being filled: the fast path sees nothing, a no-wait grab is refused.
        std::vector<std::byte> out(kPageSize);
        QCOMPARE(cache.readCached(kA, 5 * kPageSize, out, 9), std::size_t{0});
        Result<PageRef> busy = cache.grab(kA, 5, 9, Wait::no);
        QVERIFY(!busy.ok());
        QCOMPARE(busy.status().code(), Errc::unavailable);

        std::memset(ref->data().data(), 0x5a, kPageSize);
        ref->setLockCookie(77);
        ref->markUptodate();
        ref->unlock();
        QCOMPARE(cache.readCached(kA, 5 * kPageSize, out, 9), kPageSize);
        QCOMPARE(out[0], std::byte{0x5a});
        QCOMPARE(out[kPageSize - 1], std::byte{0x5a});
        ref->reset();

        Result<PageRef> again = cache.grab(kA, 5, 3);
        QVERIFY(again.ok());
        QVERIFY(again->uptodate());
        QCOMPARE(again->lockCookie(), std::uint64_t{77});
        QCOMPARE(again->job(), JobTag{3});
        again->reset();
        QCOMPARE(cache.cachedPages(), std::size_t{1});
        QCOMPARE(reading(cache, PageCache::grab_new).samples, std::uint64_t{1});
        QCOMPARE(reading(cache, PageCache::grab_hit).samples, std::uint64_t{1});
        QCOMPARE(reading(cache, PageCache::cache_hit).samples, std::uint64_t{1});
        QCOMPARE(reading(cache, PageCache::cache_miss).samples, std::uint64_t{1});

        Result<PageRef> badTarget = cache.grab(ObjectKey{100000, 1}, 0, 0);
        QCOMPARE(badTarget.status().code(), Errc::out_of_range);
    }

    void readCachedCopiesThePrefix()
    {
        PageCache cache(smallCache(64));
        for (PageIndex i : {0, 1, 2, 4}) {
            QVERIFY(fill(cache, kA, i));
        }
        Result<PageRef> filling = cache.grab(kA, 3, 0); // locked, not uptodate
        QVERIFY(filling.ok());

        std::vector<std::byte> out(5 * kPageSize, std::byte{0});
        // From the middle of page 0 up to the hole at page 3.
        QCOMPARE(cache.readCached(kA, 100, out, 0), 3 * kPageSize - 100);
        QCOMPARE(out[0], pattern(kA, 0));
        QCOMPARE(out[kPageSize - 101], pattern(kA, 0));
        QCOMPARE(out[kPageSize - 100], pattern(kA, 1));
        QCOMPARE(out[3 * kPageSize - 101], pattern(kA, 2));
        // A read inside one page.
        std::vector<std::byte> small(10);
        QCOMPARE(cache.readCached(kA, 4 * kPageSize + 7, small, 0), std::size_t{10});
        QCOMPARE(small[9], pattern(kA, 4));
        // Nothing at the start: nothing copied.
        QCOMPARE(cache.readCached(kA, 3 * kPageSize, out, 0), std::size_t{0});
        QCOMPARE(cache.readCached(kB, 0, out, 0), std::size_t{0});

        std::memset(filling->data().data(), 0x11, kPageSize);
        filling->markUptodate();
        filling->reset();
        QCOMPARE(cache.readCached(kA, 0, out, 0), 5 * kPageSize);
        QCOMPARE(out[3 * kPageSize], std::byte{0x11});
    }

    // Probation FIFO: a page read twice moves to main at the FIFO's tail, anything else goes.
    // Main is a CLOCK: a referenced page gets another round.
    void evictionOrder()
    {
        PageCache::Options options = smallCache(10); // probation target: 1 page
        options.reclaimBatch = 1;
        PageCache cache(options);
        for (PageIndex i = 0; i < 10; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        for (PageIndex i : {2, 5}) {
            QVERIFY(touch(cache, kA, i));
            QVERIFY(touch(cache, kA, i));
        }
        QVERIFY(touch(cache, kA, 7)); // once: not enough to leave probation
        for (PageIndex i = 10; i < 16; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        QCOMPARE(present(cache, kA, 32),
                 (std::vector<PageIndex>{2, 5, 8, 9, 10, 11, 12, 13, 14, 15}));
        QCOMPARE(cache.mainPages(), std::size_t{2});
        QCOMPARE(cache.probationPages(), std::size_t{8});

        // Promote everything in probation; main's tail (2, once more referenced) gets a second
        // round and 5 goes.
        for (PageIndex i = 8; i < 16; ++i) {
            QVERIFY(touch(cache, kA, i));
            QVERIFY(touch(cache, kA, i));
        }
        QVERIFY(touch(cache, kA, 2));
        QVERIFY(fill(cache, kA, 16));
        QCOMPARE(present(cache, kA, 32),
                 (std::vector<PageIndex>{2, 8, 9, 10, 11, 12, 13, 14, 15, 16}));
        QCOMPARE(reading(cache, PageCache::promoted).samples, std::uint64_t{10});
        QCOMPARE(reading(cache, PageCache::reclaimed).samples, std::uint64_t{7});
        QCOMPARE(reading(cache, PageCache::reclaim_batch).max, std::int64_t{1});
    }

    // A page read in part by a read that did not go on from the reader's previous one (IOR-hard
    // transfers not a multiple of the page size: two ranks' chunks share it) leaves probation for
    // main; one whose reader goes on in it, or one read whole once, does not.
    void partReadPagesOutliveProbation()
    {
        PageCache::Options options = smallCache(10); // probation target: 1 page
        options.reclaimBatch = 1;
        PageCache cache(options);
        for (PageIndex i = 0; i < 10; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        std::vector<std::byte> buffer(kPageSize);
        const auto part = [&](PageIndex index, std::size_t from, std::size_t length,
                              std::uint64_t prevPos) {
            return cache.readCached(kA, index * kPageSize + from, std::span(buffer).first(length),
                                    0, prevPos) == length;
        };
        QVERIFY(part(3, 4000, 96, kNoPosition)); // the end of a chunk: the rest is another's
        QVERIFY(touch(cache, kA, 4));            // whole, once
        QVERIFY(part(5, 0, 100, kNoPosition));   // a sequential reader in small pieces...
        QVERIFY(part(5, 100, 100, 5 * kPageSize + 100)); // ...goes on in it: its own
        QVERIFY(part(6, 10, 10, kNoPosition));
        for (PageIndex i = 10; i < 16; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        QCOMPARE(present(cache, kA, 32),
                 (std::vector<PageIndex>{3, 6, 8, 9, 10, 11, 12, 13, 14, 15}));
        QCOMPARE(reading(cache, PageCache::promoted).samples, std::uint64_t{2});
    }

    // A fresh cache hands out pages in address order: an object filled in order lies in
    // ascending memory, so a bulk RPC's pages merge into one segment and a copy-out streams
    // forward (the free list used to give them last page first).
    void pagesFilledInOrderAreAdjacent()
    {
        PageCache cache(smallCache(64));
        std::vector<const std::byte *> addresses;
        for (PageIndex i = 0; i < 16; ++i) {
            Result<PageRef> ref = cache.grab(kB, i, 0);
            QVERIFY(ref.ok());
            addresses.push_back(ref->data().data());
            ref->markUptodate();
        }
        for (std::size_t i = 1; i < addresses.size(); ++i) {
            QCOMPARE(addresses[i], addresses[i - 1] + kPageSize);
        }
    }

    // A stream bigger than the cache, each page read once, does not flush a re-referenced set.
    void scanResistance()
    {
        PageCache cache(smallCache(100));
        const ObjectKey hot{1, 1};
        const ObjectKey stream{1, 2};
        for (PageIndex i = 0; i < 20; ++i) {
            QVERIFY(fill(cache, hot, i));
            QVERIFY(touch(cache, hot, i));
            QVERIFY(touch(cache, hot, i));
        }
        std::vector<std::byte> buffer(kPageSize);
        std::uint64_t prevPos = kNoPosition;
        for (PageIndex i = 0; i < 1000; ++i) {
            QVERIFY(fill(cache, stream, i));
            // Small sequential reads: only the first read of a page counts as a reference.
            for (std::size_t part = 0; part < 4; ++part) {
                const std::uint64_t pos = i * kPageSize + part * 1024;
                std::span<std::byte> piece(buffer.data(), 1024);
                QCOMPARE(cache.readCached(stream, pos, piece, 0, prevPos), std::size_t{1024});
                prevPos = pos + 1024;
            }
        }
        QCOMPARE(present(cache, hot, 20).size(), std::size_t{20});
        std::vector<std::byte> all(20 * kPageSize);
        QCOMPARE(cache.readCached(hot, 0, all, 0), all.size());
        QVERIFY(cache.cachedPages() <= 100);
        QVERIFY(present(cache, stream, 1000).size() <= 80);
        QCOMPARE(reading(cache, PageCache::promoted).samples, std::uint64_t{20});
    }

    void limitThroughTheRegistry()
    {
        params::Registry registry;
        params::ParamGroup group(registry);
        PageCache::Options options = smallCache(2 * kPagesPerMiB);
        options.chunkBytes = 1u << 20;
        PageCache cache(options);
        QVERIFY(cache.publish(group, "fs0").ok());
        for (PageIndex i = 0; i < 2 * kPagesPerMiB; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        QCOMPARE(cache.cachedPages(), 2 * kPagesPerMiB);
        auto value = [&](const char *name) {
            auto got = registry.get(name);
            return got.ok() && got->size() == 1 ? got->front().value : std::string("?");
        };
        QCOMPARE(value("llite.fs0.max_cached_mb"), std::string("2"));
        QCOMPARE(value("llite.fs0.cached_pages"), std::string("512"));

        std::vector<params::Assignment> shrink{{"llite.fs0.max_cached_mb", "1"}};
        QVERIFY(registry.set(shrink, "test").status.ok());
        QCOMPARE(cache.limitPages(), kPagesPerMiB);
        QCOMPARE(cache.cachedPages(), kPagesPerMiB);
        QCOMPARE(value("llite.fs0.cached_pages"), std::string("256"));
        QCOMPARE(reading(cache, PageCache::reclaimed).samples, std::uint64_t{kPagesPerMiB});
        QCOMPARE(reading(cache, PageCache::reclaim_batch).max, std::int64_t{31});

        // Growing again lets the cache fill up to the new limit, no further.
        std::vector<params::Assignment> grow{{"llite.fs0.max_cached_mb", "3"}};
        QVERIFY(registry.set(grow, "test").status.ok());
        for (PageIndex i = 0; i < 4 * kPagesPerMiB; ++i) {
            QVERIFY(fill(cache, kB, i));
        }
        // Reclaim frees a batch at a time, so the cache sits up to 30 pages below its limit.
        QVERIFY(cache.cachedPages() <= 3 * kPagesPerMiB);
        QVERIFY(cache.cachedPages() > 3 * kPagesPerMiB - kDefaultBatch);
        QCOMPARE(cache.poolPages(), 3 * kPagesPerMiB);
        QVERIFY(registry.get("llite.fs0.page_cache_stats").ok());
        QCOMPARE(value("llite.fs0.dirty_pages"), std::string("0"));
    }

    void failedGrabWhenAllDirty()
    {
        PageCache cache(smallCache(8));
        for (PageIndex i = 0; i < 8; ++i) {
            QVERIFY(fill(cache, kA, i, 0, true));
        }
        Result<PageRef> ref = cache.grab(kA, 8, 0);
        QVERIFY(!ref.ok());
        QCOMPARE(ref.status().code(), Errc::resource_exhausted);
        QCOMPARE(reading(cache, PageCache::failed_grab).samples, std::uint64_t{1});
        // Existing pages are still served.
        QVERIFY(cache.grab(kA, 3, 0).ok());
        QCOMPARE(cache.cachedPages(), std::size_t{8});
    }

    void failedGrabWhenAllPinned()
    {
        PageCache cache(smallCache(8));
        std::vector<PageRef> pins;
        for (PageIndex i = 0; i < 8; ++i) {
            Result<PageRef> ref = cache.grab(kA, i, 0);
            QVERIFY(ref.ok());
            ref->markUptodate();
            ref->unlock();
            pins.push_back(std::move(*ref));
        }
        QCOMPARE(cache.grab(kB, 0, 0).status().code(), Errc::resource_exhausted);
        pins.pop_back(); // page 7 unpinned: reclaimable
        Result<PageRef> ref = cache.grab(kB, 0, 0);
        QVERIFY(ref.ok());
        QVERIFY(!cache.contains(kA, 7));
    }

    // A run grabbed at once gets what grab(Wait::no) of each page would: new pages and cached
    // ones not uptodate locked for the caller to fill; cached uptodate and busy pages nothing.
    void grabManyTakesWhatGrabWould()
    {
        PageCache cache(smallCache(16));
        QVERIFY(fill(cache, kA, 2));
        Result<PageRef> busy = cache.grab(kA, 3, 0);
        QVERIFY(busy.ok());
        Result<PageRef> unfilled = cache.grab(kA, 4, 0);
        QVERIFY(unfilled.ok());
        unfilled->reset(); // a failed fill: cached, not uptodate
        const auto newBefore = reading(cache, PageCache::grab_new).samples;
        const auto hitBefore = reading(cache, PageCache::grab_hit).samples;

        const std::array<PageIndex, 6> indexes{0, 1, 2, 3, 4, 5};
        std::array<PageRef, 6> out;
        QCOMPARE(cache.grabMany(kA, indexes, 7, out), std::size_t{6});
        for (const std::size_t i : {0, 1, 4, 5}) {
            QVERIFY2(out[i] && out[i].holdsLock() && !out[i].uptodate(),
                     qPrintable(QString::number(i)));
            QCOMPARE(out[i].index(), indexes[i]);
            QCOMPARE(out[i].job(), JobTag{7});
        }
        QVERIFY(!out[2]); // uptodate
        QVERIFY(!out[3]); // locked by `busy`
        QCOMPARE(reading(cache, PageCache::grab_new).samples - newBefore, std::uint64_t{3});
        QCOMPARE(reading(cache, PageCache::grab_hit).samples - hitBefore, std::uint64_t{2});
        QCOMPARE(cache.cachedPages(), std::size_t{6});
        // The pages are on the index and locked: a no-wait grab is refused, as for grab().
        QCOMPARE(cache.grab(kA, 0, 7, Wait::no).status().code(), Errc::unavailable);
        out[0].markUptodate();
        out[0].unlock();
        std::vector<std::byte> page(kPageSize);
        QCOMPARE(cache.readCached(kA, 0, page, 7), kPageSize);
        QCOMPARE(cache.grabMany(ObjectKey{100000, 1}, indexes, 0, out), std::size_t{0});
    }

    // At the limit with nothing to reclaim, the run ends at the first page left without one.
    void grabManyStopsWhenTheCacheIsFull()
    {
        PageCache cache(smallCache(8));
        for (PageIndex i = 0; i < 4; ++i) {
            QVERIFY(fill(cache, kB, i, 0, true)); // dirty: not reclaimable
        }
        QVERIFY(fill(cache, kA, 2, 0, true));
        const std::array<PageIndex, 8> indexes{0, 1, 2, 3, 4, 5, 6, 7};
        std::array<PageRef, 8> out;
        // Room for 3 new pages: 0, 1 and (past the cached 2) 3.
        QCOMPARE(cache.grabMany(kA, indexes, 0, out), std::size_t{4});
        QVERIFY(out[0] && out[1] && out[3]);
        QVERIFY(!out[2]); // cached uptodate (dirty)
        for (std::size_t i = 4; i < out.size(); ++i) {
            QVERIFY(!out[i]);
            QVERIFY(!cache.contains(kA, indexes[i]));
        }
        QCOMPARE(reading(cache, PageCache::failed_grab).samples, std::uint64_t{1});
        QCOMPARE(cache.cachedPages(), std::size_t{8});
    }

    void releaseBatchSizes()
    {
        PageCache cache(smallCache(256));
        for (PageIndex i = 0; i < 100; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        ReleaseCounts batched = cache.releaseObject(kA);
        QCOMPARE(batched.dropped, std::size_t{100});
        QCOMPARE(batched.lockHolds, std::size_t{4});
        params::CounterReading sizes = reading(cache, PageCache::release_batch);
        QCOMPARE(sizes.samples, std::uint64_t{4});
        QCOMPARE(sizes.max, std::int64_t{31});
        QCOMPARE(sizes.min, std::int64_t{7});
        QCOMPARE(sizes.sum, std::int64_t{100});
        QCOMPARE(cache.cachedPages(), std::size_t{0});

        for (PageIndex i = 0; i < 100; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        cache.counters().clear();
        ReleaseCounts single = cache.releaseObject(kA, Batching::onePage);
        QCOMPARE(single.dropped, std::size_t{100});
        QCOMPARE(single.lockHolds, std::size_t{100});
        QCOMPARE(reading(cache, PageCache::release_batch).max, std::int64_t{1});

        // The global scan batches across buckets too.
        for (PageIndex i = 0; i < 100; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        cache.counters().clear();
        ReleaseCounts all = cache.releaseAll();
        QCOMPARE(all.dropped, std::size_t{100});
        QCOMPARE(all.lockHolds, std::size_t{4});
        QCOMPARE(reading(cache, PageCache::release_batch).max, std::int64_t{31});
        QCOMPARE(reading(cache, PageCache::released).samples, std::uint64_t{100});
    }

    void releaseCounts()
    {
        PageCache cache(smallCache(256));
        for (PageIndex i = 0; i < 10; ++i) {
            QVERIFY(fill(cache, kA, i, 1, i == 3 || i == 4));
        }
        for (PageIndex i = 0; i < 5; ++i) {
            QVERIFY(fill(cache, kB, i, 7));
        }
        for (PageIndex i = 0; i < 3; ++i) {
            Result<PageRef> ref = cache.grab(kC, i, 7);
            QVERIFY(ref.ok());
            ref->markUptodate();
            ref->setLockCookie(i < 2 ? 99 : 5);
        }
        QCOMPARE(cache.cachedPages(), std::size_t{18});

        ReleaseCounts lock = cache.releaseLock(kC, 99);
        QCOMPARE(lock.dropped, std::size_t{2});
        QCOMPARE(present(cache, kC, 3), std::vector<PageIndex>{2});

        ReleaseCounts job = cache.releaseJob(7);
        QCOMPARE(job.dropped, std::size_t{6});
        QCOMPARE(job.dirty, std::size_t{0});
        QCOMPARE(cache.cachedPages(), std::size_t{10});

        Result<PageRef> pinned = cache.grab(kA, 5, 1);
        QVERIFY(pinned.ok());
        pinned->unlock();
        ReleaseCounts all = cache.releaseAll();
        QCOMPARE(all.dropped, std::size_t{7});
        QCOMPARE(all.dirty, std::size_t{2});
        QCOMPARE(all.busy, std::size_t{1});
        QCOMPARE(present(cache, kA, 10), (std::vector<PageIndex>{3, 4, 5}));

        pinned->reset();
        ReleaseCounts object = cache.releaseObject(kA);
        QCOMPARE(object.dropped, std::size_t{1});
        QCOMPARE(object.dirty, std::size_t{2});
        QCOMPARE(cache.cachedPages(), std::size_t{2});
        QCOMPARE(cache.dirtyPages(), std::size_t{2});
        QCOMPARE(cache.releaseObject(kB).dropped, std::size_t{0});
    }

    // releaseJob walks the job's own pages (a ring per job and shard), so a page must be on the
    // ring of the job that touched it last: a hit (readCached) or a grab by another job moves
    // it; a dropped page leaves its ring, and a reused page joins its new job's.
    void releaseJobFollowsTheLastJob()
    {
        PageCache cache(smallCache(256));
        for (PageIndex i = 0; i < 8; ++i) {
            QVERIFY(fill(cache, kA, i, 1));
            QVERIFY(fill(cache, kB, i, 1, i == 7)); // one dirty page
        }
        std::vector<std::byte> buffer(2 * kPageSize);
        QCOMPARE(cache.readCached(kA, 0, buffer, 2), buffer.size()); // kA 0, 1 -> job 2
        QVERIFY(fill(cache, kB, 0, 3));                              // kB 0 -> job 3
        QCOMPARE(cache.readCached(kB, 0, std::span(buffer).first(10), 3), std::size_t{10});

        ReleaseCounts first = cache.releaseJob(1);
        QCOMPARE(first.dropped, std::size_t{12}); // kA 2..7, kB 1..6
        QCOMPARE(first.dirty, std::size_t{1});    // kB 7 stays
        QCOMPARE(present(cache, kA, 8), (std::vector<PageIndex>{0, 1}));
        QCOMPARE(present(cache, kB, 8), (std::vector<PageIndex>{0, 7}));
        QCOMPARE(cache.releaseJob(1).dropped, std::size_t{0});

        QCOMPARE(cache.releaseJob(2).dropped, std::size_t{2});
        QCOMPARE(cache.releaseJob(3).dropped, std::size_t{1});
        QCOMPARE(cache.cachedPages(), std::size_t{1});

        // The freed pages come back for another job: its ring holds exactly them.
        for (PageIndex i = 0; i < 20; ++i) {
            QVERIFY(fill(cache, kC, i, 4));
        }
        QCOMPARE(cache.releaseJob(1).dropped, std::size_t{0});
        // One read by another job moves all its pages (more than one batch of moves).
        std::vector<std::byte> twenty(20 * kPageSize);
        QCOMPARE(cache.readCached(kC, 0, twenty, 5), twenty.size());
        QCOMPARE(cache.releaseJob(4).dropped, std::size_t{0});
        QCOMPARE(cache.releaseJob(5, Batching::onePage).dropped, std::size_t{20});
        QCOMPARE(cache.cachedPages(), std::size_t{1});
        QCOMPARE(cache.releaseJob(1).dirty, std::size_t{1});
    }

    void dirtyRuns()
    {
        PageCache cache(smallCache(256));
        const ObjectKey key{3, 42};
        for (PageIndex i = 0; i < 14; ++i) {
            if (i == 11) {
                continue;
            }
            QVERIFY(fill(cache, key, i, 0, i != 10));
        }
        QCOMPARE(cache.dirtyPages(), std::size_t{12});
        QCOMPARE(cache.dirtyBytes(3), std::int64_t{12 * kPageSize});
        QCOMPARE(cache.dirtyBytes(1), std::int64_t{0});

        std::vector<PageRef> first(4);
        QCOMPARE(cache.collectDirtyRun(key, 0, first), std::size_t{4});
        for (PageIndex i = 0; i < 4; ++i) {
            QCOMPARE(first[i].index(), i);
            QVERIFY(first[i].underWriteback());
        }
        std::vector<PageRef> second(16);
        QCOMPARE(cache.collectDirtyRun(key, 0, second), std::size_t{6}); // 4..9, 10 is clean
        QCOMPARE(second[0].index(), PageIndex{4});
        QCOMPARE(second[5].index(), PageIndex{9});
        std::vector<PageRef> third(16);
        QCOMPARE(cache.collectDirtyRun(key, 0, third), std::size_t{2}); // 12..13
        QCOMPARE(third[0].index(), PageIndex{12});
        std::vector<PageRef> none(16);
        QCOMPARE(cache.collectDirtyRun(key, 0, none), std::size_t{0});

        // Stable pages: no writer while the data is in flight.
        QCOMPARE(cache.grab(key, 0, 0, Wait::no).status().code(), Errc::unavailable);
        // Nor release: only the clean page 10 goes.
        ReleaseCounts during = cache.releaseObject(key);
        QCOMPARE(during.dropped, std::size_t{1});
        QCOMPARE(during.dirty, std::size_t{12});

        cache.endWriteback(first, true);
        QVERIFY(!first[0]);
        QCOMPARE(cache.dirtyBytes(3), std::int64_t{8 * kPageSize});
        cache.endWriteback(second, false); // RPC failed: still dirty, collectable again
        QCOMPARE(cache.dirtyPages(), std::size_t{8});
        QCOMPARE(cache.collectDirtyRun(key, 0, second), std::size_t{6});
        cache.endWriteback(second, true);
        cache.endWriteback(third, true);
        QCOMPARE(cache.dirtyPages(), std::size_t{0});
        QCOMPARE(cache.dirtyBytes(3), std::int64_t{0});
        QCOMPARE(reading(cache, PageCache::writeback_pages).samples, std::uint64_t{18});
        QCOMPARE(cache.releaseObject(key).dropped, std::size_t{12});
    }

    // A run starts at the first collectable page at or after `from`: `from` itself when it is
    // one, else the next one past a clean, missing or busy page.
    void dirtyRunsFrom()
    {
        PageCache cache(smallCache(256));
        const ObjectKey key{3, 42};
        for (PageIndex i = 0; i < 14; ++i) {
            if (i != 11) {
                QVERIFY(fill(cache, key, i, 0, i != 10)); // 10 clean, 11 missing
            }
        }
        std::vector<PageRef> run(2);
        QCOMPARE(cache.collectDirtyRun(key, 5, run), std::size_t{2});
        QCOMPARE(run[0].index(), PageIndex{5});
        QCOMPARE(run[1].index(), PageIndex{6});
        std::vector<PageRef> past(16);
        QCOMPARE(cache.collectDirtyRun(key, 5, past), std::size_t{3}); // 5, 6 under write-back
        QCOMPARE(past[0].index(), PageIndex{7});
        QCOMPARE(past[2].index(), PageIndex{9});
        std::vector<PageRef> clean(16);
        QCOMPARE(cache.collectDirtyRun(key, 10, clean), std::size_t{2});
        QCOMPARE(clean[0].index(), PageIndex{12});
        cache.endWriteback(clean, false);
        std::vector<PageRef> missing(16);
        QCOMPARE(cache.collectDirtyRun(key, 11, missing), std::size_t{2});
        QCOMPARE(missing[0].index(), PageIndex{12});
        std::vector<PageRef> end(16);
        QCOMPARE(cache.collectDirtyRun(key, 14, end), std::size_t{0});
        std::vector<PageRef> before(16);
        QCOMPARE(cache.collectDirtyRun(key, 0, before), std::size_t{5}); // 0..4
        cache.endWriteback(run, true);
        cache.endWriteback(past, true);
        cache.endWriteback(missing, true);
        cache.endWriteback(before, true);
        QCOMPARE(cache.dirtyPages(), std::size_t{0});
    }

    void chunkHooksAndSegments()
    {
        int added = 0;
        int removed = 0;
        {
            PageCache::Options options = smallCache(100);
            options.chunkBytes = 16 * kPageSize;
            options.hooks.added = [&](void *base, std::size_t length) -> Result<std::uint64_t> {
                const bool aligned = reinterpret_cast<std::uintptr_t>(base) % kPageSize == 0;
                if (!aligned || length != 16 * kPageSize) {
                    return Status(Errc::internal, "bad chunk");
                }
                return static_cast<std::uint64_t>(++added + 40);
            };
            options.hooks.removed = [&](std::uint64_t, void *, std::size_t) { ++removed; };
            PageCache cache(options);
            for (PageIndex i = 0; i < 20; ++i) {
                QVERIFY(fill(cache, kA, i));
            }
            QCOMPARE(added, 2);
            QCOMPARE(cache.chunkCount(), std::size_t{2});
            QCOMPARE(cache.poolPages(), std::size_t{32});
            Result<PageRef> ref = cache.grab(kA, 0, 0);
            transport::Segment segment = ref->segment();
            QCOMPARE(segment.length, kPageSize);
            QVERIFY(segment.region == 41 || segment.region == 42);
            QCOMPARE(static_cast<void *>(ref->data().data()), segment.address);
        }
        QCOMPARE(removed, 2);

        PageCache::Options failing = smallCache(10);
        failing.hooks.added = [](void *, std::size_t) -> Result<std::uint64_t> {
            return Status(Errc::unavailable, "no device");
        };
        PageCache cache(failing);
        QCOMPARE(cache.grab(kA, 0, 0).status().code(), Errc::unavailable);
    }

    // Hit path, grab with reclaim in steady state, release and write-back allocate nothing.
    // PG_readahead's "unused" mark: the first read clears it (fast path, or takeReadahead on
    // the slow path; an overwrite too); a page dropped with it set is a read_but_discarded.
    void readaheadMarks()
    {
        std::size_t discarded = 0;
        PageCache::Options options = smallCache(8);
        options.probationPercent = 100; // one FIFO: reclaim order is insertion order
        options.readaheadDiscarded = [&discarded](std::size_t pages) { discarded += pages; };
        PageCache cache(options);
        const auto readAhead = [&](PageIndex index) {
            Result<PageRef> ref = cache.grab(kA, index, 1);
            QVERIFY(ref.ok());
            cache.expectReadahead(1);
            ref->finishFill(true);
            QVERIFY(ref->uptodate());
            QVERIFY(!ref->holdsLock());
        };
        for (PageIndex i = 0; i < 4; ++i) {
            readAhead(i);
        }
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{4});
        {
            // Filled again while still marked: counted once.
            Result<PageRef> ref = cache.grab(kA, 3, 1);
            QVERIFY(ref.ok() && ref->holdsLock());
            cache.expectReadahead(1);
            ref->finishFill(true);
        }
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{4});
        QVERIFY(touch(cache, kA, 0)); // first read: used
        QVERIFY(touch(cache, kA, 0));
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{3});
        {
            Result<PageRef> ref = cache.grab(kA, 1, 1);
            QVERIFY(ref->takeReadahead());
            QVERIFY(!ref->takeReadahead());
        }
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{2});
        {
            Result<PageRef> ref = cache.grab(kA, 2, 1);
            ref->markDirty(); // overwritten: used, not discarded
            ref->reset();
            std::vector<PageRef> run(1);
            QCOMPARE(cache.collectDirtyRun(kA, 0, run), std::size_t{1});
            cache.endWriteback(run, true);
        }
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{1});
        QCOMPARE(discarded, std::size_t{0});
        // Page 3 is still unread: the FIFO reclaims it (with 0-2) to make room for 4 more.
        for (PageIndex i = 10; i < 18; ++i) {
            QVERIFY(fill(cache, kB, i));
        }
        QVERIFY(!cache.contains(kA, 3));
        QCOMPARE(discarded, std::size_t{1});
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{0});
        // Released unread: discarded too.
        readAhead(20);
        QVERIFY(cache.releaseObject(kA).dropped >= 1);
        QCOMPARE(discarded, std::size_t{2});
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{0});
    }

    // A read of many pages marks them after its copies, a batch at a time: each page's first
    // read is counted once, and a page read only in part keeps its readahead mark (the rest of
    // it is another reader's) until a read takes it whole.
    void aLongReadMarksEveryPage()
    {
        PageCache cache(smallCache(64));
        constexpr PageIndex kPages = 40; // more than two batches of marks
        for (PageIndex i = 0; i < kPages; ++i) {
            Result<PageRef> ref = cache.grab(kA, i, 1);
            QVERIFY(ref.ok());
            std::fill(ref->data().begin(), ref->data().end(), pattern(kA, i));
            cache.expectReadahead(1);
            ref->finishFill(true);
        }
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{kPages});
        std::vector<std::byte> out(kPages * kPageSize);
        const std::span<std::byte> inner(out.data() + 100, out.size() - 200);
        QCOMPARE(cache.readCached(kA, 100, inner, 1), inner.size());
        QCOMPARE(inner.front(), pattern(kA, 0));
        QCOMPARE(inner.back(), pattern(kA, kPages - 1));
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{2}); // the first and last, in part
        QCOMPARE(cache.readCached(kA, 0, out, 1), out.size());
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{0});
        QCOMPARE(cache.readCached(kA, 0, out, 1), out.size());
        QCOMPARE(cache.readaheadUnreadPages(), std::size_t{0});
    }

    void pinWithoutTheLock()
    {
        PageCache cache(smallCache(8));
        Result<PageRef> ref = cache.grab(kA, 0, 1);
        QVERIFY(ref.ok());
        PageRef pinned = ref->pin();
        QVERIFY(!pinned.holdsLock());
        QCOMPARE(pinned.index(), PageIndex{0});
        ref->markUptodate();
        ref->reset(); // unlocked and one pin less: `pinned` still keeps it
        QCOMPARE(cache.releaseObject(kA).busy, std::size_t{1});
        QVERIFY(pinned.lock(Wait::no));
        pinned.reset();
        QCOMPARE(cache.releaseObject(kA).dropped, std::size_t{1});
    }

    void noHeapAllocation()
    {
        PageCache cache(smallCache(64));
        for (PageIndex i = 0; i < 64; ++i) {
            QVERIFY(fill(cache, kA, i));
        }
        std::vector<std::byte> out(8 * kPageSize);
        std::vector<PageRef> run(8);
        QVERIFY(cache.readCached(kA, 0, out, 1) == out.size()); // warm (thread counters)

        QVERIFY(allocationCounterWorks());
        g_allocations = 0;
        g_countAllocations = true;
        bool ok = true;
        for (int round = 0; round < 100; ++round) {
            ok = ok && cache.readCached(kA, 0, out, 1) == out.size();
            ok = ok && cache.readCached(kA, 123, std::span(out).first(10), 1) == 10;
        }
        for (PageIndex i = 64; i < 256; ++i) { // at the limit: every grab reclaims
            Result<PageRef> ref = cache.grab(kB, i, 2);
            ok = ok && ref.ok();
            if (ref.ok()) {
                ref->markDirty();
                ref->reset();
            }
            ok = ok && cache.collectDirtyRun(kB, 0, run) == 1;
            cache.endWriteback(run, true);
        }
        const std::array<PageIndex, 4> run4{300, 301, 302, 303};
        std::array<PageRef, 4> grabbedRun;
        ok = ok && cache.grabMany(kC, run4, 2, grabbedRun) == run4.size();
        for (PageRef &page : grabbedRun) {
            ok = ok && page.holdsLock();
            page.markUptodate();
            page.reset();
        }
        const ReleaseCounts object = cache.releaseObject(kB);
        const ReleaseCounts all = cache.releaseAll(Batching::onePage);
        const bool grabbed = cache.grab(kA, 0, 1).ok() && cache.grab(kA, 1, 1, Wait::no).ok();
        g_countAllocations = false;
        QVERIFY(ok);
        QVERIFY(object.dropped > 0);
        QCOMPARE(object.dirty, std::size_t{0});
        QVERIFY(all.dropped > 0); // kA's hot pages, in main
        QVERIFY(grabbed);
        QCOMPARE(cache.cachedPages(), std::size_t{2});
        QCOMPARE(g_allocations.load(), 0L);
    }
};

QTEST_GUILESS_MAIN(TestPageCache)
#include "test_page_cache.moc"
