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
        const auto writer = cache.endChange(7, 0, 4, kLook);
        cache.store(7, kLook, early, 0, crcs(20, 4)); // summed partly before the write
        QVERIFY(!holds(cache, 7, kLook, 0, crcs(20, 4)));
        // The writer's own sums, with the ticket its change ended with.
        cache.store(7, kLook, writer, 0, crcs(30, 4));
        QVERIFY(holds(cache, 7, kLook, 0, crcs(30, 4)));
        // Two writers at once: the first to end gets no ticket; the second's stands.
        cache.beginChange(7, 0, 1);
        cache.beginChange(7, 1, 2);
        QVERIFY(!cache.endChange(7, 0, 1, kLook).valid);
        const auto last = cache.endChange(7, 1, 2, kLook);
        QVERIFY(last.valid);
        // A writer ending, then another changing the page before the first stores: refused.
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
        QVERIFY(!cache.endChange(7, 0, 1, std::nullopt).valid);
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

    void boundedInObjectsAndPages()
    {
        PageCrcCache cache;
        for (std::uint64_t inode = 0; inode < PageCrcCache::kMaxObjects; ++inode) {
            cache.store(inode, kLook, cache.ticket(inode), 0, crcs(1, 1));
        }
        const auto ticket = cache.ticket(PageCrcCache::kMaxObjects);
        cache.store(PageCrcCache::kMaxObjects, kLook, ticket, 0, crcs(1, 1));
        QVERIFY(!holds(cache, PageCrcCache::kMaxObjects, kLook, 0, crcs(1, 1)));
        // Untracked changes of a new object refuse every older ticket for it.
        cache.beginChange(PageCrcCache::kMaxObjects + 1, 0, 1);
        cache.forget(0);
        cache.store(PageCrcCache::kMaxObjects + 1, kLook, ticket, 0, crcs(1, 1));
        QVERIFY(!holds(cache, PageCrcCache::kMaxObjects + 1, kLook, 0, crcs(1, 1)));
        cache.store(1, kLook, cache.ticket(1), PageCrcCache::kMaxPagesPerObject, crcs(1, 1));
        QVERIFY(!holds(cache, 1, kLook, PageCrcCache::kMaxPagesPerObject, crcs(1, 1)));
        QCOMPARE(cache.stored(), std::uint64_t{PageCrcCache::kMaxObjects});
    }
};

QTEST_GUILESS_MAIN(TestPageCrcCache)
#include "test_page_crc_cache.moc"
