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

} // namespace lutra::transport::kit
