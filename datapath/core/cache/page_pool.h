#pragma once
// The page pool: 4 KiB pages carved from large page-aligned chunks (64 MiB by default), so a
// transport registers each chunk once (verbs: one ibv_reg_mr per chunk, not per page) and bulk
// RPCs move data straight into and out of cache pages. The pool only grows; chunks are released
// when the pool is destroyed.

#include <lutra/status.h>

#include "core/cache/page.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace lutra::cache {

// Called when the pool gains or loses a chunk, e.g. bound to Transport::registerMemory and
// deregisterMemory. `added` returns the region id that segments of the chunk's pages carry
// (0 = unregistered, what tcp accepts); an error makes the chunk (and the grab that needed it)
// fail. Either may be empty.
struct ChunkHooks {
    std::function<Result<std::uint64_t>(void *base, std::size_t length)> added;
    std::function<void(std::uint64_t region, void *base, std::size_t length)> removed;
};

class PagePool {
public:
    // `chunkBytes` is rounded up to a whole number of pages.
    PagePool(std::size_t chunkBytes, ChunkHooks hooks);
    ~PagePool();
    PagePool(const PagePool &) = delete;
    PagePool &operator=(const PagePool &) = delete;

    // Allocates and registers one more chunk; returns its page descriptors, all free. Allocates
    // (the pool grows), so callers do it only when the free list is empty.
    Result<std::span<Page>> addChunk();

    std::size_t chunkPages() const noexcept { return m_chunkPages; }
    std::size_t totalPages() const noexcept { return m_totalPages.load(std::memory_order_relaxed); }
    std::size_t chunkCount() const;

private:
    struct Chunk {
        std::byte *base = nullptr;
        std::uint64_t region = 0;
        std::unique_ptr<Page[]> pages;
    };

    std::size_t m_chunkPages;
    ChunkHooks m_hooks;
    mutable std::mutex m_mutex; // guards m_chunks
    std::vector<Chunk> m_chunks;
    std::atomic<std::size_t> m_totalPages{0};
};

} // namespace lutra::cache
