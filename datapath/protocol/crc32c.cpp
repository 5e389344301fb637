#include "protocol/crc32c.h"

#include "protocol/messages.h"

#include <isa-l/crc.h>

#include <algorithm>
#include <string>

namespace lutra::protocol {

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t previous) noexcept
{
    // ISA-L's crc32_iscsi neither presets nor inverts: feed it the inverted running value and
    // invert the result, which gives the standard crc32c and lets calls chain.
    std::uint32_t crc = ~previous;
    constexpr std::size_t kChunk = std::size_t{1} << 30; // its length parameter is an int
    while (!data.empty()) {
        const std::size_t length = std::min(data.size(), kChunk);
        // ISA-L takes a non-const pointer but only reads the buffer.
        auto *bytes =
            const_cast<unsigned char *>(reinterpret_cast<const unsigned char *>(data.data()));
        crc = crc32_iscsi(bytes, static_cast<int>(length), crc);
        data = data.subspan(length);
    }
    return ~crc;
}

Status computePageCrcs(std::span<const std::span<const std::byte>> pages,
                       std::span<std::uint32_t> out)
{
    if (pages.size() != out.size()) {
        return {Errc::invalid_argument, std::to_string(pages.size()) + " pages but room for " +
                                            std::to_string(out.size()) + " crcs"};
    }
    for (std::size_t i = 0; i < pages.size(); ++i) {
        if (pages[i].size() > kPageSize) {
            return {Errc::invalid_argument, "page " + std::to_string(i) + " has " +
                                                std::to_string(pages[i].size()) +
                                                " bytes, more than a page"};
        }
        out[i] = crc32c(pages[i]);
    }
    return {};
}

Status computePageCrcs(std::span<const std::byte> data, std::span<std::uint32_t> out)
{
    const std::size_t pages = (data.size() + kPageSize - 1) / kPageSize;
    if (pages != out.size()) {
        return {Errc::invalid_argument, std::to_string(data.size()) + " bytes are " +
                                            std::to_string(pages) + " pages but room for " +
                                            std::to_string(out.size()) + " crcs"};
    }
    for (std::size_t i = 0; i < pages; ++i) {
        out[i] = crc32c(data.subspan(
            i * kPageSize, std::min<std::size_t>(kPageSize, data.size() - i * kPageSize)));
    }
    return {};
}

} // namespace lutra::protocol
