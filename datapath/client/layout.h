#pragma once
// Where a file's bytes live: RAID-0 striping over every target of the mount, in stripes of a
// fixed size, as Lustre's stripe_count=-1 layout. Stripe k of a file is on target k % N, at
// offset (k / N) * stripeSize of that target's object (each target holds one object per file).

#include <algorithm>
#include <cstdint>

namespace lutra::client {

struct StripeLayout {
    std::uint32_t targets = 1;
    std::uint64_t stripeSize = 1 << 20; // bytes, a multiple of the page size

    struct Piece {
        std::uint32_t target = 0;
        std::uint64_t objectOffset = 0; // offset in that target's object
        std::uint64_t length = 0;       // bytes, never crossing a stripe
    };

    // The piece of [offset, offset + length) that starts at `offset`: at most to the end of
    // its stripe. Callers loop, advancing by piece.length.
    Piece pieceAt(std::uint64_t offset, std::uint64_t length) const noexcept
    {
        const std::uint64_t stripe = offset / stripeSize;
        const std::uint64_t within = offset % stripeSize;
        Piece piece;
        piece.target = static_cast<std::uint32_t>(stripe % targets);
        piece.objectOffset = (stripe / targets) * stripeSize + within;
        piece.length = std::min(length, stripeSize - within);
        return piece;
    }

    // Where a readahead window the cache's room cuts short ends (a multiple of this many file
    // pages) so that it goes in whole RPCs: a row of stripes (one stripe on every target, an
    // RPC each) when a stripe fits in one RPC, else `rpcPages` (RPCs cut inside a stripe).
    std::uint64_t rowPages(std::uint64_t rpcPages, std::uint64_t pageSize) const noexcept
    {
        const std::uint64_t stripePages = stripeSize / pageSize;
        return targets > 1 && stripePages <= rpcPages ? stripePages * targets : rpcPages;
    }

    // The file offset of byte `objectOffset` of the object on `target`.
    std::uint64_t fileOffset(std::uint32_t target, std::uint64_t objectOffset) const noexcept
    {
        const std::uint64_t row = objectOffset / stripeSize;
        return (row * targets + target) * stripeSize + objectOffset % stripeSize;
    }

    // The file size implied by one target's object size (0 for an empty object). The file's
    // size is the largest over all its objects.
    std::uint64_t fileSizeFrom(std::uint32_t target, std::uint64_t objectSize) const noexcept
    {
        return objectSize == 0 ? 0 : fileOffset(target, objectSize - 1) + 1;
    }

    // The size target's object must have for the file to be `fileSize` bytes long (truncate).
    std::uint64_t objectSizeFor(std::uint32_t target, std::uint64_t fileSize) const noexcept
    {
        if (fileSize == 0) {
            return 0;
        }
        const std::uint64_t stripes = (fileSize + stripeSize - 1) / stripeSize; // stripes touched
        const std::uint64_t lastStripe = stripes - 1;
        const std::uint64_t rows = lastStripe / targets;
        const auto lastTarget = static_cast<std::uint32_t>(lastStripe % targets);
        if (target < lastTarget) {
            return (rows + 1) * stripeSize;
        }
        if (target > lastTarget) {
            return rows * stripeSize;
        }
        return rows * stripeSize + (fileSize - lastStripe * stripeSize);
    }
};

} // namespace lutra::client
