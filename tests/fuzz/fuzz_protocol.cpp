// Fuzzes the wire decoder. Besides not crashing or reading out of bounds, every input that
// decodes must re-encode to exactly the same bytes (the format has no ignored bits) and decode
// again to an equal message; every input that does not must fail with a protocol_error.
#include "protocol/codec.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    const auto input = std::as_bytes(std::span(data, size));
    using namespace lutra::protocol;

    (void)decodeHeader(input);
    auto decoded = decode(input);
    if (!decoded) {
        if (decoded.status().code() != lutra::Errc::protocol_error ||
            decoded.status().message().empty()) {
            std::abort();
        }
        return 0;
    }
    static std::array<std::byte, kMaxMessageSize> buffer;
    auto encoded = encode(*decoded, buffer);
    if (!encoded || *encoded != size || encodedSize(*decoded) != size) {
        std::abort();
    }
    const auto again = std::span(buffer).first(*encoded);
    if (!std::ranges::equal(again, input)) {
        std::abort();
    }
    auto redecoded = decode(again);
    if (!redecoded || !(*redecoded == *decoded)) {
        std::abort();
    }
    return 0;
}
