#include "daemon/telemetry.h"

#include "core/log.h"
#include "core/params/glob.h"

#include <grpcpp/grpcpp.h>

namespace lutra::ctld {

namespace {

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

// One StreamCounters call to one incarnation of an instance. Ends when the process goes away or
// when ctld cancels it; `done()` tells the watcher it may be replaced.
class Telemetry::Stream final : public grpc::ClientReadReactor<CountersReply> {
public:
    Stream(Telemetry &owner, std::shared_ptr<const Connection> connection)
        : m_owner(owner), m_connection(std::move(connection))
    {
        m_request.set_interval_ms(static_cast<std::uint32_t>(owner.m_interval.count()));
        for (const auto &gauge : gaugePatterns()) {
            m_request.add_gauges(gauge);
        }
        m_connection->stub->async()->StreamCounters(&m_context, &m_request, this);
        m_reply = std::make_shared<CountersReply>();
        StartRead(m_reply.get());
        StartCall();
    }

    void OnReadDone(bool ok) override
    {
        if (!ok) {
            return; // OnDone follows
        }
        m_owner.publish(m_connection->info.id, std::move(m_reply));
        m_reply = std::make_shared<CountersReply>();
        StartRead(m_reply.get());
    }

    void OnDone(const grpc::Status & /*status*/) override
    {
        std::lock_guard lock(m_mutex);
        m_done = true;
        m_finished.notify_all();
    }

    void cancel() { m_context.TryCancel(); }

    void waitDone()
    {
        std::unique_lock lock(m_mutex);
        m_finished.wait(lock, [this] { return m_done; });
    }

    bool done()
    {
        std::lock_guard lock(m_mutex);
        return m_done;
    }

    const Connection &connection() const { return *m_connection; }

private:
    Telemetry &m_owner;
    std::shared_ptr<const Connection> m_connection;
    grpc::ClientContext m_context;
    datapath::v1::StreamCountersRequest m_request;
    std::shared_ptr<CountersReply> m_reply;
    std::mutex m_mutex;
    std::condition_variable m_finished;
    bool m_done = false;
};

const std::vector<std::string> &Telemetry::gaugePatterns()
{
    static const std::vector<std::string> patterns{
        "ldlm.namespaces.*.lock_count",
        "ldlm.namespaces.*.lock_unused_count",
        "ldlm.namespaces.*.lru_size",
        "llite.*.max_cached_mb",
        "llite.*.cached_pages",
        "osc.*.cur_dirty_bytes",
        "llite.*.max_read_ahead_mb",
    };
    return patterns;
}

Telemetry::Telemetry(Instances &instances, std::chrono::milliseconds interval, Sink sink)
    : m_instances(instances), m_interval(interval), m_sink(std::move(sink))
{
}

Telemetry::~Telemetry()
{
    stop();
}

void Telemetry::start()
{
    m_thread = std::thread([this] { run(); });
}

void Telemetry::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void Telemetry::run()
{
    for (;;) {
        syncStreams();
        std::unique_lock lock(m_mutex);
        if (m_wake.wait_for(lock, m_interval, [this] { return m_stopping; })) {
            break;
        }
    }
    for (auto &[id, stream] : m_streams) {
        stream->cancel();
    }
    for (auto &[id, stream] : m_streams) {
        stream->waitDone();
    }
    m_streams.clear();
}

// Every connected incarnation has exactly one live stream; ended or outdated ones are replaced.
void Telemetry::syncStreams()
{
    std::map<std::string, std::shared_ptr<const Connection>> wanted;
    for (auto &connection : m_instances.connected()) {
        wanted.emplace(connection->info.id, std::move(connection));
    }
    for (auto it = m_streams.begin(); it != m_streams.end();) {
        const auto found = wanted.find(it->first);
        const bool current =
            found != wanted.end() && found->second->info.pid == it->second->connection().info.pid &&
            found->second->info.startTimeNs == it->second->connection().info.startTimeNs;
        if (current && !it->second->done()) {
            ++it;
            continue;
        }
        it->second->cancel();
        it->second->waitDone();
        if (found == wanted.end()) {
            std::lock_guard lock(m_mutex);
            m_latest.erase(it->first);
        }
        it = m_streams.erase(it);
    }
    for (auto &[id, connection] : wanted) {
        if (m_streams.count(id) == 0) {
            m_streams.emplace(id, std::make_unique<Stream>(*this, connection));
        }
    }
}

void Telemetry::publish(const std::string &instance, std::shared_ptr<const CountersReply> update)
{
    InstanceSnapshot snapshot{instance, nowNs(), std::move(update)};
    if (m_sink) {
        m_sink(snapshot);
    }
    std::lock_guard lock(m_mutex);
    m_latest[instance] = std::move(snapshot);
}

std::vector<InstanceSnapshot> Telemetry::latest(std::string_view idGlob) const
{
    std::lock_guard lock(m_mutex);
    std::vector<InstanceSnapshot> out;
    for (const auto &[id, snapshot] : m_latest) {
        if (idGlob.empty() || params::matchComponent(idGlob, id)) {
            out.push_back(snapshot);
        }
    }
    return out;
}

} // namespace lutra::ctld
