#include "net/fleet_telemetry.h"

#include <QDateTime>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>

#include <cmath>

namespace lutra::console {

namespace {

// The recording rules (config/prometheus/rules/lutra.rules.yml) the views draw.
const QString kHitRatio = QStringLiteral("node:lutra_read_ahead_hit_ratio:rate1m");
const QString kMisses = QStringLiteral("node:lutra_read_ahead_misses:rate1m");
const QString kLocks = QStringLiteral("node:lutra_ldlm_locks:sum");
const QString kUnusedLocks = QStringLiteral("node:lutra_ldlm_unused_locks:sum");
const QString kLruFixed = QStringLiteral("node:lutra_ldlm_lru_size_fixed:sum");
const QString kCachedBytes = QStringLiteral("node:lutra_llite_cached_bytes:sum");
const QString kMaxCachedBytes = QStringLiteral("node:lutra_llite_max_cached_bytes:sum");

constexpr int kTransferTimeoutMs = 10'000;

double lastValue(const promql::Series &series)
{
    return series.points.isEmpty() ? std::nan("") : series.points.last().y();
}

qint64 wholeOrMissing(double value, double divisor = 1)
{
    return std::isfinite(value) ? qint64(std::llround(value / divisor)) : -1;
}

} // namespace

struct FleetTelemetry::Poll {
    int pending = 0;
    QHash<QString, FleetNodeFacts> facts;
    QHash<QString, QList<QPointF>> history;
    QString error;
};

FleetTelemetry::FleetTelemetry(QUrl base, QString clusterName, const QStringList &addresses,
                               QObject *parent)
    : QObject(parent), m_base(std::move(base)), m_clusterName(std::move(clusterName)),
      m_addresses(addresses.begin(), addresses.end()), m_network(new QNetworkAccessManager(this)),
      m_timer(this)
{
    connect(&m_timer, &QTimer::timeout, this, &FleetTelemetry::poll);
}

FleetTelemetry::~FleetTelemetry()
{
    // Replies still running must not call back into a half-destroyed object.
    for (auto *reply : m_network->findChildren<QNetworkReply *>()) {
        reply->disconnect(this);
        reply->abort();
    }
}

void FleetTelemetry::start(int intervalMs)
{
    m_timer.start(intervalMs);
    poll();
}

void FleetTelemetry::setWindow(qint64 windowMs, int buckets)
{
    if (windowMs == m_windowMs && buckets == m_buckets) {
        return;
    }
    m_windowMs = windowMs;
    m_buckets = buckets;
    if (m_timer.isActive()) {
        poll();
    }
}

QString FleetTelemetry::expr(const QString &metric) const
{
    QMap<QString, QString> matchers;
    if (!m_clusterName.isEmpty()) {
        matchers.insert(QStringLiteral("cluster"), m_clusterName);
    }
    return promql::selector(metric, matchers);
}

void FleetTelemetry::poll()
{
    if (m_inFlight) {
        return; // a slow Prometheus never builds a queue of polls
    }
    m_inFlight = true;
    auto poll = std::make_shared<Poll>();
    const auto now = QDateTime::currentDateTimeUtc();
    const auto from = now.addMSecs(-m_windowMs);
    const double step = promql::stepFor(from, now, m_buckets, 1);
    send(poll, promql::rangeQueryUrl(m_base, expr(kHitRatio), from, now, step),
         [](Poll &into, const promql::QueryResult &result) {
             for (const auto &series : result.series) {
                 QList<QPointF> points;
                 points.reserve(series.points.size());
                 for (const auto &point : series.points) {
                     points << QPointF(point.x() * 1000, point.y());
                 }
                 into.history.insert(series.labels.value("ctld"), std::move(points));
             }
         });
    const auto instant = [&](const QString &metric, auto assign) {
        send(poll, promql::instantQueryUrl(m_base, expr(metric)),
             [assign](Poll &into, const promql::QueryResult &result) {
                 for (const auto &series : result.series) {
                     assign(into.facts[series.labels.value("ctld")], lastValue(series));
                 }
             });
    };
    instant(kHitRatio, [](FleetNodeFacts &facts, double v) { facts.hitRatio = v; });
    instant(kMisses, [](FleetNodeFacts &facts, double v) { facts.missesPerSecond = v; });
    instant(kLocks, [](FleetNodeFacts &facts, double v) { facts.lockCount = wholeOrMissing(v); });
    instant(kUnusedLocks,
            [](FleetNodeFacts &facts, double v) { facts.lockUnused = wholeOrMissing(v); });
    instant(kLruFixed,
            [](FleetNodeFacts &facts, double v) { facts.lruSizeFixed = wholeOrMissing(v); });
    instant(kCachedBytes, [](FleetNodeFacts &facts, double v) {
        facts.cachedMb = wholeOrMissing(v, 1024.0 * 1024.0);
    });
    instant(kMaxCachedBytes, [](FleetNodeFacts &facts, double v) {
        facts.maxCachedMb = wholeOrMissing(v, 1024.0 * 1024.0);
    });
}

void FleetTelemetry::send(const std::shared_ptr<Poll> &poll, const QUrl &url,
                          std::function<void(Poll &, const promql::QueryResult &)> apply)
{
    QNetworkRequest request(url);
    request.setTransferTimeout(kTransferTimeoutMs);
    auto *reply = m_network->get(request);
    ++poll->pending;
    connect(reply, &QNetworkReply::finished, this, [this, reply, poll, apply = std::move(apply)] {
        reply->deleteLater();
        const QByteArray body = reply->readAll();
        auto result = promql::parseQueryResponse(body);
        if (reply->error() != QNetworkReply::NoError && (body.isEmpty() || result.ok())) {
            result.error = reply->errorString(); // no Prometheus answer to explain it
        }
        if (result.ok()) {
            apply(*poll, result);
        } else if (poll->error.isEmpty()) {
            poll->error = result.error;
        }
        if (--poll->pending == 0) {
            finish(*poll);
        }
    });
}

void FleetTelemetry::finish(Poll &poll)
{
    m_inFlight = false;
    m_lastError = poll.error;
    if (poll.error.isEmpty()) {
        // Only this cluster's nodes; series of other ctlds the server scrapes are left out.
        m_facts.clear();
        m_history.clear();
        for (auto it = poll.facts.begin(); it != poll.facts.end(); ++it) {
            if (m_addresses.contains(it.key())) {
                m_facts.insert(it.key(), it.value());
            }
        }
        for (auto it = poll.history.begin(); it != poll.history.end(); ++it) {
            if (m_addresses.contains(it.key())) {
                m_history.insert(it.key(), it.value());
            }
        }
        m_lastUpdateMs = QDateTime::currentMSecsSinceEpoch();
    }
    emit updated();
}

} // namespace lutra::console
