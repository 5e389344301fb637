// The readahead engine's decisions, exactly: window sizes and positions for sequential reads,
// the marker page, random reads, byte-stride detection (IOR-hard's 47008-byte transfers), whole-
// file readahead, EOF, the mount budget, RPC splitting, the counters each decision moves, the
// parameter binding, and no allocation per read.
#include "allocation_counter.h"
#include "core/params/registry.h"
#include "core/readahead/readahead.h"
#include "core/readahead/simulator.h"

#include <QTest>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

using namespace lutra;
using namespace lutra::readahead;
using namespace lutra::params::catalog;

namespace {

// These tests check readahead's decision on every read, so the model tells it of every read
// (the engine's visibility is in test_readahead_shapes and test_readahead_pipeline).
constexpr auto kEveryRead = sim::Simulator::Visibility::everyRead;

constexpr std::uint64_t kMiB = 1 << 20;
constexpr std::uint64_t kGiB = 1 << 30;
constexpr std::uint64_t kTransfer = 47008; // IOR-hard

struct Window {
    PageIndex first;
    std::uint64_t pages;
    bool async;
    friend bool operator==(const Window &, const Window &) = default;
};

std::uint64_t counter(const ReadaheadMount &mount, ReadAheadStat stat)
{
    return mount.stats().snapshot().counters[stat].samples;
}

std::vector<PageRange> drain(ReadaheadPlan plan)
{
    std::vector<PageRange> ranges;
    while (auto range = plan.next()) {
        ranges.push_back(*range);
    }
    return ranges;
}

std::uint64_t pagesOf(const std::vector<PageRange> &ranges)
{
    std::uint64_t pages = 0;
    for (const auto &range : ranges) {
        pages += range.count;
    }
    return pages;
}

// The plan's pages as one span (sequential plans are one contiguous span).
Window asWindow(const std::vector<PageRange> &ranges, bool async)
{
    return {ranges.front().first, pagesOf(ranges), async};
}

ReadaheadMount::Config config(std::uint64_t maxMb, std::uint64_t perFileMb, std::uint64_t wholeMb)
{
    ReadaheadMount::Config c;
    c.maxReadAheadMb = maxMb;
    c.maxReadAheadPerFileMb = perFileMb;
    c.maxReadAheadWholeMb = wholeMb;
    return c;
}

// 2 ranks x 12287 B, rank 0's view, with RPC boundaries every `boundary` pages (see
// aRanksSpanHeldByTheRoomEndsAtAnRpcBoundary): reads up to the stride's trust.
struct RankView {
    static constexpr std::uint64_t kChunk = 12287;
    static constexpr std::uint64_t kStride = 2 * kChunk;
    ReadaheadMount mount{config(64, 64, 0)};
    FileReadahead ra{mount};
    ReadInfo read;
    std::uint64_t k = 0;

    explicit RankView(std::uint64_t boundary = 64)
    {
        read.length = kChunk;
        read.fileSize = kGiB;
        read.fileOpens = 2;
        read.otherReaders = true;
        read.rpcBoundaryPages = boundary;
        for (; k < 3; ++k) {
            read.offset = k * kStride;
            (void)ra.onRead(read);
        }
    }
    // The rank's next read that touches the marker, with that room and readahead unread.
    ReadaheadPlan readAtTheMarker(std::uint64_t room, std::uint64_t unread)
    {
        while ((k * kStride + kChunk - 1) / kPageSize < ra.marker()) {
            ++k;
        }
        read.offset = k * kStride;
        read.cacheRoom = room;
        read.unreadPages = unread;
        ++k;
        return ra.onRead(read);
    }
};

} // namespace

class TestReadahead : public QObject {
    Q_OBJECT

private slots:
    void markerReadsAloneKeepAStreamGoing()
    {
        // The client's fast path serves cached reads without telling the engine; only reads
        // that touch the marker arrive. They must continue the stream, not look random.
        ReadaheadMount mount;
        FileReadahead file(mount);
        ReadInfo info;
        info.fileSize = std::uint64_t{256} << 20;
        info.length = 1 << 20;
        info.maxPagesPerRpc = 1024;
        auto plan = file.onRead(info);
        QVERIFY(!plan.empty());
        mount.release(plan.pages());
        std::uint64_t lastWindow = file.windowPages();
        for (int i = 0; i < 5; ++i) {
            QVERIFY(file.marker() != FileReadahead::kNoMarker);
            info.offset = file.marker() * kPageSize; // a gap after the previous arrival
            auto next = file.onRead(info);
            QVERIFY(next.async());
            QVERIFY(file.windowPages() >= lastWindow); // growing, never reset
            lastWindow = file.windowPages();
            mount.release(next.pages());
        }
        QCOMPARE(counter(mount, ra_readpage_not_consecutive), 0u);
        QCOMPARE(counter(mount, ra_async_readahead), 5u);
    }

    void windowSizes()
    {
        // Linux's get_init_ra_size / get_next_ra_size with a 64 MiB (16384-page) limit.
        QCOMPARE(initialWindow(1, 16384), 4u);
        QCOMPARE(initialWindow(3, 16384), 16u); // rounded up to 4, then x4
        QCOMPARE(initialWindow(256, 16384), 1024u);
        QCOMPARE(initialWindow(1024, 16384), 2048u);
        QCOMPARE(initialWindow(8192, 16384), 16384u);
        QCOMPARE(initialWindow(1, 0), 0u);
        QCOMPARE(nextWindow(4, 16384), 16u);
        QCOMPARE(nextWindow(256, 16384), 1024u);
        QCOMPARE(nextWindow(1024, 16384), 2048u);
        QCOMPARE(nextWindow(8192, 16384), 16384u);
        QCOMPARE(nextWindow(16384, 16384), 16384u);
    }

    void sequential4k()
    {
        ReadaheadMount mount(config(1024, 64, 2));
        sim::Simulator sim(mount, 0, 1024, 0, 0, kEveryRead);
        const auto reader = sim.addReader(1, kGiB);
        std::vector<Window> windows;
        std::vector<std::uint64_t> triggers;
        for (PageIndex page = 0; page < 32768; ++page) {
            const bool marker = sim.readahead(reader).marker() == page;
            const auto &ranges = sim.read(reader, page * kPageSize, kPageSize);
            if (!ranges.empty()) {
                windows.push_back(asWindow(ranges, marker));
                triggers.push_back(page);
            }
        }
        // x4 while below 1/16 of the limit, then x2, then the 16384-page per-file limit. Each
        // window is issued when the reader touches the first page of the one before.
        const std::vector<Window> expected{
            {1, 4, false},        {5, 16, true},        {21, 64, true},       {85, 256, true},
            {341, 1024, true},    {1365, 2048, true},   {3413, 4096, true},   {7509, 8192, true},
            {15701, 16384, true}, {32085, 16384, true}, {48469, 16384, true},
        };
        QCOMPARE(windows, expected);
        QCOMPARE(triggers, (std::vector<std::uint64_t>{0, 1, 5, 21, 85, 341, 1365, 3413, 7509,
                                                       15701, 32085}));
        QCOMPARE(counter(mount, ra_hits), 32767u);
        QCOMPARE(counter(mount, ra_misses), 1u);
        QCOMPARE(counter(mount, ra_async_readahead), 10u);
        QCOMPARE(counter(mount, ra_readahead_pages), 64852u);
        QCOMPARE(counter(mount, ra_readpage_not_consecutive), 0u);
        QCOMPARE(counter(mount, ra_hit_max_readahead_issue), 0u);
        QCOMPARE(counter(mount, ra_failed_to_reach_end), 0u);
        // In flight or unused: what was read ahead beyond page 32767.
        QCOMPARE(mount.pagesInUse(), 64853u - 32768u);
        QCOMPARE(sim.cache().unusedReadahead(), mount.pagesInUse());
    }

    void sequential1MiBCappedPerFile()
    {
        ReadaheadMount mount(config(1024, 8, 2)); // 2048 pages per file
        sim::Simulator sim(mount, 0, 256, 0, 0, kEveryRead);
        const auto reader = sim.addReader(1, kGiB);
        std::vector<Window> windows;
        std::vector<int> triggers;
        for (int i = 0; i < 32; ++i) {
            const auto &ranges = sim.read(reader, i * kMiB, kMiB);
            if (!ranges.empty()) {
                QCOMPARE(ranges.size(),
                         std::size_t(ranges.back().end() - ranges.front().first) / 256);
                windows.push_back(asWindow(ranges, i != 0));
                triggers.push_back(i);
            }
        }
        const std::vector<Window> expected{
            {256, 512, false},  {768, 1024, true},  {1792, 2048, true}, {3840, 2048, true},
            {5888, 2048, true}, {7936, 2048, true}, {9984, 2048, true},
        };
        QCOMPARE(windows, expected);
        QCOMPARE(triggers, (std::vector<int>{0, 1, 3, 7, 15, 23, 31}));
        QCOMPARE(counter(mount, ra_hits), 7936u);
        QCOMPARE(counter(mount, ra_misses), 256u);
        QCOMPARE(counter(mount, ra_async_readahead), 6u);
        QCOMPARE(counter(mount, ra_readahead_pages), 11776u);
        QCOMPARE(sim.stats().rpcs, 11776u / 256);
    }

    void randomReadsReadNothingAhead()
    {
        ReadaheadMount mount(config(64, 64, 2));
        sim::Simulator sim(mount, 0, 1024, 0, 0, kEveryRead);
        const auto reader = sim.addReader(1, kGiB);
        for (const PageIndex page : {7, 100, 3, 50, 1000, 20}) {
            QVERIFY(sim.read(reader, page * kPageSize, kPageSize).empty());
        }
        QCOMPARE(counter(mount, ra_misses), 6u);
        QCOMPARE(counter(mount, ra_readpage_not_consecutive), 6u);
        QCOMPARE(counter(mount, ra_hits), 0u);
        QCOMPARE(counter(mount, ra_readahead_pages), 0u);
        QCOMPARE(mount.pagesInUse(), 0u);
        QVERIFY(!sim.readahead(reader).strideTrusted());
    }

    void strideFirstWindowExact()
    {
        // IOR-hard with 4 ranks, rank 0: offsets k * 4 * 47008.
        ReadaheadMount mount(config(1024, 64, 2));
        FileReadahead ra(mount);
        const std::uint64_t stride = 4 * kTransfer;
        ReadInfo read;
        read.length = kTransfer;
        read.fileSize = kGiB;
        read.maxPagesPerRpc = 8;
        for (std::uint64_t k = 0; k < 2; ++k) {
            read.offset = k * stride;
            const auto ranges = drain(ra.onRead(read));
            // Only the offset-0 read looks sequential (Linux's initial readahead at index 0).
            QCOMPARE(ranges.empty(), k != 0);
            QVERIFY(!ra.strideTrusted());
        }
        read.offset = 2 * stride; // the second equal stride
        const auto ranges = drain(ra.onRead(read));
        QVERIFY(ra.strideTrusted());
        QCOMPARE(ra.strideBytes(), stride);
        // Chunks 3..7 (the initial 64-page window holds 5 whole chunks), not the gaps, split at
        // multiples of 8 pages.
        const std::vector<PageRange> expected{
            {137, 7}, {144, 6},           // chunk 3: [137, 150)
            {183, 1}, {184, 8}, {192, 4}, // chunk 4: [183, 196)
            {229, 3}, {232, 8}, {240, 2}, // chunk 5: [229, 242)
            {275, 5}, {280, 7},           // chunk 6: [275, 287)
            {321, 7}, {328, 5},           // chunk 7: [321, 333)
        };
        QCOMPARE(ranges, expected);
        QCOMPARE(ra.windowPages(), 63u);
        QCOMPARE(ra.marker(), 137u);
        QCOMPARE(counter(mount, ra_readpage_not_consecutive), 2u);

        // Chunk 3 holds the marker: the next window (x4: 252 pages of whole chunks) goes out
        // asynchronously, starting at chunk 8.
        read.offset = 3 * stride;
        auto plan = ra.onRead(read);
        QVERIFY(plan.async());
        QVERIFY(plan.pages() <= 252u && plan.pages() > 252u - 13);
        QCOMPARE(plan.next()->first, (8 * stride) >> kPageShift);
        QCOMPARE(counter(mount, ra_async_readahead), 1u);
        // Chunks 4..7 were read ahead already: nothing new.
        for (std::uint64_t k = 4; k < 8; ++k) {
            read.offset = k * stride;
            QVERIFY(ra.onRead(read).empty());
        }
    }

    // An asynchronous window the budget cannot grant (other files' readahead in flight) is asked
    // for again at the next page, not given up until the reader overtakes the readahead.
    void asyncWindowRetriedWhenTheBudgetComesBack()
    {
        ReadaheadMount mount(config(1, 1, 0)); // 256 pages for the whole mount
        FileReadahead ra(mount);
        ReadInfo read;
        read.length = kPageSize;
        read.fileSize = kGiB;
        read.missingPages = 1;
        QCOMPARE(ra.onRead(read).pages(), 4u); // pages 1-4, marker 1
        QCOMPARE(ra.marker(), PageIndex{1});
        QCOMPARE(mount.reserve(252), 252u); // the rest is elsewhere
        read.missingPages = 0;
        read.offset = kPageSize;
        QVERIFY(ra.onRead(read).empty()); // the marker: nothing granted
        QCOMPARE(ra.marker(), PageIndex{2});
        mount.release(252);
        read.offset = 2 * kPageSize;
        auto plan = ra.onRead(read);
        QVERIFY(plan.async());
        QCOMPARE(plan.pages(), 16u);
        QCOMPARE(plan.next()->first, PageIndex{5});
        QCOMPARE(counter(mount, ra_misses), 1u);
    }

    void wholeFileOnFirstRead()
    {
        ReadaheadMount mount(config(64, 64, 2));
        FileReadahead ra(mount);
        ReadInfo read;
        read.offset = 2 * kPageSize;
        read.length = kPageSize;
        read.fileSize = kMiB + 100; // 257 pages
        read.maxPagesPerRpc = 256;
        read.missingPages = 1;
        auto plan = ra.onRead(read);
        QCOMPARE(plan.pages(), 256u);
        const auto ranges = drain(plan);
        // After the read first, then before it; split at multiples of 256 pages.
        QCOMPARE(ranges, (std::vector<PageRange>{{3, 253}, {256, 1}, {0, 2}}));
        // readahead_pages counts what the caller fetches (onFetched), not what was planned.
        QCOMPARE(counter(mount, ra_readahead_pages), 0u);
        mount.onFetched(256);
        QCOMPARE(counter(mount, ra_readahead_pages), 256u);
        QCOMPARE(counter(mount, ra_readahead_to_eof), 1u);
        QCOMPARE(counter(mount, ra_readpage_not_consecutive), 1u);
        QCOMPARE(counter(mount, ra_misses), 1u);
        // Everything is read ahead: the rest of the file asks for nothing.
        read.missingPages = 0;
        read.readaheadHits = 1;
        for (PageIndex page = 3; page < 257; ++page) {
            read.offset = page * kPageSize;
            QVERIFY(ra.onRead(read).empty());
        }
        QCOMPARE(counter(mount, ra_hits), 254u);
        QCOMPARE(mount.pagesInUse(), 2u);
    }

    void endOfFile()
    {
        ReadaheadMount mount(config(64, 64, 0)); // no whole-file readahead
        sim::Simulator sim(mount, 0, 1024, 0, 0, kEveryRead);
        const auto empty = sim.addReader(1, 0);
        QVERIFY(sim.read(empty, 0, kPageSize).empty());
        QVERIFY(sim.read(empty, kPageSize, kPageSize).empty());
        QCOMPARE(counter(mount, ra_zero_length_file), 2u);

        const auto reader = sim.addReader(2, 10 * kPageSize);
        std::vector<Window> windows;
        for (PageIndex page = 0; page < 11; ++page) { // the last read is past EOF
            const auto &ranges = sim.read(reader, page * kPageSize, kPageSize);
            if (!ranges.empty()) {
                windows.push_back(asWindow(ranges, page != 0));
            }
        }
        // The second window is cut at EOF and leaves no marker.
        QCOMPARE(windows, (std::vector<Window>{{1, 4, false}, {5, 5, true}}));
        QCOMPARE(counter(mount, ra_readahead_to_eof), 1u);
        QCOMPARE(counter(mount, ra_zero_size_window), 1u); // the read past EOF
        QCOMPARE(counter(mount, ra_readahead_pages), 9u);
        QCOMPARE(counter(mount, ra_hits), 9u);
        QCOMPARE(counter(mount, ra_misses), 1u);
        QCOMPARE(counter(mount, ra_async_readahead), 1u);
        QCOMPARE(mount.pagesInUse(), 0u);
    }

    void budgetSharedByFiles()
    {
        ReadaheadMount mount(config(1, 1, 0)); // 256 pages for the whole mount
        FileReadahead a(mount);
        FileReadahead b(mount);
        ReadInfo read;
        read.length = kMiB;
        read.fileSize = kGiB;
        read.missingPages = 256;
        QCOMPARE(a.onRead(read).pages(), 256u);
        QCOMPARE(b.onRead(read).pages(), 0u); // budget gone
        QCOMPARE(counter(mount, ra_hit_max_readahead_issue), 1u);
        QCOMPARE(counter(mount, ra_failed_to_reach_end), 1u);

        // a reads what it read ahead: the budget comes back and a's next window takes it.
        read.offset = kMiB;
        read.missingPages = 0;
        read.readaheadHits = 256;
        auto plan = a.onRead(read);
        QVERIFY(plan.async());
        QCOMPARE(plan.pages(), 256u);
        // b falls behind its (empty) window and asks synchronously: still nothing left.
        read.readaheadHits = 0;
        read.missingPages = 256;
        QCOMPARE(b.onRead(read).pages(), 0u);
        QCOMPARE(counter(mount, ra_hit_max_readahead_issue), 2u);
        QCOMPARE(counter(mount, ra_failed_to_reach_end), 2u);
        QCOMPARE(counter(mount, ra_readahead_pages), 0u); // nothing fetched (no onFetched)
        QCOMPARE(mount.pagesInUse(), 256u);

        // Discards and failed grabs give the budget back too.
        mount.onDiscarded(200);
        mount.onFailedGrab(56);
        QCOMPARE(mount.pagesInUse(), 0u);
        QCOMPARE(counter(mount, ra_read_but_discarded), 200u);
        QCOMPARE(counter(mount, ra_failed_grab_cache_page), 56u);
        QCOMPARE(mount.pressureEvents(), 256u);
        mount.onFastReadFailed();
        QCOMPARE(counter(mount, ra_failed_to_fast_read), 1u);
    }

    void rpcSplitting()
    {
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead ra(mount);
        ReadInfo read;
        read.length = kMiB;
        read.fileSize = kGiB;
        read.maxPagesPerRpc = 100;
        const auto ranges = drain(ra.onRead(read)); // window [256, 1280)
        QCOMPARE(ranges.size(), 11u);
        QCOMPARE(ranges.front(), (PageRange{256, 44}));
        QCOMPARE(ranges[1], (PageRange{300, 100}));
        QCOMPARE(ranges.back(), (PageRange{1200, 80}));
        PageIndex next = 256;
        for (const auto &range : ranges) {
            QCOMPARE(range.first, next);
            QVERIFY(range.count <= 100);
            next = range.end();
        }
        QCOMPARE(next, 1280u);
    }

    void missInsideWindow()
    {
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead ra(mount);
        ReadInfo read;
        read.length = kPageSize;
        read.fileSize = kGiB;
        read.missingPages = 1;
        QCOMPARE(ra.onRead(read).pages(), 4u); // [1, 5)
        // Page 1 was read ahead but is not cached (discarded or still in flight).
        read.offset = kPageSize;
        QCOMPARE(ra.onRead(read).pages(), 16u);
        QCOMPARE(counter(mount, ra_misses), 2u);
        QCOMPARE(counter(mount, ra_miss_inside_window), 1u);
    }

    void pressureClampsWindow()
    {
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead ra(mount);
        ReadInfo read;
        read.length = kMiB;
        read.fileSize = kGiB;
        read.cacheRoom = 400; // one window may take a quarter of the room
        QCOMPARE(ra.onRead(read).pages(), 100u);
        QCOMPARE(counter(mount, ra_failed_to_reach_end), 1u);
        read.offset = kMiB;
        read.cacheRoom = 3; // nothing fits
        QVERIFY(ra.onRead(read).empty());
        QCOMPARE(counter(mount, ra_zero_size_window), 1u);
        QCOMPARE(counter(mount, ra_failed_to_reach_end), 2u);

        // Discards halve the window a file may issue.
        ReadaheadMount aware(config(64, 64, 0));
        FileReadahead f(aware);
        read.offset = 0;
        read.cacheRoom = ReadInfo::kRoomUnknown;
        QCOMPARE(f.onRead(read).pages(), 1024u);
        aware.onDiscarded(10);
        read.offset = kMiB; // marker: wants 2048
        QCOMPARE(f.onRead(read).pages(), 512u);
        QCOMPARE(f.pressureCap(), 640u); // 512 issued, then grown back by a quarter
    }

    void aLoneSequentialStreamTakesMostOfTheRoom()
    {
        // The only readahead unread on the mount is this stream's own. The file's only reader
        // takes 7/8 of room + unread (with half, 1 rank x 4097 B under pressure read at 0.64-0.79
        // of unpressured); with other readers of the file (ranks sharing it) half, as before (a
        // quarter gave nothing here, and 1 rank x 4097 B under pressure windows of 88 pages).
        // Either share leaves two of the stream's reads outside it.
        for (const bool others : {false, true}) {
            ReadaheadMount mount(config(64, 64, 0));
            FileReadahead f(mount);
            ReadInfo read;
            read.length = kMiB;
            read.fileSize = kGiB;
            read.otherReaders = others;
            QCOMPARE(f.onRead(read).pages(), 1024u); // pages 256..1279, marker 256
            read.offset = kMiB;                      // the marker; 768 pages ahead of this read
            read.cacheRoom = 1500;
            read.unreadPages = 1024;
            // 7/8 of 2524 is 2208 pages, but two 256-page reads stay outside the share: 2012.
            const std::uint64_t share = others ? (1500u + 1024u) / 2 : 1500u + 1024u - 2 * 256;
            QCOMPARE(f.onRead(read).pages(), share - 1024u);
        }
        {
            // Large reads: two of them stay outside the share (1 rank x 3 MiB + 5 B with an 18 MB
            // cache discarded 26 % of its readahead with an eighth, 576 pages, left beside it).
            ReadaheadMount mount(config(64, 64, 0));
            FileReadahead f(mount);
            ReadInfo read;
            read.length = 3 * kMiB; // 768 pages
            read.fileSize = kGiB;
            QCOMPARE(f.onRead(read).pages(), 2048u); // pages 768..2815, marker 768
            read.offset = 3 * kMiB;                  // the marker
            read.cacheRoom = 4608 - 2048;
            read.unreadPages = 2048;
            QCOMPARE(f.onRead(read).pages(), 4608u - 2 * 768 - 2048);
        }
        ReadInfo read;
        read.length = kMiB;
        read.fileSize = kGiB;

        // Another stream's readahead is unread too: a quarter, nothing left.
        ReadaheadMount shared(config(64, 64, 0));
        FileReadahead g(shared);
        read.offset = 0;
        read.cacheRoom = ReadInfo::kRoomUnknown;
        read.unreadPages = ReadInfo::kRoomUnknown;
        QCOMPARE(g.onRead(read).pages(), 1024u);
        read.offset = kMiB;
        read.cacheRoom = 3000;
        read.unreadPages = 2048;
        QVERIFY(g.onRead(read).empty());
    }

    void aWindowHeldByTheRoomEndsAtAnRpcBoundary()
    {
        // 1 MiB stripes (256 pages): a window the room cuts short ends at a stripe's end, so it
        // goes in whole RPCs, and the marker sits where the reader has freed room for the next
        // whole one. Room short of the next boundary, with enough ahead: nothing now, ask again
        // later (not a piece of an RPC).
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead f(mount);
        ReadInfo read;
        read.length = kMiB;
        read.fileSize = kGiB;
        read.rpcBoundaryPages = 256;
        QCOMPARE(f.onRead(read).pages(), 1024u); // pages 256..1279: no room signal, no cut
        read.offset = kMiB;                      // the marker
        read.cacheRoom = 1500;
        read.unreadPages = 1024;
        // The room allows 1500 + 1024 - 2 * 256 - 1024 = 988 pages (7/8 less two reads):
        // 1280..2268, cut at 2048.
        auto plan = f.onRead(read);
        QCOMPARE(plan.pages(), 768u);
        QCOMPARE(plan.next()->first, 1280u);
        QCOMPARE(f.readaheadEnd(), 2048u);
        // 220 pages of room left: the next stripe needs 36 more, read from page 512 on.
        QCOMPARE(f.marker(), 512u + 36u);
        const std::uint64_t inUse = mount.pagesInUse();

        read.offset = 548 * kPageSize; // at the marker
        read.length = kPageSize;
        read.unreadPages = 2048 - 549; // its own, ahead of the read
        read.cacheRoom = 500;          // (500 + 1499) / 8 * 7 - 1499 = 244 pages: short of 2304
        QVERIFY(f.onRead(read).empty());
        QCOMPARE(mount.pagesInUse(), inUse); // nothing reserved
        QCOMPARE(f.marker(), 549u + (2304u - 2048u - 244u));
        QCOMPARE(f.readaheadEnd(), 2048u);
    }

    void aReadThatMissesFetchesAWindowPastTheRoom()
    {
        // A rank ahead of the file's other ranks: their unread pages hold the room, so its
        // marker reads get nothing and it runs past its readahead. The read that misses waits
        // for an RPC anyway: it fetches the window it wants past the room, up to 64 pages
        // (kMissWindowPages), not only its own 2 (pressure 2 ranks x 4097 B: one synchronous
        // 2-page RPC per transfer before).
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead f(mount);
        ReadInfo read;
        read.length = 4097;
        read.fileSize = kGiB;
        read.otherReaders = true;
        read.missingPages = 2;
        QCOMPARE(f.onRead(read).pages(), 8u); // pages 2..9, no room signal yet
        read.cacheRoom = 100;
        read.unreadPages = 3740; // held 3840: a quarter or a half is all unread already
        std::uint64_t k = 1;
        for (;; ++k) {
            read.offset = k * 4097;
            const PageIndex end = (read.offset + read.length - 1) / kPageSize + 1;
            read.missingPages = end > f.readaheadEnd() ? end - f.readaheadEnd() : 0;
            const auto plan = f.onRead(read);
            if (read.missingPages != 0) {
                QCOMPARE(plan.pages(), 32u); // nextWindow(8): before, nothing
                auto range = plan;
                QCOMPARE(range.next()->first, end);
                break;
            }
            QVERIFY(plan.empty()); // at the marker: nothing
        }
        QCOMPARE(k, 9u); // pages 9 and 10: page 10 is past the window
        // At most a sixteenth of what the cache holds for readahead: 64 / 16.
        FileReadahead g(mount);
        read.offset = 0;
        read.missingPages = 2;
        read.cacheRoom = 0;
        read.unreadPages = 64;
        QCOMPARE(g.onRead(read).pages(), 4u);
        // A read that misses nothing gets nothing past the room.
        read.offset = 4097;
        read.missingPages = 0;
        QVERIFY(g.onRead(read).empty());
    }

    void discardsShrinkNoFurtherThanAnRpcsWorth()
    {
        // 4097-byte reads touch 2 pages: the floor was 2 reads' worth, 4 pages, and 8 ranks'
        // windows under pressure went down to 2.5 pages (one RPC each, 0.15 of unpressured).
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead f(mount);
        ReadInfo read;
        read.length = 4097;
        read.fileSize = kGiB;
        for (std::uint64_t k = 0; k < 64; ++k) {
            mount.onDiscarded(1);
            read.offset = k * 4097;
            (void)f.onRead(read);
            QVERIFY2(f.pressureCap() >= 16, QByteArray::number(f.pressureCap()));
        }
        QCOMPARE(f.pressureCap(), 16u); // halved on every read, down to the floor
    }

    void smallStrideGapsAreReadWithTheChunks()
    {
        // 3 ranks x 4097 B: rank 0 reads 4097 bytes every 12291; the 2-page gaps are read too,
        // one span (one RPC) instead of one 2-page RPC per chunk.
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead ra(mount);
        ReadInfo read;
        read.length = 4097;
        read.fileSize = kGiB;
        ReadaheadPlan plan;
        for (std::uint64_t k = 1; k <= 3; ++k) { // the 3rd read trusts the stride
            read.offset = k * 12291;
            plan = ra.onRead(read);
        }
        QVERIFY(ra.strideTrusted());
        const auto ranges = drain(plan);
        QCOMPARE(ranges.size(), 1u);
        QCOMPARE(ranges[0].first, (4 * 12291) >> kPageShift);
        QCOMPARE(ranges[0].count, plan.pages());
        QVERIFY(plan.pages() >= 8);

        // IOR-hard's 4 x 47008 B: 34-page gaps stay unread.
        FileReadahead wide(mount);
        for (std::uint64_t k = 1; k <= 3; ++k) {
            read.offset = k * 4 * kTransfer;
            read.length = kTransfer;
            plan = wide.onRead(read);
        }
        QVERIFY(wide.strideTrusted());
        for (const auto &range : drain(plan)) {
            QVERIFY(range.count <= 13); // one chunk's pages at most
        }
    }

    void gapsOfOtherRanksSmallChunksAreReadWhenTheRoomTakesTheWindow()
    {
        // 8 ranks x 12287 B, rank 1's view: 3-page chunks, 21-page gaps. The gaps are the other
        // ranks' chunks (the file's 8 opens read in a stride of 8 transfers), so with room for
        // the whole window it is one span; with room for part of it, whole chunks only (under
        // pressure each rank fetches its own); and a reader without other opens never reads them.
        constexpr std::uint64_t kChunk = 12287;
        constexpr std::uint64_t kRanks = 8;
        // The plan of the fourth window, each asked for at the marker with `room` pages of room.
        const auto planAtTheMarker = [&](std::uint32_t opens, std::uint64_t room) {
            ReadaheadMount mount(config(64, 64, 0));
            FileReadahead ra(mount);
            ReadInfo read;
            read.length = kChunk;
            read.fileSize = kGiB;
            read.fileOpens = opens;
            read.otherReaders = opens > 1;
            std::uint64_t k = 0;
            for (; k < 3; ++k) { // trusted by the 3rd read even without the opens
                read.offset = (k * kRanks + 1) * kChunk;
                (void)ra.onRead(read);
            }
            ReadaheadPlan plan;
            for (int window = 0; window < 4 && ra.marker() != FileReadahead::kNoMarker; ++window) {
                while (((k * kRanks + 1) * kChunk + kChunk - 1) / kPageSize < ra.marker()) {
                    ++k;
                }
                read.offset = (k * kRanks + 1) * kChunk;
                read.cacheRoom = room;
                read.unreadPages = 0;
                plan = ra.onRead(read);
                ++k;
            }
            return drain(plan);
        };
        const auto roomy = planAtTheMarker(kRanks, 1 << 20);
        QVERIFY(!roomy.empty());
        for (std::size_t i = 1; i < roomy.size(); ++i) { // one span, cut at RPC boundaries only
            QCOMPARE(roomy[i].first, roomy[i - 1].end());
            QCOMPARE(roomy[i].first % ReadInfo{}.maxPagesPerRpc, 0u);
        }
        QVERIFY2(pagesOf(roomy) >= 4 * 24, std::to_string(pagesOf(roomy)).c_str()); // 4 strides

        // A third of 200 pages of room: the window with its gaps would not fit.
        const auto pressured = planAtTheMarker(kRanks, 200);
        QVERIFY(pressured.size() > 1);
        for (const auto &range : pressured) {
            QVERIFY(range.count <= 4); // one chunk's pages at most
        }

        const auto alone = planAtTheMarker(1, 1 << 20);
        QVERIFY(alone.size() > 1);
        for (const auto &range : alone) {
            QVERIFY(range.count <= 4);
        }
    }

    void aRanksSpanHeldByTheRoomEndsAtAnRpcBoundary()
    {
        // 2 ranks x 12287 B, rank 0's view: 3-page chunks, 3-page gaps read with them (one
        // span). Under pressure every rank's window is cut by the same room; cut at the next
        // chunk's end, two ranks' windows ended a few pages apart and the tail between them went
        // as a 2-page RPC. So a span the room cuts ends at an RPC boundary (64 pages here), and
        // when no boundary is within the room while enough is read ahead, nothing goes now: the
        // marker moves to one of the rank's own chunks, by which the room should have grown.
        constexpr std::uint64_t kStride = RankView::kStride;
        constexpr std::uint64_t kBoundary = 64;
        RankView view(kBoundary);
        QVERIFY(view.ra.strideTrusted()); // the 3rd read trusts the stride
        const std::uint64_t reserved = view.mount.pagesInUse();

        // A third of 600 pages: 200 granted, of a window the span limit (300 pages past the
        // read) lets reach further. It starts at the next chunk and ends at the last boundary
        // within the 200.
        auto plan = view.readAtTheMarker(600, 0);
        const auto ranges = drain(plan);
        QCOMPARE(ranges.size(), 1u);
        const PageIndex start = ranges[0].first;
        const PageIndex end = ranges[0].end();
        QCOMPARE(end, (start + 200) / kBoundary * kBoundary);
        QVERIFY2(end > start, (std::to_string(start) + ".." + std::to_string(end)).c_str());
        QCOMPARE(view.ra.readaheadEnd(), end);
        QCOMPARE(view.ra.marker(), start);
        QCOMPARE(view.mount.pagesInUse(), reserved + (end - start)); // the rest given back

        // At the marker again, 330 pages of room and 120 unread grant 30 (a third of 450, less
        // the 120), short of the next boundary, while the window ahead is read ahead already:
        // nothing now, nothing reserved, and the marker on the first page of a chunk the rank
        // reads, before the window's end.
        const std::uint64_t before = view.mount.pagesInUse();
        QVERIFY(view.readAtTheMarker(330, 120).empty());
        QCOMPARE(view.mount.pagesInUse(), before);
        QVERIFY(view.ra.marker() != FileReadahead::kNoMarker);
        QVERIFY2(view.ra.marker() < end, std::to_string(view.ra.marker()).c_str());
        const std::uint64_t markerChunk = (view.ra.marker() * kPageSize + kStride - 1) / kStride;
        QCOMPARE(markerChunk * kStride / kPageSize, view.ra.marker()); // a chunk's first page
        QVERIFY(markerChunk * kStride > view.read.offset);
        QCOMPARE(view.ra.readaheadEnd(), end);
    }

    void aWindowReadWithItsGapsNamesThem()
    {
        // 2 ranks x 47008 B, rank 0's view: 12-page chunks, 11.5-page gaps read with them (one
        // span). The plan says which pages lie wholly in a gap (rank 1's chunks): the engine
        // skips those every other reader has read past.
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead ra(mount);
        ReadInfo read;
        read.length = kTransfer;
        read.fileSize = kGiB;
        read.fileOpens = 2;
        read.otherReaders = true;
        ReadaheadPlan plan;
        for (std::uint64_t k = 0; k < 3; ++k) { // the 3rd read trusts the stride
            read.offset = k * 2 * kTransfer;
            plan = ra.onRead(read);
        }
        QVERIFY(ra.strideTrusted());
        const auto ranges = drain(plan);
        QCOMPARE(ranges.size(), 1u);
        std::uint64_t gapPages = 0;
        for (PageIndex page = ranges[0].first; page < ranges[0].end(); ++page) {
            const std::uint64_t into = (page * kPageSize) % (2 * kTransfer);
            const bool inGap = into >= kTransfer && into + kPageSize <= 2 * kTransfer;
            QVERIFY2(plan.inGap(page) == inGap, std::to_string(page).c_str());
            gapPages += inGap ? 1 : 0;
        }
        // 10 whole pages in each 11.5-page gap (23 pages a stride).
        QVERIFY2(gapPages * 23 + 23 * 10 >= ranges[0].count * 10, std::to_string(gapPages).c_str());

        // A sequential window has no gaps.
        FileReadahead sequential(mount);
        read.length = 4 * kPageSize;
        for (std::uint64_t k = 0; k < 2; ++k) {
            read.offset = k * read.length;
            plan = sequential.onRead(read);
        }
        const auto window = drain(plan);
        QVERIFY(!window.empty());
        for (PageIndex page = window[0].first; page < window.back().end(); ++page) {
            QVERIFY(!plan.inGap(page));
        }
    }

    void aRoomAFewPagesShortOfABoundaryReachesIt()
    {
        // The room is an estimate: a few pages short of a boundary, the window reaches it rather
        // than stop a boundary earlier. Rank 0's first window at the marker, with a third of
        // 600 pages granted, starts at S and ends at E, the last boundary within S + 200.
        PageIndex start = 0;
        PageIndex end = 0;
        {
            RankView view;
            const auto ranges = drain(view.readAtTheMarker(600, 0));
            QCOMPARE(ranges.size(), 1u);
            start = ranges[0].first;
            end = ranges[0].end();
            QCOMPARE(end, (start + 200) / 64 * 64);
        }
        QCOMPARE(end - start, 155u);
        // The same reads granted E - S - 3 pages (a third of 552 + 48, less the 48; the span
        // limit, half of that, reaches past E): the window still ends at E, its pages reserved.
        RankView view;
        const std::uint64_t reserved = view.mount.pagesInUse();
        const auto ranges = drain(view.readAtTheMarker(552, 48));
        QCOMPARE(ranges.size(), 1u);
        QCOMPARE(ranges[0].first, start);
        QCOMPARE(ranges[0].end(), end);
        QCOMPARE(view.mount.pagesInUse(), reserved + (end - start));
        // 9 pages short (more than an eighth of the boundary): a boundary earlier, as before.
        RankView shorter;
        const auto cut = drain(shorter.readAtTheMarker(546, 54));
        QCOMPARE(cut.size(), 1u);
        QCOMPARE(cut[0].end(), end - 64);
    }

    void aStubBeforeABoundaryWaitsForTheRoom()
    {
        // A window the room would cut at a boundary a page or two past its start (the rest of a
        // chunk the last window's boundary split) goes no more: alone it is a 1-3-page RPC and
        // its marker, at its start, comes at once with the room no larger. It waits for the
        // room as when no boundary is within it. Boundaries every 60 pages: the first window
        // ends at E = 300, inside the rank's chunk that starts on page 299.
        RankView view(60);
        const auto first = drain(view.readAtTheMarker(600, 0));
        QCOMPARE(first.size(), 1u);
        const PageIndex end = first[0].end();
        QCOMPARE(end, 300u);
        const std::uint64_t split = end * kPageSize / RankView::kStride * RankView::kStride;
        QVERIFY(end * kPageSize < split + RankView::kChunk);
        QCOMPARE(split / kPageSize, 299u);
        // At the marker: 30 pages granted (a third of 350 + 130, less the 130; the span limit,
        // 240 pages past the read, reaches past E). Cut at E it would be page 299 alone; short
        // of the boundary after E by far more than the slack: nothing now, nothing reserved,
        // the marker on the first page of one of the rank's chunks, before E.
        const std::uint64_t before = view.mount.pagesInUse();
        QVERIFY(view.readAtTheMarker(350, 130).empty());
        QCOMPARE(view.mount.pagesInUse(), before);
        const PageIndex marker = view.ra.marker();
        QVERIFY2(marker < end, std::to_string(marker).c_str());
        const std::uint64_t markerChunk =
            (marker * kPageSize + RankView::kStride - 1) / RankView::kStride;
        QCOMPARE(markerChunk * RankView::kStride / kPageSize, marker);
        QCOMPARE(view.ra.readaheadEnd(), end);
    }

    void stridedRanksOfOneFileShareAThirdOfTheRoom()
    {
        // 3 ranks x 4097 B, rank 0's view. Ranks of one file on the mount (otherReaders) may
        // hold a third of room + unread: the client engine keeps them within a third of the
        // cache of each other. Streams of different files keep a quarter.
        std::uint64_t planned[2] = {};
        for (const bool others : {false, true}) {
            ReadaheadMount mount(config(64, 64, 0));
            FileReadahead ra(mount);
            ReadInfo read;
            read.length = 4097;
            read.fileSize = kGiB;
            read.otherReaders = others;
            for (std::uint64_t k = 1; k <= 3; ++k) { // the 3rd read trusts the stride
                read.offset = k * 12291;
                (void)ra.onRead(read);
            }
            QVERIFY(ra.strideTrusted());
            // At the marker (it wants 47 pages), with 40 pages unread and 200 of room: a quarter
            // is 60 pages in all, a third 80; the span limit (120 pages past the read) is not
            // reached. Windows are whole chunks of 3 pages.
            const std::uint64_t chunk = (ra.marker() * kPageSize + 12290) / 12291;
            read.offset = chunk * 12291;
            QVERIFY(read.offset / kPageSize <= ra.marker() &&
                    (read.offset + read.length - 1) / kPageSize >= ra.marker());
            read.cacheRoom = 200;
            read.unreadPages = 40;
            planned[others ? 1 : 0] = ra.onRead(read).pages();
        }
        QVERIFY2(planned[0] <= 60 - 40 && planned[0] > 60 - 40 - 6,
                 std::to_string(planned[0]).c_str());
        QVERIFY2(planned[1] <= 80 - 40 && planned[1] > 80 - 40 - 6,
                 std::to_string(planned[1]).c_str());
    }

    void paramsBinding()
    {
        params::Registry registry;
        ReadaheadMount mount;
        {
            params::ParamGroup group(registry);
            QVERIFY(bindReadaheadParams(mount, group, "fs0").ok());
            const std::vector<params::Assignment> batch{
                {"llite.fs0.max_read_ahead_mb", "128"},
                {"llite.fs0.max_read_ahead_per_file_mb", "32"},
                {"llite.fs0.max_read_ahead_whole_mb", "4"},
            };
            QVERIFY(registry.set(batch, "test").status.ok());
            QCOMPARE(mount.maxReadAheadMb(), 128u);
            QCOMPARE(mount.maxReadAheadPerFileMb(), 32u);
            QCOMPARE(mount.maxReadAheadWholeMb(), 4u);
            mount.stats().add(ra_hits, 5);
            auto stats = registry.get("llite.fs0.read_ahead_stats");
            QVERIFY(stats.ok());
            QVERIFY(stats->front().value.find("hits                      5 samples [pages]") !=
                    std::string::npos);
            const std::vector<params::Assignment> clear{{"llite.fs0.read_ahead_stats", "clear"}};
            QVERIFY(registry.set(clear, "test").status.ok());
            QCOMPARE(counter(mount, ra_hits), 0u);
        }
        QVERIFY(!registry.get("llite.fs0.max_read_ahead_mb").ok()); // group gone
    }

    void noAllocationPerRead()
    {
        ReadaheadMount mount(config(64, 64, 0));
        FileReadahead seq(mount);
        FileReadahead stride(mount);
        ReadInfo read;
        read.length = kPageSize;
        read.fileSize = kGiB;
        read.maxPagesPerRpc = 64;
        mount.stats().add(ra_hits, 0); // this thread's counter shard picked before arming
        std::uint64_t planned = 0;
        QVERIFY(allocationCounterWorks());
        g_allocations = 0;
        g_countAllocations = true;
        for (PageIndex page = 0; page < 20000; ++page) {
            read.offset = page * kPageSize;
            read.readaheadHits = page == 0 ? 0 : 1;
            auto plan = seq.onRead(read);
            while (auto range = plan.next()) {
                planned += range->count;
            }
        }
        read.length = kTransfer;
        read.readaheadHits = 0;
        for (std::uint64_t k = 0; k < 2000; ++k) {
            read.offset = k * 16 * kTransfer;
            auto plan = stride.onRead(read);
            while (auto range = plan.next()) {
                planned += range->count;
            }
            mount.release(plan.pages());
        }
        g_countAllocations = false;
        QCOMPARE(g_allocations.load(), 0L);
        QVERIFY(planned > 20000);
        QVERIFY(stride.strideTrusted());
    }
};

QTEST_GUILESS_MAIN(TestReadahead)
#include "test_readahead.moc"
