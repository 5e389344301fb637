#include "tcp_arrival_sums.h"

#include <isa-l/crc.h>

#include <algorithm>

namespace lutra::transport::tcp {

void ArrivalSummer::start(const ArrivalSums &sums) noexcept
{
    m_sums = sums;
    m_offset = 0;
    m_crc = 0;
    if (m_sums.pageBytes == 0) {
        m_sums.pageCrcs = nullptr; // refused at expose; never divide by it here
    }
    if (active() && m_sums.summedBytes != nullptr) {
        *m_sums.summedBytes = 0;
    }
}

void ArrivalSummer::add(const std::byte *data, std::size_t length) noexcept
{
    if (!active()) {
        return;
    }
    while (length > 0) {
        const std::uint64_t inPage = m_offset % m_sums.pageBytes;
        const std::size_t take =
            static_cast<std::size_t>(std::min<std::uint64_t>(length, m_sums.pageBytes - inPage));
        // ISA-L's crc32_iscsi neither presets nor inverts: feed it the inverted running value and
        // invert the result (the standard crc32c, chained as protocol::crc32c does).
        const std::uint32_t previous = inPage == 0 ? 0 : m_crc;
        m_crc =
            ~crc32_iscsi(const_cast<unsigned char *>(reinterpret_cast<const unsigned char *>(data)),
                         static_cast<int>(take), ~previous);
        m_sums.pageCrcs[m_offset / m_sums.pageBytes] = m_crc;
        m_offset += take;
        data += take;
        length -= take;
    }
    if (m_sums.summedBytes != nullptr) {
        *m_sums.summedBytes = m_offset;
    }
}

} // namespace lutra::transport::tcp
