#pragma once
// A plain TCP endpoint that speaks no lutra protocol, served by the target process itself, so
// lutra-bench can measure the transport against raw sockets between the same two processes.
//
// A connection sends one 16-byte little-endian request: u32 op, u32 reserved, u64 size.
//   op 1 (sink):   the client sends `size` bytes, the server answers one byte when all arrived.
//   op 2 (source): the server sends `size` bytes.
//   op 3 (echo):   the client sends `size`-byte messages, the server echoes each, until EOF.

#include <lutra/status.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace lutra::target {

class RawBaseline {
public:
    enum Op : std::uint32_t { sink = 1, source = 2, echo = 3 };
    static constexpr std::uint64_t kMaxEchoSize = 65536;

    // `uri` is tcp://host:port (port 0 picks one).
    static Result<std::unique_ptr<RawBaseline>> start(std::string_view uri);
    ~RawBaseline();
    RawBaseline(const RawBaseline &) = delete;
    RawBaseline &operator=(const RawBaseline &) = delete;

    std::string uri() const { return m_uri; }

private:
    RawBaseline(int listenFd, std::string uri);
    void acceptLoop();
    void serve(int fd);

    int m_listenFd;
    std::string m_uri;
    std::atomic<bool> m_stopping{false};
    std::thread m_acceptor;
    std::mutex m_mutex;
    std::vector<std::thread> m_workers;
    std::vector<int> m_clients;
};

// Splits tcp://host:port; host may be a name. Errors name the URI.
Result<std::pair<std::string, std::uint16_t>> parseTcpUri(std::string_view uri);

} // namespace lutra::target
