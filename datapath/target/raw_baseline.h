#pragma once
// A plain TCP endpoint that speaks no lutra protocol, served by the target process itself, so
// lutra-bench can measure the transport against raw sockets between the same two processes.
//
// A connection sends one 16-byte little-endian request: u32 op, u32 reserved, u64 size.
//   op 1 (sink):   the client sends `size` bytes, the server answers one byte when all arrived.
//   op 2 (source): the server sends `size` bytes.
//   op 3 (echo):   the client sends `size`-byte messages, the server echoes each, until EOF.
//   op 4 (object): the reserved u32 is a name length; that many bytes of object name follow.
//                  The server answers a u64: the bytes it will send (the first `size` bytes of
//                  the object, fewer if it is shorter), then sends them from the object's file
//                  with sendfile, as the best a plain TCP file server does with the same data.
//                  An error answers kObjectError, a u32 length and the message, then closes.

#include <lutra/status.h>

#include "target/object_store.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace lutra::target {

class RawBaseline {
public:
    enum Op : std::uint32_t { sink = 1, source = 2, echo = 3, object = 4 };
    static constexpr std::uint64_t kMaxEchoSize = 65536;
    static constexpr std::uint64_t kObjectError = ~std::uint64_t{0};

    // `uri` is tcp://host:port (port 0 picks one). `objectRoot` is the target's backing
    // directory, which op 4 reads beneath (empty: op 4 answers an error).
    static Result<std::unique_ptr<RawBaseline>> start(std::string_view uri,
                                                      const std::string &objectRoot = {});
    ~RawBaseline();
    RawBaseline(const RawBaseline &) = delete;
    RawBaseline &operator=(const RawBaseline &) = delete;

    std::string uri() const { return m_uri; }

private:
    RawBaseline(int listenFd, std::string uri, std::optional<ObjectStore> objects);
    void acceptLoop();
    void serve(int fd);
    void sendObject(int fd, std::uint32_t nameLength, std::uint64_t size);

    int m_listenFd;
    std::string m_uri;
    std::optional<ObjectStore> m_objects; // opened once; its root fd is used by every worker
    std::atomic<bool> m_stopping{false};
    std::thread m_acceptor;
    std::mutex m_mutex;
    std::vector<std::thread> m_workers;
    std::vector<int> m_clients;
};

// Splits tcp://host:port; host may be a name. Errors name the URI.
Result<std::pair<std::string, std::uint16_t>> parseTcpUri(std::string_view uri);

} // namespace lutra::target
