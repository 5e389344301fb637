#pragma once
// Wire structs copied as they are (every lutra wire format is little-endian), and bulk
// descriptors that carry one such struct. A plugin's descriptor struct has a `format` byte (the
// plugin's letter, checked on decode), an `access` byte (BulkAccess) and a static kFormat.

#include <lutra/status.h>
#include <lutra/transport.h>

#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace lutra::transport::kit {

static_assert(std::endian::native == std::endian::little,
              "wire structs are little-endian and copied as they are");

template <typename T>
requires std::is_trivially_copyable_v<T>
inline void encode(const T &value, std::byte *out) noexcept
{
    std::memcpy(out, &value, sizeof(T));
}

template <typename T>
requires std::is_trivially_copyable_v<T>
inline T decode(const std::byte *in) noexcept
{
    T value;
    std::memcpy(&value, in, sizeof(T));
    return value;
}

// A plugin's descriptor struct (see above).
template <typename T>
concept DescriptorWire = std::is_trivially_copyable_v<T> &&
                         sizeof(T) <= kMaxBulkDescriptorBytes &&requires(T wire)
{
    {
        T::kFormat
        } -> std::convertible_to<std::uint8_t>;
    {
        wire.format
        } -> std::convertible_to<std::uint8_t>;
    {
        wire.access
        } -> std::convertible_to<std::uint8_t>;
};

template <DescriptorWire T> inline BulkDescriptor toDescriptor(const T &wire) noexcept
{
    BulkDescriptor descriptor;
    descriptor.size = sizeof(T);
    encode(wire, descriptor.bytes.data());
    return descriptor;
}

// The wire struct of a descriptor this plugin made, without checking the access.
template <DescriptorWire T>
inline std::optional<T> peekDescriptor(const BulkDescriptor &descriptor) noexcept
{
    if (descriptor.size != sizeof(T)) {
        return std::nullopt;
    }
    const auto wire = decode<T>(descriptor.bytes.data());
    if (wire.format != T::kFormat) {
        return std::nullopt;
    }
    return wire;
}

// The wire struct of a peer's descriptor for an operation needing `expected`: invalid_argument
// "not a <plugin> bulk descriptor", permission_denied when it allows the other operation.
template <DescriptorWire T>
Result<T> readDescriptor(const BulkDescriptor &descriptor, BulkAccess expected,
                         std::string_view plugin)
{
    const auto wire = peekDescriptor<T>(descriptor);
    if (!wire) {
        return Status(Errc::invalid_argument, "not a " + std::string(plugin) + " bulk descriptor");
    }
    if (wire->access != static_cast<std::uint8_t>(expected)) {
        return Status(Errc::permission_denied, "bulk descriptor does not allow this operation");
    }
    return *wire;
}

// A descriptor that names a slot of the exposing side's table (kit::SlotTable) and its
// generation, and the bytes exposed: tcp's ('T') and loopback's ('L'). 24 bytes.
template <std::uint8_t Format> struct SlotDescriptor {
    static constexpr std::uint8_t kFormat = Format;
    std::uint8_t format = kFormat;
    std::uint8_t access = 0;
    std::uint16_t reserved = 0;
    std::uint32_t slot = 0;
    std::uint32_t generation = 0;
    std::uint32_t reserved2 = 0;
    std::uint64_t length = 0;
};
static_assert(sizeof(SlotDescriptor<0>) == 24);

template <std::uint8_t Format>
inline BulkDescriptor describeSlot(BulkAccess access, std::uint32_t slot, std::uint32_t generation,
                                   std::uint64_t length) noexcept
{
    SlotDescriptor<Format> wire;
    wire.access = static_cast<std::uint8_t>(access);
    wire.slot = slot;
    wire.generation = generation;
    wire.length = length;
    return toDescriptor(wire);
}

} // namespace lutra::transport::kit
