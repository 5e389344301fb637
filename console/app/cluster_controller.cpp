#include "app/cluster_controller.h"

#include "app/fan_out_operation.h"
#include "app/scripting.h"
#include "core/readahead.h"

#include <QDateTime>

#include <cmath>
#include <limits>

namespace lutra::console {

struct ClusterController::Node {
    QString address;
    std::unique_ptr<NodeConnection> connection;
    NodeSeries series{3600};
    std::optional<CounterUpdate> latest;
    QList<InstanceSpecs> schema;
    QList<NodeEvent> events;
    qint64 historyLoadedFor = -1; // ctld start time whose history was loaded
    quint64 historyCall = 0;
    quint64 schemaCall = 0;
};

namespace {

bool isGauge(const QString &name)
{
    return !name.contains(QLatin1String("_stats"));
}

bool isCharted(const QString &counterOrBlock)
{
    return counterOrBlock.contains(QLatin1String("read_ahead_stats")) || isGauge(counterOrBlock);
}

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

} // namespace

CounterUpdate chartedCounters(const CounterUpdate &update)
{
    CounterUpdate charted;
    charted.timeNs = update.timeNs;
    charted.instances.reserve(update.instances.size());
    for (const auto &instance : update.instances) {
        InstanceCounters kept;
        kept.instance = instance.instance;
        kept.gauges = instance.gauges;
        for (const auto &block : instance.blocks) {
            if (isReadaheadBlock(block.name)) {
                kept.blocks << block;
            }
        }
        charted.instances << std::move(kept);
    }
    return charted;
}

ClusterController::ClusterController(QObject *parent) : QObject(parent) {}

ClusterController::~ClusterController()
{
    shutdown();
}

void ClusterController::open(const ClusterFile &cluster, bool startConnections)
{
    shutdown();
    m_cluster = cluster;
    for (const auto &clusterNode : cluster.nodes) {
        auto node = std::make_shared<Node>();
        node->address = clusterNode.endpoint.address;
        node->connection = std::make_unique<NodeConnection>(clusterNode.endpoint);
        m_order << node->address;
        m_nodes.insert(node->address, node);
    }
    m_clusterModel.setNodes(m_order);
    if (!cluster.prometheus.isEmpty()) {
        m_fleet = std::make_unique<FleetTelemetry>(cluster.prometheus, cluster.name, m_order);
        connect(m_fleet.get(), &FleetTelemetry::updated, this, &ClusterController::onFleetUpdated);
    }
    for (const auto &address : std::as_const(m_order)) {
        auto &node = *m_nodes.value(address);
        connectSignals(node);
        // With Prometheus for the fleet, a node streams only while it is on screen.
        node.connection->setStreaming(!m_fleet);
        if (startConnections) {
            node.connection->start();
        }
    }
    if (m_fleet && startConnections) {
        m_fleet->start(cluster.prometheusIntervalMs); // 0: as often as Prometheus evaluates
    }
}

void ClusterController::setOnScreen(const QStringList &addresses)
{
    if (!m_fleet) {
        return;
    }
    for (auto &node : m_nodes) {
        const bool shown = addresses.contains(node->address);
        if (node->connection->streaming() == shown) {
            continue;
        }
        node->connection->setStreaming(shown);
        const auto &info = node->connection->info();
        if (shown && node->connection->state() == ConnectionState::ready &&
            node->historyLoadedFor != info.startTimeNs) {
            loadHistory(*node);
        }
    }
}

bool ClusterController::isStreaming(const QString &address) const
{
    auto found = m_nodes.value(address);
    return found && found->connection->streaming();
}

void ClusterController::onFleetUpdated()
{
    const auto &facts = m_fleet->facts();
    for (auto &node : m_nodes) {
        if (node->connection->streaming() && node->latest) {
            continue; // an on-screen node's own stream is fresher than a 1-minute rate
        }
        NodeLive live;
        if (const auto found = facts.find(node->address); found != facts.end()) {
            live.hitRatio = found->hitRatio;
            live.lockCount = found->lockCount;
            live.lockUnused = found->lockUnused;
            // No fixed lru_size series while the node has locks: every namespace is dynamic.
            live.lruSize =
                found->lruSizeFixed < 0 && found->lockUnused >= 0 ? 0 : found->lruSizeFixed;
            live.cachedMb = found->cachedMb;
            live.maxCachedMb = found->maxCachedMb;
        }
        m_clusterModel.setLive(node->address, live);
    }
    emit fleetUpdated();
}

void ClusterController::shutdown()
{
    m_fleet.reset();
    // Every connection waits for its calls' OnDone before its channel goes, on this thread.
    for (auto &node : m_nodes) {
        node->connection->disconnect(this);
        node->connection->shutdown();
    }
    m_nodes.clear();
    m_order.clear();
    m_clusterModel.setNodes({});
}

void ClusterController::connectSignals(Node &node)
{
    auto *connection = node.connection.get();
    const QString address = node.address;
    connect(connection, &NodeConnection::stateChanged, this,
            [this, address](ConnectionState state, const QString &error) {
                if (auto found = m_nodes.value(address)) {
                    onState(*found, state, error);
                }
            });
    connect(connection, &NodeConnection::infoChanged, this, [this, address](const NodeInfo &info) {
        m_clusterModel.setInfo(address, info);
        if (auto found = m_nodes.value(address); found && found->connection->streaming() &&
                                                 found->historyLoadedFor != info.startTimeNs) {
            loadHistory(*found);
        }
        emit nodeStateChanged(address);
    });
    connect(connection, &NodeConnection::instancesChanged, this,
            [this, address](const QList<InstanceInfo> &instances) {
                m_clusterModel.setInstances(address, instances);
                if (auto found = m_nodes.value(address)) {
                    loadSchema(*found);
                }
                emit nodeInstancesChanged(address);
            });
    connect(connection, &NodeConnection::countersAvailable, this, [this, address] {
        auto found = m_nodes.value(address);
        if (!found) {
            return;
        }
        if (auto update = found->connection->takeLatestCounters()) {
            onCounters(*found, *update);
        }
    });
}

void ClusterController::onState(Node &node, ConnectionState state, const QString &error)
{
    m_clusterModel.setState(node.address, state, error);
    if (state == ConnectionState::unreachable) {
        node.series.markGap(nowMs());
    }
    emit nodeStateChanged(node.address);
}

void ClusterController::loadHistory(Node &node)
{
    const qint64 startTime = node.connection->info().startTimeNs;
    node.historyLoadedFor = startTime;
    const qint64 since = (nowMs() - qint64(kHistoryMinutes) * 60'000) * 1'000'000;
    const QString address = node.address;
    node.historyCall = node.connection->getCounterHistory(
        {}, {}, since, [this, address](Reply<QList<HistorySeries>> reply) {
            auto found = m_nodes.value(address);
            if (!found || !reply.ok) {
                return; // a failed history only means the charts start empty
            }
            QList<HistorySeries> charted;
            for (auto &one : reply.value) {
                if (isCharted(one.counter) && !one.counter.endsWith(QLatin1String(".sum"))) {
                    charted << std::move(one);
                }
            }
            found->series.prefill(charted);
            emit nodeHistoryLoaded(address);
        });
}

void ClusterController::loadSchema(Node &node)
{
    const QString address = node.address;
    node.schemaCall =
        node.connection->listParams({}, [this, address](Reply<QList<InstanceSpecs>> reply) {
            auto found = m_nodes.value(address);
            if (!found || !reply.ok) {
                return;
            }
            found->schema = reply.value;
            m_schemaModel.setSchema(found->schema);
            emit schemaChanged();
        });
}

void ClusterController::onCounters(Node &node, const CounterUpdate &update)
{
    node.latest = update;
    node.series.add(chartedCounters(update));
    updateLive(node);
    emit nodeCountersUpdated(node.address);
}

void ClusterController::injectCounters(const QString &address, const CounterUpdate &update)
{
    if (auto found = m_nodes.value(address)) {
        onCounters(*found, update);
    }
}

void ClusterController::injectHistory(const QString &address, const QList<HistorySeries> &history)
{
    if (auto found = m_nodes.value(address)) {
        found->series.prefill(history);
        emit nodeHistoryLoaded(address);
    }
}

void ClusterController::updateLive(Node &node)
{
    NodeLive live;
    live.hitRatio = node.series.latestNodeReadahead().hitRatio;
    const auto add = [](qint64 &sum, qint64 value) { sum = (sum < 0 ? 0 : sum) + value; };
    bool dynamicLru = false;
    for (const auto &instance : node.latest->instances) {
        for (const auto &gauge : instance.gauges) {
            bool ok = false;
            const qint64 value = gauge.value.toLongLong(&ok);
            if (!ok) {
                continue;
            }
            // The leaf names the gauge; compared in place, no string is built per gauge.
            const QStringView name(gauge.name);
            if (name.endsWith(u".lock_count")) {
                add(live.lockCount, value);
            } else if (name.endsWith(u".lock_unused_count")) {
                add(live.lockUnused, value);
            } else if (name.endsWith(u".lru_size")) {
                dynamicLru = dynamicLru || value == 0;
                add(live.lruSize, value);
            } else if (name.endsWith(u".cached_pages")) {
                add(live.cachedMb, value * 4096 / (1024 * 1024)); // 4 KiB pages
            } else if (name.endsWith(u".max_cached_mb")) {
                add(live.maxCachedMb, value);
            }
        }
    }
    if (dynamicLru) {
        live.lruSize = 0; // any namespace sized dynamically: no fixed bound to compare with
    }
    m_clusterModel.setLive(node.address, live);
}

NodeConnection *ClusterController::connection(const QString &address) const
{
    auto found = m_nodes.value(address);
    return found ? found->connection.get() : nullptr;
}

QString ClusterController::nodeName(const QString &address) const
{
    auto found = m_nodes.value(address);
    if (found && !found->connection->info().node.isEmpty()) {
        return found->connection->info().node;
    }
    return address;
}

QStringList ClusterController::nodeNames(const QStringList &addresses) const
{
    QStringList names;
    names.reserve(addresses.size());
    for (const auto &address : addresses) {
        names << nodeName(address);
    }
    return names;
}

QString shortNodeList(const QStringList &names, int shown)
{
    return names.size() <= shown ? names.join(QStringLiteral(", "))
                                 : QObject::tr("%1 nodes").arg(names.size());
}

const NodeSeries *ClusterController::series(const QString &address) const
{
    auto found = m_nodes.value(address);
    return found ? &found->series : nullptr;
}

const CounterUpdate *ClusterController::latestCounters(const QString &address) const
{
    auto found = m_nodes.value(address);
    return found && found->latest ? &*found->latest : nullptr;
}

const QList<InstanceSpecs> &ClusterController::schema(const QString &address) const
{
    static const QList<InstanceSpecs> none;
    auto found = m_nodes.value(address);
    return found ? found->schema : none;
}

QList<NodeEvent> ClusterController::events(const QString &address) const
{
    auto found = m_nodes.value(address);
    return found ? found->events : QList<NodeEvent>{};
}

void ClusterController::addEvent(const QString &address, const NodeEvent &event)
{
    if (auto found = m_nodes.value(address)) {
        found->events << event;
        emit nodeEventAdded(address);
    }
}

Role ClusterController::roleOn(const QStringList &addresses) const
{
    Role weakest = Role::admin;
    bool any = false;
    for (const auto &address : addresses) {
        auto found = m_nodes.value(address);
        if (!found || found->connection->state() != ConnectionState::ready) {
            continue; // unreachable nodes are reported by the operation, not by the role
        }
        any = true;
        const Role role = found->connection->info().role;
        if (static_cast<int>(role) < static_cast<int>(weakest)) {
            weakest = role;
        }
    }
    return any ? weakest : Role::unknown;
}

} // namespace lutra::console

namespace lutra::console {

void ClusterController::registerOperation(int id, FanOutOperation *operation,
                                          OperationRecord record)
{
    m_running.insert(id, operation);
    m_records.insert(id, std::move(record));
}

void ClusterController::recordOutcome(int id, const QString &address, const NodeOutcome &outcome)
{
    if (auto found = m_records.find(id); found != m_records.end()) {
        found->outcomes.insert(address, outcome);
    }
}

const OperationRecord *ClusterController::operationRecord(int id) const
{
    const auto found = m_records.constFind(id);
    return found == m_records.constEnd() ? nullptr : &*found;
}

QString ClusterController::lutractlScript(const QStringList &addresses,
                                          const QStringList &arguments) const
{
    return lutractlCommands(m_cluster, addresses, arguments).join('\n');
}

QByteArray ClusterController::operationJson(int id) const
{
    const auto *record = operationRecord(id);
    if (record == nullptr) {
        return {};
    }
    QList<NodeJson> nodes;
    for (const auto &address : record->addresses) {
        const auto found = record->outcomes.constFind(address);
        NodeJson node;
        node.node = address;
        if (found == record->outcomes.constEnd()) {
            node.error = QStringLiteral("not contacted");
        } else {
            node.ok = found->state == OpState::ok;
            node.error = node.ok ? QString() : found->detail;
            node.result = found->json;
        }
        nodes << node;
    }
    return lutractlJson(nodes);
}

FanOutOperation *ClusterController::operation(int id) const
{
    return m_running.value(id);
}

} // namespace lutra::console
