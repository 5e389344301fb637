#pragma once
// Readahead decisions of the client engine, after Linux's ondemand readahead and Lustre's llite
// readahead (sequential windows growing x4 then x2, byte-based stride detection for unaligned
// strided transfers, whole-file readahead of small files, an asynchronous marker page, a
// mount-wide page budget) plus LU-13312's lesson: under memory pressure, do not read ahead what
// reclaim will throw away. Pure decision logic: the page cache and the bulk RPCs do the work.
//
// Threading: a FileReadahead is per open file and is not thread-safe (guard it with the file's
// own lock or keep it on one thread). ReadaheadMount is shared by every file of a mount: its
// budget, limits and counters are atomics, so no call takes a global lock. Nothing here
// allocates after construction.

#include <lutra/status.h>

#include "core/params/catalog.h"
#include "core/params/counters.h"
#include "core/types.h"

#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::readahead {

using core::kPageShift;
using core::kPageSize;
using core::PageIndex;

inline constexpr std::uint64_t kPagesPerMiB = (1u << 20) / kPageSize;

// Pages [first, first + count): one bulk RPC.
struct PageRange {
    PageIndex first = 0;
    std::uint64_t count = 0;

    PageIndex end() const noexcept { return first + count; }
    friend bool operator==(const PageRange &, const PageRange &) = default;
};

// Mount-wide state: the llite.<fs>.max_read_ahead_* limits, the readahead page budget shared by
// every file, and llite.<fs>.read_ahead_stats.
class ReadaheadMount {
public:
    struct Config {
        // llite.<fs>.max_read_ahead_mb (0 disables), _per_file_mb, _whole_mb
        std::uint64_t maxReadAheadMb =
            params::catalog::defaultOf(params::catalog::kReadahead, "max_read_ahead_mb");
        std::uint64_t maxReadAheadPerFileMb =
            params::catalog::defaultOf(params::catalog::kReadahead, "max_read_ahead_per_file_mb");
        std::uint64_t maxReadAheadWholeMb =
            params::catalog::defaultOf(params::catalog::kReadahead, "max_read_ahead_whole_mb");
        // Honour the caller's cache-room signal and the discard feedback (LU-13312). Off only to
        // show in tests and benches what happens without it.
        bool pressureAware = true;
    };

    explicit ReadaheadMount(Config config);
    ReadaheadMount() : ReadaheadMount(Config{}) {}
    ReadaheadMount(const ReadaheadMount &) = delete;
    ReadaheadMount &operator=(const ReadaheadMount &) = delete;

    // Limits, in MiB as the parameters are; changes apply to the next decision of every file.
    std::uint64_t maxReadAheadMb() const noexcept { return load(m_maxMb); }
    std::uint64_t maxReadAheadPerFileMb() const noexcept { return load(m_perFileMb); }
    std::uint64_t maxReadAheadWholeMb() const noexcept { return load(m_wholeMb); }
    void setMaxReadAheadMb(std::uint64_t mb) noexcept { store(m_maxMb, mb); }
    void setMaxReadAheadPerFileMb(std::uint64_t mb) noexcept { store(m_perFileMb, mb); }
    void setMaxReadAheadWholeMb(std::uint64_t mb) noexcept { store(m_wholeMb, mb); }
    bool pressureAware() const noexcept { return m_pressureAware; }

    // The budget (max_read_ahead_mb in pages): pages read ahead and not yet consumed, discarded
    // or given back. reserve() grants at most what is left; release() gives pages back.
    std::uint64_t reserve(std::uint64_t pages) noexcept;
    void release(std::uint64_t pages) noexcept;
    std::uint64_t pagesInUse() const noexcept { return load(m_inUse); }

    // Reports from the page cache and the read paths (each also releases the budget it names).
    // Readahead pages evicted before anyone read them. `releaseBudget`: false when the caller
    // already gave the budget back as the pages landed (the client engine does, as Lustre's
    // ll_ra_count_put on read completion).
    void onDiscarded(std::uint64_t pages, bool releaseBudget = true) noexcept;
    // Readahead pages the cache could not allocate or insert (grab_cache_page failed).
    void onFailedGrab(std::uint64_t pages) noexcept;
    // Readahead pages dropped because no covering lock was cached.
    void onFailedLockMatch(std::uint64_t pages) noexcept;
    // Pages of a plan the caller really fetches (not cached, not being filled already):
    // readahead_pages. Plan pages it skips go back with release().
    void onFetched(std::uint64_t pages) noexcept
    {
        m_stats.add(params::catalog::ra_readahead_pages, pages);
    }
    // The lock-free fast read path could not serve a read from the cache.
    void onFastReadFailed() noexcept { m_stats.add(params::catalog::ra_failed_to_fast_read); }

    // Discards plus failed grabs so far: files shrink their windows when it moves.
    std::uint64_t pressureEvents() const noexcept { return load(m_pressureEvents); }

    params::CounterBlock &stats() noexcept { return m_stats; }
    const params::CounterBlock &stats() const noexcept { return m_stats; }

private:
    static std::uint64_t load(const std::atomic<std::uint64_t> &value) noexcept
    {
        return value.load(std::memory_order_relaxed);
    }
    static void store(std::atomic<std::uint64_t> &value, std::uint64_t v) noexcept
    {
        value.store(v, std::memory_order_relaxed);
    }

    std::atomic<std::uint64_t> m_maxMb;
    std::atomic<std::uint64_t> m_perFileMb;
    std::atomic<std::uint64_t> m_wholeMb;
    const bool m_pressureAware;
    alignas(64) std::atomic<std::uint64_t> m_inUse{0};
    alignas(64) std::atomic<std::uint64_t> m_pressureEvents{0};
    params::CounterBlock m_stats;
};

// Binds llite.<fs>.max_read_ahead_mb, max_read_ahead_per_file_mb, max_read_ahead_whole_mb
// (specs from catalog::lliteSpecs) and llite.<fs>.read_ahead_stats to `mount`. `mount` must
// outlive `group`.
Status bindReadaheadParams(ReadaheadMount &mount, params::ParamGroup &group, std::string_view fs);

// What one read of a file was, as the caller saw it in its cache before asking.
struct ReadInfo {
    static constexpr std::uint64_t kRoomUnknown = std::numeric_limits<std::uint64_t>::max();

    std::uint64_t offset = 0;   // bytes
    std::uint64_t length = 0;   // bytes
    std::uint64_t fileSize = 0; // bytes, as the client knows it now (KMS)
    std::uint32_t maxPagesPerRpc =
        params::catalog::defaultOf(params::catalog::kOsc, "max_pages_per_rpc");
    // Pages of this read found cached, read ahead and not read before (the cache clears the
    // page's "readahead, unused" mark as it counts it): hits; their budget is released.
    std::uint64_t readaheadHits = 0;
    // Pages of this read not cached, that the caller fetches itself: misses.
    std::uint64_t missingPages = 0;
    // Pages the cache can take now without evicting a page nobody has read yet (free pages plus
    // clean pages already read), or kRoomUnknown.
    std::uint64_t cacheRoom = kRoomUnknown;
    // Readahead not read yet, mount-wide (in flight plus waiting in the cache), or
    // kRoomUnknown: the mount budget in use stands for it.
    std::uint64_t unreadPages = kRoomUnknown;
    // File pages between the places where the caller's RPCs are cut anyway (a row of stripes:
    // an RPC to every target), or 0. When the cache's room bounds a window, it ends at such a
    // boundary, so it goes in whole RPCs.
    std::uint64_t rpcBoundaryPages = 0;
    // Others have the file open on this mount (ranks sharing it): a sequential reader is then
    // not alone, however its reads look.
    bool otherReaders = false;
    // Opens of the file on this mount (0: not known). N ranks reading one file in turns read it
    // in a stride of N transfers, which lets a rank trust its stride before it has seen it
    // twice (see FileReadahead::observe).
    std::uint32_t fileOpens = 0;
};

// What to read ahead after one read: a value, no allocation. Walk it with next(): each range is
// one bulk RPC (at most maxPagesPerRpc pages, never crossing a gap). `pages()` pages were
// reserved from the mount budget: the caller reports those it fetches with
// ReadaheadMount::onFetched (readahead_pages), gives back with release those it does not
// (already cached or being filled, e.g. a page two ranks' chunks share; RPC failed), and
// reports failed grabs with onFailedGrab.
class ReadaheadPlan {
public:
    bool empty() const noexcept { return m_pages == 0; }
    std::uint64_t pages() const noexcept { return m_pages; }
    // Issued from the marker page: the reader does not wait for it.
    bool async() const noexcept { return m_async; }
    // The next RPC-sized range, or nothing when the plan is done.
    std::optional<PageRange> next() noexcept;
    // A page of a stride window read with its gaps that lies wholly in a gap: another rank's
    // chunk, read ahead for it (false for every other plan).
    bool inGap(PageIndex page) const noexcept;

private:
    friend class FileReadahead;

    std::uint64_t itemCount() const noexcept
    {
        return m_chunkCount != 0 ? m_chunkCount : m_spanCount;
    }
    PageRange span(std::uint64_t item) const noexcept;

    // Up to two plain spans (whole-file readahead around the read), or stride chunks
    // (m_chunkCount of them). A stride window read with its gaps is one span and keeps its
    // chunks' start, stride and length for inGap (m_chunkCount 0).
    PageRange m_spans[2];
    std::uint32_t m_spanCount = 0;
    std::uint64_t m_chunkStart = 0; // byte offset of the first stride chunk
    std::uint64_t m_chunkStride = 0;
    std::uint64_t m_chunkLength = 0;
    std::uint64_t m_chunkCount = 0;
    std::uint64_t m_fileSize = 0;
    std::uint32_t m_maxPagesPerRpc = 1;
    std::uint64_t m_pages = 0;
    bool m_async = false;
    // cursor
    std::uint64_t m_item = 0; // span or chunk being walked
    PageRange m_current;
    PageIndex m_cursor = 0;
    bool m_started = false;
    PageIndex m_emittedEnd = 0; // chunks sharing a page emit it once
};

// Readahead state of one open file.
class FileReadahead {
public:
    static constexpr std::uint32_t kStrideTrust = 2; // equal strides seen before trusting one
    static constexpr PageIndex kNoMarker = std::numeric_limits<PageIndex>::max();

    explicit FileReadahead(ReadaheadMount &mount) noexcept : m_mount(&mount) {}

    // Called on every read, after the caller looked the read's pages up in its cache. Counts the
    // read, updates the pattern, and says what to read ahead (often nothing).
    ReadaheadPlan onRead(const ReadInfo &read) noexcept;
    // A read that found all its pages and did not touch the marker (the engine plans nothing
    // for it, as Linux's filemap_read): the access pattern goes on through it, so a stride is
    // recognised from hits too. Returns the stride's first window (async) when this read makes
    // it trusted, for a reader without a window or a sequential one whose next chunk lies past
    // its window; otherwise nothing. Counts nothing (the caller counted the hit).
    ReadaheadPlan onHit(const ReadInfo &read) noexcept;
    // onHit in two steps, so a caller counts the cache's room only when a plan follows:
    // hitStartsStride moves the pattern on (offset, length, fileSize are all it reads) and says
    // whether this hit starts a stride; then startStride plans its first window.
    bool hitStartsStride(const ReadInfo &read) noexcept;
    ReadaheadPlan startStride(const ReadInfo &read) noexcept;

    // Forgets the access pattern (truncate, lock cancelled, file reopened).
    void reset() noexcept;

    // For tests and the console.
    std::uint64_t windowPages() const noexcept { return m_windowPages; }
    PageIndex readaheadEnd() const noexcept { return m_raEnd; }
    PageIndex marker() const noexcept { return m_marker; }
    bool strideTrusted() const noexcept { return m_mode == Mode::stride; }
    std::uint64_t strideBytes() const noexcept { return m_strideBytes; }
    std::uint64_t pressureCap() const noexcept { return m_pressureCap; }

private:
    enum class Mode : std::uint8_t { none, sequential, stride, whole };

    struct Limits {
        std::uint64_t window;     // largest window, pages
        std::uint64_t wholePages; // files up to this many pages are read whole
        std::uint64_t pressure;   // what the cache signal allows, pages
        // Under pressure: how far past the read (file pages) a stride window may reach. Other
        // ranks fill the gaps between a reader's chunks, so the cache turns over the whole span,
        // not only the window's own pages.
        std::uint64_t span;
        // Under pressure, for a sequential read that misses (it waits for an RPC anyway): a
        // window may take this many pages whatever `pressure` allows.
        std::uint64_t missFloor;
    };

    Limits limits(const ReadInfo &read, std::uint64_t readPages) noexcept;
    void account(const ReadInfo &read, PageIndex first, PageIndex end) noexcept;
    ReadaheadPlan planWhole(const ReadInfo &read, PageIndex first, PageIndex end,
                            const Limits &limits) noexcept;
    ReadaheadPlan planSequential(const ReadInfo &read, PageIndex start, std::uint64_t want,
                                 const Limits &limits, bool async) noexcept;
    ReadaheadPlan planStride(const ReadInfo &read, std::uint64_t want, const Limits &limits,
                             bool async) noexcept;
    // Byte offset of the reader's chunk (one it will read, read ahead already) at which the room
    // should have reached `roomEnd` for a window from page `start`; 0: none lies before it.
    std::uint64_t heldChunk(const ReadInfo &read, PageIndex start,
                            PageIndex roomEnd) const noexcept;
    // Applies the pressure limit (but allows `floor` pages whatever it says) and the mount
    // budget to `want` pages (already EOF-clamped). Returns the pages reserved; counts
    // zero_size_window, failed_to_reach_end and hit_max_readahead_issue.
    std::uint64_t grant(std::uint64_t want, const Limits &limits, std::uint64_t floor = 0) noexcept;
    // Counts an issued window and lets the pressure cap grow back.
    void issued(std::uint64_t pages, bool async, bool toEof, const Limits &limits) noexcept;
    void resetWindow() noexcept;
    struct Access {
        bool firstRead = false;
        bool sequential = false;
    };
    // Classifies a read (sequential, a stride candidate, random) and moves the pattern on.
    Access observe(const ReadInfo &read, PageIndex first, PageIndex end, bool count) noexcept;

    ReadaheadMount *m_mount;
    Mode m_mode = Mode::none;
    bool m_seen = false;
    std::uint64_t m_lastOffset = 0;
    PageIndex m_lastEnd = 0; // page after the last page of the previous read

    std::uint64_t m_windowPages = 0; // size of the last window issued
    PageIndex m_raStart = 0;         // first page read ahead since the pattern started
    PageIndex m_raEnd = 0;           // page after the last page read ahead
    PageIndex m_marker = kNoMarker;  // reading this page issues the next window

    std::uint64_t m_strideBytes = 0; // candidate stride (start to start), bytes
    std::uint64_t m_strideLength = 0;
    std::uint32_t m_strideMatches = 0;
    std::uint64_t m_nextChunk = 0; // byte offset of the next stride chunk to read ahead

    std::uint64_t m_pressureCap = std::numeric_limits<std::uint64_t>::max();
    std::uint64_t m_seenPressure = 0;
};

// Linux's window sizes (get_init_ra_size, get_next_ra_size), in pages.
std::uint64_t initialWindow(std::uint64_t readPages, std::uint64_t maxPages) noexcept;
std::uint64_t nextWindow(std::uint64_t current, std::uint64_t maxPages) noexcept;

} // namespace lutra::readahead
