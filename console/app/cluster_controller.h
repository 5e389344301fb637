#pragma once
// Joins the node connections to the models: one NodeConnection and one NodeSeries per node of the
// cluster file, the cluster-wide models (cluster table, merged schema, operations), and the
// per-node facts the views draw (instances, latest counters, series, clear/flush markers).
// Lives on the GUI thread; everything it receives comes there through queued invocations.

#include "app/cluster_file.h"
#include "app/fan_out_operation.h"
#include "core/node_series.h"
#include "models/cluster_model.h"
#include "models/operations_model.h"
#include "models/schema_model.h"
#include "net/fleet_telemetry.h"
#include "net/node_connection.h"

#include <QHash>
#include <QObject>
#include <QPointer>

#include <memory>

namespace lutra::console {

// Something that happened on a node at a time, drawn as a marker on its charts.
struct NodeEvent {
    qint64 timeMs = 0;
    QString label; // "clear", "flush 1002"
};

class ClusterController : public QObject {
    Q_OBJECT
public:
    // Only counters the charts draw are kept over time: readahead blocks and gauges.
    static constexpr int kHistoryMinutes = 60;

    explicit ClusterController(QObject *parent = nullptr);
    ~ClusterController() override;

    // Replaces the cluster: old connections are shut down, new ones started (unless
    // `startConnections` is false: the bench feeds synthetic nodes through injectCounters).
    void open(const ClusterFile &cluster, bool startConnections = true);
    void shutdown();
    const ClusterFile &cluster() const { return m_cluster; }

    // Fleet telemetry from the cluster file's Prometheus; null without one (then every node
    // streams and the cluster views aggregate the streams).
    FleetTelemetry *fleet() const { return m_fleet.get(); }
    // The nodes a view shows one by one (the Node tab, a node-scope chart). With Prometheus only
    // they stream counters and load their history; without, every node streams anyway.
    void setOnScreen(const QStringList &addresses);
    bool isStreaming(const QString &address) const;

    QStringList addresses() const { return m_order; }
    NodeConnection *connection(const QString &address) const;
    QString nodeName(const QString &address) const; // ctld's node name, or the address
    QStringList nodeNames(const QStringList &addresses) const;
    const NodeSeries *series(const QString &address) const;
    const CounterUpdate *latestCounters(const QString &address) const;
    const QList<InstanceSpecs> &schema(const QString &address) const;
    QList<NodeEvent> events(const QString &address) const;
    void addEvent(const QString &address, const NodeEvent &event);
    // The weakest role this console has on any of the nodes (what a cluster-wide edit may do).
    Role roleOn(const QStringList &addresses) const;

    // Running fan-outs by operation id, for the operations dock's cancel.
    void registerOperation(int id, FanOutOperation *operation, OperationRecord record);
    void recordOutcome(int id, const QString &address, const NodeOutcome &outcome);
    FanOutOperation *operation(int id) const; // null once it finished and went away
    const OperationRecord *operationRecord(int id) const;
    // The lutractl command line(s) running `arguments` on these nodes with this cluster's
    // credentials, one line per credential set.
    QString lutractlScript(const QStringList &addresses, const QStringList &arguments) const;
    // The operation's result in lutractl's --json shape.
    QByteArray operationJson(int id) const;

    ClusterModel &clusterModel() { return m_clusterModel; }
    SchemaModel &schemaModel() { return m_schemaModel; }
    OperationsModel &operationsModel() { return m_operations; }

    // For tests and the bench: feed a node as if its stream (or its stored history) had
    // delivered this.
    void injectCounters(const QString &address, const CounterUpdate &update);
    void injectHistory(const QString &address, const QList<HistorySeries> &history);

signals:
    void nodeStateChanged(const QString &address);
    void nodeInstancesChanged(const QString &address);
    void nodeCountersUpdated(const QString &address);
    void nodeHistoryLoaded(const QString &address);
    void nodeEventAdded(const QString &address);
    void schemaChanged();
    void fleetUpdated(); // a Prometheus poll completed (see fleet()->lastError())

private:
    struct Node;
    void connectSignals(Node &node);
    void onState(Node &node, ConnectionState state, const QString &error);
    void onCounters(Node &node, const CounterUpdate &update);
    void loadHistory(Node &node);
    void loadSchema(Node &node);
    void updateLive(Node &node);
    void onFleetUpdated();

    ClusterFile m_cluster;
    QStringList m_order;
    QHash<QString, std::shared_ptr<Node>> m_nodes;
    ClusterModel m_clusterModel;
    SchemaModel m_schemaModel;
    OperationsModel m_operations;
    QHash<int, QPointer<FanOutOperation>> m_running;
    QHash<int, OperationRecord> m_records;
    std::unique_ptr<FleetTelemetry> m_fleet;
};

// Node names as a label can show them: "node001, node002" or "5 nodes".
QString shortNodeList(const QStringList &names, int shown = 3);

// Keeps what the charts draw over time: read_ahead_stats blocks and the gauges.
CounterUpdate chartedCounters(const CounterUpdate &update);

} // namespace lutra::console
