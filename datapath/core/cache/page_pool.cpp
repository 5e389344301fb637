#include "core/cache/page_pool.h"

#include <cstdlib>

namespace lutra::cache {

using core::kPageSize;

PagePool::PagePool(std::size_t chunkBytes, ChunkHooks hooks)
    : m_chunkPages(chunkBytes < kPageSize ? 1 : (chunkBytes + kPageSize - 1) / kPageSize),
      m_hooks(std::move(hooks))
{
}

PagePool::~PagePool()
{
    for (Chunk &chunk : m_chunks) {
        if (m_hooks.removed) {
            m_hooks.removed(chunk.region, chunk.base, m_chunkPages * kPageSize);
        }
        std::free(chunk.base);
    }
}

Result<std::span<Page>> PagePool::addChunk()
{
    const std::size_t bytes = m_chunkPages * kPageSize;
    // Page aligned, so every page of the chunk is too (O_DIRECT and RDMA like that).
    auto *base = static_cast<std::byte *>(std::aligned_alloc(kPageSize, bytes));
    if (base == nullptr) {
        return Status(Errc::resource_exhausted, "page pool: out of memory");
    }
    std::uint64_t region = 0;
    if (m_hooks.added) {
        Result<std::uint64_t> registered = m_hooks.added(base, bytes);
        if (!registered.ok()) {
            std::free(base);
            return registered.status().withContext("page pool: registering a chunk");
        }
        region = *registered;
    }
    auto pages = std::make_unique<Page[]>(m_chunkPages);
    for (std::size_t i = 0; i < m_chunkPages; ++i) {
        pages[i].data = base + i * kPageSize;
        pages[i].region = region;
    }
    std::span<Page> result(pages.get(), m_chunkPages);
    {
        std::lock_guard lock(m_mutex);
        m_chunks.push_back(Chunk{base, region, std::move(pages)});
    }
    m_totalPages.fetch_add(m_chunkPages, std::memory_order_relaxed);
    return result;
}

std::size_t PagePool::chunkCount() const
{
    std::lock_guard lock(m_mutex);
    return m_chunks.size();
}

} // namespace lutra::cache
