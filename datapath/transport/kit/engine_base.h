#pragma once
// What a transport instance shares with its connections (which keep it alive): its options and
// its I/O threads, each new connection going to the one with the fewest (to the same peer, then
// of all). Plugins derive their Engine from it.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "transport/kit/limits.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
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
    // The thread with the fewest connections to `peer`, then the fewest of all (ties: round
    // robin), as socklnd spreads a peer's connections over its schedulers: the connections of one
    // session (one target) land on different threads even when other sessions open theirs in
    // between or closed some before (strict round robin then put them on one thread). An
    // accepting side passes no peer (each accepted socket is a peer of its own). Two picks racing
    // may choose the same thread; placeConnection() serialises pick and adopt.
    Thread &pickThread(std::string_view peer = {})
    {
        const std::size_t count = m_threads.size();
        const std::size_t first = m_next.fetch_add(1) % count;
        std::size_t best = first;
        auto least = m_threads[first]->load(peer);
        for (std::size_t i = 1; i < count; ++i) {
            const std::size_t index = (first + i) % count;
            if (const auto load = m_threads[index]->load(peer); load < least) {
                best = index;
                least = load;
            }
        }
        return *m_threads[best];
    }
    // Calls place(pickThread(peer)) (which makes a connection and adopts it on that thread) under
    // one lock, so connections made at the same time by several threads see each other's adopts.
    template <typename Place> auto placeConnection(std::string_view peer, Place place)
    {
        std::lock_guard lock(m_placeMutex);
        return place(pickThread(peer));
    }
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
    std::mutex m_placeMutex; // held from pick to adopt by placeConnection
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
