#pragma once
// One running lutra-ctld: store, instance discovery, telemetry, the gRPC service on its TCP
// addresses and local socket, /metrics. lutra-ctld's main is argument parsing and signals over
// this object; tests start it in-process.

#include <lutra/status.h>

#include "daemon/config.h"
#include "daemon/node_ops.h"

#include <memory>
#include <string>
#include <vector>

namespace lutra::ctld {

class Daemon {
public:
    // Opens the store, recovers interrupted applies, reconciles the instances found and serves.
    // A config that cannot be served (non-loopback without TLS, unreadable TLS files, an address
    // in use) is an error saying why; nothing is left running. `faults` are test-only crash
    // points (only lutra-ctld-faults passes any).
    static Result<std::unique_ptr<Daemon>> start(Config config, FaultHooks faults = {});
    ~Daemon(); // stop()
    Daemon(const Daemon &) = delete;
    Daemon &operator=(const Daemon &) = delete;

    const Config &config() const noexcept;
    // The bound port of each config().listen address, in order (0 in the config: chosen).
    const std::vector<int> &grpcPorts() const noexcept;
    int metricsPort() const noexcept; // 0 when /metrics is off
    // "ready node=… grpc=… unix=… metrics=… db=…": the line scripts and tests wait for.
    std::string readyLine() const;

    // Once per sample_interval: writes buffered counter history, prunes audit history.
    void tick();
    // SIGHUP: re-reads tokens and roles from config().file.
    Status reloadAuth();
    // Finishes calls in flight (5 s), stops discovery and telemetry, closes the database.
    Status stop();

private:
    struct Parts;
    explicit Daemon(std::unique_ptr<Parts> parts);
    std::unique_ptr<Parts> m_parts;
};

} // namespace lutra::ctld
