#pragma once
// Fleet telemetry from Prometheus: what the cluster views draw when the cluster file names a
// Prometheus server (`prometheus:`). The recording rules of config/prometheus/ are queried over
// the HTTP API (Qt Network) every poll — one range query for the nodes' readahead hit ratio over
// the chart window and one instant query per table column — so opening the console on 1,000
// nodes costs the nodes nothing: only the nodes on screen stream counters (ClusterController).
// Series are matched to the cluster's nodes by their `ctld` label (the gRPC address that
// `lutractl prometheus-targets` writes), restricted to `cluster="<name>"` when the file has one.

#include "core/promql.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QPointF>
#include <QSet>
#include <QTimer>
#include <QUrl>

#include <limits>

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

class FleetTelemetry : public QObject {
    Q_OBJECT
public:
    static constexpr int kDefaultPollMs = 15'000; // the scrape and rule interval of prometheus.yml

    // `clusterName` "" queries every series; `addresses` are the nodes whose series are kept.
    FleetTelemetry(QUrl base, QString clusterName, const QStringList &addresses,
                   QObject *parent = nullptr);
    ~FleetTelemetry() override;

    const QUrl &base() const { return m_base; }
    // Polls now and then every `intervalMs`.
    void start(int intervalMs = kDefaultPollMs);
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

private:
    struct Poll;
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
    QHash<QString, FleetNodeFacts> m_facts;
    QHash<QString, QList<QPointF>> m_history;
    QString m_lastError;
    qint64 m_lastUpdateMs = 0;
};

} // namespace lutra::console
