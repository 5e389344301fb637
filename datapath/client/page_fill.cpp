#include "client/page_fill.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace lutra::client {

using cache::PageRef;
using core::kPageSize;

void planPieces(std::span<const PageRef> pages, std::uint32_t maxPages,
                std::vector<RpcPiece> &pieces, std::vector<transport::Segment> &segments)
{
    maxPages = std::max<std::uint32_t>(maxPages, 1);
    std::size_t i = 0;
    while (i < pages.size()) {
        RpcPiece piece;
        piece.first = i;
        piece.segmentBegin = segments.size();
        while (i < pages.size()) {
            const bool contiguous =
                piece.count == 0 || pages[i].index() == pages[i - 1].index() + 1;
            if (!contiguous || piece.count == maxPages) {
                break;
            }
            const transport::Segment segment = pages[i].segment();
            // Only a piece that has pages has a last segment to extend.
            transport::Segment *last = piece.count > 0 ? &segments.back() : nullptr;
            const bool merges =
                last != nullptr &&
                static_cast<std::byte *>(last->address) + last->length == segment.address &&
                last->region == segment.region;
            if (!merges && piece.segmentCount == transport::kMaxBulkSegments) {
                break;
            }
            if (merges) {
                last->length += segment.length;
            } else {
                segments.push_back(segment);
                ++piece.segmentCount;
            }
            ++piece.count;
            ++i;
        }
        pieces.push_back(piece);
    }
}

FillPool::FillPool(readahead::ReadaheadMount &readahead, cache::PageCache &cache)
    : m_readahead(readahead), m_cache(cache)
{
}

FillPool::~FillPool()
{
    waitIdle();
}

PageFill &FillPool::start()
{
    std::lock_guard guard(m_mutex);
    PageFill *fill = nullptr;
    if (!m_free.empty()) {
        fill = m_free.back();
        m_free.pop_back();
    } else {
        // Only while the number of fills in flight grows (bounded by the readers and the Osc's
        // request slots); every fill is reused afterwards.
        m_all.push_back(std::make_unique<PageFill>());
        fill = m_all.back().get();
        fill->m_pool = this;
        m_free.reserve(m_all.size());
    }
    fill->m_epoch = m_epoch & 1u;
    ++m_active[fill->m_epoch];
    return *fill;
}

void FillPool::abandon(PageFill &fill)
{
    fill.pages.clear(); // unlocks, unpins
    recycle(fill);
}

void FillPool::submit(PageFill &fill, Osc &osc, std::uint64_t handle, std::string_view job,
                      const locks::LockRef &lock, core::PageIndex demandFirst,
                      core::PageIndex demandLast)
{
    if (fill.pages.empty()) {
        std::lock_guard guard(fill.m_mutex);
        fill.m_demandLeft = 0;
        fill.m_refs = 1; // the caller's, until wait()
        fill.m_demandStatus = {};
        return;
    }
    // Pages come in index order (a read's own, then its readahead after them), unless readahead
    // planned pages before the read's: sort only then (the sort was 0.5 % of ior-easy's client).
    const auto byIndex = [](const PageRef &a, const PageRef &b) { return a.index() < b.index(); };
    if (!std::is_sorted(fill.pages.begin(), fill.pages.end(), byIndex)) {
        std::sort(fill.pages.begin(), fill.pages.end(), byIndex);
    }
    fill.m_job.assign(job);
    fill.m_lock = lock.share();
    fill.m_cookie = lock.handle();
    fill.m_demandFirst = demandFirst;
    fill.m_demandLast = demandLast;
    planPieces(fill.pages, osc.maxPagesPerRpc(), fill.m_pieces, fill.m_segments);

    std::size_t demandPieces = 0;
    for (const RpcPiece &piece : fill.m_pieces) {
        const core::PageIndex first = fill.pages[piece.first].index();
        const core::PageIndex last = fill.pages[piece.first + piece.count - 1].index();
        const bool demand = first <= demandLast && last >= demandFirst;
        fill.m_pieceIsDemand.push_back(demand ? 1 : 0);
        demandPieces += demand ? 1 : 0;
    }
    {
        std::lock_guard guard(fill.m_mutex);
        fill.m_demandLeft = demandPieces;
        fill.m_refs = fill.m_pieces.size() + 1; // + this caller, until it stops waiting
        fill.m_demandStatus = {};
    }
    // Every piece is submitted before any completion can recycle the fill (this caller's
    // reference), so the vectors stay put while the Osc reads them.
    const std::size_t pieceCount = fill.m_pieces.size();
    for (std::size_t p = 0; p < pieceCount; ++p) {
        const RpcPiece &piece = fill.m_pieces[p];
        PageFill *target = &fill;
        // A fill of readahead alone goes with the next completion to the target; one with the
        // reader's pages goes now, all of it (its first send wakes the I/O thread for the rest).
        const Status submitted = osc.submitRead(
            handle, fill.pages[piece.first].index(), static_cast<std::uint32_t>(piece.count),
            static_cast<std::uint16_t>(kPageSize),
            std::span(fill.m_segments).subspan(piece.segmentBegin, piece.segmentCount), fill.m_job,
            [this, target, p](const Status &status, std::uint32_t bytes) {
                complete(*target, p, status, bytes);
            },
            transport::Deadline::max(), transport::Deadline::max(),
            demandPieces == 0 ? Osc::Send::afterInFlight : Osc::Send::now);
        if (!submitted) {
            complete(fill, p, submitted, 0); // refused: its completion never runs
        }
    }
}

Status FillPool::wait(PageFill &fill)
{
    Status status;
    {
        std::unique_lock guard(fill.m_mutex);
        fill.m_demandDone.wait(guard, [&] { return fill.m_demandLeft == 0; });
        status = fill.m_demandStatus;
    }
    unref(fill);
    return status;
}

void FillPool::complete(PageFill &fill, std::size_t p, const Status &status, std::uint32_t bytes)
{
    const RpcPiece piece = fill.m_pieces[p];
    std::uint64_t readahead = 0;
    for (std::size_t i = 0; i < piece.count; ++i) {
        readahead += fill.isDemand(fill.pages[piece.first + i].index()) ? 0 : 1;
    }
    if (status.ok() && readahead != 0) {
        m_cache.expectReadahead(readahead); // before a reader can take any of them
    }
    for (std::size_t i = 0; i < piece.count; ++i) {
        PageRef &page = fill.pages[piece.first + i];
        if (status.ok()) {
            // Past the object's end (or a hole the target skipped) reads as zeros.
            const std::uint64_t pageStart = i * kPageSize;
            if (bytes < pageStart + kPageSize) {
                const std::size_t valid = bytes > pageStart ? bytes - pageStart : 0;
                std::memset(page.data().data() + valid, 0, kPageSize - valid);
            }
            page.setLockCookie(fill.m_cookie);
            page.finishFill(!fill.isDemand(page.index()));
        }
        // Failed: unlocked, not uptodate; the next reader grabs it and retries.
        page.reset();
    }
    // The readahead budget bounds what is in flight (Lustre's ll_ra_count_put on completion);
    // what waits in the cache unread is counted there.
    if (readahead != 0) {
        m_readahead.release(readahead);
    }
    if (fill.m_pieceIsDemand[p] != 0) {
        std::lock_guard guard(fill.m_mutex);
        if (!status.ok() && fill.m_demandStatus.ok()) {
            fill.m_demandStatus = status;
        }
        if (--fill.m_demandLeft == 0) {
            fill.m_demandDone.notify_all();
        }
    }
    unref(fill);
}

void FillPool::unref(PageFill &fill)
{
    {
        std::lock_guard guard(fill.m_mutex);
        assert(fill.m_refs > 0);
        if (--fill.m_refs != 0) {
            return;
        }
    }
    recycle(fill);
}

void FillPool::recycle(PageFill &fill)
{
    fill.pages.clear();
    fill.m_pieces.clear();
    fill.m_pieceIsDemand.clear();
    fill.m_segments.clear();
    fill.m_lock.release(); // a cancel waiting for the fill goes ahead now
    fill.m_demandFirst = 1;
    fill.m_demandLast = 0;
    std::lock_guard guard(m_mutex);
    --m_active[fill.m_epoch];
    m_free.push_back(&fill);
    m_finished.notify_all();
}

bool FillPool::quiesce(transport::Deadline deadline)
{
    std::unique_lock serial(m_quiesceMutex, std::defer_lock);
    if (deadline == transport::Deadline::max()) {
        serial.lock();
    } else if (!serial.try_lock_until(deadline)) {
        return false;
    }
    std::unique_lock guard(m_mutex);
    const auto waitFor = [&](unsigned parity) {
        const auto landed = [&] { return m_active[parity] == 0; };
        if (deadline == transport::Deadline::max()) {
            m_finished.wait(guard, landed);
            return true;
        }
        return m_finished.wait_until(guard, deadline, landed);
    };
    // A quiesce that gave up early left older fills in the other parity: they too started
    // before this call, so they land before new fills may join that parity.
    const unsigned before = m_epoch & 1u;
    if (!waitFor(before ^ 1u)) {
        return false;
    }
    ++m_epoch; // fills started from now on count in the other parity
    return waitFor(before);
}

void FillPool::waitIdle()
{
    std::unique_lock guard(m_mutex);
    m_finished.wait(guard, [&] { return m_active[0] == 0 && m_active[1] == 0; });
}

} // namespace lutra::client
