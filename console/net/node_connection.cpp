#include "net/node_connection.h"

#include "client/reply_json.h"
#include "net/convert.h"
#include "net/reactors.h"

#include <QSet>

#include <algorithm>

namespace lutra::console {

namespace {

const QString kCancelledByCaller = QStringLiteral("CANCELLED: cancelled by the console");
const QString kShutDown = QStringLiteral("CANCELLED: connection shut down");
constexpr int kRefreshMs = 5000;

// One unary call's state. It goes from the gRPC thread back to the connection's thread, so its
// context (and the channel reference in it) is destroyed there.
template <typename Request, typename Response> struct CallState {
    std::unique_ptr<grpc::ClientContext> context;
    Request request;
    Response response;
};

bool sameInfo(const NodeInfo &a, const NodeInfo &b)
{
    return a.node == b.node && a.labels == b.labels && a.version == b.version &&
           a.startTimeNs == b.startTimeNs && a.principal == b.principal && a.role == b.role &&
           a.instanceCount == b.instanceCount && a.lastProfile == b.lastProfile;
}

// What views show of an instance; seenSince and versions follow from these.
bool sameInstances(const QList<InstanceInfo> &a, const QList<InstanceInfo> &b)
{
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const InstanceInfo &x, const InstanceInfo &y) {
                          return x.id == y.id && x.pid == y.pid && x.connected == y.connected &&
                                 x.restarts == y.restarts;
                      });
}

void registerMetaTypes()
{
    static const bool registered = [] {
        qRegisterMetaType<ConnectionState>();
        qRegisterMetaType<Role>();
        qRegisterMetaType<NodeInfo>();
        qRegisterMetaType<CounterUpdate>();
        qRegisterMetaType<InstanceInfo>();
        qRegisterMetaType<QList<InstanceInfo>>();
        return true;
    }();
    Q_UNUSED(registered);
}

} // namespace

NodeConnection::NodeConnection(Endpoint endpoint, QObject *parent)
    : QObject(parent), m_endpoint(std::move(endpoint)), m_tracker(std::make_shared<net::Tracker>()),
      m_slot(std::make_shared<net::CounterSlot>()), m_reconnectTimer(this), m_refreshTimer(this)
{
    registerMetaTypes();
    m_reconnectTimer.setSingleShot(true);
    connect(&m_reconnectTimer, &QTimer::timeout, this, &NodeConnection::connectNow);
    m_refreshTimer.setInterval(kRefreshMs);
    connect(&m_refreshTimer, &QTimer::timeout, this, &NodeConnection::refresh);
}

NodeConnection::~NodeConnection()
{
    blockSignals(true); // nobody hears about a connection that is going away
    shutdown();
}

void NodeConnection::start()
{
    if (m_started) {
        return;
    }
    m_started = true;
    m_backoffMs = m_initialBackoffMs;
    setState(ConnectionState::connecting, {});
    connectNow();
}

void NodeConnection::shutdown()
{
    m_started = false;
    m_reconnectTimer.stop();
    m_refreshTimer.stop();
    ++m_generation;
    m_instancesInFlight = false;
    for (auto &reason : m_pending) {
        if (reason.isEmpty()) {
            reason = kShutDown;
        }
    }
    retireStream();
    m_tracker->cancelAll();
    // Cancelled calls end promptly even when the peer hangs, and callbacks never wait for this
    // thread, so this wait is short.
    m_tracker->waitIdle();
    m_retiredStreams.clear();
    m_session.reset();
    setState(ConnectionState::unreachable, kShutDown);
}

void NodeConnection::setBackoffForTests(int initialMs, int maxMs)
{
    m_initialBackoffMs = initialMs;
    m_maxBackoffMs = maxMs;
    m_backoffMs = initialMs;
}

std::optional<CounterUpdate> NodeConnection::takeLatestCounters()
{
    return m_slot->take();
}

void NodeConnection::cancel(quint64 call)
{
    const auto pending = m_pending.find(call);
    if (pending == m_pending.end() || !pending->isEmpty()) {
        return;
    }
    *pending = kCancelledByCaller;
    m_tracker->cancel(call);
}

template <typename Value>
quint64 NodeConnection::failCall(QString error, std::function<void(Reply<Value>)> done)
{
    const quint64 id = m_nextCallId++;
    m_pending.insert(id, QString());
    Reply<Value> reply;
    reply.error = std::move(error);
    QMetaObject::invokeMethod(
        this,
        [this, id, reply = std::move(reply), done = std::move(done)]() mutable {
            finishCall(id, std::move(reply), done);
        },
        Qt::QueuedConnection);
    return id;
}

template <typename Value, typename Response, typename Request, typename Start, typename Convert>
quint64 NodeConnection::startCall(Request request, Start start, Convert convert,
                                  std::function<void(Reply<Value>)> done, int timeoutMs)
{
    if (!m_session) {
        return failCall(m_lastError.isEmpty() ? QStringLiteral("UNAVAILABLE: not connected")
                                              : m_lastError,
                        std::move(done));
    }
    const quint64 id = m_nextCallId++;
    m_pending.insert(id, QString());
    auto call = std::make_shared<CallState<Request, Response>>();
    call->context = m_session->client.context(
        std::chrono::milliseconds(timeoutMs > 0 ? timeoutMs : m_endpoint.callTimeoutMs));
    call->request = std::move(request);
    m_tracker->begin(id, call->context.get());
    // Runs on a gRPC thread: convert, post, never block. `this` is alive until tracker->end():
    // shutdown() waits for it.
    auto finished = [this, id, tracker = m_tracker, call, convert,
                     done = std::move(done)](grpc::Status status) mutable {
        Reply<Value> reply;
        if (status.ok()) {
            reply.ok = true;
            reply.value = convert(call->response);
            // For every call, wanted or not: microseconds next to the round trip.
            reply.json = QByteArray::fromStdString(ctld::replyJson(call->response));
        } else {
            reply.error = QString::fromStdString(ctld::describe(status));
        }
        tracker->forget(id);
        QMetaObject::invokeMethod(
            this,
            [this, id, call = std::move(call), reply = std::move(reply),
             done = std::move(done)]() mutable {
                call.reset();
                finishCall(id, std::move(reply), done);
            },
            Qt::QueuedConnection);
        tracker->end();
    };
    start(*m_session->client.stub().async(), call->context.get(), &call->request, &call->response,
          std::move(finished));
    return id;
}

template <typename Value>
void NodeConnection::finishCall(quint64 id, Reply<Value> reply,
                                const std::function<void(Reply<Value>)> &done)
{
    const auto pending = m_pending.find(id);
    if (pending == m_pending.end()) {
        return;
    }
    const QString cancelled = *pending;
    m_pending.erase(pending);
    if (!cancelled.isEmpty()) {
        reply = Reply<Value>{};
        reply.error = cancelled;
    }
    if (done) {
        done(std::move(reply));
    }
}

quint64 NodeConnection::getNodeInfo(std::function<void(Reply<NodeInfo>)> done)
{
    return startCall<NodeInfo, ctl::v1::NodeInfo>(
        ctl::v1::GetNodeInfoRequest(),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.GetNodeInfo(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::NodeInfo &reply) { return convert::nodeInfo(reply); }, std::move(done));
}

quint64 NodeConnection::listInstances(std::function<void(Reply<QList<InstanceInfo>>)> done)
{
    return startCall<QList<InstanceInfo>, ctl::v1::ListInstancesReply>(
        ctl::v1::ListInstancesRequest(),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.ListInstances(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::ListInstancesReply &reply) { return convert::instances(reply); },
        std::move(done));
}

quint64 NodeConnection::listParams(const QString &pattern,
                                   std::function<void(Reply<QList<InstanceSpecs>>)> done)
{
    ctl::v1::ListParamsRequest request;
    request.set_pattern(pattern.toStdString());
    return startCall<QList<InstanceSpecs>, ctl::v1::ListParamsReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.ListParams(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::ListParamsReply &reply) { return convert::instanceSpecs(reply); },
        std::move(done));
}

quint64 NodeConnection::getParams(const QStringList &patterns, const QString &instance,
                                  std::function<void(Reply<QList<InstanceValue>>)> done)
{
    ctl::v1::GetParamsRequest request;
    for (const auto &pattern : patterns) {
        request.add_patterns(pattern.toStdString());
    }
    request.set_instance(instance.toStdString());
    return startCall<QList<InstanceValue>, ctl::v1::GetParamsReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.GetParams(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::GetParamsReply &reply) { return convert::values(reply); },
        std::move(done));
}

quint64 NodeConnection::setParams(const QList<Assignment> &assignments, const QString &instance,
                                  bool dryRun, std::function<void(Reply<SetOutcome>)> done)
{
    ctl::v1::SetParamsRequest request;
    for (const auto &assignment : assignments) {
        auto *wire = request.add_assignments();
        wire->set_pattern(assignment.pattern.toStdString());
        wire->set_value(assignment.value.toStdString());
    }
    request.set_instance(instance.toStdString());
    request.set_dry_run(dryRun);
    return startCall<SetOutcome, ctl::v1::SetParamsReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.SetParams(context, sent, response, std::move(callback));
        },
        [dryRun](const ctl::v1::SetParamsReply &reply) {
            return convert::setOutcome(reply, dryRun);
        },
        std::move(done));
}

quint64 NodeConnection::getCounterHistory(const QString &instanceGlob, const QString &counterGlob,
                                          qint64 sinceNs,
                                          std::function<void(Reply<QList<HistorySeries>>)> done)
{
    ctl::v1::GetCounterHistoryRequest request;
    request.set_instance(instanceGlob.toStdString());
    request.set_counter(counterGlob.toStdString());
    request.set_since_ns(sinceNs);
    return startCall<QList<HistorySeries>, ctl::v1::GetCounterHistoryReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.GetCounterHistory(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::GetCounterHistoryReply &reply) { return convert::history(reply); },
        std::move(done));
}

quint64 NodeConnection::listProfiles(std::function<void(Reply<ProfileList>)> done)
{
    return startCall<ProfileList, ctl::v1::ListProfilesReply>(
        ctl::v1::ListProfilesRequest(),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.ListProfiles(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::ListProfilesReply &reply) { return convert::profileList(reply); },
        std::move(done));
}

quint64 NodeConnection::getProfile(const QString &name,
                                   std::function<void(Reply<ProfileText>)> done)
{
    ctl::v1::GetProfileRequest request;
    request.set_name(name.toStdString());
    return startCall<ProfileText, ctl::v1::GetProfileReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.GetProfile(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::GetProfileReply &reply) { return convert::profileText(reply); },
        std::move(done));
}

quint64 NodeConnection::putProfile(const QString &yaml,
                                   std::function<void(Reply<QList<ProfileError>>)> done)
{
    ctl::v1::PutProfileRequest request;
    request.set_yaml(yaml.toStdString());
    return startCall<QList<ProfileError>, ctl::v1::PutProfileReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.PutProfile(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::PutProfileReply &reply) { return convert::profileErrors(reply); },
        std::move(done));
}

quint64 NodeConnection::profile(ProfileMode mode, const QString &name, const QString &inlineYaml,
                                bool force, std::function<void(Reply<ProfilePlan>)> done)
{
    // ctld would accept an inline ApplyProfile from an admin; the console applies only what is
    // stored, so what was applied can be named and opened again later.
    if (mode != ProfileMode::diff && !inlineYaml.isEmpty()) {
        return failCall(QStringLiteral("INVALID_ARGUMENT: an inline profile can only be diffed; "
                                       "store it first, then apply or verify it by name"),
                        std::move(done));
    }
    ctl::v1::ProfileRequest request;
    request.set_name(name.toStdString());
    request.set_yaml(inlineYaml.toStdString());
    request.set_force(force);
    return startCall<ProfilePlan, ctl::v1::ProfilePlan>(
        std::move(request),
        [mode](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            switch (mode) {
            case ProfileMode::diff:
                async.DiffProfile(context, sent, response, std::move(callback));
                break;
            case ProfileMode::apply:
                async.ApplyProfile(context, sent, response, std::move(callback));
                break;
            case ProfileMode::verify:
                async.VerifyProfile(context, sent, response, std::move(callback));
                break;
            }
        },
        [](const ctl::v1::ProfilePlan &reply) { return convert::profilePlan(reply); },
        std::move(done));
}

quint64 NodeConnection::rollback(quint64 historyId, bool dryRun,
                                 std::function<void(Reply<RollbackOutcome>)> done)
{
    ctl::v1::RollbackRequest request;
    request.set_history_id(historyId);
    request.set_dry_run(dryRun);
    return startCall<RollbackOutcome, ctl::v1::RollbackReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.Rollback(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::RollbackReply &reply) { return convert::rollbackOutcome(reply); },
        std::move(done));
}

quint64 NodeConnection::flushJob(const QString &jobId, bool all, int timeoutMs,
                                 std::function<void(Reply<FlushOutcome>)> done)
{
    constexpr int kCtldDefaultFlushMs = 30000; // what ctld uses for timeout_ms 0
    constexpr int kFlushSlackMs = 5000;        // ctld's own work around the instances' flushes
    const int flushMs = timeoutMs > 0 ? timeoutMs : kCtldDefaultFlushMs;
    ctl::v1::FlushJobRequest request;
    request.set_job_id(jobId.toStdString());
    request.set_all(all);
    request.set_timeout_ms(static_cast<std::uint32_t>(std::max(timeoutMs, 0)));
    return startCall<FlushOutcome, ctl::v1::FlushJobReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.FlushJob(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::FlushJobReply &reply) { return convert::flushOutcome(reply); },
        std::move(done), std::max(m_endpoint.callTimeoutMs, flushMs + kFlushSlackMs));
}

quint64 NodeConnection::getJobStats(const QString &jobGlob,
                                    std::function<void(Reply<QList<JobStat>>)> done)
{
    ctl::v1::GetJobStatsRequest request;
    request.set_job_id(jobGlob.toStdString());
    return startCall<QList<JobStat>, ctl::v1::GetJobStatsReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.GetJobStats(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::GetJobStatsReply &reply) { return convert::jobStats(reply); },
        std::move(done));
}

quint64 NodeConnection::listHistory(const HistoryQuery &query,
                                    std::function<void(Reply<HistoryPage>)> done)
{
    ctl::v1::ListHistoryRequest request;
    request.set_limit(static_cast<std::uint32_t>(std::max(query.limit, 0)));
    request.set_before_id(query.beforeId);
    request.set_principal(query.principal.toStdString());
    request.set_action(query.action.toStdString());
    request.set_param(query.param.toStdString());
    request.set_instance(query.instance.toStdString());
    request.set_since_ns(query.sinceNs);
    request.set_until_ns(query.untilNs);
    return startCall<HistoryPage, ctl::v1::ListHistoryReply>(
        std::move(request),
        [](auto &async, auto *context, auto *sent, auto *response, auto callback) {
            async.ListHistory(context, sent, response, std::move(callback));
        },
        [](const ctl::v1::ListHistoryReply &reply) { return convert::historyPage(reply); },
        std::move(done));
}

// A new generation on a fresh channel: gRPC's own reconnect backoff (up to 2 minutes) would
// otherwise decide when a restarted ctld is seen again.
void NodeConnection::connectNow()
{
    m_reconnectTimer.stop();
    m_refreshTimer.stop();
    retireStream();
    ++m_generation;
    m_instancesInFlight = false;
    m_session.reset(); // calls still running keep their channel through their contexts
    const auto address = m_endpoint.address.toStdString();
    const bool local = address.starts_with("unix:");
    ctld::ClientOptions options;
    options.socket = local ? address.substr(5) : std::string();
    options.tokenFile = m_endpoint.tokenFile.toStdString();
    options.tlsCa = m_endpoint.tlsCa.toStdString();
    options.tlsCert = m_endpoint.tlsCert.toStdString();
    options.tlsKey = m_endpoint.tlsKey.toStdString();
    options.timeout = std::chrono::milliseconds(m_endpoint.callTimeoutMs);
    auto client = ctld::CtlClient::connect(local ? std::string() : address, options);
    if (!client) {
        lose(QString::fromStdString(client.status().toString()));
        return;
    }
    m_session = std::make_unique<net::Session>(net::Session{std::move(*client)});
    const quint64 generation = m_generation;
    getNodeInfo(
        [this, generation](Reply<NodeInfo> reply) { onProbe(generation, std::move(reply)); });
}

void NodeConnection::onProbe(quint64 generation, Reply<NodeInfo> reply)
{
    if (generation != m_generation) {
        return;
    }
    if (!reply.ok) {
        lose(reply.error);
        return;
    }
    m_backoffMs = m_initialBackoffMs;
    m_info = std::move(reply.value);
    m_state = ConnectionState::ready;
    m_lastError.clear();
    refreshInstances(generation);
    if (m_streaming) {
        startStream();
    }
    m_refreshTimer.start();
    // Signals last: a receiver may shut this connection down.
    emit infoChanged(m_info);
    if (generation == m_generation) {
        emit stateChanged(m_state, {});
    }
}

void NodeConnection::lose(const QString &error)
{
    ++m_generation;
    m_refreshTimer.stop();
    retireStream();
    m_session.reset();
    m_instancesInFlight = false;
    m_reconnectTimer.start(m_backoffMs);
    m_backoffMs = std::min(m_backoffMs * 2, m_maxBackoffMs);
    setState(ConnectionState::unreachable, error);
}

void NodeConnection::setState(ConnectionState state, const QString &error)
{
    if (state == m_state && error == m_lastError) {
        return;
    }
    m_state = state;
    if (state != ConnectionState::connecting) {
        m_lastError = error; // kept while connecting: why the previous attempt failed
    }
    emit stateChanged(state, error);
}

void NodeConnection::refresh()
{
    if (m_state != ConnectionState::ready) {
        return;
    }
    const quint64 generation = m_generation;
    refreshInstances(generation);
    getNodeInfo([this, generation](Reply<NodeInfo> reply) {
        if (generation != m_generation) {
            return;
        }
        if (!reply.ok) {
            lose(reply.error); // also how a hung ctld is noticed: the stream would just stay quiet
            return;
        }
        if (!sameInfo(m_info, reply.value)) {
            m_info = std::move(reply.value);
            emit infoChanged(m_info);
        }
    });
}

void NodeConnection::refreshInstances(quint64 generation)
{
    if (generation != m_generation || m_state != ConnectionState::ready || m_instancesInFlight) {
        return;
    }
    m_instancesInFlight = true;
    listInstances([this, generation](Reply<QList<InstanceInfo>> reply) {
        if (generation != m_generation) {
            return;
        }
        m_instancesInFlight = false;
        if (!reply.ok) {
            return; // the stream and the next probe notice a node that is gone
        }
        QSet<QString> ids;
        for (const auto &instance : reply.value) {
            ids.insert(instance.id);
        }
        m_slot->setKnownInstances(std::move(ids));
        if (!sameInstances(m_instances, reply.value)) {
            m_instances = std::move(reply.value);
            emit instancesChanged(m_instances);
        }
    });
}

void NodeConnection::startStream()
{
    const quint64 id = m_nextCallId++;
    const quint64 generation = m_generation;
    // Hooks run on gRPC threads and only post.
    net::CounterStream::Hooks hooks;
    hooks.filled = [this] {
        QMetaObject::invokeMethod(
            this, [this] { emit countersAvailable(); }, Qt::QueuedConnection);
    };
    hooks.unknownInstance = [this, generation] {
        QMetaObject::invokeMethod(
            this, [this, generation] { refreshInstances(generation); }, Qt::QueuedConnection);
    };
    hooks.ended = [this, id, generation](QString error) {
        QMetaObject::invokeMethod(
            this,
            [this, id, generation, error = std::move(error)] {
                onStreamDone(id, generation, error);
            },
            Qt::QueuedConnection);
    };
    m_slot->setCurrent(id);
    m_stream = std::make_unique<net::CounterStream>(id, m_tracker, m_slot, std::move(hooks));
    m_stream->start(*m_session);
}

void NodeConnection::setStreaming(bool on)
{
    if (on == m_streaming) {
        return;
    }
    m_streaming = on;
    if (!on) {
        retireStream();
    } else if (m_state == ConnectionState::ready && m_session && !m_stream) {
        startStream();
    }
}

void NodeConnection::retireStream()
{
    m_slot->setCurrent(0);
    if (m_stream) {
        m_stream->cancel();
        m_retiredStreams.push_back(std::move(m_stream));
    }
}

// The stream's OnDone has run: the reactor and its context can go, here on this thread.
void NodeConnection::onStreamDone(quint64 streamId, quint64 generation, const QString &error)
{
    if (m_stream && m_stream->id() == streamId) {
        m_stream.reset();
        if (generation == m_generation && m_state == ConnectionState::ready) {
            lose(error.isEmpty() ? QStringLiteral("UNAVAILABLE: the counter stream ended") : error);
        }
        return;
    }
    std::erase_if(m_retiredStreams,
                  [streamId](const auto &stream) { return stream->id() == streamId; });
}

} // namespace lutra::console
