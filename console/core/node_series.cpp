#include "core/node_series.h"

#include "core/readahead.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>

namespace lutra::console {

namespace {

constexpr float kNaNf = std::numeric_limits<float>::quiet_NaN();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr qint64 kNsPerMs = 1'000'000;

// "<block>.<counter>" where the block is a stats block ("llite.lutra.read_ahead_stats.hits").
// Gauges are parameters ("ldlm.namespaces.ost0.lock_count"), never under a *_stats block.
bool isCounterName(QStringView name, QStringView *block)
{
    const qsizetype dot = name.lastIndexOf(u'.');
    if (dot <= 0 || !name.left(dot).endsWith(u"_stats")) {
        return false;
    }
    *block = name.left(dot);
    return true;
}

struct Point {
    qint64 timeNs;
    qint64 value;
};

// One instance's history on a common time axis.
struct HistoryRows {
    std::vector<qint64> times; // ms, sorted, unique
    QStringList keys;
    std::vector<std::vector<float>> columns; // per key, one value per time
    // Summed over the read_ahead_stats blocks, per time; NaN where none had both rates.
    std::vector<double> hits;
    std::vector<double> misses;
};

HistoryRows historyRows(const QList<const HistorySeries *> &series, qint64 cutoffMs)
{
    // Pages of one series may come as several HistorySeries: join them by name.
    QStringList names;
    QHash<QString, std::vector<Point>> pointsOf;
    for (const HistorySeries *one : series) {
        auto found = pointsOf.find(one->counter);
        if (found == pointsOf.end()) {
            names.append(one->counter);
            found = pointsOf.insert(one->counter, {});
        }
        const qsizetype n = std::min(one->timeNs.size(), one->value.size());
        for (qsizetype i = 0; i < n; ++i) {
            if (one->timeNs[i] / kNsPerMs < cutoffMs) {
                found->push_back({one->timeNs[i], one->value[i]});
            }
        }
    }

    QStringList blocks;
    QHash<QString, QStringList> countersOf;
    QStringList gauges;
    for (const QString &name : std::as_const(names)) {
        QStringView block;
        QStringView ignored;
        if (isCounterName(name, &block)) {
            const QString blockName = block.toString();
            if (!countersOf.contains(blockName)) {
                blocks.append(blockName);
            }
            countersOf[blockName].append(name);
        } else if (name.endsWith(QLatin1String(".sum")) &&
                   isCounterName(QStringView(name).chopped(4), &ignored)) {
            continue; // a counter's sum: the console draws rates of samples only
        } else {
            gauges.append(name);
        }
    }

    HistoryRows rows;
    for (auto it = pointsOf.begin(); it != pointsOf.end(); ++it) {
        std::sort(it->begin(), it->end(),
                  [](const Point &a, const Point &b) { return a.timeNs < b.timeNs; });
        for (const Point &point : *it) {
            rows.times.push_back(point.timeNs / kNsPerMs);
        }
    }
    std::sort(rows.times.begin(), rows.times.end());
    rows.times.erase(std::unique(rows.times.begin(), rows.times.end()), rows.times.end());
    if (rows.times.empty()) {
        return rows;
    }
    const std::size_t rowCount = rows.times.size();
    auto rowOf = [&](qint64 timeNs) {
        return static_cast<std::size_t>(
            std::lower_bound(rows.times.begin(), rows.times.end(), timeNs / kNsPerMs) -
            rows.times.begin());
    };
    auto newColumn = [&](const QString &key) -> std::vector<float> & {
        rows.keys.append(key);
        rows.columns.emplace_back(rowCount, kNaNf);
        return rows.columns.back();
    };
    rows.hits.assign(rowCount, kNaN);
    rows.misses.assign(rowCount, kNaN);

    for (const QString &block : std::as_const(blocks)) {
        // Indices: newColumn may move the columns.
        std::size_t hits = SIZE_MAX;
        std::size_t misses = SIZE_MAX;
        for (const QString &name : std::as_const(countersOf[block])) {
            std::vector<float> &rates = newColumn(name);
            const std::vector<Point> &points = pointsOf[name];
            for (std::size_t i = 1; i < points.size(); ++i) {
                const qint64 spanNs = points[i].timeNs - points[i - 1].timeNs;
                if (spanNs <= 0) {
                    continue;
                }
                // Lower than before: the counter restarted and counts from zero.
                const qint64 delta = points[i].value >= points[i - 1].value
                                         ? points[i].value - points[i - 1].value
                                         : points[i].value;
                rates[rowOf(points[i].timeNs)] = static_cast<float>(
                    static_cast<double>(delta) * 1e9 / static_cast<double>(spanNs));
            }
            const QStringView counter = QStringView(name).mid(block.size() + 1);
            if (counter == u"hits") {
                hits = rows.columns.size() - 1;
            } else if (counter == u"misses") {
                misses = rows.columns.size() - 1;
            }
        }
        if (!isReadaheadBlock(block)) {
            continue;
        }
        std::vector<float> &ratio = newColumn(block + QLatin1String(".hit_ratio"));
        if (hits == SIZE_MAX || misses == SIZE_MAX) {
            continue;
        }
        const auto &h = rows.columns[hits];
        const auto &m = rows.columns[misses];
        for (std::size_t r = 0; r < rowCount; ++r) {
            if (std::isnan(h[r]) || std::isnan(m[r])) {
                continue;
            }
            ratio[r] = static_cast<float>(hitRatio(h[r], m[r]));
            rows.hits[r] = (std::isnan(rows.hits[r]) ? 0 : rows.hits[r]) + h[r];
            rows.misses[r] = (std::isnan(rows.misses[r]) ? 0 : rows.misses[r]) + m[r];
        }
    }
    for (const QString &name : std::as_const(gauges)) {
        std::vector<float> &values = newColumn(name);
        for (const Point &point : pointsOf[name]) {
            values[rowOf(point.timeNs)] = static_cast<float>(point.value);
        }
    }
    return rows;
}

} // namespace

NodeSeries::NodeSeries(int capacity)
    : m_capacity(std::max(capacity, 0)), m_firstLiveMs(std::numeric_limits<qint64>::max())
{
    m_node.times = RingBuffer<qint64>(m_capacity);
    m_node.columns.emplace_back(m_capacity);
    m_node.columns.emplace_back(m_capacity);
}

NodeSeries::InstanceColumns &NodeSeries::instanceColumns(const QString &instance)
{
    auto found = m_instances.find(instance);
    if (found == m_instances.end()) {
        m_instanceOrder.append(instance);
        InstanceColumns columns;
        columns.table.times = RingBuffer<qint64>(m_capacity);
        found = m_instances.insert(instance, std::move(columns));
    }
    return *found;
}

int NodeSeries::column(InstanceColumns &columns, const QString &key)
{
    const auto found = columns.columnOf.constFind(key);
    if (found != columns.columnOf.constEnd()) {
        return *found;
    }
    // A series that appears later has no value in the rows before it.
    const int index = static_cast<int>(columns.table.columns.size());
    RingBuffer<float> &values = columns.table.columns.emplace_back(m_capacity);
    for (qsizetype i = 0; i < columns.table.times.size(); ++i) {
        values.push(kNaNf);
    }
    columns.keys.append(key);
    columns.columnOf.insert(key, index);
    if (m_row.size() < columns.table.columns.size()) {
        m_row.resize(columns.table.columns.size(), kNaNf);
    }
    return index;
}

const NodeSeries::BlockKeys &NodeSeries::blockKeys(InstanceColumns &columns,
                                                   const CounterBlock &block)
{
    auto found = columns.blocks.find(block.name);
    if (found != columns.blocks.end()) {
        const QStringList &cached = found->counters;
        bool same = cached.size() == block.counters.size();
        for (qsizetype i = 0; same && i < cached.size(); ++i) {
            same = cached[i] == block.counters[i].name;
        }
        if (same) {
            return *found;
        }
    } else {
        found = columns.blocks.insert(block.name, BlockKeys{});
    }
    // First sight of the block, or its counter list changed: resolve the keys once.
    BlockKeys keys;
    keys.counters.reserve(block.counters.size());
    keys.columns.reserve(static_cast<std::size_t>(block.counters.size()));
    const QString prefix = block.name + u'.';
    for (qsizetype i = 0; i < block.counters.size(); ++i) {
        const QString &name = block.counters[i].name;
        keys.counters.append(name);
        keys.columns.push_back(column(columns, prefix + name));
        if (name == QLatin1String("hits")) {
            keys.hits = i;
        } else if (name == QLatin1String("misses")) {
            keys.misses = i;
        }
    }
    if (isReadaheadBlock(block.name)) {
        keys.hitRatioColumn = column(columns, prefix + QLatin1String("hit_ratio"));
    }
    *found = std::move(keys);
    return *found;
}

QList<BlockRates> NodeSeries::add(const CounterUpdate &update)
{
    QList<BlockRates> rates = m_rates.add(update);
    const qint64 timeMs = update.timeNs / kNsPerMs;
    m_firstLiveMs = std::min(m_firstLiveMs, timeMs);

    double nodeHits = 0;
    double nodeMisses = 0;
    bool nodeKnown = false;
    qsizetype next = 0; // the tracker reports blocks in update order, skipping some
    for (const auto &instance : update.instances) {
        InstanceColumns &columns = instanceColumns(instance.instance);
        m_row.assign(columns.table.columns.size(), kNaNf);
        for (const auto &block : instance.blocks) {
            const BlockKeys &keys = blockKeys(columns, block);
            if (next >= rates.size() || rates[next].instance != instance.instance ||
                rates[next].block != block.name) {
                continue; // first sight or a snapshot that did not advance: no rates
            }
            const BlockRates &blockRates = rates[next++];
            const qsizetype n =
                std::min(blockRates.perSecond.size(), qsizetype(keys.columns.size()));
            for (qsizetype i = 0; i < n; ++i) {
                m_row[static_cast<std::size_t>(keys.columns[static_cast<std::size_t>(i)])] =
                    static_cast<float>(blockRates.perSecond[i]);
            }
            if (keys.hitRatioColumn >= 0 && keys.hits >= 0 && keys.misses >= 0) {
                const double hits = blockRates.perSecond[keys.hits];
                const double misses = blockRates.perSecond[keys.misses];
                m_row[static_cast<std::size_t>(keys.hitRatioColumn)] =
                    static_cast<float>(hitRatio(hits, misses));
                nodeHits += hits;
                nodeMisses += misses;
                nodeKnown = true;
            }
        }
        for (const auto &gauge : instance.gauges) {
            bool numeric = false;
            const double value = gauge.value.toDouble(&numeric);
            if (!numeric) {
                continue;
            }
            m_row[static_cast<std::size_t>(column(columns, gauge.name))] =
                static_cast<float>(value);
        }
        Table &table = columns.table;
        if (!table.times.isEmpty() && timeMs <= table.times.back()) {
            continue; // keep the time axis increasing
        }
        table.times.push(timeMs);
        for (std::size_t c = 0; c < table.columns.size(); ++c) {
            table.columns[c].push(m_row[c]);
        }
    }

    if (m_node.times.isEmpty() || timeMs > m_node.times.back()) {
        m_node.times.push(timeMs);
        m_node.columns[0].push(nodeKnown ? static_cast<float>(hitRatio(nodeHits, nodeMisses))
                                         : kNaNf);
        m_node.columns[1].push(nodeKnown ? static_cast<float>(nodeMisses) : kNaNf);
    }
    return rates;
}

void NodeSeries::markGap(qint64 timeMs)
{
    auto pushGap = [timeMs](Table &table) {
        if (!table.times.isEmpty() && timeMs <= table.times.back()) {
            return;
        }
        table.times.push(timeMs);
        for (auto &values : table.columns) {
            values.push(kNaNf);
        }
    };
    for (auto &columns : m_instances) {
        pushGap(columns.table);
    }
    pushGap(m_node);
}

void NodeSeries::mergeRows(Table &table, const std::vector<qint64> &times,
                           const std::vector<const std::vector<float> *> &columns) const
{
    Table merged;
    merged.times = RingBuffer<qint64>(m_capacity);
    merged.columns.reserve(table.columns.size());
    for (std::size_t c = 0; c < table.columns.size(); ++c) {
        merged.columns.emplace_back(m_capacity);
    }
    std::size_t h = 0;
    qsizetype e = 0;
    while (h < times.size() || e < table.times.size()) {
        const bool takeHistory =
            h < times.size() && (e >= table.times.size() || times[h] < table.times[e]);
        if (takeHistory) {
            merged.times.push(times[h]);
            for (std::size_t c = 0; c < merged.columns.size(); ++c) {
                merged.columns[c].push(c < columns.size() && columns[c] ? (*columns[c])[h] : kNaNf);
            }
            ++h;
            continue;
        }
        if (h < times.size() && times[h] == table.times[e]) {
            ++h;
        }
        merged.times.push(table.times[e]);
        for (std::size_t c = 0; c < merged.columns.size(); ++c) {
            merged.columns[c].push(table.columns[c][e]);
        }
        ++e;
    }
    table = std::move(merged);
}

void NodeSeries::prefill(const QList<HistorySeries> &history)
{
    QStringList order;
    QHash<QString, QList<const HistorySeries *>> byInstance;
    for (const auto &series : history) {
        auto found = byInstance.find(series.instance);
        if (found == byInstance.end()) {
            order.append(series.instance);
            found = byInstance.insert(series.instance, {});
        }
        found->append(&series);
    }

    std::map<qint64, std::pair<double, double>> nodeSums; // ms → hits/s, misses/s
    for (const QString &instance : std::as_const(order)) {
        const HistoryRows rows = historyRows(byInstance.value(instance), m_firstLiveMs);
        if (rows.times.empty()) {
            continue;
        }
        InstanceColumns &columns = instanceColumns(instance);
        std::vector<const std::vector<float> *> byColumn;
        for (qsizetype k = 0; k < rows.keys.size(); ++k) {
            const auto c = static_cast<std::size_t>(column(columns, rows.keys[k]));
            if (byColumn.size() <= c) {
                byColumn.resize(c + 1, nullptr);
            }
            byColumn[c] = &rows.columns[static_cast<std::size_t>(k)];
        }
        mergeRows(columns.table, rows.times, byColumn);
        for (std::size_t r = 0; r < rows.times.size(); ++r) {
            if (std::isnan(rows.hits[r])) {
                continue;
            }
            auto &sums = nodeSums[rows.times[r]];
            sums.first += rows.hits[r];
            sums.second += rows.misses[r];
        }
    }
    if (nodeSums.empty()) {
        return;
    }
    std::vector<qint64> times;
    std::vector<float> ratio;
    std::vector<float> misses;
    times.reserve(nodeSums.size());
    ratio.reserve(nodeSums.size());
    misses.reserve(nodeSums.size());
    for (const auto &[timeMs, sums] : nodeSums) {
        times.push_back(timeMs);
        ratio.push_back(static_cast<float>(hitRatio(sums.first, sums.second)));
        misses.push_back(static_cast<float>(sums.second));
    }
    mergeRows(m_node, times, {&ratio, &misses});
}

QStringList NodeSeries::instances() const
{
    return m_instanceOrder;
}

QStringList NodeSeries::keys(const QString &instance) const
{
    const auto found = m_instances.constFind(instance);
    return found == m_instances.constEnd() ? QStringList() : found->keys;
}

QList<QPointF> NodeSeries::tablePoints(const Table &table, std::size_t column, qint64 sinceMs)
{
    // The first row at or after sinceMs: times increase, so search.
    qsizetype low = 0;
    qsizetype high = table.times.size();
    while (low < high) {
        const qsizetype middle = low + (high - low) / 2;
        if (table.times[middle] < sinceMs) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    QList<QPointF> points;
    points.reserve(table.times.size() - low);
    const RingBuffer<float> &values = table.columns[column];
    for (qsizetype i = low; i < table.times.size(); ++i) {
        points.append(QPointF(static_cast<double>(table.times[i]), static_cast<double>(values[i])));
    }
    return points;
}

double NodeSeries::tableLatest(const Table &table, std::size_t column)
{
    const RingBuffer<float> &values = table.columns[column];
    return values.isEmpty() ? kNaN : static_cast<double>(values.back());
}

QList<QPointF> NodeSeries::points(const QString &instance, const QString &key, qint64 sinceMs) const
{
    const auto found = m_instances.constFind(instance);
    if (found == m_instances.constEnd()) {
        return {};
    }
    const auto column = found->columnOf.constFind(key);
    if (column == found->columnOf.constEnd()) {
        return {};
    }
    return tablePoints(found->table, static_cast<std::size_t>(*column), sinceMs);
}

double NodeSeries::latest(const QString &instance, const QString &key) const
{
    const auto found = m_instances.constFind(instance);
    if (found == m_instances.constEnd()) {
        return kNaN;
    }
    const auto column = found->columnOf.constFind(key);
    if (column == found->columnOf.constEnd()) {
        return kNaN;
    }
    return tableLatest(found->table, static_cast<std::size_t>(*column));
}

QList<QPointF> NodeSeries::nodeHitRatio(qint64 sinceMs) const
{
    return tablePoints(m_node, 0, sinceMs);
}

NodeSeries::NodeReadahead NodeSeries::latestNodeReadahead() const
{
    const RingBuffer<float> &ratios = m_node.columns[0];
    for (qsizetype i = m_node.times.size() - 1;
         i >= 0 && m_node.times[i] >= m_node.times.back() - kLatestLookbackMs; --i) {
        if (!std::isnan(ratios[i])) {
            return {static_cast<double>(ratios[i]), static_cast<double>(m_node.columns[1][i])};
        }
    }
    return {kNaN, kNaN};
}

qint64 NodeSeries::lastTimeMs() const
{
    qint64 last = m_node.times.isEmpty() ? 0 : m_node.times.back();
    for (const auto &columns : m_instances) {
        if (!columns.table.times.isEmpty()) {
            last = std::max(last, columns.table.times.back());
        }
    }
    return last;
}

qsizetype NodeSeries::memoryBytes() const
{
    auto bytes = [](const Table &table) {
        qsizetype total = table.times.capacity() * qsizetype(sizeof(qint64));
        for (const auto &values : table.columns) {
            total += values.capacity() * qsizetype(sizeof(float));
        }
        return total;
    };
    qsizetype total = bytes(m_node);
    for (const auto &columns : m_instances) {
        total += bytes(columns.table);
    }
    return total;
}

} // namespace lutra::console
