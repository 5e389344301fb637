#include "control/control_server.h"

#include "control/control_service.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <sys/stat.h>

namespace lutra::control {

struct ControlServer::Impl {
    std::unique_ptr<ControlService> service;
    std::unique_ptr<grpc::Server> server;
};

Result<std::unique_ptr<ControlServer>> ControlServer::start(ServerOptions options)
{
    if (options.registry == nullptr) {
        return Status(Errc::invalid_argument, "control server needs a registry");
    }
    auto path = control::socketPath(options.runDir, options.kind, options.name);
    if (!path) {
        return path.status();
    }
    if (auto claimed = claimSocketPath(*path); !claimed) {
        return claimed;
    }

    auto impl = std::make_unique<Impl>();
    impl->service =
        std::make_unique<ControlService>(std::move(options), std::chrono::system_clock::now());
    grpc::EnableDefaultHealthCheckService(true);
    grpc::ServerBuilder builder;
    // Local socket only: who may connect is decided by the socket's mode (0660) and group.
    builder.AddListeningPort("unix:" + path->native(), grpc::InsecureServerCredentials());
    builder.RegisterService(impl->service.get());
    impl->server = builder.BuildAndStart();
    if (!impl->server) {
        return Status(Errc::unavailable, "cannot serve on " + path->native() +
                                             " (gRPC could not bind the unix socket)");
    }
    if (::chmod(path->c_str(), 0660) != 0) {
        return Status(Errc::io_error, "cannot set mode 0660 on " + path->native());
    }
    return std::unique_ptr<ControlServer>(new ControlServer(std::move(impl), std::move(*path)));
}

ControlServer::ControlServer(std::unique_ptr<Impl> impl, std::filesystem::path socketPath)
    : m_impl(std::move(impl)), m_socketPath(std::move(socketPath))
{
}

ControlServer::~ControlServer()
{
    // Queued flushes first (Shutdown waits for every call to finish), then cancel what is open
    // at once: counter streams never end by themselves, and the other calls are quick.
    m_impl->service->stop();
    m_impl->server->Shutdown(std::chrono::system_clock::now());
    m_impl->server->Wait();
    std::error_code ignored;
    std::filesystem::remove(m_socketPath, ignored);
}

} // namespace lutra::control
