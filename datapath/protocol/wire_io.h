#pragma once
// The two halves of the codec. Every message's layout is written once, as a `transfer` function
// over an IO that is either a WireWriter (encode) or a WireReader (decode), so the encoder and
// the decoder cannot disagree on the field order. Private to the protocol library.

#include <lutra/status.h>

#include "protocol/little_endian.h"
#include "protocol/messages.h"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace lutra::protocol {

// Appends fields to a caller buffer. Past the end of the buffer it keeps counting without
// writing, so one pass tells both "does it fit" and "how much is needed".
class WireWriter {
public:
    explicit WireWriter(std::span<std::byte> out,
                        std::uint16_t messageVersion = kMaxVersion) noexcept
        : version(messageVersion), m_out(out)
    {
    }

    const std::uint16_t version; // of the message: layouts that changed look at it

    std::size_t position() const noexcept { return m_pos; }
    bool fits() const noexcept { return m_pos <= m_out.size(); }

    void u8(std::uint8_t value, std::string_view = {}) noexcept { put(value); }
    void u16(std::uint16_t value, std::string_view = {}) noexcept { put(value); }
    void u32(std::uint32_t value, std::string_view = {}) noexcept { put(value); }
    void u64(std::uint64_t value, std::string_view = {}) noexcept { put(value); }
    void boolean(bool value, std::string_view = {}) noexcept { put(std::uint8_t{value}); }
    template <typename E> void enum8(E value, std::string_view = {}) noexcept
    {
        put(static_cast<std::uint8_t>(value));
    }
    template <typename E> void enum16(E value, std::string_view = {}) noexcept
    {
        put(static_cast<std::uint16_t>(value));
    }
    void bytes(std::span<const std::byte> data) noexcept;
    void str8(std::string_view text, std::string_view = {}) noexcept;
    void str16(std::string_view text, std::string_view = {}) noexcept;
    void blob8(const OpaqueBytes &blob, std::string_view = {}) noexcept;
    void crcs(const Crc32List &list, std::uint64_t count, std::string_view = {}) noexcept;
    void dirEntries(const DirEntryList &entries) noexcept;

private:
    template <typename T> void put(T value) noexcept
    {
        if (m_pos + sizeof(T) <= m_out.size()) {
            storeLe(m_out.data() + m_pos, value);
        }
        m_pos += sizeof(T);
    }

    std::span<std::byte> m_out;
    std::size_t m_pos = 0;
};

// Reads fields from a received message. The first failure is kept and every later read returns
// zeros/empty views, so layouts read straight through and the error is checked once at the end;
// loops driven by counts stop early because a failed reader has no bytes left.
class WireReader {
public:
    // Errors start with the message's name ("readdir" + "reply"); offsets count from the start
    // of the message. `kind` must outlive the reader (a literal).
    WireReader(std::span<const std::byte> message, std::size_t start, Opcode opcode,
               std::string_view kind, std::uint16_t messageVersion = kMaxVersion)
        : version(messageVersion), m_bytes(message), m_pos(start), m_opcode(opcode), m_kind(kind)
    {
    }

    const std::uint16_t version; // of the message (its header's)

    bool ok() const noexcept { return m_status.ok(); }
    const Status &status() const noexcept { return m_status; }
    std::size_t position() const noexcept { return m_pos; }
    std::size_t remaining() const noexcept { return m_bytes.size() - m_pos; }

    void u8(std::uint8_t &value, std::string_view field) { value = get<std::uint8_t>(field); }
    void u16(std::uint16_t &value, std::string_view field) { value = get<std::uint16_t>(field); }
    void u32(std::uint32_t &value, std::string_view field) { value = get<std::uint32_t>(field); }
    void u64(std::uint64_t &value, std::string_view field) { value = get<std::uint64_t>(field); }
    void boolean(bool &value, std::string_view field);
    // Enumerations are range-checked by the message checks, after the whole layout is read.
    template <typename E> void enum8(E &value, std::string_view field)
    {
        value = static_cast<E>(get<std::uint8_t>(field));
    }
    template <typename E> void enum16(E &value, std::string_view field)
    {
        value = static_cast<E>(get<std::uint16_t>(field));
    }
    void str8(std::string_view &text, std::string_view field);
    void str16(std::string_view &text, std::string_view field);
    void blob8(OpaqueBytes &blob, std::string_view field);
    void crcs(Crc32List &list, std::uint64_t count, std::string_view field);
    void dirEntries(DirEntryList &entries);

    // Fails unless every byte was consumed.
    void expectEnd();
    void fail(std::string_view detail);

private:
    template <typename T> T get(std::string_view field)
    {
        if (!ok()) {
            return 0;
        }
        if (remaining() < sizeof(T)) {
            failShort(field, sizeof(T));
            return 0;
        }
        const T value = loadLe<T>(m_bytes.data() + m_pos);
        m_pos += sizeof(T);
        return value;
    }
    std::span<const std::byte> take(std::size_t length, std::string_view field);
    void failShort(std::string_view field, std::size_t need);

    std::span<const std::byte> m_bytes;
    std::size_t m_pos = 0;
    Opcode m_opcode;
    std::string_view m_kind;
    std::ptrdiff_t m_entry = -1; // the readdir entry being read, for errors
    Status m_status;
};

} // namespace lutra::protocol
