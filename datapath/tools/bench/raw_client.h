#pragma once
// The client side of lutra-target's plain-TCP baseline (target/raw_baseline.h).

#include <lutra/status.h>

#include <cstdint>
#include <string>

namespace lutra::tools {

class RawConnection {
public:
    static Result<RawConnection> open(const std::string &uri);
    RawConnection(RawConnection &&other) noexcept;
    RawConnection &operator=(RawConnection &&) = delete;
    RawConnection(const RawConnection &) = delete;
    ~RawConnection();

    // Sends the 16-byte request header: op and size.
    Status request(std::uint32_t op, std::uint64_t size);
    // Asks for the first `size` bytes of object `name` (op 4); returns the bytes that follow, or
    // the target's error.
    Result<std::uint64_t> requestObject(const std::string &name, std::uint64_t size);
    Status sendAll(const void *data, std::size_t size);
    // Wakes for a large receive only every kWakeLowatMax bytes, as lutra's tcp plugin does for
    // a bulk payload (plugins/tcp README, "A bulk payload wakes its reader at a threshold"): a
    // knob any TCP receiver has, so the baseline uses it too.
    Status receiveAll(void *data, std::size_t size);

private:
    static constexpr std::size_t kWakeLowatMax = 256u << 10;
    static constexpr std::size_t kWakeLowatMin = 64u << 10;

    explicit RawConnection(int fd) : m_fd(fd) {}
    // SO_RCVLOWAT: min(remaining, kWakeLowatMax) while at least kWakeLowatMin is to come, else 1.
    void setWakeThreshold(std::size_t remaining);
    // The 16-byte little-endian request header: u32 op, u32 word (op 4: the name's length),
    // u64 size.
    Status sendRequest(std::uint32_t op, std::uint32_t word, std::uint64_t size);
    int m_fd = -1;
    int m_lowat = 1; // the socket's SO_RCVLOWAT
};

} // namespace lutra::tools
