#pragma once
// Reading pages from a target into the page cache. One PageFill per read: its pages (locked, not
// uptodate) are cut into bulk RPCs and submitted to the target's Osc at once; the caller waits
// only for the RPCs holding the pages it needs now (demand), the others (readahead) complete on
// transport I/O threads, which mark the pages uptodate, unlock them and give the readahead
// budget back. A reader that reaches a page still being filled waits for that page's lock only,
// and finds it uptodate: never a second RPC for it. Fills are pooled and reused: steady state
// allocates nothing. See datapath/client/README.md ("Page fills").

#include <lutra/status.h>
#include <lutra/transport.h>

#include "client/osc.h"
#include "core/cache/page_cache.h"
#include "core/locks/lock_namespace.h"
#include "core/readahead/readahead.h"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::client {

// One bulk RPC's worth of pages: [first, first + count) of a span of pages, and its memory
// segments (adjacent pages merged, at most transport::kMaxBulkSegments).
struct RpcPiece {
    std::size_t first = 0;
    std::size_t count = 0;
    std::size_t segmentBegin = 0;
    std::size_t segmentCount = 0;
};

// Cuts `pages` (ascending indexes) into RPC pieces: contiguous indexes, at most `maxPages` pages
// and kMaxBulkSegments memory segments each. Appends to `pieces` and `segments`.
void planPieces(std::span<const cache::PageRef> pages, std::uint32_t maxPages,
                std::vector<RpcPiece> &pieces, std::vector<transport::Segment> &segments);

class FillPool;

class PageFill {
public:
    // The pages to fill: pinned, locked, not uptodate, any order (run() sorts them). The fill
    // owns them from here and unlocks them as their RPCs complete. A caller that copies from a
    // page afterwards keeps its own pin (PageRef::pin()) before handing the page over.
    std::vector<cache::PageRef> pages;

private:
    friend class FillPool;
    bool isDemand(core::PageIndex index) const noexcept
    {
        return index >= m_demandFirst && index <= m_demandLast;
    }

    FillPool *m_pool = nullptr;
    std::vector<RpcPiece> m_pieces;
    std::vector<std::uint8_t> m_pieceIsDemand; // per piece: holds a demand page
    std::vector<transport::Segment> m_segments;
    std::string m_job;          // the RPCs' job id: must live until the last completion
    locks::LockRef m_lock;      // the lock the pages are read under, held until the last RPC
    std::uint64_t m_cookie = 0; // its handle, each filled page's lock cookie
    core::PageIndex m_demandFirst = 1;
    core::PageIndex m_demandLast = 0;
    unsigned m_epoch = 0;

    std::mutex m_mutex;
    std::condition_variable m_demandDone;
    std::size_t m_demandLeft = 0; // demand pieces not completed
    std::size_t m_refs = 0;       // pieces not completed, plus one while the caller waits
    Status m_demandStatus;
};

class FillPool {
public:
    FillPool(readahead::ReadaheadMount &readahead, cache::PageCache &cache);
    ~FillPool(); // waitIdle() first
    FillPool(const FillPool &) = delete;
    FillPool &operator=(const FillPool &) = delete;

    // A fill with no pages, from the pool.
    PageFill &start();
    // Submits every page of `fill` (through `osc`, object `handle`, under `lock`, whose share
    // the fill keeps until its last RPC completes). Pages in [demandFirst, demandLast] are the
    // caller's: wait() waits for the RPCs holding them. The other pages are readahead: marked
    // so (PageRef::finishFill) when they land, one budget page given back to `readahead` per
    // page landed or failed. Every submitted fill must be waited for, once.
    void submit(PageFill &fill, Osc &osc, std::uint64_t handle, std::string_view job,
                const locks::LockRef &lock, core::PageIndex demandFirst,
                core::PageIndex demandLast);
    // Waits for the demand RPCs of a submitted fill and returns their first error. `fill` must
    // not be used after this call.
    Status wait(PageFill &fill);
    // submit() and wait().
    Status run(PageFill &fill, Osc &osc, std::uint64_t handle, std::string_view job,
               const locks::LockRef &lock, core::PageIndex demandFirst, core::PageIndex demandLast)
    {
        submit(fill, osc, handle, job, lock, demandFirst, demandLast);
        return wait(fill);
    }
    // Gives back a fill that was started but not run (its pages are unlocked and unpinned).
    void abandon(PageFill &fill);

    // Waits until every fill started before this call has completed (per-job cleanup: so the
    // readahead in flight lands and can be dropped); false when `deadline` came first.
    bool quiesce(transport::Deadline deadline = transport::Deadline::max());
    // Waits until no fill is in flight (teardown).
    void waitIdle();

private:
    void complete(PageFill &fill, std::size_t piece, const Status &status, std::uint32_t bytes);
    // Drops one reference; the last one gives the fill back to the pool.
    void unref(PageFill &fill);
    void recycle(PageFill &fill);

    readahead::ReadaheadMount &m_readahead;
    cache::PageCache &m_cache; // the pages' (its count of readahead not read yet)

    std::mutex m_mutex; // the free list and the epochs
    std::condition_variable m_finished;
    std::vector<std::unique_ptr<PageFill>> m_all;
    std::vector<PageFill *> m_free;
    unsigned m_epoch = 0;
    std::size_t m_active[2] = {0, 0}; // fills in flight started in each epoch parity
    std::timed_mutex m_quiesceMutex;  // one quiesce at a time
};

} // namespace lutra::client
