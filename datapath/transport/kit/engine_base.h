#pragma once
// What a transport instance shares with its connections (which keep it alive): its options and
// its I/O threads, handed out round robin. Plugins derive their Engine from it.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "transport/kit/limits.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::transport::kit {

template <typename ThreadT> class EngineBase {
public:
    using Thread = ThreadT;

    explicit EngineBase(const TransportOptions &options) : m_options(options) {}

    void log(LogLevel level, std::string_view text) const { m_options.log(level, text); }
    const TransportOptions &options() const noexcept { return m_options; }
    Thread &pickThread() noexcept { return *m_threads[m_next.fetch_add(1) % m_threads.size()]; }
    Thread &thread(std::size_t index) noexcept { return *m_threads[index]; }
    std::vector<std::unique_ptr<Thread>> &threads() noexcept { return m_threads; }

    Status startThreads()
    {
        for (auto &thread : m_threads) {
            if (auto status = thread->start(); !status.ok()) {
                return status;
            }
        }
        return {};
    }
    // Each thread tears down its connections and is joined.
    void stopThreads() noexcept
    {
        for (auto &thread : m_threads) {
            thread->stop();
        }
    }

private:
    TransportOptions m_options;
    std::vector<std::unique_ptr<Thread>> m_threads;
    std::atomic<std::uint32_t> m_next{0};
};

// A plugin's create(): checks the options, builds the engine with options.ioThreads threads,
// wraps it in the transport (whose destructor stops them) and starts them.
template <typename Engine, typename TransportT>
Result<std::unique_ptr<Transport>> createTransport(const TransportOptions &options,
                                                   const LimitBounds &bounds, std::string_view name)
{
    if (auto status = checkOptions(options, bounds, name); !status.ok()) {
        return status;
    }
    auto engine = std::make_shared<Engine>(options);
    for (std::size_t i = 0; i < options.ioThreads; ++i) {
        engine->threads().push_back(std::make_unique<typename Engine::Thread>());
    }
    auto transport = std::make_unique<TransportT>(engine);
    if (auto status = engine->startThreads(); !status.ok()) {
        return status;
    }
    return std::unique_ptr<Transport>(std::move(transport));
}

// A transport whose memory needs no pinning (sockets, memcpy): a region only names the range.
class UnpinnedTransport : public Transport {
public:
    Result<MemoryRegion> registerMemory(void *base, std::size_t length) override
    {
        if (base == nullptr || length == 0) {
            return Status(Errc::invalid_argument, "registerMemory: empty range");
        }
        return MemoryRegion{m_nextRegion.fetch_add(1), base, length};
    }
    void deregisterMemory(const MemoryRegion &) noexcept override {}

private:
    std::atomic<std::uint64_t> m_nextRegion{1};
};

} // namespace lutra::transport::kit
