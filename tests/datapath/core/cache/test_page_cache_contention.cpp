// Reclaim meeting a busy index shard: a full cache of clean, droppable pages whose shard another
// thread holds is contention, not a full cache. The grab waits for the shard and evicts; it
// never reports "cache full" (which halves every file's readahead cap), and the page it passed
// over keeps its place in eviction order.
#include "core/cache/page_cache.h"
#include "core/types.h"

#include <QTest>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::cache;

namespace {

constexpr std::size_t kShards = 4;
constexpr ObjectKey kFull{1, 100};

// An object from `first` on whose pages live in another shard than kFull's.
ObjectKey otherShardKey(std::uint64_t first = 101)
{
    const std::size_t fullShard = core::ObjectKeyHash{}(kFull) & (kShards - 1);
    for (std::uint64_t object = first;; ++object) {
        const ObjectKey key{1, object};
        if ((core::ObjectKeyHash{}(key) & (kShards - 1)) != fullShard) {
            return key;
        }
    }
}

PageCache::Options cacheOf(std::size_t limitPages)
{
    PageCache::Options options;
    options.limitPages = limitPages;
    options.chunkBytes = 64 * kPageSize;
    options.shards = kShards;
    options.reclaimBatch = 1; // one page per scan: which page went shows the order
    return options;
}

std::uint64_t count(PageCache &cache, PageCache::Counter counter)
{
    return cache.counters().snapshot().counters.at(counter).samples;
}

// Fills pages [0, pages) of `key`: clean, uptodate, unpinned, each touched once.
bool fillClean(PageCache &cache, ObjectKey key, PageIndex pages)
{
    for (PageIndex i = 0; i < pages; ++i) {
        Result<PageRef> ref = cache.grab(key, i, 0);
        if (!ref.ok()) {
            return false;
        }
        std::memset(ref->data().data(), 0x5a, kPageSize);
        ref->markUptodate();
    }
    return true;
}

} // namespace

class TestPageCacheContention : public QObject {
    Q_OBJECT

private slots:
    void grabWaitsForABusyShardInsteadOfFailing()
    {
        PageCache cache(cacheOf(8));
        QVERIFY(fillClean(cache, kFull, 8));
        QCOMPARE(cache.cachedPages(), std::size_t{8});
        const ObjectKey other = otherShardKey();

        std::atomic<bool> grabDone{false};
        Status grabStatus;
        std::thread grabber;
        cache.holdShard(kFull, [&] {
            grabber = std::thread([&] {
                Result<PageRef> ref = cache.grab(other, 0, 0);
                grabStatus = ref.ok() ? Status{} : ref.status();
                grabDone = true;
            });
            // Hold the shard until the grab's reclaim has met it (or the grab gave up).
            while (!grabDone && count(cache, PageCache::reclaim_waits) == 0) {
                std::this_thread::yield();
            }
            QVERIFY2(!grabDone, "the grab ended while every clean page's shard was busy");
            QCOMPARE(count(cache, PageCache::reclaimed), std::uint64_t{0});
        });
        grabber.join();
        QVERIFY2(grabStatus.ok(), grabStatus.message().c_str());
        QCOMPARE(count(cache, PageCache::failed_grab), std::uint64_t{0});
        QCOMPARE(count(cache, PageCache::reclaim_waits), std::uint64_t{1});
        // The first scan passed over all 8 pages of the held shard; the second freed the oldest.
        QCOMPARE(count(cache, PageCache::reclaim_busy), std::uint64_t{8});
        QVERIFY(count(cache, PageCache::reclaimed) >= 1);
        QVERIFY(cache.contains(other, 0));
        // The pages passed over kept their order: the oldest went first.
        QVERIFY(!cache.contains(kFull, 0));
        QVERIFY(cache.contains(kFull, 7));
    }

    void aPagePassedOverKeepsItsPlace()
    {
        PageCache cache(cacheOf(8));
        const ObjectKey newer = otherShardKey();
        const ObjectKey grabbed = otherShardKey(newer.object + 1);
        QVERIFY(fillClean(cache, kFull, 4)); // the oldest four
        QVERIFY(fillClean(cache, newer, 4));
        // The first grab's reclaim passes over kFull's pages and takes newer's oldest.
        cache.holdShard(kFull, [&] { QVERIFY(cache.grab(grabbed, 0, 0).ok()); });
        QCOMPARE(count(cache, PageCache::reclaim_busy), std::uint64_t{4});
        QVERIFY(!cache.contains(newer, 0));
        // With the shard free, kFull's oldest page is still the next to go (rotated to the
        // head, as before, newer's pages would go first).
        QVERIFY(cache.grab(grabbed, 1, 0).ok());
        QVERIFY(!cache.contains(kFull, 0));
        QVERIFY(cache.contains(newer, 1));
        QCOMPARE(count(cache, PageCache::failed_grab), std::uint64_t{0});
        QCOMPARE(count(cache, PageCache::reclaim_waits), std::uint64_t{0});
    }

    void allPinnedIsStillCacheFull()
    {
        PageCache cache(cacheOf(4));
        std::vector<PageRef> pins;
        for (PageIndex i = 0; i < 4; ++i) {
            Result<PageRef> ref = cache.grab(kFull, i, 0);
            QVERIFY(ref.ok());
            ref->markUptodate();
            ref->unlock();
            pins.push_back(std::move(*ref));
        }
        Result<PageRef> ref = cache.grab(otherShardKey(), 0, 0);
        QVERIFY(!ref.ok());
        QCOMPARE(ref.status().code(), Errc::resource_exhausted);
        QCOMPARE(count(cache, PageCache::failed_grab), std::uint64_t{1});
        QCOMPARE(count(cache, PageCache::reclaim_waits), std::uint64_t{0});
    }
};

QTEST_GUILESS_MAIN(TestPageCacheContention)
#include "test_page_cache_contention.moc"
