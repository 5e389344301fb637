#include "protocol/messages.h"

#include "protocol/little_endian.h"

namespace lutra::protocol {

namespace {

// A received entry's layout: object id, kind, name length, name.
constexpr std::size_t kEntryFixedSize = 8 + 1 + 2;

} // namespace

std::string_view opcodeName(Opcode opcode) noexcept
{
    switch (opcode) {
    case Opcode::connect: return "connect";
    case Opcode::ping: return "ping";
    case Opcode::statfs: return "statfs";
    case Opcode::create: return "create";
    case Opcode::open: return "open";
    case Opcode::close: return "close";
    case Opcode::stat: return "stat";
    case Opcode::unlink: return "unlink";
    case Opcode::truncate: return "truncate";
    case Opcode::mkdir: return "mkdir";
    case Opcode::rmdir: return "rmdir";
    case Opcode::readdir: return "readdir";
    case Opcode::read: return "read";
    case Opcode::write: return "write";
    case Opcode::lock_enqueue: return "lock_enqueue";
    case Opcode::lock_cancel: return "lock_cancel";
    case Opcode::blocking_callback: return "blocking_callback";
    }
    return "unknown";
}

Crc32List Crc32List::fromWire(std::span<const std::byte> wire) noexcept
{
    Crc32List list;
    list.m_bytes = wire.first(wire.size() / 4 * 4);
    list.m_wire = true;
    return list;
}

std::uint32_t Crc32List::operator[](std::size_t index) const noexcept
{
    return m_wire ? loadLe<std::uint32_t>(m_bytes.data() + 4 * index) : m_values[index];
}

bool Crc32List::operator==(const Crc32List &other) const noexcept
{
    if (size() != other.size()) {
        return false;
    }
    for (std::size_t i = 0; i < size(); ++i) {
        if ((*this)[i] != other[i]) {
            return false;
        }
    }
    return true;
}

std::size_t dirEntryWireSize(const DirEntry &entry) noexcept
{
    return kEntryFixedSize + entry.name.size();
}

DirEntry DirEntryList::Iterator::operator*() const noexcept
{
    if (!m_list->m_wire) {
        return m_list->m_entries[m_index];
    }
    const std::byte *at = m_list->m_bytes.data() + m_offset;
    DirEntry entry;
    entry.objectId = loadLe<std::uint64_t>(at);
    entry.kind = static_cast<ObjectKind>(loadLe<std::uint8_t>(at + 8));
    const auto nameLength = loadLe<std::uint16_t>(at + 9);
    entry.name = {reinterpret_cast<const char *>(at + kEntryFixedSize), nameLength};
    return entry;
}

DirEntryList::Iterator &DirEntryList::Iterator::operator++() noexcept
{
    if (m_list->m_wire) {
        const std::byte *at = m_list->m_bytes.data() + m_offset;
        m_offset += kEntryFixedSize + loadLe<std::uint16_t>(at + 9);
    }
    ++m_index;
    return *this;
}

DirEntryList DirEntryList::fromWire(std::span<const std::byte> wire, std::size_t count) noexcept
{
    DirEntryList list;
    list.m_bytes = wire;
    list.m_count = count;
    list.m_wire = true;
    return list;
}

bool DirEntryList::operator==(const DirEntryList &other) const noexcept
{
    if (size() != other.size()) {
        return false;
    }
    auto mine = begin();
    auto theirs = other.begin();
    for (; mine != end(); ++mine, ++theirs) {
        if (*mine != *theirs) {
            return false;
        }
    }
    return true;
}

Opcode Message::opcode() const noexcept
{
    return std::visit(
        [](const auto &part) {
            using T = std::decay_t<decltype(part)>;
            if constexpr (std::is_same_v<T, ErrorReply>) {
                return part.opcode;
            } else {
                return T::kOpcode;
            }
        },
        body);
}

bool Message::isReply() const noexcept
{
    return std::visit(
        [](const auto &part) {
            using T = std::decay_t<decltype(part)>;
            if constexpr (std::is_same_v<T, ErrorReply>) {
                return true;
            } else {
                return T::kReply;
            }
        },
        body);
}

} // namespace lutra::protocol
