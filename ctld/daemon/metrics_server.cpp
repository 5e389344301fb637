#include "daemon/metrics_server.h"

#include <httplib.h>

namespace lutra::ctld {

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string &hostPort,
                                                            Render render)
{
    const auto colon = hostPort.rfind(':');
    if (colon == std::string::npos) {
        return Status(Errc::invalid_argument, "metrics_listen '" + hostPort + "' is not host:port");
    }
    std::string host = hostPort.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
        host = host.substr(1, host.size() - 2);
    }
    const int port = std::stoi(hostPort.substr(colon + 1));
    std::unique_ptr<MetricsServer> server(new MetricsServer);
    server->m_server = std::make_unique<httplib::Server>();
    server->m_server->Get("/metrics", [render](const httplib::Request &, httplib::Response &res) {
        res.set_content(render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    server->m_server->Get("/", [](const httplib::Request &, httplib::Response &res) {
        res.set_content("lutra-ctld: metrics at /metrics\n", "text/plain");
    });
    server->m_port = port == 0 ? server->m_server->bind_to_any_port(host)
                               : (server->m_server->bind_to_port(host, port) ? port : -1);
    if (server->m_port <= 0) {
        return Status(Errc::unavailable, "cannot listen for /metrics on " + hostPort +
                                             " (address in use or not local?)");
    }
    server->m_thread = std::thread([raw = server->m_server.get()] { raw->listen_after_bind(); });
    return server;
}

MetricsServer::~MetricsServer()
{
    m_server->stop();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

} // namespace lutra::ctld
