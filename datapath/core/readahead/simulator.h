#pragma once
// A small model to play access patterns against the readahead engine: an LRU page cache that
// marks pages read ahead until someone reads them, and readers that do what the client engine
// will do on each read (look up, ask FileReadahead, fetch the plan, report discards). For tests
// and benches; it allocates freely, the engine does not.

#include "core/readahead/readahead.h"

#include <cstdint>
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

    double hitRatio() const { return pagesRead == 0 ? 0.0 : double(cachedPages) / pagesRead; }
    double discardRatio() const
    {
        return readaheadInserted == 0 ? 0.0 : double(discarded) / readaheadInserted;
    }
};

// LRU over (file, page); capacity 0 is unlimited. Reads move a page to the front.
class CacheModel {
public:
    explicit CacheModel(std::uint64_t capacity) : m_capacity(capacity) {}

    struct Lookup {
        bool cached = false;
        bool readahead = false; // was read ahead and not read before (mark now cleared)
    };
    Lookup read(std::uint32_t file, PageIndex page)
    {
        auto it = m_index.find(key(file, page));
        if (it == m_index.end()) {
            return {};
        }
        Lookup result{true, it->second->readahead};
        if (it->second->readahead) {
            it->second->readahead = false;
            --m_unusedReadahead;
        }
        m_lru.splice(m_lru.begin(), m_lru, it->second);
        return result;
    }
    bool contains(std::uint32_t file, PageIndex page) const
    {
        return m_index.count(key(file, page)) != 0;
    }
    // Inserts a page; returns how many unread readahead pages were evicted to make room.
    std::uint64_t insert(std::uint32_t file, PageIndex page, bool readahead)
    {
        std::uint64_t discarded = 0;
        while (m_capacity != 0 && m_lru.size() >= m_capacity) {
            const Entry &victim = m_lru.back();
            if (victim.readahead) {
                ++discarded;
                --m_unusedReadahead;
            }
            m_index.erase(victim.key);
            m_lru.pop_back();
        }
        m_lru.push_front({key(file, page), readahead});
        m_index.emplace(key(file, page), m_lru.begin());
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
    };
    static std::uint64_t key(std::uint32_t file, PageIndex page)
    {
        return (std::uint64_t{file} << 40) | page;
    }

    std::uint64_t m_capacity;
    std::list<Entry> m_lru;
    std::unordered_map<std::uint64_t, std::list<Entry>::iterator> m_index;
    std::uint64_t m_unusedReadahead = 0;
};

class Simulator {
public:
    Simulator(ReadaheadMount &mount, std::uint64_t cachePages, std::uint32_t maxPagesPerRpc)
        : m_mount(&mount), m_cache(cachePages), m_maxPagesPerRpc(maxPagesPerRpc)
    {
    }

    // A reader is one open file description (own readahead state) of file `file`.
    std::size_t addReader(std::uint32_t file, std::uint64_t fileSize)
    {
        m_readers.push_back({file, fileSize, std::make_unique<FileReadahead>(*m_mount)});
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
        ReadInfo info;
        info.offset = offset;
        info.length = length;
        info.fileSize = r.fileSize;
        info.maxPagesPerRpc = m_maxPagesPerRpc;
        m_missing.clear();
        for (PageIndex page = first; page < end; ++page) {
            const auto lookup = m_cache.read(r.file, page);
            if (lookup.cached) {
                ++m_stats.cachedPages;
                info.readaheadHits += lookup.readahead ? 1 : 0;
            } else {
                m_missing.push_back(page);
            }
        }
        info.missingPages = m_missing.size();
        info.cacheRoom = m_cache.room();
        m_stats.reads += 1;
        m_stats.pagesRead += end > first ? end - first : 0;
        m_stats.readaheadHits += info.readaheadHits;
        m_stats.missingPages += info.missingPages;

        ReadaheadPlan plan = r.readahead->onRead(info);
        std::uint64_t discarded = 0;
        for (const PageIndex page : m_missing) {
            discarded += m_cache.insert(r.file, page, false);
        }
        m_ranges.clear();
        std::uint64_t skipped = 0;
        while (auto range = plan.next()) {
            m_ranges.push_back(*range);
            ++m_stats.rpcs;
            for (PageIndex page = range->first; page < range->end(); ++page) {
                if (m_cache.contains(r.file, page)) {
                    ++skipped;
                } else {
                    discarded += m_cache.insert(r.file, page, true);
                    ++m_stats.readaheadInserted;
                }
            }
        }
        m_stats.skipped += skipped;
        m_stats.discarded += discarded;
        m_mount->onFetched(plan.pages() - skipped);
        m_mount->release(skipped);
        if (discarded != 0) {
            m_mount->onDiscarded(discarded);
        }
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
    };

    ReadaheadMount *m_mount;
    CacheModel m_cache;
    std::uint32_t m_maxPagesPerRpc;
    std::vector<Reader> m_readers;
    std::vector<PageIndex> m_missing;
    std::vector<PageRange> m_ranges;
    SimStats m_stats;
};

} // namespace lutra::readahead::sim
