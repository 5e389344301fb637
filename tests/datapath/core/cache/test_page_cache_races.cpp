// The lock-free cached read against each way a page stops being valid: overwritten under the
// page lock, dropped by a truncate (releaseObject), by a lock cancel (releaseLock), by a job's
// flush (releaseJob), and evicted and reused for another object (reclaim). Every 8-byte word of
// a page says which object, page and version it holds, so a reader that copied a reused page
// (wrong object or page), a page torn by a writer (two versions in one page) or a page dropped
// before its read began (a version older than what was valid then) fails. Whether a race hits
// varies from run to run; the outcome does not: a correct cache passes every time. Bounded by
// rounds, not time.
#include "core/cache/page_cache.h"

#include <QTest>

#include <atomic>
#include <cstring>
#include <functional>
#include <random>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::cache;

namespace {

enum class Invalidation { overwrite, truncate, lockCancel, jobFlush, eviction };

constexpr ObjectKey kRead{0, 77};
constexpr PageIndex kPages = 16;
constexpr int kRounds = 300;
constexpr int kReaders = 2;
constexpr JobTag kReaderJob = 9;

std::uint64_t word(const ObjectKey &key, PageIndex index, std::uint32_t version)
{
    return (key.object << 48) | (std::uint64_t{index & 0xffff} << 32) | version;
}

// From the page's end down: a reader copying upwards (faster than this loop) that began before the
// writer took the page meets the new words at once, so a torn copy is likely if it is possible.
void fillPage(PageRef &page, const ObjectKey &key, std::uint32_t version)
{
    const std::uint64_t value = word(key, page.index(), version);
    std::byte *data = page.data().data();
    for (std::size_t at = kPageSize; at != 0; at -= sizeof value) {
        std::memcpy(data + at - sizeof value, &value, sizeof value);
    }
}

// Reclaim only try-locks a shard (lock order), so while readers move pages between jobs a grab at
// the limit may find nothing it can take this time ("cache full"): try again, a bounded number
// of times.
Result<PageRef> grabRetrying(PageCache &cache, const ObjectKey &key, PageIndex index, JobTag job)
{
    Result<PageRef> page = cache.grab(key, index, job);
    for (int attempt = 0;
         attempt < 1000 && !page.ok() && page.status().code() == Errc::resource_exhausted;
         ++attempt) {
        std::this_thread::yield();
        page = cache.grab(key, index, job);
    }
    return page;
}

// Runs once inside the next fast-read copy (PageCache::setCopyOut), before the bytes move: the
// invalidation lands after the reader checked the page and before it checks it again.
std::function<void()> g_duringCopy;

void *copyWithInvalidation(void *to, const void *from, std::size_t n)
{
    if (g_duringCopy) {
        const std::function<void()> invalidate = std::move(g_duringCopy);
        g_duringCopy = nullptr;
        invalidate();
    }
    return std::memcpy(to, from, n);
}

std::uint64_t firstWord(const std::vector<std::uint64_t> &buffer)
{
    return buffer.front();
}

struct ReaderResult {
    long copiedBytes = 0;
    long badWords = 0;
    std::string firstBad;
};

} // namespace

Q_DECLARE_METATYPE(Invalidation)

class TestPageCacheRaces : public QObject {
    Q_OBJECT

    static void rows(bool withHints = false)
    {
        QTest::addColumn<Invalidation>("invalidation");
        QTest::addColumn<bool>("viaHint");
        const std::pair<const char *, Invalidation> kinds[] = {
            {"overwrite under the page lock", Invalidation::overwrite},
            {"truncate: releaseObject", Invalidation::truncate},
            {"lock cancel: releaseLock", Invalidation::lockCancel},
            {"job flush: releaseJob", Invalidation::jobFlush},
            {"eviction and reuse: reclaim", Invalidation::eviction},
        };
        for (const auto &[name, kind] : kinds) {
            QTest::newRow(name) << kind << false;
            if (withHints) {
                // The page found through the reader's PageHint rather than the index.
                QTest::newRow((std::string(name) + ", page hint").c_str()) << kind << true;
            }
        }
    }

    // Makes page 0 of kRead (of two pages, version 1, lock cookie 5, job 1) invalid as
    // `invalidation` says; `other` takes the page over on eviction.
    static void invalidate(PageCache &cache, Invalidation invalidation, const ObjectKey &other)
    {
        constexpr JobTag kJob = 1;
        switch (invalidation) {
        case Invalidation::overwrite: {
            Result<PageRef> page = cache.grab(kRead, 0, kJob);
            QVERIFY(page.ok() && page->uptodate());
            fillPage(*page, kRead, 2);
            page->markUptodate();
            break;
        }
        case Invalidation::truncate:
            QCOMPARE(cache.releaseObject(kRead).dropped, std::size_t{2});
            break;
        case Invalidation::lockCancel:
            QCOMPARE(cache.releaseLock(kRead, 5).dropped, std::size_t{2});
            break;
        case Invalidation::jobFlush:
            QCOMPARE(cache.releaseJob(kJob).dropped, std::size_t{2});
            break;
        case Invalidation::eviction: {
            // At the limit: the oldest page (the one being copied) is reclaimed and, the
            // free list being last in first out, handed to the other object at once.
            Result<PageRef> page = cache.grab(other, 0, kJob);
            QVERIFY(page.ok());
            fillPage(*page, other, 7);
            page->markUptodate();
            QVERIFY(!cache.contains(kRead, 0));
            break;
        }
        }
    }

private slots:
    void invalidationInsideTheCopy_data() { rows(true); }

    // Deterministic: each invalidation happens inside the copy of the read's first page; that
    // page must not count (the read returns 0 bytes), and the next read sees the new state.
    void invalidationInsideTheCopy()
    {
        QFETCH(Invalidation, invalidation);
        QFETCH(bool, viaHint);
        PageCache::Options options;
        options.limitPages = invalidation == Invalidation::eviction ? 2 : 16;
        options.reclaimBatch = 1; // the oldest page only
        options.chunkBytes = 64 * kPageSize;
        PageCache cache(options);
        cache.setCopyOut(copyWithInvalidation);
        constexpr JobTag kJob = 1;
        for (PageIndex i = 0; i < 2; ++i) {
            Result<PageRef> page = cache.grab(kRead, i, kJob);
            QVERIFY2(page.ok(), page.status().toString().c_str());
            fillPage(*page, kRead, 1);
            page->setLockCookie(5);
            page->markUptodate();
        }
        PageCache::PageHint hint;
        if (viaHint) {
            // A whole page: a part read would mark it partial and keep it from eviction.
            std::vector<std::byte> page(kPageSize);
            QCOMPARE(cache.readCached(kRead, 0, page, kJob, kNoPosition, &hint), kPageSize);
            QVERIFY(hint.page != nullptr);
        }
        const ObjectKey other{1, 1000};
        g_duringCopy = [&] { invalidate(cache, invalidation, other); };
        std::vector<std::uint64_t> buffer(2 * kPageSize / 8);
        const std::size_t got = cache.readCached(
            kRead, 0, std::as_writable_bytes(std::span(buffer)), kJob, kNoPosition, &hint);
        QVERIFY(!g_duringCopy); // the invalidation ran
        QCOMPARE(got, std::size_t{0});
        switch (invalidation) {
        case Invalidation::overwrite:
            // The copy saw the new bytes but not as the page it checked: it does not count
            // them; a new read does.
            QCOMPARE(cache.readCached(kRead, 0, std::as_writable_bytes(std::span(buffer)), kJob),
                     buffer.size() * 8);
            QCOMPARE(firstWord(buffer), word(kRead, 0, 2));
            QCOMPARE(buffer.back(), word(kRead, 1, 1));
            break;
        case Invalidation::eviction:
            // The copy read the other object's bytes from the reused page and refused them.
            QCOMPARE(firstWord(buffer), word(other, 0, 7));
            QCOMPARE(cache.readCached(kRead, 0, std::as_writable_bytes(std::span(buffer)), kJob),
                     std::size_t{0});
            break;
        default:
            QCOMPARE(cache.readCached(kRead, 0, std::as_writable_bytes(std::span(buffer)), kJob),
                     std::size_t{0});
            QCOMPARE(cache.cachedPages(), std::size_t{0});
        }
    }

    void invalidationInsideTheCopyOfAStreamsNextRead_data() { rows(); }

    // The same for a stream's next read inside the page it read last (the hinted page's inline
    // hit, PageCache::readHintedPage): the copy from before the invalidation never counts; the
    // read then takes the lookup, which finds the page's new bytes or nothing.
    void invalidationInsideTheCopyOfAStreamsNextRead()
    {
        QFETCH(Invalidation, invalidation);
        PageCache::Options options;
        options.limitPages = invalidation == Invalidation::eviction ? 2 : 16;
        options.reclaimBatch = 1;
        options.chunkBytes = 64 * kPageSize;
        PageCache cache(options);
        cache.setCopyOut(copyWithInvalidation);
        constexpr JobTag kJob = 1;
        for (PageIndex i = 0; i < 2; ++i) {
            Result<PageRef> page = cache.grab(kRead, i, kJob);
            QVERIFY2(page.ok(), page.status().toString().c_str());
            fillPage(*page, kRead, 1);
            page->setLockCookie(5);
            page->markUptodate();
        }
        PageCache::PageHint hint;
        std::vector<std::uint64_t> buffer(8); // 64 bytes: the copy goes through CopyOut
        const auto next = [&] {
            return cache.readCached(kRead, 64, std::as_writable_bytes(std::span(buffer)), kJob, 64,
                                    &hint); // the previous read ended at byte 64
        };
        std::vector<std::byte> first(64);
        QCOMPARE(cache.readCached(kRead, 0, first, kJob, kNoPosition, &hint), std::size_t{64});
        QVERIFY(hint.page != nullptr);
        QCOMPARE(next(), std::size_t{64}); // goes on in the page: clears the first's partial
        QCOMPARE(next(), std::size_t{64}); // the inline hit
        QCOMPARE(buffer.back(), word(kRead, 0, 1));
        const ObjectKey other{1, 1000};
        g_duringCopy = [&] { invalidate(cache, invalidation, other); };
        const std::size_t got = next();
        QVERIFY(!g_duringCopy);
        if (invalidation == Invalidation::overwrite) {
            QCOMPARE(got, buffer.size() * 8);
            QCOMPARE(firstWord(buffer), word(kRead, 0, 2));
            QCOMPARE(buffer.back(), word(kRead, 0, 2));
        } else {
            QCOMPARE(got, std::size_t{0});
        }
    }

    void readersNeverCopyAnInvalidPage_data() { rows(); }

    // Real threads: two readers copying while one thread invalidates and refills, many rounds.
    void readersNeverCopyAnInvalidPage()
    {
        QFETCH(Invalidation, invalidation);
        PageCache::Options options;
        // Eviction: room for the read object and a little more, so filling other objects
        // reclaims its pages and hands them to another object.
        options.limitPages = invalidation == Invalidation::eviction ? kPages + 8 : 4 * kPages;
        options.chunkBytes = 64 * kPageSize;
        options.shards = 2;
        PageCache cache(options);

        // Reads that begin after `valid` moved to v may see no version older than v: the older
        // pages were dropped (or overwritten) before it moved.
        std::atomic<std::uint32_t> valid{0};
        std::atomic<bool> stop{false};
        std::atomic<int> readersWithData{0};
        std::vector<ReaderResult> results(kReaders);

        auto reader = [&](int id) {
            std::mt19937 random(static_cast<unsigned>(id + 1));
            std::vector<std::uint64_t> buffer(3 * kPageSize / 8);
            // Reader 0 starts each read at the page it copied last (a PageHint), reader 1 in the
            // index.
            PageCache::PageHint hint;
            ReaderResult &mine = results[static_cast<std::size_t>(id)];
            while (!stop.load(std::memory_order_relaxed)) {
                const std::uint32_t floor = valid.load(std::memory_order_acquire);
                const std::uint64_t offset = (random() % (kPages * kPageSize / 8)) * 8;
                const std::size_t words = 1 + random() % buffer.size();
                const std::size_t got = cache.readCached(
                    kRead, offset, std::as_writable_bytes(std::span(buffer).first(words)),
                    kReaderJob, kNoPosition, id == 0 ? &hint : nullptr);
                std::uint32_t pageVersion = 0;
                for (std::size_t i = 0; i < got / 8; ++i) {
                    const std::uint64_t pos = offset + i * 8;
                    const PageIndex index = pos >> kPageShift;
                    const auto version = static_cast<std::uint32_t>(buffer[i]);
                    if ((pos & (kPageSize - 1)) == 0 || i == 0) {
                        pageVersion = version;
                    }
                    const bool bad = buffer[i] != word(kRead, index, version) || version < floor ||
                                     version != pageVersion;
                    if (bad && mine.badWords++ == 0) {
                        mine.firstBad = QString("word at %1: %2, expected object %3 page %4 "
                                                "version >= %5 (page began with %6)")
                                            .arg(pos)
                                            .arg(buffer[i], 16, 16, QChar('0'))
                                            .arg(kRead.object)
                                            .arg(index)
                                            .arg(floor)
                                            .arg(pageVersion)
                                            .toStdString();
                    }
                }
                if (mine.copiedBytes == 0 && got != 0) {
                    readersWithData.fetch_add(1);
                }
                mine.copiedBytes += static_cast<long>(got);
            }
        };

        std::vector<std::thread> readers;
        // Stops and joins the readers on every way out, a failed QVERIFY's early return too.
        struct Joiner {
            std::atomic<bool> &stop;
            std::vector<std::thread> &threads;
            ~Joiner()
            {
                stop = true;
                for (std::thread &thread : threads) {
                    thread.join();
                }
            }
        };
        for (int id = 0; id < kReaders; ++id) {
            readers.emplace_back(reader, id);
        }
        Joiner joiner{stop, readers};
        std::mt19937 random(99);
        int invalidated = 0;
        // Past kRounds, go on until both readers have copied something (bounded), so a run in
        // which the readers got nothing cannot pass.
        for (std::uint32_t round = 1;
             round <= kRounds || (readersWithData.load() < kReaders && round < 100 * kRounds);
             ++round) {
            const auto tag = static_cast<JobTag>(1 + round % 3);
            switch (invalidation) {
            case Invalidation::overwrite: break; // the grab below locks and rewrites in place
            case Invalidation::truncate:
                invalidated += cache.releaseObject(kRead).dropped != 0 ? 1 : 0;
                break;
            case Invalidation::lockCancel:
                invalidated += cache.releaseLock(kRead, round - 1).dropped != 0 ? 1 : 0;
                break;
            case Invalidation::jobFlush: {
                // The writer's job of the last round, then the readers' job: a hit moves a page
                // to the reader's job, never back, so the two leave nothing of the object.
                const auto previous = static_cast<JobTag>(1 + (round - 1) % 3);
                const std::size_t dropped =
                    cache.releaseJob(previous).dropped + cache.releaseJob(kReaderJob).dropped;
                invalidated += dropped != 0 ? 1 : 0;
                break;
            }
            case Invalidation::eviction:
                // Another object's pages take the read object's places (counted below).
                for (PageIndex i = 0; i < kPages; ++i) {
                    const ObjectKey other{1, 1000 + random() % 4};
                    Result<PageRef> page = grabRetrying(cache, other, i, tag);
                    QVERIFY2(page.ok(), page.status().toString().c_str());
                    fillPage(*page, other, round);
                    page->markUptodate();
                }
                break;
            }
            if (invalidation != Invalidation::overwrite && invalidation != Invalidation::eviction) {
                // Dropped: nothing older than this round may be read from now on.
                valid.store(round, std::memory_order_release);
            }
            for (PageIndex i = 0; i < kPages; ++i) {
                Result<PageRef> page = grabRetrying(cache, kRead, i, tag);
                QVERIFY2(page.ok(), page.status().toString().c_str());
                if (invalidation == Invalidation::eviction && !page->uptodate()) {
                    ++invalidated; // it was evicted
                }
                fillPage(*page, kRead, round);
                page->setLockCookie(round);
                page->markUptodate();
            }
            if (invalidation == Invalidation::overwrite) {
                valid.store(round, std::memory_order_release); // every page rewritten
                invalidated += 1;
            }
        }
        stop = true;
        for (std::thread &thread : readers) {
            thread.join();
        }
        readers.clear();
        for (const ReaderResult &result : results) {
            QVERIFY2(result.badWords == 0, result.firstBad.c_str());
        }
        QCOMPARE(readersWithData.load(), kReaders);
        QVERIFY(invalidated >= kRounds / 2);
    }
};

QTEST_GUILESS_MAIN(TestPageCacheRaces)
#include "test_page_cache_races.moc"
