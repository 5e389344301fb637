#include "models/history_model.h"

#include "models/format.h"

#include <QBrush>
#include <QDateTime>
#include <QPointer>

#include <utility>

namespace lutra::console {

namespace {

// ctld's outcomes (ctl.proto HistoryPoint.outcome): ok, partial, error, aborted, pending.
const QString failedOutcome = QStringLiteral("error");
const QString abortedOutcome = QStringLiteral("aborted");
const QString partialOutcome = QStringLiteral("partial");

// Indexes: a point's internal id is 0, a change's is its point's row + 1. Rows are only ever
// appended, so a row number is a stable address (TreeItem::row() would search the siblings).
constexpr quintptr pointId = 0;

} // namespace

HistoryModel::HistoryModel(QObject *parent) : QAbstractItemModel(parent) {}

void HistoryModel::setSource(const QStringList &nodes, const HistoryQuery &filter, Fetch fetch)
{
    const bool hadErrors = !m_errors.isEmpty();
    const bool hadPending = pendingFetches() > 0;
    // A view (or the model tester) asking for more from the reset's signals is answered after it.
    const bool wasPumping = std::exchange(m_pumping, true);
    beginResetModel();
    ++m_generation;
    m_rows.clear();
    m_sources.clear();
    m_errors.clear();
    m_wanted = false;
    m_filter = filter;
    m_filter.limit = filter.limit > 0 ? filter.limit : 50;
    m_filter.beforeId = 0;
    m_fetch = std::move(fetch);
    QStringList unique = nodes;
    unique.removeDuplicates();
    for (const QString &node : std::as_const(unique)) {
        Source source;
        source.node = node;
        m_sources.append(source);
    }
    endResetModel();
    m_pumping = wasPumping;
    if (hadErrors) {
        emit errorsChanged();
    }
    if (hadPending) {
        emit pendingFetchesChanged();
    }
    if (!m_pumping && m_pumpAgain) {
        pump();
    }
}

int HistoryModel::pendingFetches() const
{
    return int(std::count_if(m_sources.cbegin(), m_sources.cend(),
                             [](const Source &source) { return source.pending; }));
}

const HistoryPoint *HistoryModel::point(const QModelIndex &index) const
{
    // Asked for the current selection, which may be none: no checkIndex warning for that.
    if (!index.isValid() || !checkIndex(index)) {
        return nullptr;
    }
    const int row = index.internalId() == pointId ? index.row() : int(index.internalId() - 1);
    return &m_rows[row].point;
}

QString HistoryModel::nodeOf(const QModelIndex &index) const
{
    if (!index.isValid() || !checkIndex(index)) {
        return {};
    }
    const int row = index.internalId() == pointId ? index.row() : int(index.internalId() - 1);
    return m_rows[row].node;
}

QModelIndex HistoryModel::index(int row, int column, const QModelIndex &parent) const
{
    if (!hasIndex(row, column, parent)) {
        return {};
    }
    if (!parent.isValid()) {
        return createIndex(row, column, pointId);
    }
    return createIndex(row, column, quintptr(parent.row()) + 1);
}

QModelIndex HistoryModel::parent(const QModelIndex &child) const
{
    if (!child.isValid() || child.internalId() == pointId) {
        return {};
    }
    return createIndex(int(child.internalId() - 1), 0, pointId);
}

int HistoryModel::rowCount(const QModelIndex &parent) const
{
    if (!parent.isValid()) {
        return int(m_rows.size());
    }
    // Changes have no children; only the first column of a point has them, as views expect.
    if (parent.internalId() != pointId || parent.column() != 0) {
        return 0;
    }
    return int(m_rows[parent.row()].point.changes.size());
}

int HistoryModel::columnCount(const QModelIndex &) const
{
    return ColumnCount;
}

QVariant HistoryModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid)) {
        return {};
    }
    const bool isPoint = index.internalId() == pointId;
    const Entry &entry = m_rows[isPoint ? index.row() : int(index.internalId() - 1)];
    const HistoryChange *change = isPoint ? nullptr : &entry.point.changes[index.row()];
    const int column = index.column();
    switch (role) {
    case Qt::DisplayRole: return change ? changeText(*change, column) : text(entry, column);
    case Qt::ToolTipRole: {
        if (column == Time || column == Id) {
            return {};
        }
        const QString tip = change ? changeText(*change, column) : text(entry, column);
        return tip.isEmpty() ? QVariant() : QVariant(tip);
    }
    case PointIdRole: return QVariant::fromValue(entry.point.id);
    case NodeRole: return entry.node;
    case Qt::ForegroundRole:
        if (column != Outcome) {
            return {};
        }
        if (change) {
            return change->ok ? QVariant() : QVariant(QBrush(errorColor()));
        }
        if (entry.point.outcome == failedOutcome || entry.point.outcome == abortedOutcome) {
            return QBrush(errorColor());
        }
        return {};
    case Qt::BackgroundRole:
        if (column == Outcome && !change && entry.point.outcome == partialOutcome) {
            return QBrush(warningColor());
        }
        return {};
    default: return {};
    }
}

QVariant HistoryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) {
        return {};
    }
    switch (Column(section)) {
    case Time: return tr("Time");
    case Node: return tr("Node");
    case Principal: return tr("Principal");
    case Action: return tr("Action");
    case What: return tr("What");
    case Outcome: return tr("Outcome");
    case Id: return tr("Id");
    case ColumnCount: break;
    }
    return {};
}

bool HistoryModel::canFetchMore(const QModelIndex &parent) const
{
    if (parent.isValid() || !m_fetch) {
        return false;
    }
    return std::any_of(m_sources.cbegin(), m_sources.cend(), [](const Source &source) {
        return source.more || !source.buffer.isEmpty();
    });
}

void HistoryModel::fetchMore(const QModelIndex &parent)
{
    if (parent.isValid() || !m_fetch) {
        return;
    }
    m_wanted = true;
    pump();
}

bool HistoryModel::before(const QString &nodeA, const HistoryPoint &a, const QString &nodeB,
                          const HistoryPoint &b)
{
    if (a.timeNs != b.timeNs) {
        return a.timeNs > b.timeNs;
    }
    if (nodeA != nodeB) {
        return naturalLess(nodeA, nodeB);
    }
    return a.id > b.id;
}

void HistoryModel::startFetch(int source)
{
    Source &node = m_sources[source];
    node.pending = true;
    HistoryQuery query = m_filter;
    query.beforeId = node.cursor;
    const QString name = node.node;
    emit pendingFetchesChanged();
    // The answer may come after this model is gone, or after a new setSource.
    QPointer<HistoryModel> self(this);
    m_fetch(name, query,
            [self, generation = m_generation, source](bool ok, const QString &error,
                                                      const HistoryPage &page) {
                if (self) {
                    self->onPage(generation, source, ok, error, page);
                }
            });
}

void HistoryModel::onPage(int generation, int source, bool ok, const QString &error,
                          const HistoryPage &page)
{
    if (generation != m_generation || source >= m_sources.size() || !m_sources[source].pending) {
        return;
    }
    Source &node = m_sources[source];
    node.pending = false;
    if (!ok) {
        // Treated as exhausted: the other nodes' points still arrive.
        node.more = false;
        m_errors.append(node.node + QStringLiteral(": ") + error);
    } else {
        node.buffer += page.points;
        if (!page.points.isEmpty()) {
            node.oldest = Entry{node.node, page.points.constLast()};
            node.seen = true;
        }
        // A page that brings nothing and leaves the cursor where it was would repeat forever.
        const bool progressed = !page.points.isEmpty() || page.nextBeforeId != node.cursor;
        node.cursor = page.nextBeforeId;
        node.more = page.nextBeforeId != 0 && progressed;
    }
    if (!ok) {
        emit errorsChanged();
    }
    emit pendingFetchesChanged();
    pump();
}

void HistoryModel::pump()
{
    if (m_pumping) {
        m_pumpAgain = true;
        return;
    }
    m_pumping = true;
    do {
        m_pumpAgain = false;
        if (release() > 0) {
            m_wanted = false;
        }
        if (!m_wanted || !m_fetch) {
            continue;
        }
        // Only a node whose fetched points are all rows can hold the merge up (see release()).
        for (int i = 0; i < m_sources.size(); ++i) {
            if (m_sources[i].buffer.isEmpty() && waitingOn(m_sources[i])) {
                startFetch(i);
            }
        }
    } while (m_pumpAgain);
    m_pumping = false;
}

int HistoryModel::release()
{
    QList<Entry> released;
    for (;;) {
        int best = -1;
        for (int i = 0; i < m_sources.size(); ++i) {
            const Source &source = m_sources[i];
            if (source.buffer.isEmpty()) {
                continue;
            }
            if (best < 0 || before(source.node, source.buffer.constFirst(), m_sources[best].node,
                                   m_sources[best].buffer.constFirst())) {
                best = i;
            }
        }
        if (best < 0) {
            break;
        }
        const QString &node = m_sources[best].node;
        const HistoryPoint &candidate = m_sources[best].buffer.constFirst();
        // A node that may still have points can only deliver ones after the oldest it gave;
        // the candidate must not come after that one.
        const bool safe =
            std::none_of(m_sources.cbegin(), m_sources.cend(), [&](const Source &source) {
                return source.more &&
                       (!source.seen ||
                        before(source.oldest.node, source.oldest.point, node, candidate));
            });
        if (!safe) {
            break;
        }
        released.append(Entry{node, m_sources[best].buffer.takeFirst()});
    }
    if (released.isEmpty()) {
        return 0;
    }
    const int first = int(m_rows.size());
    beginInsertRows({}, first, first + int(released.size()) - 1);
    m_rows += released;
    endInsertRows();
    return int(released.size());
}

QString HistoryModel::text(const Entry &entry, int column) const
{
    const HistoryPoint &point = entry.point;
    switch (Column(column)) {
    case Time:
        return QDateTime::fromMSecsSinceEpoch(point.timeNs / 1'000'000)
            .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    case Node: return entry.node;
    case Principal: return point.principal;
    case Action: return point.action;
    case What: return point.description.isEmpty() ? point.profile : point.description;
    case Outcome: return QString(point.outcome).replace(u'_', u' ');
    case Id: return QStringLiteral("#%1").arg(point.id);
    case ColumnCount: break;
    }
    return {};
}

QString HistoryModel::changeText(const HistoryChange &change, int column) const
{
    switch (Column(column)) {
    case Time: return {};
    case Node: return change.instance;
    case Principal: return change.name;
    case Action: return QStringLiteral("%1 → %2").arg(change.oldValue, change.requested);
    case What: return change.readBack;
    case Outcome:
        if (change.ok) {
            return tr("ok");
        }
        return change.error.isEmpty() ? tr("error") : tr("error: %1").arg(change.error);
    case Id: return {};
    case ColumnCount: break;
    }
    return {};
}

} // namespace lutra::console
