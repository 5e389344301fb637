#include "core/readahead/readahead.h"

#include <algorithm>
#include <bit>

namespace lutra::readahead {

using namespace params::catalog;

namespace {

// Under pressure, readahead not yet read (mount-wide) may fill at most this share of what the
// cache can hold for it (room + that readahead): the rest is the turnover of pages the readers
// touch and bring in before they reach the far end of their windows (LRU ageing), so what is
// read ahead is read before reclaim reaches it.
constexpr std::uint64_t kRoomShare = 4;
// A sequential stream whose readahead is all the mount has unread may take half: the pages that
// come in before it reaches its window's far end are its own window and the pages it reads, at
// most twice what it has unread (1 rank x 4097 B, a 3 MB cache: 0.58-0.59 of unpressured with a
// quarter, 0.67-0.72 with half, 41 rounds each). Several streams keep a quarter: they do not
// advance in step (8 streams in the model discard > 1 % with half).
constexpr std::uint64_t kLoneStreamShare = 2;
// Stride readers of a file with other opens on the mount (ranks reading it in turns) may take a
// third: the client engine keeps a file's readers within a third of the cache of each other (a
// reader further ahead waits for the slowest), so a rank's window does not outrun the ranks whose
// chunks lie between. `pressure` 8 x 4097 B with that wait: 1.01 pages fetched per file page with
// a third as with a quarter, 183-185 read RPCs a round against 245-251.
constexpr std::uint64_t kFileRanksShare = 3;
// The file's only reader on the mount, reading sequentially: nothing else in the cache is worth
// keeping but what is ahead of it, so it may hold 7/8 of the room (the rest: slack for the
// pages it reads while a window comes). With half, a window of a quarter of the cache went out
// as the reader entered the one before and the reader waited for each: `pressure` 1 rank x
// 4097 B, a 3 MB cache, 0.65-0.84 of unpressured, 0.73-1.07 with 7/8 in the same alternating
// pairs (six, load 4-12), discards <= 0.09 % (test_readahead_pipeline models it).
constexpr std::uint64_t kOnlyReaderShareNumerator = 7;
constexpr std::uint64_t kOnlyReaderShareDivisor = 8;
// A lone stream's share (half, or seven eighths) keeps two of its reads outside it: a read's pages
// come into the cache beside the readahead (its misses; the pages it copies while the next window
// lands). 1 rank x 3 MiB + 5 B with an 18 MB cache: 769-page reads against the eighth left by
// the only reader's share (576 pages) discarded 26 % of the readahead and read at 0.72-0.75 of
// unpressured; with one read left out still 26 %, with two none (1.02-1.05). The smaller shares
// leave more than two reads of any size that fits the cache thrice.
constexpr std::uint64_t kReadsOutsideTheShare = 2;
// Under pressure, a stride window reaches at most this share of the cache past the read: the
// gaps between one reader's chunks are other ranks' chunks, all cached as they are read, so a
// page read ahead at the window's far end is reached only after the whole span came in (with
// 8 ranks, a 200-page window spans 1600 pages of file).
constexpr std::uint64_t kSpanShare = 2;
// One RPC costs about what moving this many pages costs (ior-hard 3 ranks x 4097 B with one
// 2-page RPC per chunk: 119-164 MB/s, against 750-1220 MB/s for 2 ranks, whose chunks touch every
// page and go in large RPCs).
constexpr std::uint64_t kRpcCostPages = 16;
// How far short of an RPC boundary the room may fall for a window held by it to reach the
// boundary all the same: an RPC's cost, and at most this share of the boundary.
constexpr std::uint64_t kRoomSlackShare = 8;
// Smallest window the discard feedback shrinks a file to: two reads' worth of pages, and not
// below an RPC's cost (8 ranks x 4097 B under pressure: 2.5-page windows, 0.15 of unpressured).
constexpr std::uint64_t kMinPressureReads = 2;
// A stride gap up to an RPC's cost is read with the chunks around it; with several ranks the
// gaps are the other ranks' chunks, read anyway.
constexpr std::uint64_t kFilledGapBytes = kRpcCostPages * kPageSize;
// Wider gaps are read too when the gaps are the file's other opens' chunks (N ranks in turns, a
// transfer each: a stride of N transfers), a chunk is this small (one RPC each costs four times
// its pages or more: ior-hard 8 ranks x 12287 B sent 5,500 3-page RPCs a round, 0.46 of a
// sequential read) and the room takes the whole window (under pressure each rank fetching its own
// chunks keeps the ranks going: with shared windows they waited on each other's RPCs, `pressure`
// 8 x 12287 B read 407-445 MB/s against 720-744). 12-page chunks (47008 B) gain nothing: ior-hard
// 4 x 47008 B read 741-788 MB/s with their gaps against 965-1470 without.
constexpr std::uint64_t kRanksFilledChunkPages = kRpcCostPages / 4;
// A read that misses waits for an RPC whatever readahead does, so its sequential window may take
// at least this many pages past the pressure limit: a reader that ran past its readahead while
// the room granted nothing (a rank ahead of the file's other rank, whose half-read pages hold the
// room) read one 2-page RPC per 4097-byte transfer, waiting for each (pressure 2 ranks x
// 4097 B). Not for stride windows: 8 ranks x 4097 B then discarded up to 7 %.
constexpr std::uint64_t kMissWindowPages = 4 * kRpcCostPages;
// ... but not more than this share of what the cache holds for readahead, so that several
// readers each overshooting by one such window stay well within the cache. Only for reads
// smaller than an RPC's cost: a large read's own RPC is no small one, and 8 streams of 1 MiB
// reads given the floor took the room their async windows needed (model: 0.97 -> 0.83 of
// pages from the cache).
constexpr std::uint64_t kMissWindowShare = 16;

PageIndex pageCeil(std::uint64_t bytes) noexcept
{
    return (bytes + kPageSize - 1) >> kPageShift;
}

// The page after a read's last (its first page for an empty read).
PageIndex endPage(const ReadInfo &read) noexcept
{
    return read.length == 0 ? read.offset >> kPageShift
                            : ((read.offset + read.length - 1) >> kPageShift) + 1;
}

} // namespace

std::uint64_t initialWindow(std::uint64_t readPages, std::uint64_t maxPages) noexcept
{
    const std::uint64_t size = std::bit_ceil(std::max<std::uint64_t>(readPages, 1));
    std::uint64_t window = maxPages;
    if (size <= maxPages / 32) {
        window = size * 4;
    } else if (size <= maxPages / 4) {
        window = size * 2;
    }
    return std::min(window, maxPages);
}

std::uint64_t nextWindow(std::uint64_t current, std::uint64_t maxPages) noexcept
{
    std::uint64_t window = maxPages;
    if (current < maxPages / 16) {
        window = current * 4;
    } else if (current <= maxPages / 2) {
        window = current * 2;
    }
    return std::min(window, maxPages);
}

// ---- ReadaheadMount ----

ReadaheadMount::ReadaheadMount(Config config)
    : m_maxMb(config.maxReadAheadMb), m_perFileMb(config.maxReadAheadPerFileMb),
      m_wholeMb(config.maxReadAheadWholeMb), m_pressureAware(config.pressureAware),
      m_stats(readAheadStatDefs())
{
}

std::uint64_t ReadaheadMount::reserve(std::uint64_t pages) noexcept
{
    const std::uint64_t max = maxReadAheadMb() * kPagesPerMiB;
    std::uint64_t used = m_inUse.load(std::memory_order_relaxed);
    std::uint64_t granted = 0;
    do {
        if (used >= max) {
            return 0;
        }
        granted = std::min(pages, max - used);
    } while (!m_inUse.compare_exchange_weak(used, used + granted, std::memory_order_relaxed));
    return granted;
}

void ReadaheadMount::release(std::uint64_t pages) noexcept
{
    // Saturating: a caller that gives back too much must not wrap the budget around.
    std::uint64_t used = m_inUse.load(std::memory_order_relaxed);
    while (!m_inUse.compare_exchange_weak(used, used - std::min(used, pages),
                                          std::memory_order_relaxed)) {
    }
}

void ReadaheadMount::onDiscarded(std::uint64_t pages, bool releaseBudget) noexcept
{
    m_stats.add(ra_read_but_discarded, pages);
    if (releaseBudget) {
        release(pages);
    }
    m_pressureEvents.fetch_add(pages, std::memory_order_relaxed);
}

void ReadaheadMount::onFailedGrab(std::uint64_t pages) noexcept
{
    m_stats.add(ra_failed_grab_cache_page, pages);
    release(pages);
    m_pressureEvents.fetch_add(pages, std::memory_order_relaxed);
}

void ReadaheadMount::onFailedLockMatch(std::uint64_t pages) noexcept
{
    m_stats.add(ra_failed_lock_match, pages);
    release(pages);
}

// ---- ReadaheadPlan ----

PageRange ReadaheadPlan::span(std::uint64_t item) const noexcept
{
    if (m_chunkCount == 0) {
        return m_spans[item];
    }
    const std::uint64_t offset = m_chunkStart + item * m_chunkStride;
    const PageIndex end = std::min(pageCeil(offset + m_chunkLength), pageCeil(m_fileSize));
    const PageIndex first = std::max<PageIndex>(offset >> kPageShift, m_emittedEnd);
    return {first, end > first ? end - first : 0};
}

std::optional<PageRange> ReadaheadPlan::next() noexcept
{
    for (;;) {
        if (!m_started) {
            if (m_item >= itemCount()) {
                return std::nullopt;
            }
            m_current = span(m_item);
            m_cursor = m_current.first;
            m_started = true;
        }
        if (m_cursor < m_current.end()) {
            // Split at multiples of max_pages_per_rpc, so RPCs stay aligned as the OSC's are.
            const std::uint64_t room = m_maxPagesPerRpc - m_cursor % m_maxPagesPerRpc;
            const PageRange range{m_cursor, std::min(room, m_current.end() - m_cursor)};
            m_cursor += range.count;
            return range;
        }
        m_emittedEnd = std::max(m_emittedEnd, m_current.end());
        ++m_item;
        m_started = false;
    }
}

bool ReadaheadPlan::inGap(PageIndex page) const noexcept
{
    if (m_chunkCount != 0 || m_chunkStride == 0) {
        return false; // chunks alone, or no stride
    }
    // The page's bytes relative to the chunk before it: in the gap when they start after that
    // chunk ends and end before the next begins (never when chunks touch or overlap).
    const std::uint64_t at = page << kPageShift;
    const std::uint64_t phase = m_chunkStart % m_chunkStride;
    const std::uint64_t into = (at + m_chunkStride - phase) % m_chunkStride;
    return into >= m_chunkLength && into + kPageSize <= m_chunkStride;
}

// ---- FileReadahead ----

void FileReadahead::reset() noexcept
{
    resetWindow();
    m_seen = false;
    m_lastOffset = 0;
    m_lastEnd = 0;
    m_strideBytes = 0;
    m_strideLength = 0;
    m_strideMatches = 0;
}

void FileReadahead::resetWindow() noexcept
{
    m_mode = Mode::none;
    m_windowPages = 0;
    m_raStart = 0;
    m_raEnd = 0;
    m_marker = kNoMarker;
    m_nextChunk = 0;
}

FileReadahead::Limits FileReadahead::limits(const ReadInfo &read, std::uint64_t readPages) noexcept
{
    const std::uint64_t maxMb = m_mount->maxReadAheadMb();
    Limits limits{};
    limits.window = std::min(maxMb, m_mount->maxReadAheadPerFileMb()) * kPagesPerMiB;
    limits.wholePages = std::min(m_mount->maxReadAheadWholeMb(), maxMb) * kPagesPerMiB;
    limits.pressure = std::numeric_limits<std::uint64_t>::max();
    limits.span = std::numeric_limits<std::uint64_t>::max();
    if (!m_mount->pressureAware()) {
        return limits;
    }
    // Feedback: pages read ahead were thrown away (or could not be cached) since this file last
    // looked, so its windows were too large for the cache: halve them.
    // The floor lets a window hold a read's worth (a stride chunk) so the cap can grow back.
    const std::uint64_t floor = std::max(kMinPressureReads * readPages, kRpcCostPages);
    const std::uint64_t events = m_mount->pressureEvents();
    if (events != m_seenPressure) {
        m_seenPressure = events;
        const std::uint64_t base = std::min(m_pressureCap, std::max(m_windowPages, floor));
        m_pressureCap = std::max(base / 2, floor);
    }
    limits.pressure = m_pressureCap;
    if (read.cacheRoom != ReadInfo::kRoomUnknown) {
        // unread + new <= (room + unread) / kRoomShare
        const std::uint64_t unread =
            read.unreadPages != ReadInfo::kRoomUnknown ? read.unreadPages : m_mount->pagesInUse();
        const std::uint64_t ownUnread = m_raEnd > m_lastEnd ? m_raEnd - m_lastEnd : 0;
        const bool lone = m_mode == Mode::sequential && unread <= ownUnread + readPages;
        const std::uint64_t held = read.cacheRoom + unread;
        // A lone stream's share leaves room for two of its reads (kReadsOutsideTheShare).
        const std::uint64_t readsRoom = kReadsOutsideTheShare * readPages;
        const std::uint64_t share =
            !lone ? held /
                        (m_mode == Mode::stride && read.otherReaders ? kFileRanksShare : kRoomShare)
                  : std::min(read.otherReaders
                                 ? held / kLoneStreamShare
                                 : held / kOnlyReaderShareDivisor * kOnlyReaderShareNumerator,
                             held > readsRoom ? held - readsRoom : 0);
        limits.pressure = std::min(limits.pressure, share > unread ? share - unread : 0);
        limits.span = (read.cacheRoom + unread) / kSpanShare;
        if (read.missingPages != 0 && readPages < kRpcCostPages) {
            limits.missFloor = std::min(kMissWindowPages, held / kMissWindowShare);
        }
    }
    return limits;
}

void FileReadahead::account(const ReadInfo &read, PageIndex first, PageIndex end) noexcept
{
    auto &stats = m_mount->stats();
    if (read.readaheadHits != 0) {
        stats.add(ra_hits, read.readaheadHits);
        m_mount->release(read.readaheadHits);
    }
    if (read.missingPages != 0) {
        stats.add(ra_misses, read.missingPages);
        // Missing although read ahead: discarded, or not arrived yet.
        const PageIndex from = std::max(first, m_raStart);
        const PageIndex to = std::min(end, m_raEnd);
        if (from < to) {
            stats.add(ra_miss_inside_window, std::min(read.missingPages, to - from));
        }
    }
}

std::uint64_t FileReadahead::grant(std::uint64_t want, const Limits &limits,
                                   std::uint64_t floor) noexcept
{
    auto &stats = m_mount->stats();
    const std::uint64_t allowed = std::min(want, std::max(limits.pressure, floor));
    if (allowed < want) {
        stats.add(ra_failed_to_reach_end);
        if (allowed == 0) {
            stats.add(ra_zero_size_window);
            return 0;
        }
    }
    const std::uint64_t granted = m_mount->reserve(allowed);
    if (granted < allowed) {
        stats.add(ra_hit_max_readahead_issue);
        if (allowed == want) {
            stats.add(ra_failed_to_reach_end);
        }
    }
    return granted;
}

void FileReadahead::issued(std::uint64_t pages, bool async, bool toEof,
                           const Limits &limits) noexcept
{
    auto &stats = m_mount->stats();
    if (async) {
        stats.add(ra_async_readahead);
    }
    if (toEof) {
        stats.add(ra_readahead_to_eof);
    }
    m_windowPages = pages;
    // A window went out without new pressure: let the feedback cap grow back by a quarter.
    if (m_pressureCap < limits.window) {
        m_pressureCap =
            std::min(limits.window, m_pressureCap + std::max<std::uint64_t>(m_pressureCap / 4, 1));
    }
}

FileReadahead::Access FileReadahead::observe(const ReadInfo &read, PageIndex first, PageIndex end,
                                             bool count) noexcept
{
    const bool firstRead = !m_seen;
    // The cached reads between two marker reads are served by the fast path and never reach this
    // engine, so a forward read that touches the marker continues the stream it belongs to,
    // whatever the gap (Linux's PG_readahead does the same).
    const bool hitsMarker = m_marker != kNoMarker && first <= m_marker && m_marker < end;
    const bool continuesStream = !firstRead && hitsMarker && read.offset >= m_lastOffset &&
                                 (m_mode == Mode::sequential || m_mode == Mode::stride);
    const bool sequential = firstRead ? read.offset == 0
                                      : (continuesStream && m_mode == Mode::sequential) ||
                                            (read.offset >= m_lastOffset &&
                                             (first == m_lastEnd || first + 1 == m_lastEnd));
    if (continuesStream && m_mode == Mode::stride) {
        // Not consecutive, but keep the trusted stride: the reads in between were hits.
        if (count) {
            m_mount->stats().add(ra_readpage_not_consecutive);
        }
    } else if (sequential) {
        m_strideBytes = 0;
        m_strideMatches = 0;
    } else {
        if (count) {
            m_mount->stats().add(ra_readpage_not_consecutive);
        }
        // N opens of the file reading it in turns, a transfer each (IOR-hard's ranks): rank r
        // reads transfer r first and then every N-th. That stride is trusted at once, at a
        // rank's first read or at its second, rather than at its third (3 ranks x 32 transfers
        // of 3 MiB + 1 B: hit ratio 0.913 -> 0.969, all a file of 32 transfers per rank can
        // give, each rank's first read being cold).
        const std::uint64_t ranksStride = std::uint64_t{read.fileOpens} * read.length;
        const bool manyOpens = read.fileOpens > 1 && read.length != 0;
        if (!firstRead && read.offset > m_lastOffset) {
            const std::uint64_t delta = read.offset - m_lastOffset;
            if (delta == m_strideBytes && read.length == m_strideLength) {
                m_strideMatches = std::min(m_strideMatches + 1, kStrideTrust);
            } else if (m_mode == Mode::stride && m_strideBytes != 0 && delta % m_strideBytes == 0 &&
                       read.length == m_strideLength) {
                // The same stream, some strides on: the reads in between were fast-path hits.
            } else {
                m_strideBytes = delta;
                m_strideMatches = manyOpens && delta == ranksStride && read.length == m_strideLength
                                      ? kStrideTrust
                                      : 1;
            }
        } else if (firstRead && manyOpens && read.offset % read.length == 0 &&
                   read.offset / read.length < read.fileOpens) {
            m_strideBytes = ranksStride;
            m_strideMatches = kStrideTrust;
        } else {
            m_strideBytes = 0;
            m_strideMatches = 0;
        }
    }
    m_strideLength = read.length;
    m_seen = true;
    m_lastOffset = read.offset;
    m_lastEnd = end;

    return {firstRead, sequential};
}

bool FileReadahead::hitStartsStride(const ReadInfo &read) noexcept
{
    if (read.length == 0 || read.fileSize == 0) {
        return false;
    }
    const PageIndex first = read.offset >> kPageShift;
    const PageIndex end = endPage(read);
    if (!m_seen) {
        m_seenPressure = m_mount->pressureEvents();
    }
    const Access access = observe(read, first, end, false);
    if (access.sequential || m_mode == Mode::stride || m_mode == Mode::whole ||
        m_strideMatches < kStrideTrust) {
        return false;
    }
    // This hit makes the stride trusted: its windows start now, ahead of the reader, rather than
    // at its next miss (ior-hard, 3 ranks x 1 MiB+1: each rank's first reads hit the first rank's
    // sequential window unseen, and each rank then missed three reads before it trusted the
    // stride). A reader in a sequential stream switches only when its next chunk lies past what
    // the stream read ahead (ior-hard's rank 0, whose first read at offset 0 looked sequential):
    // a sequential reader whose slow-path hits look strided (stripe crossings between fast-path
    // hits) has its next "chunk" inside its window and keeps it.
    return !(m_mode == Mode::sequential && read.offset + m_strideBytes < m_raEnd * kPageSize);
}

ReadaheadPlan FileReadahead::startStride(const ReadInfo &read) noexcept
{
    const PageIndex first = read.offset >> kPageShift;
    const PageIndex end = endPage(read);
    const Limits lim = limits(read, end - first);
    resetWindow();
    m_mode = Mode::stride;
    m_nextChunk = read.offset + m_strideBytes;
    return planStride(read, initialWindow(end - first, lim.window), lim, true);
}

ReadaheadPlan FileReadahead::onHit(const ReadInfo &read) noexcept
{
    return hitStartsStride(read) ? startStride(read) : ReadaheadPlan{};
}

ReadaheadPlan FileReadahead::onRead(const ReadInfo &read) noexcept
{
    const PageIndex first = read.offset >> kPageShift;
    const PageIndex end = endPage(read);
    account(read, first, end);
    if (read.length == 0) {
        return {};
    }
    if (!m_seen) {
        m_seenPressure = m_mount->pressureEvents();
    }
    if (read.fileSize == 0) {
        m_mount->stats().add(ra_zero_length_file);
        resetWindow();
        m_seen = true;
        m_lastOffset = read.offset;
        m_lastEnd = end;
        return {};
    }

    const Access access = observe(read, first, end, true);
    const bool firstRead = access.firstRead;
    const bool sequential = access.sequential;

    const Limits lim = limits(read, end - first);
    const PageIndex filePages = pageCeil(read.fileSize);

    if (firstRead && lim.wholePages != 0 && filePages <= lim.wholePages &&
        read.offset < read.fileSize) {
        return planWhole(read, first, std::min(end, filePages), lim);
    }

    if (sequential) {
        if (m_mode != Mode::sequential && m_mode != Mode::whole) {
            resetWindow();
            m_mode = Mode::sequential;
        }
        if (m_marker != kNoMarker && first <= m_marker && m_marker < end) {
            const PageIndex from = std::max(m_raEnd, end);
            ReadaheadPlan plan =
                planSequential(read, from, nextWindow(m_windowPages, lim.window), lim, true);
            if (plan.empty() && m_marker == kNoMarker && from < filePages && end < m_raEnd) {
                // The budget (other files' readahead in flight) or the pressure limit left
                // nothing: ask again at the next page rather than let the reader overtake what
                // was read ahead and miss (ior-easy --file-mb 256: a second 256-page miss).
                m_marker = end;
            }
            return plan;
        }
        if (end > m_raEnd) {
            // A new stream, or the reader overtook the readahead: read ahead synchronously.
            const std::uint64_t want = m_windowPages == 0 ? initialWindow(end - first, lim.window)
                                                          : nextWindow(m_windowPages, lim.window);
            return planSequential(read, end, want, lim, false);
        }
        return {};
    }

    if (m_strideMatches >= kStrideTrust) {
        if (m_mode != Mode::stride) {
            resetWindow();
            m_mode = Mode::stride;
            m_nextChunk = read.offset + m_strideBytes;
            return planStride(read, initialWindow(end - first, lim.window), lim, false);
        }
        if (m_marker != kNoMarker && first <= m_marker && m_marker < end) {
            return planStride(read, nextWindow(m_windowPages, lim.window), lim, true);
        }
        if (read.offset >= m_nextChunk) {
            m_nextChunk = read.offset + m_strideBytes;
            const std::uint64_t want = m_windowPages == 0 ? initialWindow(end - first, lim.window)
                                                          : nextWindow(m_windowPages, lim.window);
            return planStride(read, want, lim, false);
        }
        return {};
    }

    // Random: forget the window, keep the stride candidate.
    resetWindow();
    return {};
}

ReadaheadPlan FileReadahead::planWhole(const ReadInfo &read, PageIndex first, PageIndex end,
                                       const Limits &lim) noexcept
{
    m_mode = Mode::whole;
    const PageIndex filePages = pageCeil(read.fileSize);
    const std::uint64_t after = filePages - end;
    const std::uint64_t before = first;
    if (after + before == 0) {
        m_mount->stats().add(ra_zero_size_window);
        m_raStart = 0;
        m_raEnd = filePages;
        return {};
    }
    const std::uint64_t granted = grant(after + before, lim);
    ReadaheadPlan plan;
    if (granted == 0) {
        return plan;
    }
    // The part after the read first: it is what a reader reads next.
    const std::uint64_t afterGranted = std::min(after, granted);
    if (afterGranted != 0) {
        plan.m_spans[plan.m_spanCount++] = {end, afterGranted};
    }
    if (granted > afterGranted) {
        plan.m_spans[plan.m_spanCount++] = {0, granted - afterGranted};
    }
    plan.m_maxPagesPerRpc = std::max<std::uint32_t>(read.maxPagesPerRpc, 1);
    plan.m_pages = granted;
    m_raStart = 0;
    m_raEnd = end + afterGranted;
    m_marker = kNoMarker;
    issued(granted, false, afterGranted == after && after != 0, lim);
    return plan;
}

ReadaheadPlan FileReadahead::planSequential(const ReadInfo &read, PageIndex start,
                                            std::uint64_t want, const Limits &lim,
                                            bool async) noexcept
{
    const PageIndex filePages = pageCeil(read.fileSize);
    m_marker = kNoMarker;
    if (want == 0 || start >= filePages) {
        m_mount->stats().add(ra_zero_size_window);
        return {};
    }
    const std::uint64_t wanted = std::min(want, filePages - start);
    std::uint64_t pages = grant(wanted, lim, lim.missFloor);
    if (pages == 0) {
        return {};
    }
    // Held by the cache's room (not the budget): end the window at an RPC boundary, so it goes
    // in whole RPCs (1 rank x 4097 B, a 3 MB cache: 19 RPCs of 256 pages per 16 MB file instead
    // of ~40 of 128-257 pages cut by the stripes).
    std::uint64_t untilNext = 0; // pages the reader must read before the next whole RPC fits
    const std::uint64_t boundary = read.rpcBoundaryPages;
    if (pages < wanted && lim.pressure < wanted && boundary > 1) {
        const PageIndex cut = (start + pages) / boundary * boundary;
        if (cut > start) {
            m_mount->release(start + pages - cut);
            untilNext = boundary - (start + pages - cut);
            pages = cut - start;
        } else if (start >= m_lastEnd + boundary / 2) {
            // Enough is ahead of the reader: wait until the room reaches the boundary rather
            // than send a piece of an RPC now.
            m_mount->release(pages);
            m_marker = std::min<PageIndex>(m_lastEnd + (cut + boundary - start - pages), start - 1);
            return {};
        }
    }
    ReadaheadPlan plan;
    plan.m_spans[0] = {start, pages};
    plan.m_spanCount = 1;
    plan.m_maxPagesPerRpc = std::max<std::uint32_t>(read.maxPagesPerRpc, 1);
    plan.m_pages = pages;
    plan.m_async = async;
    if (start != m_raEnd) {
        m_raStart = start;
    }
    m_raEnd = start + pages;
    const bool toEof = m_raEnd == filePages;
    if (!toEof) {
        m_marker = start;
        if (untilNext != 0) {
            // The next window waits for the room a whole RPC needs: ask again once the reader
            // has read that much (not at this window's start, which comes too early or too late).
            m_marker = std::min<PageIndex>(m_lastEnd + untilNext, m_raEnd - 1);
        }
    }
    issued(pages, async, toEof, lim);
    return plan;
}

std::uint64_t FileReadahead::heldChunk(const ReadInfo &read, PageIndex start,
                                       PageIndex roomEnd) const noexcept
{
    // The room reaches roomEnd once the readers have read roomEnd - start more pages: with the
    // reader at m_lastEnd, about when it reads page m_lastEnd + (roomEnd - start).
    const std::uint64_t target = (m_lastEnd + (roomEnd - start)) * kPageSize;
    const std::uint64_t after = target > read.offset ? target - read.offset : 0;
    const std::uint64_t strides =
        std::max<std::uint64_t>((after + m_strideBytes - 1) / m_strideBytes, 1);
    const std::uint64_t lastAhead = m_nextChunk - m_strideBytes; // the window's last chunk
    const std::uint64_t chunk = std::min(read.offset + strides * m_strideBytes, lastAhead);
    return chunk > read.offset ? chunk : 0;
}

ReadaheadPlan FileReadahead::planStride(const ReadInfo &read, std::uint64_t want, const Limits &lim,
                                        bool async) noexcept
{
    const PageIndex filePages = pageCeil(read.fileSize);
    struct Fit {
        std::uint64_t chunks = 0;
        std::uint64_t pages = 0;
        bool eof = false; // stopped because the next chunk starts at or after EOF
    };
    // Whole chunks from m_nextChunk whose pages fit in `limit` (the first one always when
    // `atLeastOne`), stopping at EOF. Each chunk adds at least one page: a trusted stride is
    // never page-sequential.
    const PageIndex readFirst = read.offset >> kPageShift;
    const bool smallGaps =
        m_strideLength >= m_strideBytes || m_strideBytes - m_strideLength <= kFilledGapBytes;
    const bool ranksReadTheGaps = !smallGaps && read.fileOpens > 1 &&
                                  m_strideBytes <= std::uint64_t{read.fileOpens} * m_strideLength &&
                                  pageCeil(m_strideLength) <= kRanksFilledChunkPages;
    bool fillGaps = smallGaps || ranksReadTheGaps;
    const auto fit = [&](std::uint64_t limit, bool atLeastOne) {
        Fit result;
        PageIndex emittedEnd = 0;
        for (;;) {
            const std::uint64_t offset = m_nextChunk + result.chunks * m_strideBytes;
            if (offset >= read.fileSize) {
                result.eof = true;
                return result;
            }
            const PageIndex chunkEnd = std::min(pageCeil(offset + m_strideLength), filePages);
            const PageIndex chunkFirst =
                fillGaps && result.chunks != 0
                    ? emittedEnd
                    : std::max<PageIndex>(offset >> kPageShift, emittedEnd);
            const std::uint64_t pages = chunkEnd > chunkFirst ? chunkEnd - chunkFirst : 0;
            const bool beyondSpan = chunkEnd > readFirst && chunkEnd - readFirst > lim.span;
            if ((result.pages + pages > limit || beyondSpan) &&
                !(atLeastOne && result.chunks == 0)) {
                return result;
            }
            result.pages += pages;
            ++result.chunks;
            emittedEnd = std::max(emittedEnd, chunkEnd);
        }
    };

    m_marker = kNoMarker;
    Fit wanted = want == 0 ? Fit{} : fit(want, true);
    if (ranksReadTheGaps && wanted.pages > lim.pressure) {
        fillGaps = false; // the room would cut it: whole chunks, each rank its own
        wanted = fit(want, true);
    }
    if (wanted.chunks == 0) {
        m_mount->stats().add(ra_zero_size_window);
        return {};
    }
    Fit issue = wanted;
    std::uint64_t granted = grant(wanted.pages, lim);
    const PageIndex start = m_nextChunk >> kPageShift;
    PageIndex spanEnd = 0; // one span cut at an RPC boundary: where it ends
    if (granted < wanted.pages) {
        const std::uint64_t boundary = read.rpcBoundaryPages;
        const bool heldByRoom = fillGaps && lim.pressure < wanted.pages && boundary > 1;
        PageIndex cut = heldByRoom ? (start + granted) / boundary * boundary : 0;
        if (heldByRoom) {
            // A room a few pages short of the next boundary reaches it: the room is an
            // estimate, and the window cut short of it was a stub (2 ranks x 47008 B: 2 pages
            // short, a 5-page window, the reader missed in the next one).
            const PageIndex next = cut + boundary;
            const std::uint64_t shortBy = next - (start + granted);
            const std::uint64_t slack = std::min(kRpcCostPages, boundary / kRoomSlackShare);
            if (shortBy <= slack && next - start <= wanted.pages) {
                const std::uint64_t extra = m_mount->reserve(shortBy);
                if (extra == shortBy) {
                    cut = next;
                    granted += extra;
                } else {
                    m_mount->release(extra);
                }
            }
        }
        // No boundary within the room, or one that leaves less than an RPC's cost (a stub: it
        // would go alone and its marker, at its start, comes at once with the room no larger;
        // 5-page windows, each followed by a miss), while half a row is read ahead of the
        // reader: wait until the room reaches the next boundary rather than send a piece of an
        // RPC now (as a sequential window does), asking again at the first of the rank's own
        // chunks by which the room should have grown so. Closer to the reader a stub goes: it
        // ends at the boundary where the other ranks' windows end (whole chunks past it left
        // tails between ranks: 3-4 ranks x 4097 B discarded 0.2-0.5 % and read slower).
        const bool stub = cut > start && cut - start < kRpcCostPages;
        const std::uint64_t waitAt =
            heldByRoom && (cut <= start || stub) && start >= m_lastEnd + boundary / 2
                ? heldChunk(read, start, cut + boundary - granted)
                : 0;
        if (waitAt != 0) {
            m_mount->release(granted);
            m_marker = waitAt >> kPageShift;
            return {};
        }
        if (heldByRoom && cut > start) {
            // Held by the room: the span ends at an RPC boundary, where every rank's window
            // cut by the same room ends too, instead of at a chunk a few pages past another
            // rank's window (2 ranks x 12287 B: ~110 RPCs of 2 pages a round, each the tail
            // between two ranks' cuts). The chunks wholly inside move the stride on; a chunk
            // the boundary splits is planned again from its start (its first pages skipped).
            spanEnd = cut;
            issue = fit(cut - start, false); // whole chunks end at or before the cut
            issue.pages = cut - start;
            m_mount->release(granted - issue.pages);
        } else {
            // Otherwise whole chunks as the room allows.
            issue = fit(granted, false);
            m_mount->release(granted - issue.pages);
            if (issue.chunks == 0) {
                return {};
            }
        }
    }
    ReadaheadPlan plan;
    if (fillGaps) {
        // Chunks and the gaps between them: one span.
        plan.m_spans[0] = {start, issue.pages};
        plan.m_spanCount = 1;
    } else {
        plan.m_chunkCount = issue.chunks;
        plan.m_fileSize = read.fileSize;
    }
    plan.m_chunkStart = m_nextChunk;
    plan.m_chunkStride = m_strideBytes;
    plan.m_chunkLength = m_strideLength;
    plan.m_maxPagesPerRpc = std::max<std::uint32_t>(read.maxPagesPerRpc, 1);
    plan.m_pages = issue.pages;
    plan.m_async = async;

    if (m_raEnd == 0 || m_raStart > start) {
        m_raStart = start;
    }
    if (spanEnd != 0) {
        m_raEnd = spanEnd;
    } else {
        const std::uint64_t lastChunk = m_nextChunk + (issue.chunks - 1) * m_strideBytes;
        m_raEnd = std::min(pageCeil(lastChunk + m_strideLength), filePages);
    }
    const bool toEof = spanEnd == 0 && issue.chunks == wanted.chunks && wanted.eof;
    if (!toEof) {
        m_marker = start;
    }
    m_nextChunk += issue.chunks * m_strideBytes;
    // With the gaps read, a window's first chunk comes without its gap: count whole strides, or
    // a window too small for a second chunk would never grow.
    const std::uint64_t grown =
        fillGaps ? std::max(issue.pages, issue.chunks * pageCeil(m_strideBytes)) : issue.pages;
    issued(grown, async, toEof, lim);
    return plan;
}

} // namespace lutra::readahead
