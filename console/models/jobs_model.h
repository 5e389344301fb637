#pragma once
// The jobs doing I/O on the selected nodes (GetJobStats merged across nodes): one row per job id
// with its bytes, rates and operations summed over its nodes. Clients (llite) and targets
// (obdfilter) describe the same I/O, so a job is counted from its clients when any node reports
// client job_stats for it, otherwise from its targets, never both.

#include "core/types.h"
#include "models/row_sync.h"

#include <QAbstractTableModel>
#include <QHash>
#include <QPair>
#include <QRegularExpression>
#include <QtNumeric>

namespace lutra::console {

class JobsModel : public KeyedTableModel {
    Q_OBJECT
public:
    enum Column {
        Job,
        Nodes,       // the nodes counted
        CountedFrom, // "clients" or "targets"
        ReadBytes,
        WriteBytes,
        ReadRate,
        WriteRate,
        Ops,
        LastSeen,
        ColumnCount
    };
    Q_ENUM(Column)

    enum Roles {
        SortRole = Qt::UserRole + 1, // numbers for every column but Job (Nodes: the count)
        JobRole,
    };

    explicit JobsModel(QObject *parent = nullptr);

    // The node's job stats taken at timeMs; rates come from the change since its previous call.
    void setNodeJobs(const QString &node, const QList<JobStat> &jobs, qint64 timeMs);
    void removeNode(const QString &node);
    // Shell-style glob on job ids ("job.10*"); empty: every job. Rows leave and come back by
    // removals and inserts.
    void setJobFilter(const QString &glob);
    QString jobFilter() const { return m_glob; }
    // The clock "12s ago" is counted against.
    void setNowMs(qint64 nowMs);

    // Where a flush of `job` acts, in natural order, filtered out or not: the nodes whose clients
    // reported it when any did (a target-only node holds none of its pages or locks), otherwise
    // every node that knows it.
    QStringList nodesOf(const QString &job) const;
    QStringList jobs() const; // the rows, in order

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // What an unknown rate shows until a node's second sample gives it.
    static QString measuringText();

private:
    // Why a job's rate on a node is not known.
    enum class RateGap { none, firstSample, newInstance, restarted };

    // One job on one node at one snapshot, as its clients or its targets saw it.
    struct Side {
        QHash<QString, QPair<qint64, qint64>> bytes; // "instance\nblock" → read, write
        qint64 readBytes = 0;
        qint64 writeBytes = 0;
        quint64 ops = 0;
        qint64 lastSeenS = 0;
        double readRate = qQNaN(); // bytes/s since the node's previous snapshot
        double writeRate = qQNaN();
        RateGap gap = RateGap::firstSample;
        bool present = false;
    };
    struct NodeJob {
        Side client; // llite.*.job_stats
        Side target; // obdfilter.*.job_stats and any other block
    };
    struct NodeJobs {
        qint64 timeMs = 0;
        QHash<QString, NodeJob> jobs;
    };
    struct Row {
        QString job;
        QStringList nodes;
        bool fromClients = false;
        QStringList otherSideNodes; // the nodes whose other side's job_stats were not added
        qint64 readBytes = 0;
        qint64 writeBytes = 0;
        double readRate = qQNaN();
        double writeRate = qQNaN();
        quint64 ops = 0;
        qint64 lastSeenS = 0;
        QStringList rateGaps; // "node001: first sample of this job", for each node without a rate
    };

    static void computeRates(Side &now, const Side &before, qint64 elapsedMs);
    static bool sameRow(const Row &a, const Row &b);
    QList<Row> computeRows() const;
    bool accepted(const QString &job) const;
    void rebuild();
    QString text(const Row &row, int column) const;
    static QString rateToolTip(const Row &row, double rate);
    static QString countedFromToolTip(const Row &row);
    QVariant sortValue(const Row &row, int column) const;

    QHash<QString, NodeJobs> m_nodes;
    QList<Row> m_rows;
    QString m_glob;
    QRegularExpression m_filter;
    qint64 m_nowMs = 0;
};

} // namespace lutra::console
