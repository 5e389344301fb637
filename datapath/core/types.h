#pragma once
// Vocabulary shared by the client engine's parts (page cache, readahead, locks, write-back).

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>

namespace lutra::core {

inline constexpr std::size_t kPageSize = 4096;
inline constexpr std::size_t kPageShift = 12;

// An object as the client knows it: which target serves it and its id there (the protocol's
// objectId, an inode number on the target).
struct ObjectKey {
    std::uint32_t target = 0;
    std::uint64_t object = 0;

    auto operator<=>(const ObjectKey &) const = default;
};

struct ObjectKeyHash {
    std::size_t operator()(const ObjectKey &key) const noexcept
    {
        // splitmix64 finalizer: cheap, and spreads sequential inode numbers over shards.
        std::uint64_t x = key.object ^ (std::uint64_t{key.target} << 48);
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ULL;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebULL;
        x ^= x >> 31;
        return static_cast<std::size_t>(x);
    }
};

using PageIndex = std::uint64_t; // byte offset >> kPageShift

// An interned job id ("slurm.1234"): pages and locks remember the last job that used them as a
// small number, not a string. 0 means "no job".
using JobTag = std::uint32_t;

} // namespace lutra::core
