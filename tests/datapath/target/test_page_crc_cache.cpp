// PageCrcCache: what a change (begin/end), a ticket, an identity and forget do to kept CRCs.
#include "target/page_crc_cache.h"

#include <QTest>

#include <vector>

using lutra::target::PageCrcCache;

namespace {

constexpr PageCrcCache::Identity kLook{1000, 4 * 4096};

std::vector<std::uint32_t> crcs(std::uint32_t first, std::size_t count)
{
    std::vector<std::uint32_t> out(count);
    for (std::size_t i = 0; i < count; ++i) {
        out[i] = first + static_cast<std::uint32_t>(i);
    }
    return out;
}

bool holds(PageCrcCache &cache, std::uint64_t inode, const PageCrcCache::Identity &look,
           std::uint64_t first, const std::vector<std::uint32_t> &want)
{
    std::vector<std::uint32_t> out(want.size());
    return cache.lookup(inode, look, first, out) && out == want;
}

} // namespace

class TestPageCrcCache : public QObject {
    Q_OBJECT

private slots:
    void keptUntilAChangeOfThosePages()
    {
        PageCrcCache cache;
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(10, 4)));
        cache.store(7, kLook, cache.ticket(7), 0, crcs(10, 4));
        QVERIFY(holds(cache, 7, kLook, 0, crcs(10, 4)));
        QVERIFY(holds(cache, 7, kLook, 1, crcs(11, 2)));
        QVERIFY(!holds(cache, 7, kLook, 2, crcs(12, 3))); // past what is kept
        QVERIFY(!holds(cache, 8, kLook, 0, crcs(10, 4))); // another object
        QCOMPARE(cache.hits(), std::uint64_t{6});
        // A write of page 2: gone while it runs and after; the others stay.
        cache.beginChange(7, 2, 3);
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(10, 2))); // nothing while a change runs
        const PageCrcCache::Identity after{2000, 4 * 4096};
        (void)cache.endChange(7, 2, 3, after);
        QVERIFY(holds(cache, 7, after, 0, crcs(10, 2)));
        QVERIFY(!holds(cache, 7, after, 2, crcs(12, 1)));
        QVERIFY(holds(cache, 7, after, 3, crcs(13, 1)));
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(10, 1))); // the old look no longer matches
    }

    void sumsBegunBeforeOrDuringAChangeAreRefused()
    {
        PageCrcCache cache;
        const auto early = cache.ticket(7); // a reader starts summing
        cache.beginChange(7, 0, 4);
        const auto during = cache.ticket(7);
        QVERIFY(!during.valid);
        cache.store(7, kLook, during, 0, crcs(10, 4));
        // The writer's own sums, kept as its change ends.
        QVERIFY(cache.endChange(7, 0, 4, kLook, crcs(30, 4)));
        QVERIFY(holds(cache, 7, kLook, 0, crcs(30, 4)));
        cache.store(7, kLook, early, 0, crcs(20, 4)); // summed partly before the write
        QVERIFY(holds(cache, 7, kLook, 0, crcs(30, 4)));
        // Writers of other pages at the same time (several write RPCs of one object in
        // flight): each keeps its sums, whichever ends first.
        cache.beginChange(7, 0, 1);
        cache.beginChange(7, 1, 3);
        QVERIFY(!holds(cache, 7, kLook, 3, crcs(33, 1))); // nothing while changes run
        QVERIFY(cache.endChange(7, 0, 1, kLook, crcs(40, 1)));
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(40, 1))); // the other still runs
        const PageCrcCache::Identity later{1001, 4 * 4096};
        QVERIFY(cache.endChange(7, 1, 3, later, crcs(41, 2)));
        QVERIFY(holds(cache, 7, later, 0, crcs(40, 3)));
        QVERIFY(holds(cache, 7, later, 3, crcs(33, 1)));
        // Writers of the same page at the same time: which bytes landed last is unknown, so
        // neither keeps its sums — in either order of ending, and with a third change that
        // began and ended between them.
        cache.beginChange(7, 0, 2);
        cache.beginChange(7, 1, 2);
        QVERIFY(!cache.endChange(7, 1, 2, later, crcs(50, 1)));
        QVERIFY(!cache.endChange(7, 0, 2, later, crcs(51, 2)));
        QVERIFY(!holds(cache, 7, later, 0, crcs(51, 1)));
        QVERIFY(!holds(cache, 7, later, 1, crcs(50, 1)));
        cache.beginChange(7, 2, 3);
        cache.beginChange(7, 2, 4);
        cache.beginChange(7, 3, 4);
        QVERIFY(!cache.endChange(7, 3, 4, later, crcs(60, 1)));
        QVERIFY(!cache.endChange(7, 2, 4, later, crcs(61, 2)));
        QVERIFY(!cache.endChange(7, 2, 3, later, crcs(62, 1)));
        QVERIFY(!holds(cache, 7, later, 2, crcs(62, 1)));
        // A change the cache did not see begin keeps nothing.
        QVERIFY(!cache.endChange(7, 0, 1, later, crcs(70, 1)));
        QVERIFY(!holds(cache, 7, later, 0, crcs(70, 1)));
        // A writer ending, then another changing the page before a reader stores: refused.
        const auto stale = cache.ticket(7);
        cache.beginChange(7, 0, 1);
        (void)cache.endChange(7, 0, 1, kLook);
        cache.store(7, kLook, stale, 0, crcs(40, 1));
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(40, 1)));
    }

    void aTruncateDropsEveryPageFromItsEnd()
    {
        PageCrcCache cache;
        cache.store(7, kLook, cache.ticket(7), 0, crcs(10, 8));
        cache.beginChange(7, 3, PageCrcCache::kToTheEnd);
        (void)cache.endChange(7, 3, PageCrcCache::kToTheEnd, kLook);
        QVERIFY(holds(cache, 7, kLook, 0, crcs(10, 3)));
        for (std::uint64_t page = 3; page < 8; ++page) {
            QVERIFY(!holds(cache, 7, kLook, page, crcs(10 + static_cast<std::uint32_t>(page), 1)));
        }
    }

    void aNewLookOrAnUnknownOneStartsOver()
    {
        PageCrcCache cache;
        cache.store(7, kLook, cache.ticket(7), 0, crcs(10, 4));
        const PageCrcCache::Identity grown{1000, 5 * 4096}; // appended behind the target's back
        QVERIFY(!holds(cache, 7, grown, 0, crcs(10, 1)));
        cache.store(7, grown, cache.ticket(7), 4, crcs(50, 1));
        QVERIFY(!holds(cache, 7, grown, 0, crcs(10, 1))); // the old look's pages went
        QVERIFY(holds(cache, 7, grown, 4, crcs(50, 1)));
        // A change whose outcome could not be looked at keeps nothing.
        cache.beginChange(7, 0, 1);
        QVERIFY(!cache.endChange(7, 0, 1, std::nullopt, crcs(60, 1)));
        QVERIFY(!holds(cache, 7, grown, 0, crcs(60, 1)));
        QVERIFY(!holds(cache, 7, grown, 4, crcs(50, 1)));
    }

    void forgottenObjectsRefuseOlderSums()
    {
        PageCrcCache cache;
        cache.store(7, kLook, cache.ticket(7), 0, crcs(10, 2));
        const auto before = cache.ticket(7);
        cache.forget(7); // unlinked: inode 7 may be another object next
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(10, 2)));
        cache.store(7, kLook, before, 0, crcs(10, 2));
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(10, 2)));
        cache.store(7, kLook, cache.ticket(7), 0, crcs(60, 2));
        QVERIFY(holds(cache, 7, kLook, 0, crcs(60, 2)));
    }

    // Bounded in objects per shard: a new object evicts its shard's least recently used one that
    // no change holds; an eviction counts as forgetting (older tickets for new objects refused).
    void boundedInObjectsByEvictingTheLeastRecentlyUsed()
    {
        PageCrcCache cache;
        constexpr std::uint64_t kAll = PageCrcCache::kMaxObjects;
        constexpr std::uint64_t kShards = PageCrcCache::kShards;
        for (std::uint64_t inode = 0; inode < kAll; ++inode) {
            cache.store(inode, kLook, cache.ticket(inode), 0, crcs(1, 1));
        }
        QVERIFY(holds(cache, kShards, kLook, 0, crcs(1, 1))); // used: shard 0's newest now
        const auto beforeEviction = cache.ticket(kAll + 2 * kShards);
        cache.store(kAll, kLook, cache.ticket(kAll), 0, crcs(2, 1));
        QVERIFY(holds(cache, kAll, kLook, 0, crcs(2, 1)));
        QVERIFY(!holds(cache, 0, kLook, 0, crcs(1, 1)));      // the least recently used
        QVERIFY(holds(cache, kShards, kLook, 0, crcs(1, 1))); // used since: kept
        QVERIFY(holds(cache, 1, kLook, 0, crcs(1, 1)));       // another shard: untouched
        QCOMPARE(cache.evicted(), std::uint64_t{1});
        // A change holds its object: the next one goes instead.
        cache.beginChange(2 * kShards, 0, 1);
        cache.store(kAll + kShards, kLook, cache.ticket(kAll + kShards), 0, crcs(3, 1));
        QVERIFY(holds(cache, kAll + kShards, kLook, 0, crcs(3, 1)));
        QVERIFY(!holds(cache, 3 * kShards, kLook, 0, crcs(1, 1)));
        const PageCrcCache::Identity after{3000, 4 * 4096};
        QVERIFY(cache.endChange(2 * kShards, 0, 1, after, crcs(4, 1)));
        QVERIFY(holds(cache, 2 * kShards, after, 0, crcs(4, 1)));
        // Sums begun before an eviction of their shard are not kept for a new object.
        cache.store(kAll + 2 * kShards, kLook, beforeEviction, 0, crcs(5, 1));
        QVERIFY(!holds(cache, kAll + 2 * kShards, kLook, 0, crcs(5, 1)));
        cache.store(1, kLook, cache.ticket(1), PageCrcCache::kMaxPagesPerObject, crcs(1, 1));
        QVERIFY(!holds(cache, 1, kLook, PageCrcCache::kMaxPagesPerObject, crcs(1, 1)));
    }

    // Bounded in kept pages per shard: growing one object evicts others; one larger than the
    // shard's share is not kept at all.
    void boundedInPagesKept()
    {
        PageCrcCache cache;
        constexpr std::uint64_t kShardPages = PageCrcCache::kMaxPagesKept / PageCrcCache::kShards;
        constexpr std::uint64_t kShards = PageCrcCache::kShards;
        const auto half = crcs(7, kShardPages / 2);
        cache.store(2, kLook, cache.ticket(2), 0, half);
        cache.store(2 + kShards, kLook, cache.ticket(2 + kShards), 0, half);
        QVERIFY(holds(cache, 2, kLook, 0, half));
        QVERIFY(holds(cache, 2 + kShards, kLook, 0, half));
        cache.store(2 + 2 * kShards, kLook, cache.ticket(2 + 2 * kShards), 0, half);
        QVERIFY(holds(cache, 2 + 2 * kShards, kLook, 0, half));
        QVERIFY(!holds(cache, 2, kLook, 0, half)); // the least recently used made room
        QVERIFY(holds(cache, 2 + kShards, kLook, 0, half));
        cache.store(3, kLook, cache.ticket(3), 0, crcs(1, kShardPages + 1));
        QVERIFY(!holds(cache, 3, kLook, 0, crcs(1, 1)));
        QCOMPARE(cache.evicted(), std::uint64_t{1});
    }
};

QTEST_GUILESS_MAIN(TestPageCrcCache)
#include "test_page_crc_cache.moc"
