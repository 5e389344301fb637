#pragma once
// Explicit little-endian loads and stores, byte by byte: the wire layout never depends on the
// host's byte order or struct layout, and unaligned fields need no care.

#include <cstddef>
#include <cstdint>

namespace lutra::protocol {

template <typename T> constexpr T loadLe(const std::byte *bytes) noexcept
{
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        value = static_cast<T>(value | static_cast<T>(std::to_integer<T>(bytes[i]) << (8 * i)));
    }
    return value;
}

template <typename T> constexpr void storeLe(std::byte *bytes, T value) noexcept
{
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        bytes[i] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
    }
}

} // namespace lutra::protocol
