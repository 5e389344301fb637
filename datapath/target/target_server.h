#pragma once
// The object target: serves the objects under a backing directory to clients over a transport
// plugin. Plugin I/O threads only copy each request into a preallocated slot and queue it;
// service threads decode and execute it (object store, durable writes through group commit,
// PR/PW locks with blocking callbacks) and reply. Bulk data moves with bulkGet/bulkPut straight
// between the client's pages and the service thread's buffer.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "core/jobs/job_stats.h"
#include "core/params/catalog.h"
#include "core/params/registry.h"
#include "protocol/messages.h"
#include "target/group_commit.h"
#include "target/lock_manager.h"
#include "target/object_store.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

namespace lutra::target {

struct TargetOptions {
    std::string name = "ost0"; // target name: registry instance, logs, connect reply
    std::string root;          // backing directory
    std::string listen = "tcp://127.0.0.1:7380";
    unsigned serviceThreads = 16;   // durable writes block one each: group commit needs many
    std::size_t requestSlots = 128; // requests queued or in service at once; more get "busy"
    CommitMode commitMode = CommitMode::batched;
    // largest bulk RPC offered at connect (obdfilter.*.brw_size)
    std::uint32_t brwSizeMb = params::catalog::defaultOf(params::catalog::kObdfilter, "brw_size");
    // Reads without checksums go from the file to the transport (tcp: sendfile) without a copy
    // through the service thread's buffer (obdfilter.*.read_zero_copy).
    bool zeroCopyRead =
        params::catalog::defaultOf(params::catalog::kObdfilter, "read_zero_copy") != 0;
    // A zero-copy read's pages not in the page cache are read in by the service thread before
    // the send (false: the transport reads them, tcp on its I/O thread; for comparison only).
    bool coldReadFill = true;
    // At shutdown, how long requests in service may take to finish; then every connection is
    // closed, failing the bulk transfers still waiting for a client (one stalled, not reading,
    // would hold the target forever). Below systemd's TimeoutStopSec=30 of lutra-target@.
    std::chrono::milliseconds drainTimeout{10000};
    // The newest protocol version agreed on at connect (kMinVersion..kMaxVersion): a target
    // that acts as an older one, for mixed-version tests.
    std::uint16_t maxProtocolVersion = protocol::kMaxVersion;
};

class TargetServer {
public:
    // Opens the backing directory, starts group commit, the lock manager and the service
    // threads, publishes parameters into `registry`, and listens on options.listen.
    static Result<std::unique_ptr<TargetServer>>
    start(TargetOptions options, transport::Transport &transport, params::Registry &registry);
    ~TargetServer(); // shutdown()

    TargetServer(const TargetServer &) = delete;
    TargetServer &operator=(const TargetServer &) = delete;

    // The bound endpoint (the real port when the listen URI asked for port 0).
    std::string listenUri() const;

    // Stops accepting, finishes every queued request (so acknowledged writes are durable),
    // commits, then closes the connections. Idempotent.
    void shutdown();

    struct Impl;

private:
    explicit TargetServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace lutra::target
