#pragma once
// Page checksums of a bulk put summed as its bytes arrive (transport::ArrivalSums): the receive
// path feeds each piece right after reading it, while it is still in the CPU's caches, so the
// host does not read the data back from memory to verify it.

#include <lutra/transport.h>

#include <cstddef>
#include <cstdint>

namespace lutra::transport::tcp {

class ArrivalSummer {
public:
    // A put into memory exposed with `sums` begins (pageCrcs null: nothing to sum).
    void start(const ArrivalSums &sums) noexcept;
    void stop() noexcept { m_sums = {}; }
    bool active() const noexcept { return m_sums.pageCrcs != nullptr; }
    // The next `length` bytes of the put, in order. Chains across pieces and pages; a page's crc
    // is stored as soon as any of it arrived (complete once its last byte has), and summedBytes
    // follows.
    void add(const std::byte *data, std::size_t length) noexcept;

private:
    ArrivalSums m_sums;
    std::uint64_t m_offset = 0;
    std::uint32_t m_crc = 0; // of the current page so far
};

} // namespace lutra::transport::tcp
