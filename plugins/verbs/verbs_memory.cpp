#include "verbs_memory.h"

#include "transport/kit/errno_text.h"

#include <cerrno>
#include <cstring>

namespace lutra::transport::verbs {

namespace {

using kit::errnoText;

constexpr std::uint64_t kSlotBits = 16;

} // namespace

RegionTable::RegionTable(const std::vector<std::unique_ptr<Device>> &devices)
    : m_slots(std::make_unique<Slot[]>(kMaxRegions))
{
    for (const auto &device : devices) {
        m_pds.push_back(device->pd.get());
    }
    for (std::size_t i = kMaxRegions; i-- > 0;) {
        m_free.push_back(static_cast<std::uint32_t>(i));
    }
}

Result<MemoryRegion> RegionTable::add(void *base, std::size_t length)
{
    if (base == nullptr || length == 0) {
        return Status(Errc::invalid_argument, "registerMemory: empty range");
    }
    std::lock_guard lock(m_mutex);
    if (m_free.empty()) {
        return Status(Errc::resource_exhausted, "registerMemory: all " +
                                                    std::to_string(kMaxRegions) +
                                                    " region slots are in use");
    }
    const std::uint32_t index = m_free.back();
    Slot &slot = m_slots[index];
    for (std::size_t d = 0; d < m_pds.size(); ++d) {
        MemoryRegistration mr(ibv_reg_mr(m_pds[d], base, length, kRegistrationAccess));
        if (!mr) {
            const int error = errno;
            for (auto &registration : slot.registrations) {
                registration.reset();
            }
            return Status(error == ENOMEM ? Errc::resource_exhausted : Errc::io_error,
                          "registerMemory of " + std::to_string(length) +
                              " bytes: ibv_reg_mr: " + errnoText(error) +
                              (error == ENOMEM ? " (locked-memory limit? see ulimit -l)" : ""));
        }
        slot.keys[d] = {mr->lkey, mr->rkey};
        slot.registrations[d] = std::move(mr);
    }
    m_free.pop_back();
    slot.base = static_cast<const std::byte *>(base);
    slot.length = length;
    ++slot.generation;
    const std::uint64_t id = (std::uint64_t{slot.generation} << kSlotBits) | (index + 1);
    slot.id.store(id, std::memory_order_release);
    return MemoryRegion{id, base, length};
}

void RegionTable::remove(const MemoryRegion &region) noexcept
{
    const std::uint64_t index = (region.id & ((1u << kSlotBits) - 1)) - 1;
    if (region.id == 0 || index >= kMaxRegions) {
        return;
    }
    std::lock_guard lock(m_mutex);
    Slot &slot = m_slots[index];
    if (slot.id.load(std::memory_order_relaxed) != region.id) {
        return;
    }
    slot.id.store(0, std::memory_order_release);
    for (auto &registration : slot.registrations) {
        registration.reset();
    }
    slot.keys = {};
    m_free.push_back(static_cast<std::uint32_t>(index));
}

std::optional<Keys> RegionTable::find(std::uint64_t id, const void *address, std::size_t length,
                                      std::size_t device) const noexcept
{
    const std::uint64_t index = (id & ((1u << kSlotBits) - 1)) - 1;
    if (id == 0 || index >= kMaxRegions || device >= m_pds.size()) {
        return std::nullopt;
    }
    const Slot &slot = m_slots[index];
    if (slot.id.load(std::memory_order_acquire) != id) {
        return std::nullopt;
    }
    const auto *begin = static_cast<const std::byte *>(address);
    if (begin < slot.base || length > slot.length ||
        static_cast<std::size_t>(begin - slot.base) > slot.length - length) {
        return std::nullopt;
    }
    return slot.keys[device];
}

Result<MemoryRegistration> registerTransient(ibv_pd *pd, void *address, std::size_t length)
{
    MemoryRegistration mr(ibv_reg_mr(pd, address, length, kRegistrationAccess));
    if (!mr) {
        const int error = errno;
        return Status(error == ENOMEM ? Errc::resource_exhausted : Errc::io_error,
                      "registering " + std::to_string(length) +
                          " bytes of unregistered memory: ibv_reg_mr: " + errnoText(error));
    }
    return mr;
}

} // namespace lutra::transport::verbs
