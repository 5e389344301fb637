#include "net/fleet_telemetry.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QRegularExpression>

#include <algorithm>
#include <array>
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

// <base>/api/v1/status/config, under the base URL's path prefix as the queries are.
QUrl statusConfigUrl(const QUrl &base)
{
    QUrl url = base;
    QString path = base.path();
    while (path.endsWith(u'/')) {
        path.chop(1);
    }
    url.setPath(path + QStringLiteral("/api/v1/status/config"));
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

// The value of `key` in the top-level `global:` map of Prometheus' YAML (which Prometheus
// writes itself: two-space indentation, one key a line); "" when it has none.
QString globalValue(const QString &yaml, const QString &key)
{
    bool inGlobal = false;
    for (const QString &line : yaml.split(u'\n')) {
        if (line.trimmed().isEmpty()) {
            continue;
        }
        if (!line.startsWith(u' ')) {
            inGlobal = line.trimmed() == QStringLiteral("global:");
            continue;
        }
        const QString trimmed = line.trimmed();
        if (inGlobal && trimmed.startsWith(key + u':')) {
            QString value = trimmed.mid(key.size() + 1).trimmed();
            if (value.size() >= 2 && (value.startsWith(u'"') || value.startsWith(u'\'')) &&
                value.endsWith(value.front())) {
                value = value.mid(1, value.size() - 2);
            }
            return value;
        }
    }
    return {};
}

} // namespace

std::optional<qint64> parsePrometheusDurationMs(const QString &text)
{
    // Prometheus' own syntax (model.ParseDuration): each unit at most once, largest first.
    static const QRegularExpression syntax(QStringLiteral(
        "^(?:(\\d+)y)?(?:(\\d+)w)?(?:(\\d+)d)?(?:(\\d+)h)?(?:(\\d+)m)?(?:(\\d+)s)?(?:(\\d+)ms)?$"));
    static constexpr std::array<qint64, 7> unitMs{
        365LL * 86'400'000, 7LL * 86'400'000, 86'400'000, 3'600'000, 60'000, 1'000, 1};
    if (text.isEmpty()) {
        return std::nullopt;
    }
    const auto match = syntax.match(text);
    if (!match.hasMatch()) {
        return std::nullopt;
    }
    qint64 total = 0;
    for (int unit = 0; unit < int(unitMs.size()); ++unit) {
        const QString digits = match.captured(unit + 1);
        if (digits.isEmpty()) {
            continue;
        }
        bool ok = false;
        const qint64 count = digits.toLongLong(&ok);
        // Ten years is more than any interval; it also keeps the sum far from overflowing.
        if (!ok || count > 10 * unitMs[0] / unitMs[size_t(unit)]) {
            return std::nullopt;
        }
        total += count * unitMs[size_t(unit)];
    }
    if (total <= 0) {
        return std::nullopt;
    }
    return total;
}

PrometheusInterval intervalFromStatusConfig(const QByteArray &body)
{
    PrometheusInterval interval;
    QJsonParseError parseError;
    const auto document = QJsonDocument::fromJson(body, &parseError);
    if (!document.isObject()) {
        interval.error =
            QStringLiteral("its /api/v1/status/config answer is not JSON (%1)")
                .arg(body.isEmpty() ? QStringLiteral("empty") : parseError.errorString());
        return interval;
    }
    const auto root = document.object();
    if (root.value(QStringLiteral("status")).toString() != QStringLiteral("success")) {
        interval.error = QStringLiteral("its /api/v1/status/config answer is an error: %1")
                             .arg(root.value(QStringLiteral("error")).toString());
        return interval;
    }
    const auto yaml = root.value(QStringLiteral("data")).toObject().value(QStringLiteral("yaml"));
    if (!yaml.isString()) {
        interval.error = QStringLiteral("its /api/v1/status/config answer has no data.yaml");
        return interval;
    }
    for (const QString &key :
         {QStringLiteral("evaluation_interval"), QStringLiteral("scrape_interval")}) {
        const QString value = globalValue(yaml.toString(), key);
        if (value.isEmpty()) {
            continue;
        }
        interval.key = key;
        interval.text = value;
        if (const auto ms = parsePrometheusDurationMs(value)) {
            interval.ms = *ms;
        } else {
            interval.error = QStringLiteral("its global %1 '%2' is not a duration").arg(key, value);
        }
        return interval;
    }
    interval.error =
        QStringLiteral("its configuration has no global evaluation_interval or scrape_interval");
    return interval;
}

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
    m_pollSource = QStringLiteral("the default, until Prometheus says its evaluation_interval");
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
    m_intervalConfigured = intervalMs > 0;
    m_intervalAsked = false;
    m_intervalStale = false;
    if (m_intervalConfigured) {
        setPollInterval(intervalMs, QStringLiteral("the cluster file's prometheus_interval"));
    }
    m_timer.start(m_pollMs);
    poll();
}

void FleetTelemetry::setPollInterval(int ms, QString source)
{
    const bool changed = ms != m_pollMs || source != m_pollSource;
    m_pollMs = ms;
    m_pollSource = std::move(source);
    if (m_timer.isActive() && m_timer.interval() != ms) {
        m_timer.start(ms);
    }
    if (changed) {
        emit pollIntervalChanged();
    }
}

void FleetTelemetry::askInterval()
{
    m_intervalAsked = true;
    QNetworkRequest request(statusConfigUrl(m_base));
    request.setTransferTimeout(kTransferTimeoutMs);
    auto *reply = m_network->get(request);
    connect(reply, &QNetworkReply::finished, this, [this, reply] {
        reply->deleteLater();
        if (m_intervalConfigured) {
            return; // start() was given one meanwhile
        }
        const QByteArray body = reply->readAll();
        PrometheusInterval interval = intervalFromStatusConfig(body);
        if (reply->error() != QNetworkReply::NoError && interval.ms == 0) {
            interval.error = reply->errorString();
            m_intervalStale = true; // ask again once Prometheus answers a poll
        }
        if (interval.ms == 0) {
            setPollInterval(kDefaultPollMs,
                            QStringLiteral("the default: Prometheus did not say its interval (%1)")
                                .arg(interval.error));
            return;
        }
        const int ms = int(std::clamp<qint64>(interval.ms, kMinPollMs, kMaxPollMs));
        QString source = QStringLiteral("Prometheus' %1 %2").arg(interval.key, interval.text);
        if (ms != interval.ms) {
            source += QStringLiteral(", kept within 1s .. 1h");
        }
        setPollInterval(ms, source);
    });
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
    if (!m_intervalConfigured && !m_intervalAsked) {
        askInterval();
    }
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
    if (!poll.error.isEmpty()) {
        m_intervalStale = true; // when it answers again it may be a restarted Prometheus
    } else if (m_intervalStale && !m_intervalConfigured) {
        m_intervalStale = false;
        askInterval();
    }
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
