#pragma once
// A fixed table of slots, each with a generation, and a free list: the exposure table (and the
// bulk operation table) of a connection. A descriptor names (slot, generation), so one that
// outlived its exposure finds a newer generation or a free slot and is refused. Sized once;
// acquire and release allocate nothing. Not locked: the connection's mutex guards it.

#include <cstdint>
#include <optional>
#include <vector>

namespace lutra::transport::kit {

template <typename T> class SlotTable {
public:
    struct Slot {
        bool active = false;
        std::uint32_t generation = 0; // never 0 once acquired: 0 can mean "none" on a wire
        T value{};
    };

    // Every slot and the free list, once (control path).
    void resize(std::size_t count)
    {
        m_slots.assign(count, Slot{});
        m_free.clear();
        m_free.reserve(count);
        for (std::size_t i = count; i-- > 0;) {
            m_free.push_back(static_cast<std::uint32_t>(i));
        }
    }

    bool full() const noexcept { return m_free.empty(); }
    std::size_t size() const noexcept { return m_slots.size(); }

    // A free slot, active with a new generation; nullopt when every slot is in use.
    std::optional<std::uint32_t> acquire() noexcept
    {
        if (m_free.empty()) {
            return std::nullopt;
        }
        const std::uint32_t index = m_free.back();
        m_free.pop_back();
        Slot &slot = m_slots[index];
        slot.active = true;
        if (++slot.generation == 0) {
            slot.generation = 1;
        }
        return index;
    }

    // Frees an active slot (idempotent).
    void release(std::uint32_t index) noexcept
    {
        Slot &slot = m_slots[index];
        if (slot.active) {
            slot.active = false;
            m_free.push_back(index);
        }
    }

    // Frees (index, generation) if that is what the slot holds; false for a stale name.
    bool releaseIfCurrent(std::uint32_t index, std::uint32_t generation) noexcept
    {
        if (find(index, generation) == nullptr) {
            return false;
        }
        release(index);
        return true;
    }

    // The value of (index, generation) while that slot is active with that generation.
    T *find(std::uint32_t index, std::uint32_t generation) noexcept
    {
        if (index >= m_slots.size() || !m_slots[index].active ||
            m_slots[index].generation != generation) {
            return nullptr;
        }
        return &m_slots[index].value;
    }

    Slot &operator[](std::uint32_t index) noexcept { return m_slots[index]; }
    const Slot &operator[](std::uint32_t index) const noexcept { return m_slots[index]; }
    auto begin() noexcept { return m_slots.begin(); }
    auto end() noexcept { return m_slots.end(); }

private:
    std::vector<Slot> m_slots;
    std::vector<std::uint32_t> m_free;
};

} // namespace lutra::transport::kit
