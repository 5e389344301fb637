#pragma once
// Live counters of every instance: one server stream per instance (StreamCounters), the latest
// update kept for ctld's own streams and /metrics, each update handed to the history sink.

#include "daemon/instances.h"

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace lutra::ctld {

using CountersReply = datapath::v1::ReadCountersReply;

struct InstanceSnapshot {
    std::string instance;
    std::int64_t timeNs = 0;
    std::shared_ptr<const CountersReply> counters;
};

class Telemetry {
public:
    // Runs on a gRPC thread for every update: must be quick (the store buffers).
    using Sink = std::function<void(const InstanceSnapshot &)>;

    // Parameters streamed with the counters: levels the console draws over time.
    static const std::vector<std::string> &gaugePatterns();

    Telemetry(Instances &instances, std::chrono::milliseconds interval, Sink sink);
    ~Telemetry();
    Telemetry(const Telemetry &) = delete;
    Telemetry &operator=(const Telemetry &) = delete;

    void start();
    void stop();

    // The latest update of each connected instance whose id matches the glob (empty: all).
    std::vector<InstanceSnapshot> latest(std::string_view idGlob = {}) const;

private:
    class Stream;
    void run();
    void syncStreams();
    void publish(const std::string &instance, std::shared_ptr<const CountersReply> update);

    Instances &m_instances;
    std::chrono::milliseconds m_interval;
    Sink m_sink;

    mutable std::mutex m_mutex;
    std::map<std::string, InstanceSnapshot> m_latest;
    std::map<std::string, std::unique_ptr<Stream>> m_streams; // watcher thread only
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace lutra::ctld
