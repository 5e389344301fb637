#pragma once
// One row per node of the cluster file: connection state, what the node reports about itself and
// its live gauges. Rows are keyed by the node's address ("host:port") as written in the cluster
// file, because a node's own name is only known once it answered.

#include "core/types.h"

#include <QAbstractTableModel>
#include <QtNumeric>

namespace lutra::console {

// The live numbers of one node; -1 (or NaN) = not known.
struct NodeLive {
    double hitRatio = qQNaN();
    qint64 lockCount = -1;
    qint64 lockUnused = -1;
    qint64 lruSize = -1; // 0 = dynamic LRU
    qint64 cachedMb = -1;
    qint64 maxCachedMb = -1;
};

class ClusterModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Node,
        State,
        Version,
        Uptime,
        You,
        Labels,
        Instances,
        Restarts,
        Profile,
        HitRatio,
        Locks,
        Cache,
        Drift,
        Error,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Roles {
        SortRole = Qt::UserRole + 1, // numbers for numeric columns, text otherwise
        AddressRole,                 // "host:port"
        LabelsRole,                  // QVariantMap of the node's labels
        StateRole,                   // int of ConnectionState
    };

    // Both spellings work: lutra::console::NodeLive and ClusterModel::NodeLive.
    using NodeLive = lutra::console::NodeLive;

    explicit ClusterModel(QObject *parent = nullptr);

    // Adds the missing addresses and removes the others; rows end in the order given.
    void setNodes(const QStringList &addresses);
    void setState(const QString &address, ConnectionState state, const QString &error = {});
    void setInfo(const QString &address, const NodeInfo &info);
    void setInstances(const QString &address, const QList<InstanceInfo> &instances);
    void setLive(const QString &address, const NodeLive &live);
    // The clock uptimes are counted against; injected so tests and the view tick together.
    void setNowMs(qint64 nowMs);
    // The outcome of the last verify on the node: entries that differ from `profile` now
    // (-1 clears it: the verify failed or is stale).
    void setDrift(const QString &address, int drift, const QString &profile);

    QString addressAt(int row) const;
    int rowOf(const QString &address) const; // -1 when not a row
    NodeInfo info(const QString &address) const;
    ConnectionState state(const QString &address) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    struct Row {
        QString address;
        ConnectionState state = ConnectionState::connecting;
        QString error;
        bool hasInfo = false;
        NodeInfo info;
        bool hasInstances = false;
        QList<InstanceInfo> instances;
        NodeLive live;
        int drift =
            -1; // entries that differ from driftProfile at the last verify; -1: not verified
        QString driftProfile;
    };

    QString displayText(const Row &row, int column) const;
    QVariant sortValue(const Row &row, int column) const;
    QString toolTip(const Row &row, int column) const;
    qint64 uptimeSeconds(const Row &row) const; // -1 when not known
    int instanceCount(const Row &row) const;    // -1 when not known
    int restarts(const Row &row) const;         // -1 when not known
    void rowChanged(int row, int firstColumn, int lastColumn);

    QList<Row> m_rows;
    qint64 m_nowMs = 0;
};

} // namespace lutra::console
