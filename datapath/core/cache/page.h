#pragma once
// One cache page's descriptor. The 4 KiB of data live in a pool chunk (page_pool.h); the
// descriptor lives in a separate array so scanning descriptors never touches page data.
//
// Which lock guards what:
//  * state, pins, job, lockCookie: atomics, read and written without a lock;
//  * key, index: written only while the page is off the index (free, or just allocated);
//  * hashNext, object*: the page's index shard lock;
//  * lruNext, lruPrev, queue: the cache's LRU lock (which also guards the free list).

#include "core/engine/types.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace lutra::cache {

struct Page {
    // state: flags in the high bits, the number of lock-free copy-out readers in the low 16 bits.
    static constexpr std::uint32_t kReaderMask = 0xffffu;
    static constexpr std::uint32_t kLocked = 1u << 16;     // being filled or modified
    static constexpr std::uint32_t kUptodate = 1u << 17;   // data valid
    static constexpr std::uint32_t kDirty = 1u << 18;      // modified, not yet written back
    static constexpr std::uint32_t kWriteback = 1u << 19;  // in a write RPC (data must not change)
    static constexpr std::uint32_t kReferenced = 1u << 20; // hit once since last scan
    static constexpr std::uint32_t kActive = 1u << 21;     // hit twice: worth keeping
    static constexpr std::uint32_t kCached = 1u << 22;     // in the index
    static constexpr std::uint32_t kReadahead = 1u << 23;  // read ahead, not read yet
    // Read in part, and the reader's next read did not go on in it: another reader will want
    // the rest (IOR-hard transfers that are not a multiple of the page size share pages).
    static constexpr std::uint32_t kPartial = 1u << 24;

    std::atomic<std::uint32_t> state{0};
    std::atomic<std::uint32_t> pins{0}; // PageRef holders (I/O, write-back, slow-path copy)
    std::atomic<engine::JobTag> job{0};
    std::atomic<std::uint64_t> lockCookie{0};

    engine::ObjectKey key;
    engine::PageIndex index = 0;
    std::byte *data = nullptr;
    std::uint64_t region = 0; // transport region id of the page's chunk

    Page *hashNext = nullptr;       // page hash chain of the shard
    Page *objectNext = nullptr;     // ring of the object's pages
    Page *objectPrev = nullptr;     //
    Page *objectHashNext = nullptr; // object hash chain (only for the ring's head page)
    bool objectHead = false;

    Page *lruNext = nullptr; // also the free list link
    Page *lruPrev = nullptr;
    std::uint8_t queue = 0; // which LRU queue holds it (PageCache::QueueId)
};

} // namespace lutra::cache
