#pragma once
// One cache page's descriptor. The 4 KiB of data live in a pool chunk (page_pool.h); the
// descriptor lives in a separate array so scanning descriptors never touches page data.
// Descriptors and data are never freed while the cache lives (a dropped page goes to the free
// list and is reused), so a lock-free reader may look at any descriptor it reached; `state`'s
// generation tells it whether the page is still the one it found (see README.md, Fast read).
//
// Which lock guards what:
//  * state, pins, job, lockCookie, hashNext: atomics, read without a lock (hashNext, job are
//    written under the page's index shard lock, held exclusively);
//  * key, index: written only while the page is off the index (free, or just allocated);
//    lock-free readers read them with atomic_ref;
//  * objectRing, jobRing: the page's index shard lock;
//  * lruNext, lruPrev, queue: the cache's LRU lock (which also guards the free list).

#include "core/types.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lutra::cache {

struct Page;

// A page's place in a ring of pages that share a key (an object's pages, a job's pages); the
// ring's head page is also on a hash chain of ring heads.
struct RingLinks {
    Page *next = nullptr;
    Page *prev = nullptr;
    Page *hashNext = nullptr; // chain of ring heads (only for the head page)
    bool head = false;
};

struct Page {
    // state: the generation in the high 32 bits (moves whenever the page is locked or leaves the
    // index: a lock-free copy is valid only if it did not move), flags in bits 16..31, the number
    // of announced copy-out readers in the low 16 bits.
    static constexpr std::uint64_t kReaderMask = 0xffffu;
    static constexpr std::uint64_t kLocked = 1u << 16;     // being filled or modified
    static constexpr std::uint64_t kUptodate = 1u << 17;   // data valid
    static constexpr std::uint64_t kDirty = 1u << 18;      // modified, not yet written back
    static constexpr std::uint64_t kWriteback = 1u << 19;  // in a write RPC (data must not change)
    static constexpr std::uint64_t kReferenced = 1u << 20; // hit once since last scan
    static constexpr std::uint64_t kActive = 1u << 21;     // hit twice: worth keeping
    static constexpr std::uint64_t kCached = 1u << 22;     // in the index
    static constexpr std::uint64_t kReadahead = 1u << 23;  // read ahead, not read yet
    // Read in part, and the reader's next read did not go on in it: another reader will want
    // the rest (IOR-hard transfers that are not a multiple of the page size share pages).
    static constexpr std::uint64_t kPartial = 1u << 24;
    // Read ahead, and its first reader took only part of it: the page stays read ahead (and
    // unread) for the rest's reader; the next read of any kind clears both. Unlike kPartial,
    // reclaim's passes keep it, so a page dropped with it was used, not discarded.
    static constexpr std::uint64_t kPartlyRead = 1u << 25;
    // Someone sleeps until kLocked or kWriteback clears: only then does the clearing side pay
    // for a wake. std::atomic<uint64_t>::notify_all otherwise bumps one process-wide counter and
    // makes a futex call whenever any thread waits on any page (libstdc++ keys its waiter pool
    // by address bits every Page shares), once per page of every RPC.
    static constexpr std::uint64_t kWaiters = 1u << 26;
    static constexpr std::uint64_t kFlagMask = 0xffff0000u;
    static constexpr unsigned kGenerationShift = 32;
    static constexpr std::uint64_t kGenerationOne = std::uint64_t{1} << kGenerationShift;

    static constexpr std::uint32_t generation(std::uint64_t state) noexcept
    {
        return static_cast<std::uint32_t>(state >> kGenerationShift);
    }

    // Whether the page holds (key, index). A reader without the shard lock may be looking at
    // any descriptor (they are never freed), so it reads the key through atomic_ref; the key is
    // written only while the page is off the index.
    bool holds(const core::ObjectKey &k, core::PageIndex i) noexcept
    {
        return std::atomic_ref<core::PageIndex>(index).load(std::memory_order_relaxed) == i &&
               std::atomic_ref<std::uint64_t>(key.object).load(std::memory_order_relaxed) ==
                   k.object &&
               std::atomic_ref<std::uint32_t>(key.target).load(std::memory_order_relaxed) ==
                   k.target;
    }

    // What a lock-free reader touches, first: one cache line.
    std::atomic<std::uint64_t> state{0};
    std::atomic<core::JobTag> job{0};
    std::atomic<std::uint32_t> pins{0}; // PageRef holders (I/O, write-back, slow-path copy)
    core::ObjectKey key;
    core::PageIndex index = 0;
    std::byte *data = nullptr;
    std::atomic<Page *> hashNext{nullptr}; // page hash chain of the shard

    std::atomic<std::uint64_t> lockCookie{0};
    std::uint64_t region = 0; // transport region id of the page's chunk

    RingLinks objectRing; // the object's pages
    RingLinks jobRing;    // the pages `job` last touched, per shard

    Page *lruNext = nullptr; // also the free list link
    Page *lruPrev = nullptr;
    std::uint8_t queue = 0; // which LRU queue holds it (PageCache::QueueId)
};

} // namespace lutra::cache
