// Counter blocks: exact Lustre stats text, sums across many threads (owned cells and shared
// shards), threads that exit and whose slots are reused, min/max/sum, clear.
#include "core/params/catalog.h"
#include "core/params/counters.h"

#include <QTest>

#include <atomic>
#include <barrier>
#include <thread>
#include <vector>

using namespace lutra::params;
using namespace std::chrono;

namespace {

// Runs `threads` threads that are all alive at once: each waits until every other has started,
// runs `body(t)`, then waits again, so no thread exits (and frees its slot) before all counted.
template <typename Body> void runAllAlive(int threads, Body body)
{
    std::barrier started(threads);
    std::barrier done(threads);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            started.arrive_and_wait();
            body(t);
            done.arrive_and_wait();
        });
    }
    for (auto &thread : pool) {
        thread.join();
    }
}

std::uint64_t samplesOf(const CounterBlock &block, std::size_t index)
{
    return block.snapshot().counters[index].samples;
}

} // namespace

class TestCounters : public QObject {
    Q_OBJECT
private slots:
    void rendersLustreFormat()
    {
        CounterSnapshot snap;
        snap.startTime = WallClock::time_point(
            duration_cast<WallClock::duration>(seconds(1700000000) + nanoseconds(123456789)));
        snap.snapshotTime = WallClock::time_point(
            duration_cast<WallClock::duration>(seconds(1700000005) + nanoseconds(500000000)));
        snap.counters = {{"hits", "pages", 4092, false, 0, 0, 0},
                         {"misses", "pages", 0, false, 0, 0, 0},
                         {"readahead_pages", "pages", 12, false, 0, 0, 0},
                         {"read_bytes", "bytes", 3, true, 4096, 1048576, 1056768}};
        const std::string expected =
            "snapshot_time             1700000005.500000000 secs.nsecs\n"
            "start_time                1700000000.123456789 secs.nsecs\n"
            "elapsed_time              5.376543211 secs.nsecs\n"
            "hits                      4092 samples [pages]\n"
            "readahead_pages           12 samples [pages]\n"
            "read_bytes                3 samples [bytes] 4096 1048576 1056768\n";
        QCOMPARE(renderStats(snap), expected);
    }

    void readAheadStatsHasLustreNames()
    {
        const auto defs = catalog::readAheadStatDefs();
        QCOMPARE(defs.size(), std::size_t(18));
        const std::vector<std::string> expected{"hits",
                                                "misses",
                                                "readpage_not_consecutive",
                                                "miss_inside_window",
                                                "failed_grab_cache_page",
                                                "failed_lock_match",
                                                "read_but_discarded",
                                                "zero_length_file",
                                                "zero_size_window",
                                                "readahead_to_eof",
                                                "hit_max_readahead_issue",
                                                "wrong_page_from_grab_cache_page",
                                                "failed_to_reach_end",
                                                "async_readahead",
                                                "failed_to_fast_read",
                                                "mmap_range_read",
                                                "readahead_pages",
                                                "forceread_pages"};
        for (std::size_t i = 0; i < expected.size(); ++i) {
            QCOMPARE(defs[i].name, expected[i]);
            QCOMPARE(defs[i].unit, std::string("pages"));
        }
    }

    void sumsAcrossThreads()
    {
        CounterBlock block(catalog::readAheadStatDefs());
        constexpr int kThreads = 8;
        constexpr int kPerThread = 100000;
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&block, t] {
                for (int i = 0; i < kPerThread; ++i) {
                    block.add(catalog::ra_hits);
                    block.add(catalog::ra_readahead_pages, static_cast<std::uint64_t>(t + 1));
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        const auto snap = block.snapshot();
        QCOMPARE(snap.counters[catalog::ra_hits].samples, std::uint64_t(kThreads) * kPerThread);
        // sum over t of (t + 1) * kPerThread
        QCOMPARE(snap.counters[catalog::ra_readahead_pages].samples,
                 std::uint64_t(kThreads * (kThreads + 1) / 2) * kPerThread);
        QCOMPARE(snap.counters[catalog::ra_misses].samples, std::uint64_t(0));
    }

    void minMaxSumAcrossThreads()
    {
        CounterBlock block({{"read_bytes", "bytes", true}, {"write_bytes", "bytes", true}}, 4);
        std::vector<std::thread> threads;
        for (int t = 0; t < 6; ++t) {
            threads.emplace_back([&block, t] {
                for (int i = 1; i <= 1000; ++i) {
                    block.sample(0, t * 1000 + i); // values 1 .. 6000, each once
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        const auto snap = block.snapshot();
        QCOMPARE(snap.counters[0].samples, std::uint64_t(6000));
        QCOMPARE(snap.counters[0].min, std::int64_t(1));
        QCOMPARE(snap.counters[0].max, std::int64_t(6000));
        QCOMPARE(snap.counters[0].sum, std::int64_t(6000) * 6001 / 2);
        QCOMPARE(snap.counters[1].samples, std::uint64_t(0));
        QCOMPARE(snap.counters[1].min, std::int64_t(0)); // no samples: no sentinel leaks out
        QCOMPARE(snap.counters[1].max, std::int64_t(0));
    }

    void clearResetsAndRestartsTheClock()
    {
        CounterBlock block({{"hits", "pages", false}, {"lat", "usecs", true}});
        block.add(0, 5);
        block.sample(1, 42);
        const auto before = block.snapshot();
        QTest::qWait(5);
        block.clear();
        const auto after = block.snapshot();
        QCOMPARE(after.counters[0].samples, std::uint64_t(0));
        QCOMPARE(after.counters[1].samples, std::uint64_t(0));
        QVERIFY(after.startTime > before.startTime);
        block.sample(1, 7);
        const auto again = block.snapshot();
        QCOMPARE(again.counters[1].min, std::int64_t(7)); // min was reset, not stuck at 42
        QCOMPARE(again.counters[1].max, std::int64_t(7));
        const std::string text = block.render(WallClock::now());
        QVERIFY(text.find("hits") == std::string::npos);
        QVERIFY(text.find("lat                       1 samples [usecs] 7 7 7\n") !=
                std::string::npos);
    }

    // More threads alive than owned slots: the first threads own slots, the rest share atomic
    // shards, and both are exact under contention (two owners of one slot, or a plain add on a
    // shared shard, would lose increments here).
    void moreThreadsThanSlotsCountExactly()
    {
        CounterBlock block({{"hits", "pages", false}, {"bytes", "bytes", true}}, 4);
        const int threads = static_cast<int>(detail::kOwnedSlots) + 24;
        constexpr int kPerThread = 20000;
        std::atomic<std::size_t> slotsWhileAllAlive{0};
        std::atomic<int> shared{0};
        runAllAlive(threads, [&](int t) {
            for (int i = 0; i < kPerThread; ++i) {
                block.add(0);
                block.sample(1, t + 1);
            }
            if (detail::t_slot == detail::kSlotShared) {
                shared.fetch_add(1);
            }
            slotsWhileAllAlive = detail::ownedSlotsInUse();
        });
        QCOMPARE(slotsWhileAllAlive.load(), std::size_t(detail::kOwnedSlots));
        QVERIFY(shared.load() >= 24); // the main thread may hold a slot too
        const auto snap = block.snapshot();
        QCOMPARE(snap.counters[0].samples, std::uint64_t(threads) * kPerThread);
        QCOMPARE(snap.counters[1].samples, std::uint64_t(threads) * kPerThread);
        QCOMPARE(snap.counters[1].sum,
                 std::int64_t(kPerThread) * std::int64_t(threads) * (threads + 1) / 2);
        QCOMPARE(snap.counters[1].min, std::int64_t(1));
        QCOMPARE(snap.counters[1].max, std::int64_t(threads));
    }

    // A thread's counts outlive it, its slot goes to the next thread (which counts on top), and
    // many short-lived threads use no more slots than were free.
    void exitedThreadsKeepTheirCountsAndSlotsAreReused()
    {
        CounterBlock block({{"hits", "pages", false}, {"bytes", "bytes", true}});
        const std::size_t before = detail::ownedSlotsInUse();
        std::thread([&] {
            block.add(0, 5);
            block.sample(1, 100);
        }).join();
        QCOMPARE(detail::ownedSlotsInUse(), before); // given back at exit
        QCOMPARE(samplesOf(block, 0), std::uint64_t(5));
        for (int i = 0; i < 3 * static_cast<int>(detail::kOwnedSlots); ++i) {
            std::thread([&, i] {
                block.add(0, 1);
                block.sample(1, i);
                QVERIFY(detail::t_slot < detail::kOwnedSlots); // a free slot, never shared
            }).join();
        }
        QCOMPARE(detail::ownedSlotsInUse(), before);
        const auto snap = block.snapshot();
        QCOMPARE(snap.counters[0].samples, std::uint64_t(5 + 3 * detail::kOwnedSlots));
        QCOMPARE(snap.counters[1].min, std::int64_t(0));
        QCOMPARE(snap.counters[1].max, std::int64_t(3 * detail::kOwnedSlots - 1));
        // Threads exiting while others count: every count is still there at the end.
        constexpr int kWaves = 6;
        constexpr int kPerWave = 16;
        constexpr int kPerThread = 5000;
        for (int wave = 0; wave < kWaves; ++wave) {
            runAllAlive(kPerWave, [&](int) {
                for (int i = 0; i < kPerThread; ++i) {
                    block.add(0);
                }
            });
        }
        QCOMPARE(samplesOf(block, 0),
                 std::uint64_t(5 + 3 * detail::kOwnedSlots) + kWaves * kPerWave * kPerThread);
    }

    // clear() zeroes owned cells of live threads (they go on from zero), of exited threads (a
    // thread taking the slot over does not bring them back), and the shared shards.
    void clearZeroesOwnedCells()
    {
        CounterBlock block({{"hits", "pages", false}, {"lat", "usecs", true}});
        std::thread([&] { block.add(0, 1000); }).join(); // an exited thread's slot
        block.add(0, 7);                                 // the main thread's slot
        block.sample(1, 50);
        QCOMPARE(samplesOf(block, 0), std::uint64_t(1007));
        block.clear();
        QCOMPARE(samplesOf(block, 0), std::uint64_t(0));
        QCOMPARE(block.snapshot().counters[1].samples, std::uint64_t(0));
        block.add(0, 2);
        block.sample(1, 9);
        std::thread([&] { block.add(0, 3); }).join(); // takes the exited thread's slot over
        const auto snap = block.snapshot();
        QCOMPARE(snap.counters[0].samples, std::uint64_t(5));
        QCOMPARE(snap.counters[1].min, std::int64_t(9)); // not the 50 from before the clear
        QCOMPARE(snap.counters[1].max, std::int64_t(9));
        QCOMPARE(snap.counters[1].sum, std::int64_t(9));
    }

    // Writers, a reader and clears at once: a reading with no clear around it never goes back
    // (it may miss an update in flight, not undo one); after the clears, with the owners' cells
    // of older epochs written in the middle of an update, one more clear and the totals of the
    // next writers are exact.
    void readersAndClearsRaceWithWriters()
    {
        CounterBlock block({{"hits", "pages", false}, {"bytes", "bytes", true}}, 4);
        constexpr int kWriters = 6;
        constexpr int kPerWriter = 100000;
        std::atomic<bool> writing{true};
        std::atomic<int> clears{0}; // odd while a clear runs
        std::atomic<int> wentBack{0};
        std::atomic<int> readings{0};
        std::thread reader([&] {
            std::uint64_t previous = 0;
            int lastClears = -1;
            while (writing.load()) {
                const int before = clears.load();
                const std::uint64_t now = samplesOf(block, 0);
                const int after = clears.load();
                if (before == after && before == lastClears && before % 2 == 0 && now < previous) {
                    wentBack.fetch_add(1);
                }
                lastClears = before == after ? after : -1; // a reading during a clear: no base
                previous = now;
                readings.fetch_add(1);
            }
        });
        const auto write = [&](int) {
            for (int i = 0; i < kPerWriter; ++i) {
                block.add(0);
                block.sample(1, 3);
            }
        };
        std::atomic<bool> racing{true};
        std::thread clearer([&] {
            while (racing.load()) {
                clears.fetch_add(1);
                block.clear();
                clears.fetch_add(1);
                std::this_thread::yield();
            }
        });
        runAllAlive(kWriters, write);
        racing = false;
        clearer.join();
        clears.fetch_add(1);
        block.clear();
        clears.fetch_add(1);
        QCOMPARE(samplesOf(block, 0), std::uint64_t(0));
        runAllAlive(kWriters, write);
        writing = false;
        reader.join();
        QCOMPARE(wentBack.load(), 0);
        QVERIFY(readings.load() > 0);
        const auto snap = block.snapshot();
        QCOMPARE(snap.counters[0].samples, std::uint64_t(kWriters) * kPerWriter);
        QCOMPARE(snap.counters[1].sum, std::int64_t(kWriters) * kPerWriter * 3);
        QCOMPARE(snap.counters[1].min, std::int64_t(3));
    }

    // Updates through a kept CounterBlock::Mine (the fast read's): they count like add/sample,
    // a clear makes it stale (counts go on from zero, not into the cells of before), and a copy
    // used by another thread counts in that thread's cells (two threads' plain stores into one
    // slot's cells lose increments).
    void updatesThroughMineFollowClearsAndThreads()
    {
        CounterBlock block({{"hits", "pages", false}, {"lat", "usecs", true}});
        CounterBlock::Mine mine;
        block.add(mine, 0, 5);
        block.add(mine, 0, 2);
        block.sample(mine, 1, 50);
        block.add(0, 1);
        QCOMPARE(samplesOf(block, 0), std::uint64_t(8));
        block.clear();
        block.add(mine, 0, 3);
        block.sample(mine, 1, 9);
        auto snap = block.snapshot();
        QCOMPARE(snap.counters[0].samples, std::uint64_t(3));
        QCOMPARE(snap.counters[1].min, std::int64_t(9));
        QCOMPARE(snap.counters[1].max, std::int64_t(9));
        QCOMPARE(snap.counters[1].sum, std::int64_t(9));

        constexpr int kPerThread = 200000;
        const CounterBlock::Mine bound = mine;
        runAllAlive(2, [&](int) {
            CounterBlock::Mine copy = bound; // bound by the main thread: stale here
            for (int i = 0; i < kPerThread; ++i) {
                block.add(copy, 0);
            }
        });
        QCOMPARE(samplesOf(block, 0), std::uint64_t(3) + 2 * kPerThread);
    }

    void shardsArePowerOfTwo()
    {
        const auto shards = CounterBlock::defaultShards();
        QVERIFY(shards >= 4 && shards <= 64);
        QCOMPARE(shards & (shards - 1), std::size_t(0));
        CounterBlock odd({{"x", "reqs", false}}, 3); // rounds up to 4, still counts right
        odd.add(0, 9);
        QCOMPARE(odd.snapshot().counters[0].samples, std::uint64_t(9));
    }
};

QTEST_GUILESS_MAIN(TestCounters)
#include "test_counters.moc"
