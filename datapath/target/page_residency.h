#pragma once
// A zero-copy read's range made resident in the page cache by the service thread before the
// transport sends it: tcp sends with sendfile on its I/O thread, and a page missing there is read
// from the disk on that thread, stalling every other connection it carries meanwhile.

#include <cstddef>
#include <span>

namespace lutra::target {

enum class Residency {
    resident, // every page was in the page cache already: nothing was read
    filled,   // some were not: read in now, on the calling thread
    failed,   // could not be read in (the file shrank under the range, an I/O error, no memory):
              // the send reads what it can, as it did before
};

// `data` lies in a read-only shared mapping of a file (target/mapped_crcs.h). mincore() says
// whether every page is cached (on hot data it costs less than MADV_POPULATE_READ: see
// datapath/target/README.md); if one is not, MADV_POPULATE_READ reads the missing stretch in,
// in large reads as a sequential fault would. `scratch` holds mincore's answer: at least one byte
// per page of the range (plus one when `data` does not start on a page). Never raises SIGBUS.
Residency makeResident(std::span<const std::byte> data, std::span<unsigned char> scratch) noexcept;

// Whether every page of `data` is in the page cache (mincore only: never reads anything in, never
// raises SIGBUS); false also when mincore fails. `scratch` as for makeResident.
bool isResident(std::span<const std::byte> data, std::span<unsigned char> scratch) noexcept;

// The scratch bytes makeResident needs for a range of `bytes` bytes anywhere in a page.
std::size_t residencyScratchBytes(std::size_t bytes) noexcept;

} // namespace lutra::target
