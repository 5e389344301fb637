#include "protocol/wire_io.h"

namespace lutra::protocol {

void WireWriter::bytes(std::span<const std::byte> data) noexcept
{
    for (const std::byte b : data) {
        put(std::to_integer<std::uint8_t>(b));
    }
}

void WireWriter::str8(std::string_view text, std::string_view) noexcept
{
    put(static_cast<std::uint8_t>(text.size()));
    bytes(std::as_bytes(std::span(text)));
}

void WireWriter::str16(std::string_view text, std::string_view) noexcept
{
    put(static_cast<std::uint16_t>(text.size()));
    bytes(std::as_bytes(std::span(text)));
}

void WireWriter::blob8(const OpaqueBytes &blob, std::string_view) noexcept
{
    put(static_cast<std::uint8_t>(blob.bytes.size()));
    bytes(blob.bytes);
}

void WireWriter::crcs(const Crc32List &list, std::uint64_t, std::string_view) noexcept
{
    // The count is implied by other fields (checked before encoding), so only values travel.
    for (std::size_t i = 0; i < list.size(); ++i) {
        put(list[i]);
    }
}

void WireWriter::dirEntries(const DirEntryList &entries) noexcept
{
    put(static_cast<std::uint32_t>(entries.size()));
    for (const DirEntry entry : entries) {
        put(entry.objectId);
        put(static_cast<std::uint8_t>(entry.kind));
        put(static_cast<std::uint16_t>(entry.name.size()));
        bytes(std::as_bytes(std::span(entry.name)));
    }
}

void WireReader::fail(std::string_view detail)
{
    if (!ok()) {
        return;
    }
    std::string text(opcodeName(m_opcode));
    text += ' ';
    text += m_kind;
    if (m_entry >= 0) {
        text += ": entry ";
        text += std::to_string(m_entry);
    }
    text += ": ";
    text += detail;
    m_status = Status(Errc::protocol_error, std::move(text));
    m_pos = m_bytes.size(); // nothing left to read after a failure
}

void WireReader::failShort(std::string_view field, std::size_t need)
{
    std::string detail(field);
    detail += " at offset " + std::to_string(m_pos) + " needs " + std::to_string(need) +
              " bytes, only " + std::to_string(remaining()) + " left";
    fail(detail);
}

std::span<const std::byte> WireReader::take(std::size_t length, std::string_view field)
{
    if (!ok()) {
        return {};
    }
    if (length > remaining()) {
        std::string detail(field);
        detail += " length " + std::to_string(length) + " exceeds the " +
                  std::to_string(remaining()) + " bytes left";
        fail(detail);
        return {};
    }
    const auto data = m_bytes.subspan(m_pos, length);
    m_pos += length;
    return data;
}

void WireReader::boolean(bool &value, std::string_view field)
{
    const std::size_t at = m_pos;
    const auto raw = get<std::uint8_t>(field);
    if (raw > 1) {
        std::string detail(field);
        detail +=
            " at offset " + std::to_string(at) + " is " + std::to_string(raw) + ", not 0 or 1";
        fail(detail);
    }
    value = raw == 1;
}

void WireReader::str8(std::string_view &text, std::string_view field)
{
    const auto data = take(get<std::uint8_t>(field), field);
    text = {reinterpret_cast<const char *>(data.data()), data.size()};
}

void WireReader::str16(std::string_view &text, std::string_view field)
{
    const auto data = take(get<std::uint16_t>(field), field);
    text = {reinterpret_cast<const char *>(data.data()), data.size()};
}

void WireReader::blob8(OpaqueBytes &blob, std::string_view field)
{
    blob.bytes = take(get<std::uint8_t>(field), field);
}

void WireReader::crcs(Crc32List &list, std::uint64_t count, std::string_view field)
{
    if (!ok()) {
        return;
    }
    if (count > remaining() / 4) {
        std::string detail(field);
        detail += ": " + std::to_string(count) + " values need " + std::to_string(count * 4) +
                  " bytes, only " + std::to_string(remaining()) + " left";
        fail(detail);
        return;
    }
    list = Crc32List::fromWire(take(count * 4, field));
}

void WireReader::dirEntries(DirEntryList &entries)
{
    // The smallest entry: object id, kind, name length and a one-byte name.
    constexpr std::size_t kMinEntrySize = 8 + 1 + 2 + 1;
    const auto count = get<std::uint32_t>("entry count");
    if (!ok()) {
        return;
    }
    if (count > remaining() / kMinEntrySize) {
        fail("entry count " + std::to_string(count) + " needs at least " +
             std::to_string(std::uint64_t{count} * kMinEntrySize) + " bytes, only " +
             std::to_string(remaining()) + " left");
        return;
    }
    const std::size_t start = m_pos;
    for (std::uint32_t i = 0; i < count && ok(); ++i) {
        m_entry = i;
        (void)get<std::uint64_t>("object id");
        (void)get<std::uint8_t>("kind");
        const auto nameLength = get<std::uint16_t>("name length");
        (void)take(nameLength, "name");
    }
    if (!ok()) {
        return;
    }
    m_entry = -1;
    entries = DirEntryList::fromWire(m_bytes.subspan(start, m_pos - start), count);
}

void WireReader::expectEnd()
{
    if (ok() && remaining() != 0) {
        fail(std::to_string(remaining()) + " bytes of trailing garbage after the body at offset " +
             std::to_string(m_pos));
    }
}

} // namespace lutra::protocol
