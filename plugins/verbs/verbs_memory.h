#pragma once
// Memory registration. The host registers its page pool once (registerMemory) and segments name
// their region, so the hot path finds the keys with an index, no search and no lock. Memory the
// host did not register (region 0) is registered for one operation or exposure and deregistered
// afterwards: a cache keyed by address could hand out keys of pages that were unmapped and
// replaced since.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "verbs_config.h"
#include "verbs_device.h"

#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

namespace lutra::transport::verbs {

static constexpr int kRegistrationAccess =
    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

struct Keys {
    std::uint32_t lkey = 0;
    std::uint32_t rkey = 0;
};

class RegionTable {
public:
    explicit RegionTable(const std::vector<std::unique_ptr<Device>> &devices);
    RegionTable(const RegionTable &) = delete;
    RegionTable &operator=(const RegionTable &) = delete;

    // Registers [base, base + length) with every device's protection domain.
    Result<MemoryRegion> add(void *base, std::size_t length);
    void remove(const MemoryRegion &region) noexcept;
    // The keys on `device` of [address, address + length) when region `id` holds all of it.
    std::optional<Keys> find(std::uint64_t id, const void *address, std::size_t length,
                             std::size_t device) const noexcept;

private:
    struct Slot {
        std::atomic<std::uint64_t> id{0}; // published last; 0: free
        const std::byte *base = nullptr;
        std::size_t length = 0;
        std::array<Keys, kMaxDevices> keys{};
        std::array<MemoryRegistration, kMaxDevices> registrations;
        std::uint32_t generation = 0;
    };

    std::vector<ibv_pd *> m_pds;
    std::mutex m_mutex; // add/remove only
    std::unique_ptr<Slot[]> m_slots;
    std::vector<std::uint32_t> m_free;
};

// Registers host memory that is in no region, for one operation or exposure.
Result<MemoryRegistration> registerTransient(ibv_pd *pd, void *address, std::size_t length);

} // namespace lutra::transport::verbs
