#pragma once
// Page CRCs of objects the target read or wrote, kept until the pages change, so a checksummed
// read of unchanged data sends without summing it again (a write's CRCs come free: the target
// checks the client's sums against the data it received anyway).
//
// Keyed by inode. A change through the protocol (write, truncate) brackets itself with
// beginChange/endChange over the pages it touches: both drop those pages' CRCs, and sums computed
// by a reader that began before a change, or while one is in progress, are refused (ticket). A
// change behind the target's back is noticed by the object's mtime and size, which every lookup
// and store carries (one inside the file system's timestamp tick is not: the client then reports
// a checksum mismatch, never accepts wrong data). Only whole pages are kept.
//
// Sharded by inode (kShards mutexes, each with its own map and epoch: every state of one object
// lives in one shard, so tickets compare within it; read RPCs of different objects do not meet on
// one lock). Bounded in objects and in kept pages (kMaxObjects, kMaxPagesKept, split evenly over
// the shards; kMaxPagesPerObject for one object): an object that needs room evicts the shard's
// least recently used objects that no change holds; an evicted object counts as forgotten.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace lutra::target {

class PageCrcCache {
public:
    static constexpr std::size_t kShards = 16;
    static constexpr std::size_t kMaxObjects = 4096;
    static constexpr std::uint64_t kMaxPagesPerObject = std::uint64_t{1} << 20; // 4 GiB objects
    // CRCs of 32 GiB of data: 32 MiB of sums and 1 MiB of valid bits at most.
    static constexpr std::uint64_t kMaxPagesKept = std::uint64_t{1} << 23;
    static constexpr std::uint64_t kToTheEnd = UINT64_MAX;

    // What the object looked like (fstat) when its pages were summed.
    struct Identity {
        std::int64_t mtimeNs = 0;
        std::uint64_t size = 0;
        bool operator==(const Identity &) const = default;
    };
    // Taken before summing; store() keeps the sums only if no change of the object began since.
    struct Ticket {
        std::uint64_t epoch = 0;
        bool valid = false; // false: a change was in progress
    };

    // The CRCs of pages [firstPage, firstPage + out.size()) into `out`, if every one is kept for
    // an object that still looks like `identity`; false (out unspecified) otherwise.
    bool lookup(std::uint64_t inode, const Identity &identity, std::uint64_t firstPage,
                std::span<std::uint32_t> out);
    Ticket ticket(std::uint64_t inode);
    // Keeps `crcs` of pages from `firstPage`, summed after `ticket` from an object that looked
    // like `identity` then; refused when a change began since the ticket or is in progress.
    void store(std::uint64_t inode, const Identity &identity, const Ticket &ticket,
               std::uint64_t firstPage, std::span<const std::uint32_t> crcs);
    // A change of pages [firstPage, endPage) (kToTheEnd: truncate) begins / ended. endChange
    // records what the object looks like after it (`after`: fstat once the change is done).
    void beginChange(std::uint64_t inode, std::uint64_t firstPage, std::uint64_t endPage);
    // `written`: the CRCs of the pages from firstPage the change wrote (a writer checked them
    // against the data anyway), kept in the same step — unless a change of any of the same pages
    // ran beside this one (which bytes landed last is unknown) or `after` is unknown. Changes of
    // other pages at the same time do not matter: several write RPCs of one object are in flight
    // at once, and a rule per object kept almost none of their sums. True when `written` (if
    // any) was kept.
    bool endChange(std::uint64_t inode, std::uint64_t firstPage, std::uint64_t endPage,
                   const std::optional<Identity> &after,
                   std::span<const std::uint32_t> written = {});
    // The object is gone (unlinked): its inode may name another object next.
    void forget(std::uint64_t inode);

    std::uint64_t hits() const;    // pages served from the cache
    std::uint64_t stored() const;  // pages kept (summed over time)
    std::uint64_t evicted() const; // objects evicted for room

private:
    // A change in progress: its pages, and whether a change of some of the same pages ran
    // beside it.
    struct Running {
        std::uint64_t firstPage = 0;
        std::uint64_t endPage = 0;
        bool overlapped = false;
    };
    struct Object {
        Identity identity;
        std::uint64_t lastChange = 0; // the shard's epoch at its last beginChange/endChange
        std::uint64_t lastUse = 0;    // the shard's use clock at its last lookup or store
        std::vector<Running> changes; // in progress
        std::vector<std::uint32_t> crcs;
        std::vector<bool> valid;
    };
    struct Shard {
        mutable std::mutex mutex;
        std::unordered_map<std::uint64_t, Object> objects;
        std::uint64_t epoch = 1; // counts every change event of the shard's objects
        // The epoch when an object was last forgotten or evicted, or a change went untracked: a
        // ticket older than that keeps nothing for an object not in the map.
        std::uint64_t forgottenAt = 0;
        std::uint64_t useClock = 0;
        std::uint64_t pagesKept = 0; // page slots of the objects' arrays
        std::uint64_t hits = 0;
        std::uint64_t stored = 0;
        std::uint64_t evicted = 0;
    };
    static constexpr std::size_t kShardObjects = kMaxObjects / kShards;
    static constexpr std::uint64_t kShardPages = kMaxPagesKept / kShards;

    Shard &shardOf(std::uint64_t inode) { return m_shards[inode % kShards]; }
    std::uint64_t sum(std::uint64_t Shard::*counter) const;
    static void dropPages(Object &object, std::uint64_t firstPage, std::uint64_t endPage);
    // Evicts the shard's least recently used objects that no change holds (never `keep`) until
    // `objects` more fit in its object bound and `pages` more in its page bound; false when they
    // cannot. Evicting counts as forgetting.
    static bool makeRoom(Shard &shard, std::uint64_t keep, std::size_t objects,
                         std::uint64_t pages);
    // The object of `inode`, created (with room made) if absent; nullptr when there is no room.
    static Object *track(Shard &shard, std::uint64_t inode);
    // Keeps `crcs` of pages from `firstPage` (room made, counted); false when there is none.
    static bool keepCrcs(Shard &shard, std::uint64_t inode, Object &object, std::uint64_t firstPage,
                         std::span<const std::uint32_t> crcs);

    Shard m_shards[kShards];
};

} // namespace lutra::target
