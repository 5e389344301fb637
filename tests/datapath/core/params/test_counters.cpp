// Counter blocks: exact Lustre stats text, sums across many threads, min/max/sum, clear.
#include "core/params/catalog.h"
#include "core/params/counters.h"

#include <QTest>

#include <thread>
#include <vector>

using namespace lutra::params;
using namespace std::chrono;

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
