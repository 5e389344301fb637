#include "models/jobs_model.h"

#include "models/format.h"
#include "models/row_sync.h"

#include <QSet>

#include <algorithm>
#include <cmath>

namespace lutra::console {

namespace {

const QString readBytesName = QStringLiteral("read_bytes");
const QString writeBytesName = QStringLiteral("write_bytes");

QString rateText(double bytesPerSecond)
{
    if (std::isnan(bytesPerSecond)) {
        return JobsModel::measuringText();
    }
    return formatBytes(quint64(std::max<qint64>(0, qRound64(bytesPerSecond)))) +
           QStringLiteral("/s");
}

bool sameDouble(double a, double b)
{
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// NaN stays NaN until a known value is added.
void addRate(double &total, double rate)
{
    if (!std::isnan(rate)) {
        total = std::isnan(total) ? rate : total + rate;
    }
}

} // namespace

JobsModel::JobsModel(QObject *parent) : KeyedTableModel(parent) {}

QString JobsModel::measuringText()
{
    return tr("measuring…");
}

void JobsModel::setNodeJobs(const QString &node, const QList<JobStat> &jobs, qint64 timeMs)
{
    NodeJobs next;
    next.timeMs = timeMs;
    for (const JobStat &stat : jobs) {
        NodeJob &job = next.jobs[stat.jobId];
        Side &side = stat.block.startsWith(QStringLiteral("llite.")) ? job.client : job.target;
        side.present = true;
        auto &bytes = side.bytes[stat.instance + u'\n' + stat.block];
        for (const Counter &counter : stat.counters) {
            side.ops += counter.samples;
            if (counter.name == readBytesName) {
                bytes.first += counter.sum;
                side.readBytes += counter.sum;
            } else if (counter.name == writeBytesName) {
                bytes.second += counter.sum;
                side.writeBytes += counter.sum;
            }
        }
        side.lastSeenS = std::max(side.lastSeenS, stat.snapshotTimeS);
    }
    const auto previous = m_nodes.constFind(node);
    if (previous != m_nodes.cend()) {
        for (auto it = next.jobs.begin(); it != next.jobs.end(); ++it) {
            const auto before = previous->jobs.constFind(it.key());
            if (before == previous->jobs.cend()) {
                continue;
            }
            if (it->client.present && before->client.present) {
                computeRates(it->client, before->client, timeMs - previous->timeMs);
            }
            if (it->target.present && before->target.present) {
                computeRates(it->target, before->target, timeMs - previous->timeMs);
            }
        }
    }
    m_nodes.insert(node, next);
    rebuild();
}

void JobsModel::removeNode(const QString &node)
{
    if (m_nodes.remove(node) > 0) {
        rebuild();
    }
}

void JobsModel::setJobFilter(const QString &glob)
{
    if (glob == m_glob) {
        return;
    }
    m_glob = glob;
    m_filter = glob.isEmpty()
                   ? QRegularExpression()
                   : QRegularExpression(QRegularExpression::wildcardToRegularExpression(glob));
    rebuild();
}

void JobsModel::setNowMs(qint64 nowMs)
{
    if (nowMs == m_nowMs) {
        return;
    }
    m_nowMs = nowMs;
    if (!m_rows.isEmpty()) {
        emit dataChanged(index(0, LastSeen), index(int(m_rows.size()) - 1, LastSeen),
                         {Qt::DisplayRole, Qt::ToolTipRole});
    }
}

QStringList JobsModel::nodesOf(const QString &job) const
{
    QStringList clients;
    QStringList any;
    for (auto it = m_nodes.cbegin(); it != m_nodes.cend(); ++it) {
        const auto found = it->jobs.constFind(job);
        if (found == it->jobs.cend()) {
            continue;
        }
        any.append(it.key());
        if (found->client.present) {
            clients.append(it.key());
        }
    }
    QStringList &nodes = clients.isEmpty() ? any : clients;
    std::sort(nodes.begin(), nodes.end(), naturalLess);
    return nodes;
}

QStringList JobsModel::jobs() const
{
    QStringList jobs;
    jobs.reserve(m_rows.size());
    for (const Row &row : m_rows) {
        jobs.append(row.job);
    }
    return jobs;
}

int JobsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

int JobsModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant JobsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid)) {
        return {};
    }
    const Row &row = m_rows[index.row()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: return text(row, column);
    case SortRole: return sortValue(row, column);
    case JobRole: return row.job;
    case Qt::ToolTipRole:
        switch (Column(column)) {
        case Nodes: return row.nodes.join(u'\n');
        case CountedFrom: return countedFromToolTip(row);
        case ReadBytes: return tr("%1 bytes").arg(formatCount(row.readBytes));
        case WriteBytes: return tr("%1 bytes").arg(formatCount(row.writeBytes));
        case ReadRate: return rateToolTip(row, row.readRate);
        case WriteRate: return rateToolTip(row, row.writeRate);
        default: return text(row, column);
        }
    default: return {};
    }
}

QVariant JobsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal) {
        return {};
    }
    if (role == Qt::ToolTipRole) {
        switch (Column(section)) {
        case ReadRate:
        case WriteRate:
            return tr("Since each node's previous sample: \"measuring…\" until a node has two "
                      "samples of the job; a node whose counters restarted adds nothing for that "
                      "step");
        case Ops: return tr("Operations of every kind: reads, writes, getattr, setattr, punch…");
        case CountedFrom:
            return tr("Clients and targets count the same I/O: a job is counted from its clients' "
                      "job_stats when any node reports them, otherwise from its targets'");
        default: return {};
        }
    }
    if (role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Job: return tr("Job");
    case Nodes: return tr("Nodes");
    case CountedFrom: return tr("Counted from");
    case ReadBytes: return tr("Read");
    case WriteBytes: return tr("Written");
    case ReadRate: return tr("Read rate");
    case WriteRate: return tr("Write rate");
    case Ops: return tr("Ops");
    case LastSeen: return tr("Last seen");
    case ColumnCount: break;
    }
    return {};
}

QString JobsModel::rateToolTip(const Row &row, double rate)
{
    const QString why = row.rateGaps.join(u'\n');
    if (std::isnan(rate)) {
        return tr("Measuring: a rate needs two samples of the job's counters; it comes with the "
                  "next one.\n%1")
            .arg(why);
    }
    if (!row.rateGaps.isEmpty()) {
        return tr("%1, without these nodes (their rate comes with the next sample):\n%2")
            .arg(rateText(rate), why);
    }
    return rateText(rate);
}

void JobsModel::computeRates(Side &now, const Side &before, qint64 elapsedMs)
{
    if (elapsedMs <= 0) {
        return; // the same sample again: as good as none
    }
    qint64 read = 0;
    qint64 written = 0;
    for (auto it = now.bytes.cbegin(); it != now.bytes.cend(); ++it) {
        const auto old = before.bytes.constFind(it.key());
        // New on this instance: what it counted before this step is not known.
        if (old == before.bytes.cend()) {
            now.gap = RateGap::newInstance;
            return;
        }
        // A counter that went down was reset (the job's entry expired, the target restarted).
        if (it->first < old->first || it->second < old->second) {
            now.gap = RateGap::restarted;
            return;
        }
        read += it->first - old->first;
        written += it->second - old->second;
    }
    now.readRate = double(read) * 1000.0 / double(elapsedMs);
    now.writeRate = double(written) * 1000.0 / double(elapsedMs);
    now.gap = RateGap::none;
}

bool JobsModel::sameRow(const Row &a, const Row &b)
{
    return a.job == b.job && a.nodes == b.nodes && a.fromClients == b.fromClients &&
           a.otherSideNodes == b.otherSideNodes && a.readBytes == b.readBytes &&
           a.writeBytes == b.writeBytes && sameDouble(a.readRate, b.readRate) &&
           sameDouble(a.writeRate, b.writeRate) && a.ops == b.ops && a.lastSeenS == b.lastSeenS &&
           a.rateGaps == b.rateGaps;
}

QList<JobsModel::Row> JobsModel::computeRows() const
{
    QStringList nodes = m_nodes.keys();
    std::sort(nodes.begin(), nodes.end(), naturalLess);
    // A job any node reports from its clients is counted from its clients only.
    QSet<QString> fromClients;
    for (const NodeJobs &nodeJobs : m_nodes) {
        for (auto it = nodeJobs.jobs.cbegin(); it != nodeJobs.jobs.cend(); ++it) {
            if (it->client.present) {
                fromClients.insert(it.key());
            }
        }
    }
    QHash<QString, Row> rows;
    for (const QString &node : std::as_const(nodes)) {
        const NodeJobs &nodeJobs = m_nodes[node];
        for (auto it = nodeJobs.jobs.cbegin(); it != nodeJobs.jobs.cend(); ++it) {
            if (!accepted(it.key())) {
                continue;
            }
            Row &row = rows[it.key()];
            row.job = it.key();
            row.fromClients = fromClients.contains(it.key());
            const Side &side = row.fromClients ? it->client : it->target;
            if (!side.present) {
                row.otherSideNodes.append(node);
                continue;
            }
            if ((row.fromClients ? it->target : it->client).present) {
                row.otherSideNodes.append(node);
            }
            row.nodes.append(node);
            row.readBytes += side.readBytes;
            row.writeBytes += side.writeBytes;
            row.ops += side.ops;
            row.lastSeenS = std::max(row.lastSeenS, side.lastSeenS);
            addRate(row.readRate, side.readRate);
            addRate(row.writeRate, side.writeRate);
            switch (side.gap) {
            case RateGap::none: break;
            case RateGap::firstSample:
                row.rateGaps << tr("%1: first sample of this job").arg(node);
                break;
            case RateGap::newInstance:
                row.rateGaps << tr("%1: the job reached another process since the previous "
                                   "sample")
                                    .arg(node);
                break;
            case RateGap::restarted:
                row.rateGaps << tr("%1: its counters went down since the previous sample (a "
                                   "process restarted or the job's entry expired)")
                                    .arg(node);
                break;
            }
        }
    }
    QList<Row> result = rows.values();
    std::sort(result.begin(), result.end(),
              [](const Row &a, const Row &b) { return naturalLess(a.job, b.job); });
    return result;
}

QString JobsModel::countedFromToolTip(const Row &row)
{
    QString text = row.fromClients
                       ? tr("Counted from the clients' job_stats (llite) on %1")
                             .arg(row.nodes.join(QStringLiteral(", ")))
                       : tr("Counted from the targets' job_stats (obdfilter) on %1: no client "
                            "reports this job")
                             .arg(row.nodes.join(QStringLiteral(", ")));
    if (!row.otherSideNodes.isEmpty()) {
        text += u'\n' + tr("Not added: the %1' job_stats on %2 describe the same I/O")
                            .arg(row.fromClients ? tr("targets") : tr("clients"),
                                 row.otherSideNodes.join(QStringLiteral(", ")));
    }
    return text;
}

bool JobsModel::accepted(const QString &job) const
{
    return m_glob.isEmpty() || (m_filter.isValid() && m_filter.match(job).hasMatch());
}

void JobsModel::rebuild()
{
    // A periodic update changes most rows' numbers in place: one signal per run of them.
    syncTo(
        m_rows, computeRows(), [](const Row &row) { return row.job; }, &JobsModel::sameRow, Nodes);
}

QString JobsModel::text(const Row &row, int column) const
{
    switch (Column(column)) {
    case Job: return row.job;
    case Nodes: return row.nodes.join(QStringLiteral(", "));
    case CountedFrom: return row.fromClients ? tr("clients") : tr("targets");
    case ReadBytes: return formatBytes(quint64(row.readBytes));
    case WriteBytes: return formatBytes(quint64(row.writeBytes));
    case ReadRate: return rateText(row.readRate);
    case WriteRate: return rateText(row.writeRate);
    case Ops: return formatCount(row.ops);
    case LastSeen:
        if (m_nowMs <= 0 || row.lastSeenS <= 0) {
            return unknownText();
        }
        return tr("%1 ago").arg(formatDuration(m_nowMs / 1000 - row.lastSeenS));
    case ColumnCount: break;
    }
    return {};
}

QVariant JobsModel::sortValue(const Row &row, int column) const
{
    switch (Column(column)) {
    case Job: return row.job;
    case Nodes: return int(row.nodes.size());
    case CountedFrom: return row.fromClients ? 1 : 0;
    case ReadBytes: return row.readBytes;
    case WriteBytes: return row.writeBytes;
    // Unknown rates sort below every known one.
    case ReadRate: return std::isnan(row.readRate) ? -1.0 : row.readRate;
    case WriteRate: return std::isnan(row.writeRate) ? -1.0 : row.writeRate;
    case Ops: return row.ops;
    case LastSeen: return row.lastSeenS;
    case ColumnCount: break;
    }
    return {};
}

} // namespace lutra::console
