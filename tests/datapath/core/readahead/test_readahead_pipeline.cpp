// Readahead under memory pressure with time in the model (issue 12, item 7): RPCs take
// `kLatency` steps to land (one step per page a reader copies out), pages in flight hold cache
// room and cannot be evicted, and a reader that reaches one waits. IOR-hard's read, 1-8 ranks x
// {4097 B, 47008 B, 1 MiB + 1}, with a quarter of the file cached (the `pressure` bench):
// read_but_discarded <= 1 %, no page fetched twice (but for a discarded one), and the pipeline
// depth: a lone stream keeps most of the cache ahead of it in flight or unread (with half, the
// readers waited for every window: `pressure` 1 rank x 4097 B read at 0.62-0.79 of unpressured).
#include "core/readahead/readahead.h"
#include "core/readahead/simulator.h"

#include <QTest>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace lutra;
using namespace lutra::readahead;
using namespace lutra::params::catalog;

namespace {

constexpr std::uint64_t kMiB = 1 << 20;
// An RPC's latency in pages a reader copies meanwhile: a 1 MiB RPC takes ~1 ms on the bench
// machine, a 4 KiB copy out of the cache ~1-3 us.
constexpr std::uint64_t kLatency = 300;
// The client's stripe (1 MiB) in pages: where its RPCs are cut anyway.
constexpr std::uint64_t kStripePages = 256;

std::uint64_t counter(const ReadaheadMount &mount, ReadAheadStat stat)
{
    return mount.stats().snapshot().counters[stat].samples;
}

struct Played {
    sim::SimStats stats;
    std::uint64_t filePages = 0;
    std::uint64_t cachePages = 0;
    std::uint64_t readaheadPages = 0; // the counter
    std::uint64_t misses = 0;
    std::uint64_t discarded = 0;
};

// About `mib` MiB of file, at least 16 transfers per rank (the stride is trusted after a few).
std::uint64_t segmentsFor(std::uint32_t ranks, std::uint64_t transfer, std::uint64_t mib)
{
    return std::max<std::uint64_t>(16, mib * kMiB / (ranks * transfer));
}

// IOR-hard's read: rank r's k-th transfer at (k * ranks + r) * transfer, each rank reading
// `turn` transfers per turn (1: lockstep; more: ranks out of step, as threads running through
// a time slice). `quarterCached`: a quarter of the file, or every page.
Played play(std::uint32_t ranks, std::uint64_t transfer, bool quarterCached, std::uint64_t mib = 16,
            std::uint64_t turn = 1)
{
    const std::uint64_t segments = segmentsFor(ranks, transfer, mib);
    const std::uint64_t fileSize = ranks * segments * transfer;
    Played result;
    result.filePages = (fileSize + kPageSize - 1) / kPageSize;
    result.cachePages = quarterCached ? result.filePages / 4 : 0;
    ReadaheadMount mount;
    sim::Simulator sim(mount, result.cachePages, 1024, kLatency, kStripePages);
    std::vector<std::size_t> readers;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        readers.push_back(sim.addReader(1, fileSize));
    }
    for (std::uint64_t from = 0; from < segments; from += turn) {
        for (std::uint32_t r = 0; r < ranks; ++r) {
            for (std::uint64_t k = from; k < std::min(from + turn, segments); ++k) {
                sim.read(readers[r], (k * ranks + r) * transfer, transfer);
            }
        }
    }
    result.stats = sim.stats();
    result.readaheadPages = counter(mount, ra_readahead_pages);
    result.misses = counter(mount, ra_misses);
    result.discarded = counter(mount, ra_read_but_discarded);
    return result;
}

void print(const char *what, const Played &pressured)
{
    std::printf("%-22s file %6llu pages, cache %5llu: fetched %.3f per page, discarded %llu, "
                "stalled %5.1f %% of steps, %6.1f pages ahead, %llu reads missed\n",
                what, static_cast<unsigned long long>(pressured.filePages),
                static_cast<unsigned long long>(pressured.cachePages),
                double(pressured.readaheadPages + pressured.misses) / pressured.filePages,
                static_cast<unsigned long long>(pressured.discarded),
                100.0 * pressured.stats.stallSteps / pressured.stats.steps,
                pressured.stats.meanAheadPages(),
                static_cast<unsigned long long>(pressured.stats.missReads));
}

} // namespace

class TestReadaheadPipeline : public QObject {
    Q_OBJECT

private slots:
    void quarterCached_data()
    {
        QTest::addColumn<std::uint32_t>("ranks");
        QTest::addColumn<std::uint64_t>("transfer");
        for (std::uint32_t ranks = 1; ranks <= 8; ++ranks) {
            for (const std::uint64_t transfer : {kPageSize + 1, std::uint64_t{47008}, kMiB + 1}) {
                const std::string name =
                    std::to_string(ranks) + " ranks, " + std::to_string(transfer) + " B";
                QTest::newRow(name.c_str()) << ranks << transfer;
            }
        }
    }
    void quarterCached()
    {
        QFETCH(std::uint32_t, ranks);
        QFETCH(std::uint64_t, transfer);
        const Played pressured = play(ranks, transfer, true);
        print(QTest::currentDataTag(), pressured);
        // read_but_discarded <= 1 % of what was read ahead.
        QVERIFY2(pressured.discarded * 100 <= pressured.readaheadPages,
                 QByteArray::number(static_cast<qulonglong>(pressured.discarded)));
        // No page fetched twice but a discarded one.
        QVERIFY(pressured.readaheadPages + pressured.misses <=
                pressured.filePages + pressured.discarded);
    }

    // Ranks out of step (a rank reads 64 transfers per turn, as a thread through its time
    // slice) with 4097-byte transfers and the engine's visibility (hits on the fast path unseen,
    // a page read in part keeping its readahead mark for its other reader): no discards, no page
    // fetched twice, and at most 1 % of reads miss. The model does not show the bench's leading
    // rank that overtakes its readahead (2-page misses): its readers wait for pages in flight.
    // With 256 transfers per turn (a lag of the whole cache) 8 ranks fetch 1.15 pages per file
    // page: a lag that big overruns the cache (not asserted; see the README).
    void ranksOutOfStepMissRarely_data()
    {
        QTest::addColumn<std::uint32_t>("ranks");
        for (const std::uint32_t ranks : {2u, 3u, 4u, 8u}) {
            QTest::addRow("%u ranks", ranks) << ranks;
        }
    }
    void ranksOutOfStepMissRarely()
    {
        QFETCH(std::uint32_t, ranks);
        const Played pressured = play(ranks, kPageSize + 1, true, 32, 64);
        print(QTest::currentDataTag(), pressured);
        QVERIFY2(pressured.discarded * 100 <= pressured.readaheadPages,
                 QByteArray::number(static_cast<qulonglong>(pressured.discarded)));
        QVERIFY(pressured.readaheadPages + pressured.misses <=
                pressured.filePages + pressured.discarded);
        QVERIFY2(pressured.stats.missReads * 100 <= pressured.stats.reads,
                 QByteArray::number(static_cast<qulonglong>(pressured.stats.missReads)));
    }

    // The pipeline's depth where the room allows it: a lone reader of a file (every byte in
    // turn, nobody else reading) has nothing in the cache worth keeping but what is ahead of
    // it, so its readahead may hold most of the cache. With half (its share before), a window
    // of a quarter of the cache went out when the reader entered the one before: 192 pages
    // ahead for a 300-step RPC, and the reader waited for every window.
    void loneStreamKeepsTheCacheAhead_data()
    {
        QTest::addColumn<std::uint64_t>("transfer");
        QTest::newRow("4097 B") << kPageSize + 1;
        QTest::newRow("47008 B") << std::uint64_t{47008};
        QTest::newRow("1 MiB + 1") << kMiB + 1;
    }
    void loneStreamKeepsTheCacheAhead()
    {
        QFETCH(std::uint64_t, transfer);
        // 32 MiB: a 1 MiB + 1 B reader's first windows weigh less.
        const Played pressured = play(1, transfer, true, 32);
        const Played unpressured = play(1, transfer, false, 32);
        print(QTest::currentDataTag(), pressured);
        QCOMPARE(pressured.discarded, 0u);
        QVERIFY(unpressured.readaheadPages + unpressured.misses <= unpressured.filePages);
        // At least half the cache ahead on average, less the read sampled after (before: 20-35 %
        // of the cache; 4097 B 363 pages of 1024, 47008 B 348, 1 MiB + 1 207).
        const double transferPages = double(transfer) / kPageSize;
        QVERIFY2(pressured.stats.meanAheadPages() >= 0.5 * pressured.cachePages - transferPages,
                 QByteArray::number(pressured.stats.meanAheadPages()));
        // Simulated time, pressured against every page cached: >= 0.9, as `pressure` asks
        // (before: 1 MiB + 1 B reads 0.55, the reader waited half the time).
        const double ratio = double(unpressured.stats.steps) / pressured.stats.steps;
        std::printf("%-22s steps vs every page cached %.3f\n", QTest::currentDataTag(), ratio);
        QVERIFY2(ratio >= 0.9, QByteArray::number(ratio));
    }
};

QTEST_GUILESS_MAIN(TestReadaheadPipeline)
#include "test_readahead_pipeline.moc"
