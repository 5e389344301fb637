#pragma once
// One node's lutra-ctld as the console sees it: connection state with reconnect, node info and
// instances kept fresh, the latest counter update, and unary calls whose results arrive on this
// object's thread. gRPC stays behind this header (see ../README.md for the threading rules).

#include "core/types.h"
#include "net/endpoint.h"
#include "net/profile_text.h"

#include <QHash>
#include <QObject>
#include <QStringList>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace lutra::console {

namespace net {
class Tracker;
class CounterSlot;
class CounterStream;
struct Session;
} // namespace net

// DiffProfile (a dry run against live values), ApplyProfile, VerifyProfile (drift).
enum class ProfileMode { diff, apply, verify };

class NodeConnection : public QObject {
    Q_OBJECT

public:
    explicit NodeConnection(Endpoint endpoint, QObject *parent = nullptr);
    ~NodeConnection() override;

    const QString &address() const { return m_endpoint.address; }
    const Endpoint &endpoint() const { return m_endpoint; }
    ConnectionState state() const { return m_state; }
    const QString &lastError() const { return m_lastError; }
    const NodeInfo &info() const { return m_info; }
    const QList<InstanceInfo> &instances() const { return m_instances; }

    // Connects (GetNodeInfo as the probe), then keeps the connection: reconnects with backoff
    // when the node is unreachable or the counter stream breaks. The state is connecting until
    // the first answer; retries stay unreachable (stateChanged again only when the error changes).
    void start();
    // Cancels every call and the stream and waits (on this thread) until gRPC has finished with
    // all of them; then frees the channel here. Idempotent; start() connects again.
    void shutdown();
    void setBackoffForTests(int initialMs, int maxMs);
    // Whether the counter stream runs (on by default). Off, the node is still probed and its
    // instances kept fresh, but it sends no counters: with Prometheus for the fleet, the console
    // streams only the nodes on screen. Takes effect at once on a ready connection.
    void setStreaming(bool on);
    bool streaming() const { return m_streaming; }

    // The latest counter update: a slot, not a queue, so a slow GUI never builds a backlog.
    // Empties the slot.
    std::optional<CounterUpdate> takeLatestCounters();

    // Unary calls. `done` runs on this object's thread exactly once ("CANCELLED: ..." after
    // cancel() or shutdown()), never after destruction. The returned id is for cancel(). Without a
    // connection (unreachable, shut down) `done` gets the last error, still from the event loop.
    // Delete the connection from `done` only with deleteLater().
    quint64 getNodeInfo(std::function<void(Reply<NodeInfo>)> done);
    quint64 listInstances(std::function<void(Reply<QList<InstanceInfo>>)> done);
    quint64 listParams(const QString &pattern,
                       std::function<void(Reply<QList<InstanceSpecs>>)> done);
    quint64 getParams(const QStringList &patterns, const QString &instance,
                      std::function<void(Reply<QList<InstanceValue>>)> done);
    quint64 setParams(const QList<Assignment> &assignments, const QString &instance, bool dryRun,
                      std::function<void(Reply<SetOutcome>)> done);
    quint64 getCounterHistory(const QString &instanceGlob, const QString &counterGlob,
                              qint64 sinceNs,
                              std::function<void(Reply<QList<HistorySeries>>)> done);

    quint64 listProfiles(std::function<void(Reply<ProfileList>)> done);
    quint64 getProfile(const QString &name, std::function<void(Reply<ProfileText>)> done);
    // The value is the document's errors (line:col); the profile is stored only when it is empty.
    quint64 putProfile(const QString &yaml, std::function<void(Reply<QList<ProfileError>>)> done);
    // A stored or shipped profile by name, or (diff only) an inline document; apply and verify
    // with an inline document fail with INVALID_ARGUMENT. `force` applies a profile whose
    // `match` excludes the node.
    quint64 profile(ProfileMode mode, const QString &name, const QString &inlineYaml, bool force,
                    std::function<void(Reply<ProfilePlan>)> done);
    // Back to the values in force right after history point `historyId`.
    quint64 rollback(quint64 historyId, bool dryRun,
                     std::function<void(Reply<RollbackOutcome>)> done);
    // One job (or every job with `all` and an empty id); `timeoutMs` per instance, 0: ctld's
    // 30 s. The call's deadline allows for it: max(callTimeoutMs, timeout + 5 s).
    quint64 flushJob(const QString &jobId, bool all, int timeoutMs,
                     std::function<void(Reply<FlushOutcome>)> done);
    quint64 getJobStats(const QString &jobGlob, std::function<void(Reply<QList<JobStat>>)> done);
    // Newest first; page with query.beforeId = the previous page's nextBeforeId.
    quint64 listHistory(const HistoryQuery &query, std::function<void(Reply<HistoryPage>)> done);

    void cancel(quint64 call);

signals:
    void stateChanged(lutra::console::ConnectionState state, const QString &error);
    void infoChanged(const lutra::console::NodeInfo &info);
    void instancesChanged(const QList<lutra::console::InstanceInfo> &instances);
    void countersAvailable(); // once per fill of an empty slot

private:
    // Defined in node_connection.cpp, the only place that knows the generated gRPC types.
    // `timeoutMs` 0: the endpoint's callTimeoutMs.
    template <typename Value, typename Response, typename Request, typename Start, typename Convert>
    quint64 startCall(Request request, Start start, Convert convert,
                      std::function<void(Reply<Value>)> done, int timeoutMs = 0);
    // A call that fails before reaching the node; `done` still runs from the event loop.
    template <typename Value>
    quint64 failCall(QString error, std::function<void(Reply<Value>)> done);
    template <typename Value>
    void finishCall(quint64 id, Reply<Value> reply, const std::function<void(Reply<Value>)> &done);

    void connectNow();
    void onProbe(quint64 generation, Reply<NodeInfo> reply);
    void lose(const QString &error);
    void setState(ConnectionState state, const QString &error);
    void refresh();
    void refreshInstances(quint64 generation);
    void startStream();
    void retireStream();
    void onStreamDone(quint64 streamId, quint64 generation, const QString &error);

    Endpoint m_endpoint;
    ConnectionState m_state = ConnectionState::connecting;
    QString m_lastError;
    NodeInfo m_info;
    QList<InstanceInfo> m_instances;

    std::shared_ptr<net::Tracker> m_tracker;
    std::shared_ptr<net::CounterSlot> m_slot;
    std::unique_ptr<net::Session> m_session;
    std::unique_ptr<net::CounterStream> m_stream;
    std::vector<std::unique_ptr<net::CounterStream>> m_retiredStreams; // cancelled, OnDone pending

    // Calls whose `done` has not run yet; the value is the cancel reason ("" while not cancelled).
    QHash<quint64, QString> m_pending;
    quint64 m_nextCallId = 1; // calls and streams share the ids the tracker knows them by
    quint64 m_generation = 0; // bumped by every (re)connection and loss: older results are dropped
    bool m_started = false;
    bool m_streaming = true;
    bool m_instancesInFlight = false;

    QTimer m_reconnectTimer;
    QTimer m_refreshTimer;
    int m_initialBackoffMs = 1000;
    int m_maxBackoffMs = 30000;
    int m_backoffMs = 1000;
};

} // namespace lutra::console

Q_DECLARE_METATYPE(lutra::console::ConnectionState)
Q_DECLARE_METATYPE(lutra::console::Role)
Q_DECLARE_METATYPE(lutra::console::InstanceInfo)
