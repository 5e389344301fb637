// Readahead for every IOR-hard shape, not only the benchmark's default (issue 12, item 7): 1 to 8
// ranks sharing one file, transfers from one byte past a page to a few MiB, played against the
// simulated page cache. With every page cached: hit ratio >= 0.95, no page fetched twice
// (readahead_pages + misses <= the file's pages), readahead_pages counts only what was fetched
// (pages two ranks' chunks share are named by both plans, fetched once). With the cache at a
// quarter of the file (the `pressure` bench): hit ratio >= 0.9, read_but_discarded <= 1 %. Where
// the stride's gaps are read (small, or other ranks' chunks of a few pages with room for the
// windows), RPCs average at least 16 pages.
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

std::uint64_t counter(const ReadaheadMount &mount, ReadAheadStat stat)
{
    return mount.stats().snapshot().counters[stat].samples;
}

struct Shape {
    std::uint32_t ranks;
    std::uint64_t transfer;
    std::uint64_t segments;
};

struct ShapeResult {
    sim::SimStats stats;
    std::uint64_t filePages = 0;
    std::uint64_t readaheadPages = 0; // the counter
    std::uint64_t misses = 0;         // the counter
    std::uint64_t discarded = 0;      // the counter
    double hitRatio = 0;              // hits / (hits + misses), as the bench reports it
    std::uint64_t rpcPages = 0;       // pages the plans named (fetched or skipped)
    std::uint64_t rpcs = 0;           // ranges the plans gave (one bulk RPC each)
};

// A stride gap this small is read with the chunks (readahead.cpp's kFilledGapBytes): one RPC
// costs about what moving 16 pages does.
constexpr std::uint64_t kFilledGapBytes = 16 * kPageSize;
// Pages per RPC at least, where the gaps are read: before, 3 to 8 ranks x 4097 B sent one
// 2-page RPC per chunk (ior-hard 3 ranks: 119-164 MB/s against ~1000 for 2 ranks).
constexpr std::uint64_t kMinPagesPerRpc = 16;

// With room for a whole window, wider gaps too when they are the other ranks' chunks and a chunk
// is at most 4 pages (readahead.cpp's kRanksFilledChunkPages: 8 ranks x 12287 B sent one 3-page
// RPC per chunk, 0.46 of a sequential read).
constexpr std::uint64_t kRanksFilledChunkBytes = 4 * kPageSize;

bool gapsFilled(const Shape &shape, bool roomForWindows)
{
    return (shape.ranks - 1) * shape.transfer <= kFilledGapBytes ||
           (roomForWindows && shape.ranks > 1 && shape.transfer <= kRanksFilledChunkBytes);
}

// Enough transfers per rank that the first reads (before the stride is trusted: 4 per rank)
// weigh at most 4 %, and about 32 MiB of file where that allows (a quarter of it is the cache
// of the pressured run).
std::uint64_t segmentsFor(std::uint32_t ranks, std::uint64_t transfer)
{
    const std::uint64_t forSize = (32 * kMiB + ranks * transfer - 1) / (ranks * transfer);
    return std::clamp<std::uint64_t>(forSize, 100, 4000);
}

// Where the client's RPCs are cut anyway (ReadInfo::rpcBoundaryPages): a row of the bench's two
// 1 MiB stripes. Windows the room cuts end there.
constexpr std::uint64_t kRowPages = 2 * kMiB / kPageSize;

// The client's defaults (max_read_ahead_mb 64, per file 64, whole 2), pressure-aware.
ReadaheadMount::Config clientDefaults()
{
    return {};
}

// IOR-hard's read: rank r's k-th transfer at (k * ranks + r) * transfer, ranks in turn, each
// rank reading `turn` transfers per turn (1: lockstep; more: ranks out of step, as threads that
// run through a time slice on 2 cores are).
ShapeResult play(const Shape &shape, bool pressured, std::uint64_t turn = 1)
{
    const std::uint64_t fileSize = shape.ranks * shape.segments * shape.transfer;
    const std::uint64_t filePages = (fileSize + kPageSize - 1) / kPageSize;
    ReadaheadMount mount(clientDefaults());
    sim::Simulator sim(mount, pressured ? filePages / 4 : 0, 1024, 0, kRowPages);
    std::vector<std::size_t> readers;
    for (std::uint32_t r = 0; r < shape.ranks; ++r) {
        readers.push_back(sim.addReader(1, fileSize));
    }
    std::uint64_t rpcPages = 0;
    std::uint64_t rpcs = 0;
    for (std::uint64_t from = 0; from < shape.segments; from += turn) {
        for (std::uint32_t r = 0; r < shape.ranks; ++r) {
            for (std::uint64_t k = from; k < std::min(from + turn, shape.segments); ++k) {
                for (const PageRange &range :
                     sim.read(readers[r], (k * shape.ranks + r) * shape.transfer, shape.transfer)) {
                    rpcPages += range.count;
                    ++rpcs;
                }
            }
        }
    }
    ShapeResult result;
    result.rpcPages = rpcPages;
    result.rpcs = rpcs;
    result.stats = sim.stats();
    result.filePages = filePages;
    result.readaheadPages = counter(mount, ra_readahead_pages);
    result.misses = counter(mount, ra_misses);
    result.discarded = counter(mount, ra_read_but_discarded);
    const double hits = static_cast<double>(counter(mount, ra_hits));
    result.hitRatio = hits / (hits + static_cast<double>(result.misses));
    return result;
}

void addShapes()
{
    QTest::addColumn<std::uint32_t>("ranks");
    QTest::addColumn<std::uint64_t>("transfer");
    const std::uint64_t transfers[] = {kPageSize + 1, 3 * kPageSize - 1, 47008, kMiB + 1,
                                       3 * kMiB + 5};
    for (std::uint32_t ranks = 1; ranks <= 8; ++ranks) {
        for (const std::uint64_t transfer : transfers) {
            // The MiB shapes take long in the model (8 ranks x 3 MiB: 600,000 pages, 8 s under
            // ASan): 1 MiB + 1 for one, three and eight ranks, 3 MiB + 5 for one and three.
            if (transfer > kMiB && ranks != 1 && ranks != 3 &&
                (ranks != 8 || transfer > 2 * kMiB)) {
                continue;
            }
            const std::string name =
                std::to_string(ranks) + " ranks, " + std::to_string(transfer) + " B";
            QTest::newRow(name.c_str()) << ranks << transfer;
        }
    }
}

double pagesPerRpc(const ShapeResult &result)
{
    return result.rpcs == 0 ? 0.0 : static_cast<double>(result.rpcPages) / result.rpcs;
}

void print(const char *what, const ShapeResult &result)
{
    std::printf("%-34s hit %.4f, file %llu pages, read ahead %llu, misses %llu, discarded %llu, "
                "%.1f pages per RPC\n",
                what, result.hitRatio, static_cast<unsigned long long>(result.filePages),
                static_cast<unsigned long long>(result.readaheadPages),
                static_cast<unsigned long long>(result.misses),
                static_cast<unsigned long long>(result.discarded), pagesPerRpc(result));
}

// Where the gaps are read, RPCs are not a chunk each.
void checkRpcSize(const Shape &shape, const ShapeResult &result, bool roomForWindows)
{
    if (gapsFilled(shape, roomForWindows)) {
        QVERIFY2(result.rpcPages >= kMinPagesPerRpc * result.rpcs,
                 QByteArray::number(pagesPerRpc(result)));
    }
}

} // namespace

class TestReadaheadShapes : public QObject {
    Q_OBJECT

private slots:
    void everyPageCached_data() { addShapes(); }
    void everyPageCached()
    {
        QFETCH(std::uint32_t, ranks);
        QFETCH(std::uint64_t, transfer);
        const Shape shape{ranks, transfer, segmentsFor(ranks, transfer)};
        const ShapeResult result = play(shape, false);
        print(QTest::currentDataTag(), result);
        QVERIFY2(result.hitRatio >= 0.95, QByteArray::number(result.hitRatio));
        // Nothing fetched twice: what came from the targets fits in the file, and the counter
        // says what the readahead really fetched.
        QVERIFY(result.readaheadPages + result.misses <= result.filePages);
        QCOMPARE(result.readaheadPages, result.stats.readaheadInserted);
        QCOMPARE(result.discarded, 0u);
        checkRpcSize(shape, result, true);
    }

    void quarterOfTheFileCached_data() { addShapes(); }
    void quarterOfTheFileCached()
    {
        QFETCH(std::uint32_t, ranks);
        QFETCH(std::uint64_t, transfer);
        const Shape shape{ranks, transfer, segmentsFor(ranks, transfer)};
        const ShapeResult result = play(shape, true);
        print(QTest::currentDataTag(), result);
        QVERIFY2(result.hitRatio >= 0.9, QByteArray::number(result.hitRatio));
        QVERIFY2(result.discarded * 100 <= result.readaheadPages,
                 QByteArray::number(static_cast<qulonglong>(result.discarded)));
        // A page fetched again was discarded first.
        QVERIFY(result.readaheadPages + result.misses <= result.filePages + result.discarded);
        checkRpcSize(shape, result, false);
    }

    // Ranks out of step (64 transfers per turn) with a quarter of the file cached, for the
    // page-sized transfers whose gaps are read: before, 8 ranks x 12287 B discarded 8 % (the
    // feedback shrank windows to 4 pages) and 3-8 ranks x 4097 B sent 2-page RPCs. Wider
    // transfers out of step are in the README's "Not done yet" (3-8 ranks x 47008 B: 8-14 %).
    void quarterCachedRanksOutOfStep_data()
    {
        QTest::addColumn<std::uint32_t>("ranks");
        QTest::addColumn<std::uint64_t>("transfer");
        for (std::uint32_t ranks = 1; ranks <= 8; ++ranks) {
            for (const std::uint64_t transfer : {kPageSize + 1, 3 * kPageSize - 1}) {
                const std::string name =
                    std::to_string(ranks) + " ranks, " + std::to_string(transfer) + " B";
                QTest::newRow(name.c_str()) << ranks << transfer;
            }
        }
    }
    void quarterCachedRanksOutOfStep()
    {
        QFETCH(std::uint32_t, ranks);
        QFETCH(std::uint64_t, transfer);
        const Shape shape{ranks, transfer, segmentsFor(ranks, transfer)};
        const ShapeResult result = play(shape, true, 64);
        print(QTest::currentDataTag(), result);
        QVERIFY2(result.hitRatio >= 0.95, QByteArray::number(result.hitRatio));
        QVERIFY2(result.discarded * 100 <= result.readaheadPages,
                 QByteArray::number(static_cast<qulonglong>(result.discarded)));
        QVERIFY(result.readaheadPages + result.misses <= result.filePages + result.discarded);
        checkRpcSize(shape, result, false);
    }
};

QTEST_GUILESS_MAIN(TestReadaheadShapes)
#include "test_readahead_shapes.moc"
