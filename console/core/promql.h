#pragma once
// Prometheus HTTP API (v1) for the console's fleet views: query URLs built from the cluster
// file's Prometheus URL, PromQL selectors for lutra's recording rules (config/prometheus/), and
// the JSON answer parsed into series. No networking here: the views send the URL with Qt
// Network and hand the body to parseQueryResponse.

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMap>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QUrl>

namespace lutra::console::promql {

// Prometheus refuses range queries of more than 11 000 points per series.
inline constexpr int kMaxPointsPerSeries = 11'000;

// The server's base URL as written in the cluster file ("http://prom:9090", or with a path
// prefix behind a proxy, "https://ops.example/prometheus/"); "" when valid, else why not.
QString checkBaseUrl(const QUrl &base);

// GET <base>/api/v1/query?query=<expr>[&time=<unix seconds>]
QUrl instantQueryUrl(const QUrl &base, const QString &expr, const QDateTime &time = {});
// GET <base>/api/v1/query_range?query=<expr>&start=..&end=..&step=<seconds>
QUrl rangeQueryUrl(const QUrl &base, const QString &expr, const QDateTime &start,
                   const QDateTime &end, double stepSeconds);
// The smallest step of at least `minStepSeconds` that keeps [start, end] within `maxPoints`
// points (and Prometheus' limit), rounded up to whole seconds above 1 s.
double stepFor(const QDateTime &start, const QDateTime &end, int maxPoints,
               double minStepSeconds = 1);

// `metric{name="value",...}` with the values escaped for PromQL; matchers in key order.
QString selector(const QString &metric, const QMap<QString, QString> &matchers = {});

struct Series {
    QMap<QString, QString> labels; // __name__ included when Prometheus sends it
    QList<QPointF> points;         // x: unix seconds, y: value (NaN, +-inf as Prometheus says)
};

struct QueryResult {
    QString resultType; // vector, matrix, scalar, string
    QList<Series> series;
    QStringList warnings; // Prometheus' own warnings (e.g. a partial answer)
    QString error;        // "" when ok: Prometheus' errorType and error, or what is malformed

    bool ok() const { return error.isEmpty(); }
};

// The body of an /api/v1/query or /api/v1/query_range answer (HTTP 200 and 4xx/5xx alike: the
// error body says what went wrong). A scalar becomes one series without labels; a string
// result is an error (the views draw numbers). A malformed body names the JSON path at fault.
QueryResult parseQueryResponse(const QByteArray &body);

// The value of one label of every series, in order ("" where missing): a view's legend.
QStringList labelValues(const QList<Series> &series, const QString &label);

} // namespace lutra::console::promql
