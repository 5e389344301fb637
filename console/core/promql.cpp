#include "core/promql.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <cmath>
#include <limits>

namespace lutra::console::promql {

namespace {

QUrl apiUrl(const QUrl &base, const QString &endpoint)
{
    QUrl url = base;
    QString path = base.path();
    while (path.endsWith('/')) {
        path.chop(1);
    }
    url.setPath(path + "/api/v1/" + endpoint);
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

// key=value&... with every reserved character percent-encoded: Prometheus (Go) reads a raw
// '+' in a query string as a space, and QUrlQuery leaves '+' as it is.
void setQueryItems(QUrl &url, const QList<std::pair<QString, QString>> &items)
{
    QByteArray query;
    for (const auto &[key, value] : items) {
        if (!query.isEmpty()) {
            query += '&';
        }
        query += QUrl::toPercentEncoding(key) + '=' + QUrl::toPercentEncoding(value);
    }
    url.setQuery(QString::fromLatin1(query), QUrl::StrictMode);
}

QString unixSeconds(const QDateTime &time)
{
    const qint64 ms = time.toMSecsSinceEpoch();
    // Exact decimal text: 1700000000.5, never 1.7e+09.
    QString text = QString::number(ms / 1000);
    if (const qint64 fraction = ms % 1000; fraction != 0) {
        text += '.' + QString::number(fraction).rightJustified(3, '0');
        while (text.endsWith('0')) {
            text.chop(1);
        }
    }
    return text;
}

QString escapeLabelValue(const QString &value)
{
    QString out;
    out.reserve(value.size());
    for (const QChar c : value) {
        if (c == '\\' || c == '"') {
            out += '\\';
            out += c;
        } else if (c == '\n') {
            out += QStringLiteral("\\n");
        } else {
            out += c;
        }
    }
    return out;
}

// Prometheus sends sample values as strings: "1.5", "NaN", "+Inf", "-Inf".
bool parseSampleValue(const QJsonValue &value, double *out)
{
    if (!value.isString()) {
        return false;
    }
    const QString text = value.toString();
    if (text == QLatin1String("NaN")) {
        *out = std::numeric_limits<double>::quiet_NaN();
        return true;
    }
    if (text == QLatin1String("+Inf") || text == QLatin1String("Inf")) {
        *out = std::numeric_limits<double>::infinity();
        return true;
    }
    if (text == QLatin1String("-Inf")) {
        *out = -std::numeric_limits<double>::infinity();
        return true;
    }
    bool ok = false;
    *out = text.toDouble(&ok);
    return ok;
}

// [<unix seconds>, "<value>"]
bool parseSample(const QJsonValue &sample, QPointF *point)
{
    const auto pair = sample.toArray();
    double value = 0;
    if (!sample.isArray() || pair.size() != 2 || !pair[0].isDouble() ||
        !parseSampleValue(pair[1], &value)) {
        return false;
    }
    *point = QPointF(pair[0].toDouble(), value);
    return true;
}

} // namespace

QString checkBaseUrl(const QUrl &base)
{
    if (!base.isValid()) {
        return QStringLiteral("'%1' is not a URL: %2").arg(base.toString(), base.errorString());
    }
    if (base.scheme() != QLatin1String("http") && base.scheme() != QLatin1String("https")) {
        return QStringLiteral("'%1' is not an http:// or https:// URL").arg(base.toString());
    }
    if (base.host().isEmpty()) {
        return QStringLiteral("'%1' names no host").arg(base.toString());
    }
    if (base.hasQuery() || base.hasFragment()) {
        return QStringLiteral("'%1': give the server's base URL, without ?query or #fragment")
            .arg(base.toString());
    }
    return {};
}

QUrl instantQueryUrl(const QUrl &base, const QString &expr, const QDateTime &time)
{
    QUrl url = apiUrl(base, QStringLiteral("query"));
    QList<std::pair<QString, QString>> items{{QStringLiteral("query"), expr}};
    if (time.isValid()) {
        items.append({QStringLiteral("time"), unixSeconds(time)});
    }
    setQueryItems(url, items);
    return url;
}

QUrl rangeQueryUrl(const QUrl &base, const QString &expr, const QDateTime &start,
                   const QDateTime &end, double stepSeconds)
{
    QUrl url = apiUrl(base, QStringLiteral("query_range"));
    setQueryItems(url, {{QStringLiteral("query"), expr},
                        {QStringLiteral("start"), unixSeconds(start)},
                        {QStringLiteral("end"), unixSeconds(end)},
                        {QStringLiteral("step"), QString::number(stepSeconds, 'g', 15)}});
    return url;
}

double stepFor(const QDateTime &start, const QDateTime &end, int maxPoints, double minStepSeconds)
{
    const int points = std::clamp(maxPoints, 2, kMaxPointsPerSeries);
    const double span = std::max(0.0, (end.toMSecsSinceEpoch() - start.toMSecsSinceEpoch()) / 1e3);
    // points samples cover points - 1 steps.
    double step = std::max(minStepSeconds, span / (points - 1));
    if (step > 1) {
        step = std::ceil(step);
    }
    return step;
}

QString selector(const QString &metric, const QMap<QString, QString> &matchers)
{
    if (matchers.isEmpty()) {
        return metric;
    }
    QStringList parts;
    for (auto it = matchers.begin(); it != matchers.end(); ++it) {
        parts << QStringLiteral("%1=\"%2\"").arg(it.key(), escapeLabelValue(it.value()));
    }
    return metric + '{' + parts.join(',') + '}';
}

QueryResult parseQueryResponse(const QByteArray &body)
{
    QueryResult result;
    QJsonParseError parseError;
    const auto document = QJsonDocument::fromJson(body, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        result.error = QStringLiteral("the answer is not a JSON object (%1 at offset %2)")
                           .arg(parseError.errorString())
                           .arg(parseError.offset);
        return result;
    }
    const auto root = document.object();
    for (const auto &warning : root.value("warnings").toArray()) {
        result.warnings << warning.toString();
    }
    const QString status = root.value("status").toString();
    if (status == QLatin1String("error")) {
        result.error = QStringLiteral("%1: %2").arg(root.value("errorType").toString(),
                                                    root.value("error").toString());
        return result;
    }
    if (status != QLatin1String("success")) {
        result.error = QStringLiteral("status: '%1', expected success or error").arg(status);
        return result;
    }
    const auto data = root.value("data").toObject();
    result.resultType = data.value("resultType").toString();
    const auto payload = data.value("result");
    if (result.resultType == QLatin1String("scalar")) {
        QPointF point;
        if (!parseSample(payload, &point)) {
            result.error = QStringLiteral("data.result: expected [time, \"value\"]");
            return result;
        }
        result.series.append(Series{{}, {point}});
        return result;
    }
    if (result.resultType != QLatin1String("vector") &&
        result.resultType != QLatin1String("matrix")) {
        result.error = QStringLiteral("data.resultType: '%1', expected vector, matrix or scalar")
                           .arg(result.resultType);
        return result;
    }
    if (!payload.isArray()) {
        result.error = QStringLiteral("data.result: expected a list of series");
        return result;
    }
    const bool matrix = result.resultType == QLatin1String("matrix");
    const auto items = payload.toArray();
    for (qsizetype i = 0; i < items.size(); ++i) {
        const QString path = QStringLiteral("data.result[%1]").arg(i);
        const auto item = items[i].toObject();
        Series series;
        const auto metric = item.value("metric");
        if (!metric.isObject()) {
            result.error = path + QStringLiteral(".metric: expected an object of labels");
            result.series.clear();
            return result;
        }
        const auto labels = metric.toObject();
        for (auto it = labels.begin(); it != labels.end(); ++it) {
            series.labels.insert(it.key(), it.value().toString());
        }
        if (matrix) {
            const auto values = item.value("values").toArray();
            for (qsizetype j = 0; j < values.size(); ++j) {
                QPointF point;
                if (!parseSample(values[j], &point)) {
                    result.error =
                        path + QStringLiteral(".values[%1]: expected [time, \"value\"]").arg(j);
                    result.series.clear();
                    return result;
                }
                series.points.append(point);
            }
        } else {
            QPointF point;
            if (!parseSample(item.value("value"), &point)) {
                result.error = path + QStringLiteral(".value: expected [time, \"value\"]");
                result.series.clear();
                return result;
            }
            series.points.append(point);
        }
        result.series.append(std::move(series));
    }
    return result;
}

QStringList labelValues(const QList<Series> &series, const QString &label)
{
    QStringList values;
    values.reserve(series.size());
    for (const auto &one : series) {
        values << one.labels.value(label);
    }
    return values;
}

} // namespace lutra::console::promql
