// The readahead engine played against a simulated page cache: IOR-hard's interleaved 47008-byte
// pattern with 4 and 16 ranks (stride recognised, only the future chunks' pages requested, hit
// ratio >= 0.95), and LU-13312's memory pressure (a small cache: with the pressure signal and
// discard feedback at most 1% of what is read ahead is thrown away, without them a lot is).
#include "core/readahead/readahead.h"
#include "core/readahead/simulator.h"

#include <QTest>

#include <cstdio>
#include <vector>

using namespace lutra;
using namespace lutra::readahead;
using namespace lutra::params::catalog;

namespace {

// These tests count readahead's decisions read by read (readpage_not_consecutive per read),
// so the model tells it of every read.
constexpr auto kEveryRead = sim::Simulator::Visibility::everyRead;

constexpr std::uint64_t kTransfer = 47008;

std::uint64_t counter(const ReadaheadMount &mount, ReadAheadStat stat)
{
    return mount.stats().snapshot().counters[stat].samples;
}

ReadaheadMount::Config config(std::uint64_t maxMb, bool pressureAware)
{
    ReadaheadMount::Config c;
    c.maxReadAheadMb = maxMb;
    c.maxReadAheadPerFileMb = 64;
    c.maxReadAheadWholeMb = 2;
    c.pressureAware = pressureAware;
    return c;
}

struct IorResult {
    sim::SimStats stats;
    std::uint64_t gapPagesRequested = 0;
    std::uint64_t chunkPagesNotRequested = 0;
    bool allTrustedOnTime = true;
};

// IOR-hard read phase: `ranks` readers of one shared file, reader r reads k * ranks * 47008 +
// r * 47008 for k = 0..segments-1, round robin.
IorResult runIorHard(ReadaheadMount &mount, std::uint32_t ranks, std::uint64_t segments,
                     std::uint64_t cachePages)
{
    const std::uint64_t stride = ranks * kTransfer;
    const std::uint64_t fileSize = segments * stride;
    sim::Simulator sim(mount, cachePages, 256, 0, 0, kEveryRead);
    std::vector<std::size_t> readers;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        readers.push_back(sim.addReader(1, fileSize));
    }
    // Per rank: the pages its own chunks touch, and the pages its stride plans asked for.
    std::vector<std::vector<bool>> ownPage(ranks), requested(ranks);
    const PageIndex filePages = (fileSize + kPageSize - 1) / kPageSize;
    for (std::uint32_t r = 0; r < ranks; ++r) {
        ownPage[r].assign(filePages, false);
        requested[r].assign(filePages, false);
        // A rank's first trusted read plans from its next chunk (see allTrustedOnTime).
        for (std::uint64_t k = r == 0 ? 2 : 1; k < segments; ++k) {
            const std::uint64_t offset = k * stride + r * kTransfer;
            for (PageIndex p = offset / kPageSize; p <= (offset + kTransfer - 1) / kPageSize; ++p) {
                ownPage[r][p] = true;
            }
        }
    }
    IorResult result;
    for (std::uint64_t k = 0; k < segments; ++k) {
        for (std::uint32_t r = 0; r < ranks; ++r) {
            const auto &ranges = sim.read(readers[r], k * stride + r * kTransfer, kTransfer);
            // The file's opens say its ranks' stride (ranks x transfer): rank r > 0 trusts it at
            // its first read (transfer r), rank 0, whose first read looks sequential, at its
            // second.
            const bool trusted = sim.readahead(readers[r]).strideTrusted();
            if (trusted != (k >= (r == 0 ? 1u : 0u))) {
                result.allTrustedOnTime = false;
            }
            if (!trusted) {
                continue;
            }
            for (const auto &range : ranges) {
                for (PageIndex p = range.first; p < range.end(); ++p) {
                    requested[r][p] = true;
                    result.gapPagesRequested += ownPage[r][p] ? 0 : 1;
                }
            }
        }
    }
    for (std::uint32_t r = 0; r < ranks; ++r) {
        for (PageIndex p = 0; p < filePages; ++p) {
            result.chunkPagesNotRequested += ownPage[r][p] && !requested[r][p] ? 1 : 0;
        }
    }
    result.stats = sim.stats();
    return result;
}

// `streams` files read sequentially in 1 MiB reads, round robin.
sim::SimStats runSequential(ReadaheadMount &mount, std::uint32_t streams, std::uint64_t mib,
                            std::uint64_t cachePages)
{
    sim::Simulator sim(mount, cachePages, 256, 0, 0, kEveryRead);
    std::vector<std::size_t> readers;
    for (std::uint32_t s = 0; s < streams; ++s) {
        readers.push_back(sim.addReader(s + 1, mib << 20));
    }
    for (std::uint64_t i = 0; i < mib; ++i) {
        for (const auto reader : readers) {
            sim.read(reader, i << 20, 1 << 20);
        }
    }
    return sim.stats();
}

void report(const char *what, const sim::SimStats &stats)
{
    std::printf("%-28s hit ratio %.4f, read ahead %llu, discarded %llu (%.4f), rpcs %llu\n", what,
                stats.hitRatio(), static_cast<unsigned long long>(stats.readaheadInserted),
                static_cast<unsigned long long>(stats.discarded), stats.discardRatio(),
                static_cast<unsigned long long>(stats.rpcs));
}

} // namespace

class TestReadaheadSim : public QObject {
    Q_OBJECT

private slots:
    void iorHard_data()
    {
        QTest::addColumn<std::uint32_t>("ranks");
        QTest::newRow("4 ranks") << 4u;
        QTest::newRow("16 ranks") << 16u;
    }

    void iorHard()
    {
        QFETCH(std::uint32_t, ranks);
        const std::uint64_t segments = 400;
        ReadaheadMount mount(config(4096, true));
        const auto result = runIorHard(mount, ranks, segments, 0); // every page stays cached
        report(QTest::currentDataTag(), result.stats);
        QVERIFY(result.allTrustedOnTime);
        QCOMPARE(result.gapPagesRequested, 0u);
        QCOMPARE(result.chunkPagesNotRequested, 0u);
        QVERIFY(result.stats.hitRatio() >= 0.95);
        // Every read but each rank's first is not page-consecutive with the one before.
        QCOMPARE(counter(mount, ra_readpage_not_consecutive), ranks * segments - 1);
        QCOMPARE(counter(mount, ra_read_but_discarded), 0u);
        QCOMPARE(mount.pagesInUse(), 0u);
    }

    void iorHardUnderMemoryPressure()
    {
        // 16 ranks on a client whose cache holds 16 MiB; the readahead budget is no limit.
        const std::uint64_t cachePages = 4096;
        ReadaheadMount aware(config(4096, true));
        const auto withSignal = runIorHard(aware, 16, 400, cachePages);
        ReadaheadMount unaware(config(4096, false));
        const auto without = runIorHard(unaware, 16, 400, cachePages);
        report("16 ranks, pressure-aware", withSignal.stats);
        report("16 ranks, pressure-unaware", without.stats);
        QVERIFY(withSignal.stats.discardRatio() <= 0.01);
        QVERIFY(without.stats.discardRatio() >= 0.2);
        QVERIFY(withSignal.stats.hitRatio() >= 0.9);
        QVERIFY(withSignal.stats.hitRatio() > without.stats.hitRatio());
        QCOMPARE(counter(aware, ra_read_but_discarded), withSignal.stats.discarded);
        QCOMPARE(counter(unaware, ra_read_but_discarded), without.stats.discarded);
    }

    void sequentialUnderMemoryPressure()
    {
        const std::uint64_t cachePages = 8192;
        ReadaheadMount aware(config(4096, true));
        const auto withSignal = runSequential(aware, 8, 256, cachePages);
        ReadaheadMount unaware(config(4096, false));
        const auto without = runSequential(unaware, 8, 256, cachePages);
        report("8 streams, pressure-aware", withSignal);
        report("8 streams, pressure-unaware", without);
        QVERIFY(withSignal.discardRatio() <= 0.01);
        QVERIFY(without.discardRatio() >= 0.2);
        QVERIFY(withSignal.hitRatio() >= 0.85);
        QVERIFY(withSignal.hitRatio() > without.hitRatio());
    }
};

QTEST_GUILESS_MAIN(TestReadaheadSim)
#include "test_readahead_sim.moc"
