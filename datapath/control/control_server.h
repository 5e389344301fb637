#pragma once
// The datapath control channel: the gRPC service every datapath process serves on its unix
// socket, so ctld (and tests) can read and change its parameters and counters.

#include <lutra/status.h>

#include "control/run_dir.h"
#include "core/params/registry.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace lutra::control {

// What a per-job cleanup did (FlushJob); produced by the client engine.
struct FlushReport {
    std::string jobId; // empty: every job
    std::uint64_t locksCancelled = 0;
    std::uint64_t pagesDropped = 0;
    std::uint64_t bytesWrittenBack = 0;
    std::chrono::microseconds duration{0};
    std::vector<std::string> errors; // problems met on the way; the flush still finished
};

// Runs on the control channel's worker thread, never on a gRPC thread: it may block.
using FlushHandler =
    std::function<Result<FlushReport>(std::string_view jobId, std::chrono::milliseconds timeout)>;

struct ServerOptions {
    std::string kind; // "target", "bench", "client"
    std::string name; // "ost0"
    std::filesystem::path runDir = runDirectory();
    params::Registry *registry = nullptr;
    FlushHandler flush; // empty: the process has no cache to flush (FlushJob is unimplemented)
};

class ControlService;

class ControlServer {
public:
    // Claims <runDir>/<kind>-<name>.sock (replacing a stale one), serves on it with mode 0660.
    static Result<std::unique_ptr<ControlServer>> start(ServerOptions options);
    ~ControlServer(); // cancels streams, waits for calls to finish, removes the socket

    ControlServer(const ControlServer &) = delete;
    ControlServer &operator=(const ControlServer &) = delete;

    const std::filesystem::path &socketPath() const noexcept { return m_socketPath; }

private:
    struct Impl;
    explicit ControlServer(std::unique_ptr<Impl> impl, std::filesystem::path socketPath);

    std::unique_ptr<Impl> m_impl;
    std::filesystem::path m_socketPath;
};

} // namespace lutra::control
