#pragma once
// A small model to play access patterns against the readahead engine: an LRU page cache that
// marks pages read ahead until someone reads them, and readers that do what the client engine
// will do on each read (look up, ask FileReadahead, fetch the plan, report discards). For tests
// and benches; it allocates freely, the engine does not.
//
// Time, when an RPC latency is given: a clock in steps, one step per page a read copies out.
// Pages an RPC brings land `rpcLatency` steps after it was sent; until then they sit in the cache
// locked (they take room, reclaim passes them over) and a reader that reaches one waits for it,
// as does a read that misses (its own RPC). Steps waited are `stallSteps`: a readahead that is
// not far enough ahead for the latency shows there, while pages read and discards look the same.

#include "core/readahead/readahead.h"

#include <cstdint>
#include <deque>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

namespace lutra::readahead::sim {

struct SimStats {
    std::uint64_t reads = 0;
    std::uint64_t pagesRead = 0;
    std::uint64_t cachedPages = 0; // pages of reads found in the cache
    std::uint64_t readaheadHits = 0;
    std::uint64_t missingPages = 0;
    std::uint64_t readaheadInserted = 0; // pages the readahead put in the cache
    std::uint64_t skipped = 0;           // pages a plan named that were cached already
    std::uint64_t discarded = 0;         // readahead pages evicted before anyone read them
    std::uint64_t rpcs = 0;
    std::uint64_t steps = 0;      // the clock at the end (with an RPC latency)
    std::uint64_t stallSteps = 0; // steps readers waited for pages in flight or missing
    // Sampled at every read (with an RPC latency): pages read ahead and not read yet (in flight
    // or landed), mount-wide, summed over the reads; its mean is the pipeline's depth.
    std::uint64_t aheadPagesSum = 0;
    // Reads that asked readahead for a plan (engine visibility: a miss, the marker, or a hit
    // that starts a stride).
    std::uint64_t planned = 0;
    // Reads that missed a page: each waited for an RPC of its own.
    std::uint64_t missReads = 0;

    double hitRatio() const { return pagesRead == 0 ? 0.0 : double(cachedPages) / pagesRead; }
    double discardRatio() const
    {
        return readaheadInserted == 0 ? 0.0 : double(discarded) / readaheadInserted;
    }
    double meanAheadPages() const { return reads == 0 ? 0.0 : double(aheadPagesSum) / reads; }
};

// LRU over (file, page); capacity 0 is unlimited. Reads move a page to the front. Policy `lru`
// evicts the page touched longest ago; `keepReadahead` evicts the page read longest ago and a
// page read ahead (unread) only when no other is left, as the client's S3-FIFO does (a page read
// once leaves from its probation FIFO; one read ahead and unread is promoted instead).
class CacheModel {
public:
    enum class Policy { lru, keepReadahead };

    explicit CacheModel(std::uint64_t capacity, Policy policy = Policy::lru)
        : m_capacity(capacity), m_policy(policy)
    {
    }

    struct Lookup {
        bool cached = false;
        bool readahead = false;    // was read ahead and not read before (mark now cleared)
        std::uint64_t landsAt = 0; // in flight until this step (0: landed)
    };
    // `keepPartly`: the read takes only part of the page and does not go on from its reader's
    // previous read there: a page read ahead keeps its mark for the rest's reader, once (the
    // client cache's kPartlyRead).
    Lookup read(std::uint32_t file, PageIndex page, bool keepPartly = false)
    {
        auto it = m_index.find(key(file, page));
        if (it == m_index.end()) {
            return {};
        }
        const auto entry = it->second;
        Lookup result{true, entry->readahead, entry->landsAt};
        entry->touched = ++m_tick;
        if (entry->readahead && keepPartly && !entry->partlyRead) {
            entry->partlyRead = true;
            result.readahead = false;
        } else if (entry->readahead) {
            entry->readahead = false;
            entry->partlyRead = false;
            --m_unusedReadahead;
            m_used.splice(m_used.begin(), m_ahead, entry);
        } else {
            m_used.splice(m_used.begin(), m_used, entry);
        }
        return result;
    }
    bool contains(std::uint32_t file, PageIndex page) const
    {
        return m_index.count(key(file, page)) != 0;
    }
    // Cached and landed by step `now` (what the client's lock-free fast read can serve).
    bool landed(std::uint32_t file, PageIndex page, std::uint64_t now) const
    {
        const auto it = m_index.find(key(file, page));
        return it != m_index.end() && it->second->landsAt <= now;
    }
    // Inserts a page (in flight until step `landsAt`, if later than `now`); returns how many
    // unread readahead pages were evicted to make room. Pages in flight are not evicted.
    std::uint64_t insert(std::uint32_t file, PageIndex page, bool readahead,
                         std::uint64_t landsAt = 0, std::uint64_t now = 0)
    {
        std::uint64_t discarded = 0;
        while (m_capacity != 0 && size() >= m_capacity) {
            const auto used = oldestLanded(m_used, now);
            const auto ahead = oldestLanded(m_ahead, now);
            const bool fromAhead = ahead != m_ahead.end() &&
                                   (used == m_used.end() ||
                                    (m_policy == Policy::lru && ahead->touched < used->touched));
            if (!fromAhead && used == m_used.end()) {
                break; // everything is in flight
            }
            if (fromAhead) {
                ++discarded;
                --m_unusedReadahead;
                m_index.erase(ahead->key);
                m_ahead.erase(ahead);
            } else {
                m_index.erase(used->key);
                m_used.erase(used);
            }
        }
        std::list<Entry> &list = readahead ? m_ahead : m_used;
        list.push_front({key(file, page), readahead, false, landsAt > now ? landsAt : 0, ++m_tick});
        m_index.emplace(key(file, page), list.begin());
        m_unusedReadahead += readahead ? 1 : 0;
        return discarded;
    }
    std::uint64_t unusedReadahead() const { return m_unusedReadahead; }
    // Pages that can come in without evicting a page nobody has read yet.
    std::uint64_t room() const
    {
        return m_capacity == 0 ? ReadInfo::kRoomUnknown : m_capacity - m_unusedReadahead;
    }

private:
    struct Entry {
        std::uint64_t key;
        bool readahead;
        bool partlyRead = false;
        std::uint64_t landsAt = 0; // in flight until then (locked: reclaim passes it over)
        std::uint64_t touched = 0; // when last inserted or read
    };
    static std::uint64_t key(std::uint32_t file, PageIndex page)
    {
        return (std::uint64_t{file} << 40) | page;
    }
    std::uint64_t size() const { return m_used.size() + m_ahead.size(); }
    // The entry nearest the back that is not in flight, or end().
    static std::list<Entry>::iterator oldestLanded(std::list<Entry> &list, std::uint64_t now)
    {
        for (auto it = list.end(); it != list.begin();) {
            --it;
            if (it->landsAt <= now) {
                return it;
            }
        }
        return list.end();
    }

    std::uint64_t m_capacity;
    Policy m_policy;
    std::uint64_t m_tick = 0;
    std::list<Entry> m_used;  // read, or fetched by a read: newest first
    std::list<Entry> m_ahead; // read ahead and not read yet: newest first
    std::unordered_map<std::uint64_t, std::list<Entry>::iterator> m_index;
    std::uint64_t m_unusedReadahead = 0;
};

class Simulator {
public:
    // What readahead is told. `everyRead`: onRead on every read, hits counted from the marks.
    // `engine`: what the client engine tells it (engine.cpp readFile/readSlow): a read whose
    // pages are all cached and landed, not at the marker and past the open's first
    // kLearningReads, is served by the fast read and readahead sees nothing of it; any other
    // read goes the slow way and asks onRead when it misses a page or touches the marker, else
    // tells onHit (hitStartsStride, then startStride with the room). `hits` counts every cached
    // page a read found; a page read in part by a read that does not go on from its reader's
    // previous one keeps its readahead mark once (the cache's kPartlyRead); the room is the
    // cache less the readahead not read yet (in flight or landed), and a fetched page's budget
    // goes back when it lands.
    enum class Visibility { everyRead, engine };
    static constexpr std::uint32_t kLearningReads = FileReadahead::kStrideTrust + 1;

    // `rpcLatency` 0: pages land as they are asked for (no time); otherwise see the top. The
    // cache keeps readahead over pages read (keepReadahead), as the client's does.
    // `rpcBoundaryPages`: ReadInfo::rpcBoundaryPages of every read (the client's stripe).
    Simulator(ReadaheadMount &mount, std::uint64_t cachePages, std::uint32_t maxPagesPerRpc,
              std::uint64_t rpcLatency = 0, std::uint64_t rpcBoundaryPages = 0,
              Visibility visibility = Visibility::engine)
        : m_mount(&mount), m_cache(cachePages, CacheModel::Policy::keepReadahead),
          m_maxPagesPerRpc(maxPagesPerRpc), m_rpcLatency(rpcLatency),
          m_rpcBoundaryPages(rpcBoundaryPages), m_visibility(visibility)
    {
    }

    // A reader is one open file description (own readahead state) of file `file`.
    std::size_t addReader(std::uint32_t file, std::uint64_t fileSize)
    {
        std::uint32_t opens = 1;
        for (Reader &other : m_readers) {
            if (other.file == file) {
                ++opens;
            }
        }
        for (Reader &other : m_readers) {
            if (other.file == file) {
                other.opens = opens;
            }
        }
        m_readers.push_back({file, fileSize, std::make_unique<FileReadahead>(*m_mount), opens});
        return m_readers.size() - 1;
    }

    // Plays one read; returns the RPC ranges the readahead asked for.
    const std::vector<PageRange> &read(std::size_t reader, std::uint64_t offset,
                                       std::uint64_t length)
    {
        Reader &r = m_readers[reader];
        const PageIndex filePages = (r.fileSize + kPageSize - 1) / kPageSize;
        const PageIndex first = offset / kPageSize;
        const PageIndex end =
            length == 0 ? first : std::min((offset + length - 1) / kPageSize + 1, filePages);
        const bool engine = m_visibility == Visibility::engine;
        landUntil(m_clock);
        m_ranges.clear();
        if (engine && fastRead(r, offset, length, first, end)) {
            return m_ranges;
        }
        ReadInfo info;
        info.offset = offset;
        info.length = length;
        info.fileSize = r.fileSize;
        info.maxPagesPerRpc = m_maxPagesPerRpc;
        info.rpcBoundaryPages = m_rpcBoundaryPages;
        info.fileOpens = r.opens;
        info.otherReaders = r.opens > 1;
        m_missing.clear();
        std::uint64_t waitUntil = 0;
        std::uint64_t found = 0;
        for (PageIndex page = first; page < end; ++page) {
            const auto lookup = m_cache.read(r.file, page);
            if (lookup.cached) {
                ++found;
                info.readaheadHits += lookup.readahead ? 1 : 0;
                waitUntil = std::max(waitUntil, lookup.landsAt);
            } else {
                m_missing.push_back(page);
            }
        }
        m_stats.cachedPages += found;
        if (m_rpcLatency != 0) {
            if (!m_missing.empty()) {
                waitUntil = std::max(waitUntil, m_clock + m_rpcLatency); // its own RPC
            }
            if (waitUntil > m_clock) {
                m_stats.stallSteps += waitUntil - m_clock;
                m_clock = waitUntil;
            }
            m_clock += end > first ? end - first : 0; // copying the read out
            m_stats.aheadPagesSum += m_cache.unusedReadahead();
            landUntil(m_clock);
        }
        info.missingPages = m_missing.size();
        m_stats.missReads += m_missing.empty() ? 0 : 1;
        m_stats.reads += 1;
        m_stats.pagesRead += end > first ? end - first : 0;
        m_stats.readaheadHits += info.readaheadHits;
        m_stats.missingPages += info.missingPages;

        ReadaheadPlan plan;
        if (!engine) {
            info.cacheRoom = m_cache.room();
            plan = r.readahead->onRead(info);
        } else {
            // The engine counts every page found as a hit; the budget of a page read ahead went
            // back when it landed.
            m_mount->stats().add(params::catalog::ra_hits, found);
            info.readaheadHits = 0;
            const PageIndex marker = r.readahead->marker();
            const bool atMarker =
                marker != FileReadahead::kNoMarker && first <= marker && marker < end;
            const bool miss = !m_missing.empty() || atMarker;
            if (miss || r.readahead->hitStartsStride(info)) {
                info.cacheRoom = m_cache.room();
                info.unreadPages = m_cache.unusedReadahead();
                plan = miss ? r.readahead->onRead(info) : r.readahead->startStride(info);
                ++m_stats.planned;
            }
            r.learning -= r.learning != 0 ? 1 : 0;
            r.prevEnd = offset + length;
        }
        std::uint64_t discarded = 0;
        for (const PageIndex page : m_missing) {
            discarded += m_cache.insert(r.file, page, false);
        }
        std::uint64_t skipped = 0;
        std::uint64_t fetched = 0;
        const std::uint64_t landsAt = m_rpcLatency != 0 ? m_clock + m_rpcLatency : 0;
        while (auto range = plan.next()) {
            m_ranges.push_back(*range);
            ++m_stats.rpcs;
            for (PageIndex page = range->first; page < range->end(); ++page) {
                if (m_cache.contains(r.file, page) || (engine && page >= first && page < end)) {
                    ++skipped;
                } else {
                    discarded += m_cache.insert(r.file, page, true, landsAt, m_clock);
                    ++m_stats.readaheadInserted;
                    ++fetched;
                }
            }
        }
        m_stats.skipped += skipped;
        m_stats.discarded += discarded;
        m_mount->onFetched(fetched);
        m_mount->release(skipped);
        if (engine) {
            m_landing.push_back({landsAt, fetched});
            landUntil(m_clock);
        }
        if (discarded != 0) {
            m_mount->onDiscarded(discarded, !engine);
        }
        m_stats.steps = m_clock;
        return m_ranges;
    }

    const SimStats &stats() const { return m_stats; }
    const CacheModel &cache() const { return m_cache; }
    FileReadahead &readahead(std::size_t reader) { return *m_readers[reader].readahead; }

private:
    struct Reader {
        std::uint32_t file;
        std::uint64_t fileSize;
        std::unique_ptr<FileReadahead> readahead;
        std::uint32_t opens = 1;                 // the file's readers (ReadInfo::fileOpens)
        std::uint32_t learning = kLearningReads; // the open's first reads go the slow way
        std::uint64_t prevEnd = 0;               // where this reader's previous read ended
    };
    struct Landing {
        std::uint64_t at;
        std::uint64_t pages;
    };

    // The engine's fast read: every page cached and landed, no marker, past the learning reads.
    bool fastRead(Reader &r, std::uint64_t offset, std::uint64_t length, PageIndex first,
                  PageIndex end)
    {
        const PageIndex marker = r.readahead->marker();
        if (r.learning != 0 ||
            (marker != FileReadahead::kNoMarker && first <= marker && marker < end)) {
            return false;
        }
        for (PageIndex page = first; page < end; ++page) {
            if (!m_cache.landed(r.file, page, m_clock)) {
                return false;
            }
        }
        for (PageIndex page = first; page < end; ++page) {
            // Read in part, not going on from this reader's previous read in the page.
            const std::uint64_t pageStart = page * kPageSize;
            const bool inPart = offset > pageStart || offset + length < pageStart + kPageSize;
            const bool goesOn =
                page == first && r.prevEnd != 0 && (r.prevEnd - 1) / kPageSize == first;
            m_cache.read(r.file, page, inPart && !goesOn);
        }
        m_mount->stats().add(params::catalog::ra_hits, end - first);
        m_stats.cachedPages += end - first;
        m_stats.reads += 1;
        m_stats.pagesRead += end - first;
        if (m_rpcLatency != 0) {
            m_clock += end - first;
            m_stats.aheadPagesSum += m_cache.unusedReadahead();
        }
        m_stats.steps = m_clock;
        r.prevEnd = offset + length;
        return true;
    }

    // Gives back the budget of the pages that landed by step `now` (engine visibility).
    void landUntil(std::uint64_t now)
    {
        while (!m_landing.empty() && m_landing.front().at <= now) {
            m_mount->release(m_landing.front().pages);
            m_landing.pop_front();
        }
    }

    ReadaheadMount *m_mount;
    CacheModel m_cache;
    std::uint32_t m_maxPagesPerRpc;
    std::uint64_t m_rpcLatency;
    std::uint64_t m_rpcBoundaryPages;
    Visibility m_visibility;
    std::uint64_t m_clock = 0;
    std::vector<Reader> m_readers;
    std::vector<PageIndex> m_missing;
    std::vector<PageRange> m_ranges;
    std::deque<Landing> m_landing; // fetched pages by landing step, in order
    SimStats m_stats;
};

} // namespace lutra::readahead::sim
