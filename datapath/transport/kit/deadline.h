#pragma once
// A deadline as the milliseconds poll() and epoll_wait() take.

#include <lutra/transport.h>

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace lutra::transport::kit {

// Milliseconds left until `deadline`, 0 when it has passed.
inline int remainingMs(Deadline deadline) noexcept
{
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left <= 0 ? 0 : static_cast<int>(std::min<long long>(left, INT32_MAX));
}

} // namespace lutra::transport::kit
