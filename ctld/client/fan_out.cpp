#include "client/fan_out.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace lutra::ctld {

void fanOut(std::size_t count, std::size_t concurrency,
            const std::function<void(std::size_t index)> &work)
{
    std::atomic<std::size_t> next{0};
    const auto worker = [&] {
        for (std::size_t i = next++; i < count; i = next++) {
            work(i);
        }
    };
    std::vector<std::thread> threads;
    const std::size_t workers = std::min(std::max<std::size_t>(concurrency, 1), count);
    threads.reserve(workers);
    for (std::size_t t = 0; t < workers; ++t) {
        threads.emplace_back(worker);
    }
    for (auto &thread : threads) {
        thread.join();
    }
}

} // namespace lutra::ctld
