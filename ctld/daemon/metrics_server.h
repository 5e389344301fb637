#pragma once
// GET /metrics over HTTP (cpp-httplib) for Prometheus; the text comes from a callback.

#include <lutra/status.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace httplib {
class Server;
}

namespace lutra::ctld {

class MetricsServer {
public:
    using Render = std::function<std::string()>;

    // Binds host:port at once (an error names the address), then serves on its own thread.
    static Result<std::unique_ptr<MetricsServer>> start(const std::string &hostPort, Render render);
    ~MetricsServer();
    MetricsServer(const MetricsServer &) = delete;
    MetricsServer &operator=(const MetricsServer &) = delete;

    int port() const noexcept { return m_port; }

private:
    MetricsServer() = default;

    std::unique_ptr<httplib::Server> m_server;
    std::thread m_thread;
    int m_port = 0;
};

} // namespace lutra::ctld
