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
// a checksum mismatch, never accepts wrong data). Only whole pages are kept. Bounded: at most
// kMaxObjects objects and kMaxPagesPerObject pages each; beyond that, nothing new is kept until
// an object is forgotten.

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
    static constexpr std::size_t kMaxObjects = 4096;
    static constexpr std::uint64_t kMaxPagesPerObject = std::uint64_t{1} << 20; // 4 GiB objects
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
    // The ticket it returns stands right after this change: a writer stores the CRCs of what it
    // wrote with it (refused if another change is still in progress or begins before the store).
    Ticket endChange(std::uint64_t inode, std::uint64_t firstPage, std::uint64_t endPage,
                     const std::optional<Identity> &after);
    // The object is gone (unlinked): its inode may name another object next.
    void forget(std::uint64_t inode);

    std::uint64_t hits() const;   // pages served from the cache
    std::uint64_t stored() const; // pages kept

private:
    struct Object {
        Identity identity;
        std::uint64_t lastChange = 0; // m_epoch at its last beginChange/endChange
        std::uint32_t changes = 0;    // in progress
        std::vector<std::uint32_t> crcs;
        std::vector<bool> valid;
    };
    static void dropPages(Object &object, std::uint64_t firstPage, std::uint64_t endPage);

    mutable std::mutex m_mutex;
    std::unordered_map<std::uint64_t, Object> m_objects;
    std::uint64_t m_epoch = 1; // counts every change event of any object
    // m_epoch when an object was last forgotten or a change went untracked (the map full): a
    // ticket older than that keeps nothing for an object not in the map.
    std::uint64_t m_forgottenAt = 0;
    std::uint64_t m_hits = 0;
    std::uint64_t m_stored = 0;
};

} // namespace lutra::target
