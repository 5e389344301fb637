#pragma once
// The per-thread fast read (LU-9749: a cached read must not pay for what only a miss needs).
// Each thread keeps a context for the file it read last: the file's size as this client knows
// it, the stripe the last read fell in (file range -> target and object offset, so a read in the
// same stripe does no division) and the engine's invalidation epoch. A hit is then a size check,
// a marker check, one page-cache lookup and a copy, plus the counters.
//
// Invalidation: Engine::fastEpoch moves on everything that can make the cached size or mapping
// wrong (a lock cancelled — another client writes or truncates —, a truncate, a size refresh
// that changed a size, a file closed, so a new file at the same address starts afresh); a
// context whose epoch differs is refilled. The pages themselves are not cached here: each read
// looks its page up (PageCache::readCached), and a cancel drops the lock's pages, so a hit is
// always data covered by a lock.
#include "client/engine.h"

#include <cstdint>
#include <span>

namespace lutra::client {

// The file's size as this client knows it: the largest implied by any stripe object.
std::uint64_t knownFileSize(const FileData &file, const StripeLayout &layout) noexcept;

// Serves all of `out` at `offset` from the cache through this thread's context and returns true;
// false when it cannot (fast_read=0, past the known size, a stripe boundary, the readahead
// marker, a page not cached): the caller takes the full path, which may copy the same bytes again.
bool fastRead(Engine &engine, FileData &file, std::uint64_t offset, std::span<std::byte> out);

} // namespace lutra::client
