#pragma once
// Fleet telemetry from Prometheus: what the cluster views draw when the cluster file names a
// Prometheus server (`prometheus:`). The recording rules of config/prometheus/ are queried over
// the HTTP API (Qt Network) every poll — one range query for the nodes' readahead hit ratio over
// the chart window and one instant query per table column — so opening the console on 1,000
// nodes costs the nodes nothing: only the nodes on screen stream counters (ClusterController).
// Series are matched to the cluster's nodes by their `ctld` label (the gRPC address that
// `lutractl prometheus-targets` writes), restricted to `cluster="<name>"` when the file has one.
// It polls as often as Prometheus evaluates the rules (its configuration's global
// evaluation_interval, asked once per connection) unless the cluster file says how often.

#include "core/promql.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointF>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <limits>
#include <optional>

class QNetworkAccessManager;
class QNetworkReply;

namespace lutra::console {

// One node's latest fleet facts; NaN / -1 where Prometheus has no series (idle, not scraped).
struct FleetNodeFacts {
    double hitRatio = std::numeric_limits<double>::quiet_NaN();
    double missesPerSecond = std::numeric_limits<double>::quiet_NaN();
    qint64 lockCount = -1;
    qint64 lockUnused = -1;
    qint64 lruSizeFixed = -1; // sum of the namespaces' fixed lru_size; 0: all sized dynamically
    qint64 cachedMb = -1;
    qint64 maxCachedMb = -1;
};

// A Prometheus duration ("2s", "1m30s", "500ms", "1h"): units y w d h m s ms, largest first,
// each once; nullopt when `text` is not one (or is zero).
std::optional<qint64> parsePrometheusDurationMs(const QString &text);

// How often Prometheus' rules produce a new value, from the body of GET /api/v1/status/config:
// the global evaluation_interval (else scrape_interval) of the YAML it answers with.
struct PrometheusInterval {
    qint64 ms = 0;
    QString text;  // as Prometheus wrote it, "2s"
    QString key;   // "evaluation_interval" or "scrape_interval"
    QString error; // "" when ms is set
};
PrometheusInterval intervalFromStatusConfig(const QByteArray &body);

class FleetTelemetry : public QObject {
    Q_OBJECT
public:
    // prometheus.yml's scrape and rule interval: the poll interval until Prometheus said its own.
    static constexpr int kDefaultPollMs = 15'000;
    // Prometheus' interval is kept within these (a 100 ms rule interval is no reason to send
    // eight queries ten times a second).
    static constexpr int kMinPollMs = 1'000;
    static constexpr int kMaxPollMs = 3'600'000;

    // `clusterName` "" queries every series; `addresses` are the nodes whose series are kept.
    FleetTelemetry(QUrl base, QString clusterName, const QStringList &addresses,
                   QObject *parent = nullptr);
    ~FleetTelemetry() override;

    const QUrl &base() const { return m_base; }
    // Polls now and then every `intervalMs` (the cluster file's prometheus_interval); with 0,
    // every global evaluation_interval of Prometheus' configuration, asked at the first poll
    // and again at the first answer after Prometheus did not answer (it may have restarted
    // with another one): kDefaultPollMs until it answered, and when its answer has none.
    void start(int intervalMs = 0);
    int pollIntervalMs() const { return m_pollMs; }
    // Where pollIntervalMs() comes from, for the views and the tour: "the cluster file's
    // prometheus_interval", "Prometheus' evaluation_interval 2s", or why it is 15 s.
    const QString &pollIntervalSource() const { return m_pollSource; }
    // The range the hit-ratio history covers, with `buckets` points; takes effect at the next
    // poll (now, when the window changed by more than a step).
    void setWindow(qint64 windowMs, int buckets);
    // Sends the queries unless a poll is still in flight.
    void poll();

    const QHash<QString, FleetNodeFacts> &facts() const { return m_facts; }
    // Each node's hit ratio over the window: x in ms since the epoch, y a ratio.
    const QHash<QString, QList<QPointF>> &hitRatioHistory() const { return m_history; }
    // Of the last completed poll: "" when every query answered; else the first error.
    const QString &lastError() const { return m_lastError; }
    qint64 lastUpdateMs() const { return m_lastUpdateMs; } // 0 before the first answer

signals:
    void updated(); // after every completed poll, also a failed one (see lastError)
    void pollIntervalChanged();

private:
    struct Poll;
    void askInterval();
    void setPollInterval(int ms, QString source);
    void send(const std::shared_ptr<Poll> &poll, const QUrl &url,
              std::function<void(Poll &, const promql::QueryResult &)> apply);
    void finish(Poll &poll);
    QString expr(const QString &metric) const;

    QUrl m_base;
    QString m_clusterName;
    QSet<QString> m_addresses;
    QNetworkAccessManager *m_network;
    QTimer m_timer;
    qint64 m_windowMs = 15 * 60'000;
    int m_buckets = 120;
    bool m_inFlight = false;
    bool m_intervalConfigured = false; // by start(): Prometheus is not asked
    bool m_intervalAsked = false;      // at the first poll
    bool m_intervalStale = false;      // Prometheus did not answer since: ask after the next poll
    int m_pollMs = kDefaultPollMs;
    QString m_pollSource;
    QHash<QString, FleetNodeFacts> m_facts;
    QHash<QString, QList<QPointF>> m_history;
    QString m_lastError;
    qint64 m_lastUpdateMs = 0;
};

} // namespace lutra::console
