#pragma once
// crc32c (Castagnoli, the iSCSI CRC) of bulk pages, computed with ISA-L.

#include <lutra/status.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace lutra::protocol {

// The standard crc32c (initial value and final xor 0xffffffff): crc32c("123456789") is
// 0xe3069283. Chainable: crc32c(b, crc32c(a)) == crc32c(a followed by b).
std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t previous = 0) noexcept;

// One crc32c per page, each page at most kPageSize bytes (a partial last page is summed over its
// valid bytes only). `out` must have exactly one slot per page.
Status computePageCrcs(std::span<const std::span<const std::byte>> pages,
                       std::span<std::uint32_t> out);

// The same for contiguous data cut into kPageSize pages: out.size() == ceil(size / kPageSize).
Status computePageCrcs(std::span<const std::byte> data, std::span<std::uint32_t> out);

} // namespace lutra::protocol
