#pragma once
// The datapath processes of this node, found through their control sockets in the run dir.
//
// A watcher thread follows the run dir with inotify (and rescans it every poll interval, so a
// missed event or a process that restarted between two events is still noticed), connects to
// every <kind>-<name>.sock, and reports each new incarnation (first sight or restart) so ctld can
// reconcile it with the desired state.

#include <lutra/status.h>

#include "core/params/spec.h"
#include "lutra/datapath/v1/control.grpc.pb.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace lutra::ctld {

struct InstanceInfo {
    std::string id; // "<kind>-<name>"
    std::string kind;
    std::string name;
    std::int64_t pid = 0;
    std::string version;
    std::int64_t startTimeNs = 0;
    bool connected = false;
    std::int64_t seenSinceNs = 0;
    std::uint32_t restarts = 0;
    std::uint64_t schemaGeneration = 0;
};

// One connected incarnation. Immutable once published; a restart publishes a new one.
struct Connection {
    InstanceInfo info;
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<datapath::v1::DatapathControl::Stub> stub;
    std::vector<params::Spec> specs; // the registry schema at connect time
};

class Instances {
public:
    // Called on the watcher thread for every new incarnation (`restarted` is false on first
    // sight) and when an instance's schema changed (a target or mount was added to it).
    using AppearedHandler =
        std::function<void(const std::shared_ptr<const Connection> &, bool restarted)>;

    Instances(std::filesystem::path runDir, std::chrono::milliseconds rescanInterval);
    ~Instances();
    Instances(const Instances &) = delete;
    Instances &operator=(const Instances &) = delete;

    // Scans the run dir once (connecting to what is there, without calling the handler), then
    // starts the watcher thread. The handler sees everything that appears after that.
    Status start();
    void onAppeared(AppearedHandler handler);
    void stop();

    std::vector<InstanceInfo> list() const;
    // Connected instances whose id matches the glob (empty: all), in id order.
    std::vector<std::shared_ptr<const Connection>> connected(std::string_view idGlob = {}) const;
    // Known instances matching the glob that are not connected now, with the schema they had
    // when last connected (to tell "not connected" from "no such parameter").
    std::vector<std::shared_ptr<const Connection>> disconnected(std::string_view idGlob = {}) const;
    // A call failed as if the process were gone: drop the connection; the next scan retries.
    void lost(const std::string &id);
    // Re-reads the schema of an instance whose registry changed (a new target, a new mount).
    void refresh(const std::string &id);

    static constexpr std::chrono::milliseconds kConnectTimeout{2000};

private:
    void watch();
    void scan(bool notify);
    std::shared_ptr<Connection> connect(const std::string &id, std::string *error) const;

    std::filesystem::path m_runDir;
    std::chrono::milliseconds m_rescanInterval;
    AppearedHandler m_handler;

    mutable std::mutex m_mutex;
    std::map<std::string, std::shared_ptr<const Connection>> m_connected;
    std::map<std::string, InstanceInfo> m_known; // every id seen, connected or not
    std::map<std::string, std::shared_ptr<const Connection>> m_lastConnection; // per id seen
    std::map<std::string, std::string> m_lastError; // to log a failure once, not every scan

    int m_inotify = -1;
    int m_wakeup = -1; // eventfd that stops the watcher
    std::thread m_thread;
};

// "target-ost0.sock" -> {"target", "ost0"}; false for files that are not datapath sockets.
bool parseSocketName(std::string_view fileName, std::string *kind, std::string *name);

} // namespace lutra::ctld
