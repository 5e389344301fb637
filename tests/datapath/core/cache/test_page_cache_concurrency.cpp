// The page cache under several threads at once: writers filling and dirtying pages, a write-back
// thread, fast-path readers checking every byte they get, and releases, all against a limit
// small enough that reclaim runs constantly; one filler per page, grabbed alone or in runs.
// Correctness only, never speed.
#include "core/cache/page_cache.h"

#include <QTest>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::cache;

namespace {

constexpr int kObjects = 4;
constexpr PageIndex kPagesPerObject = 96;

ObjectKey objectKey(int i)
{
    return ObjectKey{static_cast<std::uint32_t>(i % 2), static_cast<std::uint64_t>(1000 + i)};
}

// Every page's data is a pure function of where it is, so any torn or misplaced copy shows.
std::byte pattern(const ObjectKey &key, PageIndex index)
{
    return static_cast<std::byte>((key.object * 131 + index * 7 + 1) & 0xff);
}

// A cache of `limitPages`, allocated `chunkPages` at a time.
PageCache::Options cacheOf(std::size_t limitPages, std::size_t chunkPages = 64)
{
    PageCache::Options options;
    options.limitPages = limitPages;
    options.chunkBytes = chunkPages * kPageSize;
    return options;
}

} // namespace

class TestPageCacheConcurrency : public QObject {
    Q_OBJECT

private slots:
    void readersWritersReclaimAndRelease()
    {
        PageCache::Options options = cacheOf(128);
        options.shards = 4;
        PageCache cache(options);

        std::atomic<bool> stop{false};
        std::atomic<long> badBytes{0};
        std::atomic<long> copiedBytes{0};
        std::atomic<int> readersWithData{0}; // readers that checked at least one copied byte
        std::atomic<long> filled{0};
        constexpr int kReaders = 2;

        auto writer = [&](unsigned seed) {
            std::mt19937 random(seed);
            // Past the 20000 grabs, go on until every reader has checked bytes it copied, so
            // a run where the readers got nothing cannot pass (bounded: a cache that never
            // hands out bytes fails the check below instead of hanging).
            for (int n = 0; n < 20000 || (readersWithData.load() < kReaders && n < 2'000'000);
                 ++n) {
                const ObjectKey key = objectKey(static_cast<int>(random() % kObjects));
                const PageIndex index = random() % kPagesPerObject;
                Result<PageRef> ref = cache.grab(key, index, seed);
                if (!ref.ok()) {
                    continue; // everything dirty or pinned right now: back off
                }
                if (!ref->uptodate() || random() % 4 == 0) {
                    std::memset(ref->data().data(), static_cast<int>(pattern(key, index)),
                                kPageSize);
                    if (random() % 3 == 0) {
                        ref->markDirty();
                    } else {
                        ref->markUptodate();
                    }
                    filled.fetch_add(1, std::memory_order_relaxed);
                }
            }
        };
        auto reader = [&](unsigned seed) {
            std::mt19937 random(seed);
            std::vector<std::byte> buffer(3 * kPageSize);
            long mine = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                const ObjectKey key = objectKey(static_cast<int>(random() % kObjects));
                const std::uint64_t offset = random() % (kPagesPerObject * kPageSize);
                const std::size_t length = 1 + random() % buffer.size();
                const std::size_t got =
                    cache.readCached(key, offset, std::span(buffer).first(length), seed);
                for (std::size_t i = 0; i < got; ++i) {
                    if (buffer[i] != pattern(key, (offset + i) >> kPageShift)) {
                        badBytes.fetch_add(1, std::memory_order_relaxed);
                    }
                }
                copiedBytes.fetch_add(static_cast<long>(got), std::memory_order_relaxed);
                if (mine == 0 && got != 0) {
                    readersWithData.fetch_add(1);
                }
                mine += static_cast<long>(got);
            }
        };
        auto flusher = [&] {
            std::vector<PageRef> run(16);
            int round = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                const ObjectKey key = objectKey(round % kObjects);
                // Every fifth round the "RPC" fails once: the pages stay dirty for later.
                const bool written = round % 5 != 0;
                while (cache.collectDirtyRun(key, 0, run) != 0) {
                    for (PageRef &ref : run) {
                        if (ref && ref.data()[0] != pattern(key, ref.index())) {
                            badBytes.fetch_add(1, std::memory_order_relaxed);
                        }
                    }
                    cache.endWriteback(run, written);
                    if (!written) {
                        break;
                    }
                }
                if (round % 7 == 0) {
                    cache.releaseObject(key);
                }
                if (round % 50 == 0) {
                    cache.releaseAll(round % 100 == 0 ? Batching::onePage : Batching::batched);
                }
                ++round;
                std::this_thread::yield();
            }
        };

        std::thread r1(reader, 11);
        std::thread r2(reader, 12);
        std::thread f(flusher);
        std::thread w1(writer, 1);
        std::thread w2(writer, 2);
        w1.join();
        w2.join();
        stop = true;
        r1.join();
        r2.join();
        f.join();

        QCOMPARE(badBytes.load(), 0L);
        // The byte check above only means something over bytes that were copied.
        QCOMPARE(readersWithData.load(), kReaders);
        QVERIFY(copiedBytes.load() > 0);
        QVERIFY(filled.load() > 0);
        QVERIFY(cache.cachedPages() <= options.limitPages);

        // Quiesced: everything can be written back and dropped, and the books balance.
        std::vector<PageRef> run(16);
        for (int i = 0; i < kObjects; ++i) {
            while (cache.collectDirtyRun(objectKey(i), 0, run) != 0) {
                cache.endWriteback(run, true);
            }
        }
        QCOMPARE(cache.dirtyPages(), std::size_t{0});
        QCOMPARE(cache.dirtyBytes(0), std::int64_t{0});
        QCOMPARE(cache.dirtyBytes(1), std::int64_t{0});
        ReleaseCounts all = cache.releaseAll();
        QCOMPARE(all.dirty, std::size_t{0});
        QCOMPARE(all.busy, std::size_t{0});
        QCOMPARE(cache.cachedPages(), std::size_t{0});
        QCOMPARE(cache.probationPages() + cache.mainPages(), std::size_t{0});

        // And the fast path still copies exactly what was cached: a run of pages, read across
        // page boundaries from an odd offset, every byte compared.
        const ObjectKey key = objectKey(0);
        constexpr PageIndex kRun = 32;
        for (PageIndex index = 0; index < kRun; ++index) {
            Result<PageRef> ref = cache.grab(key, index, 0);
            QVERIFY2(ref.ok(), ref.status().toString().c_str());
            std::memset(ref->data().data(), static_cast<int>(pattern(key, index)), kPageSize);
            ref->markUptodate();
        }
        const std::uint64_t offset = kPageSize / 2 + 1;
        std::vector<std::byte> out((kRun - 1) * kPageSize);
        QCOMPARE(cache.readCached(key, offset, out, 0), out.size());
        for (std::size_t i = 0; i < out.size(); ++i) {
            if (out[i] != pattern(key, (offset + i) >> kPageShift)) {
                QFAIL(qPrintable(QString("byte %1 of the read-back differs").arg(offset + i)));
            }
        }
    }

    // Many threads grabbing the same missing page: exactly one fills it, the others wait for the
    // page lock and find it uptodate.
    void oneFillerPerPage()
    {
        PageCache cache(cacheOf(64));
        const ObjectKey key{0, 7};
        for (PageIndex index = 0; index < 32; ++index) {
            std::atomic<int> fills{0};
            std::atomic<int> sawUptodate{0};
            auto worker = [&] {
                Result<PageRef> ref = cache.grab(key, index, 0);
                if (!ref.ok()) {
                    return;
                }
                if (ref->uptodate()) {
                    sawUptodate.fetch_add(1);
                    return;
                }
                fills.fetch_add(1);
                std::memset(ref->data().data(), 3, kPageSize);
                ref->markUptodate();
            };
            std::vector<std::thread> threads;
            for (int t = 0; t < 4; ++t) {
                threads.emplace_back(worker);
            }
            for (std::thread &thread : threads) {
                thread.join();
            }
            QCOMPARE(fills.load(), 1);
            QCOMPARE(sawUptodate.load(), 3);
        }
        QCOMPARE(cache.cachedPages(), std::size_t{32});
    }

    // Readahead's runs from several threads over the same pages (grabMany), against grab() of
    // single pages too: every page is inserted and filled exactly once, whoever gets it.
    void oneFillerPerPageWithRuns()
    {
        PageCache cache(cacheOf(1024));
        const ObjectKey key{0, 8};
        constexpr PageIndex kPages = 512;
        std::vector<std::atomic<int>> fills(kPages);
        const auto take = [&](PageRef &page) {
            if (!page.holdsLock() || page.uptodate()) {
                return false;
            }
            fills[page.index()].fetch_add(1);
            std::memset(page.data().data(), 5, kPageSize);
            page.markUptodate();
            page.reset();
            return true;
        };
        std::atomic<bool> wrong{false};
        const auto runs = [&](PageIndex offset) {
            std::array<PageIndex, PageCache::kMaxGrabRun> indexes{};
            std::array<PageRef, PageCache::kMaxGrabRun> out;
            for (PageIndex first = offset; first < kPages; first += 48) {
                const std::size_t count =
                    std::min<std::size_t>(PageCache::kMaxGrabRun, kPages - first);
                for (std::size_t i = 0; i < count; ++i) {
                    indexes[i] = first + i;
                }
                const std::size_t handled =
                    cache.grabMany(key, std::span(indexes).first(count), 0, out);
                if (handled != count) {
                    wrong = true; // the limit holds every page: nothing may fail
                }
                for (std::size_t i = 0; i < handled; ++i) {
                    if (out[i] && !take(out[i])) {
                        wrong = true; // handed out locked but not to fill
                    }
                }
            }
        };
        const auto singles = [&] {
            for (PageIndex index = kPages; index-- > 0;) {
                Result<PageRef> page = cache.grab(key, index, 0, Wait::no);
                if (page.ok() && !page->uptodate()) {
                    (void)take(*page);
                }
            }
        };
        std::vector<std::thread> threads;
        for (const PageIndex offset : {0, 16, 32}) {
            threads.emplace_back(runs, offset);
        }
        threads.emplace_back(singles);
        for (std::thread &thread : threads) {
            thread.join();
        }
        QVERIFY(!wrong.load());
        for (PageIndex index = 0; index < kPages; ++index) {
            QVERIFY2(
                fills[index].load() == 1,
                qPrintable(QString("page %1 filled %2 times").arg(index).arg(fills[index].load())));
        }
        QCOMPARE(cache.cachedPages(), std::size_t{kPages});
        QCOMPARE(cache.counters().snapshot().counters.at(PageCache::grab_new).samples,
                 std::uint64_t{kPages});
    }

    // A thread waiting for a locked page, or for one under write-back, marks it; the unlock or
    // the end of write-back wakes it and clears the mark, so a page nobody waits for is unlocked
    // without a wake-up call.
    void waitersMarkThePageAndAreWoken()
    {
        PageCache cache(cacheOf(16, 16));
        const ObjectKey key{0, 9};
        Result<PageRef> filling = cache.grab(key, 0, 0);
        QVERIFY(filling.ok());
        QVERIFY(!filling->hasWaiters());
        std::atomic<bool> sawUptodate{false};
        std::thread reader([&] {
            Result<PageRef> ref = cache.grab(key, 0, 0); // sleeps on the page lock
            sawUptodate = ref.ok() && ref->uptodate();
        });
        QTRY_VERIFY_WITH_TIMEOUT(filling->hasWaiters(), 10000);
        filling->markUptodate();
        filling->markDirty();
        filling->unlock();
        reader.join();
        QVERIFY(sawUptodate.load());
        QVERIFY(!filling->hasWaiters());

        std::vector<PageRef> run(1);
        QCOMPARE(cache.collectDirtyRun(key, 0, run), std::size_t{1});
        std::atomic<bool> sawClean{false};
        std::thread writer([&] {
            Result<PageRef> ref = cache.grab(key, 0, 0); // sleeps on the write-back
            sawClean = ref.ok() && !ref->dirty();
        });
        QTRY_VERIFY_WITH_TIMEOUT(filling->hasWaiters(), 10000);
        cache.endWriteback(run, true);
        writer.join();
        QVERIFY(sawClean.load());
        QVERIFY(!filling->hasWaiters());
    }
};

QTEST_GUILESS_MAIN(TestPageCacheConcurrency)
#include "test_page_cache_concurrency.moc"
