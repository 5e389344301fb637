// console/core/promql: query URLs (path prefix, encoding, times), steps within Prometheus'
// point limit, selector escaping, and parsing of vector, matrix, scalar and error answers with
// NaN/Inf values; malformed answers name the JSON path at fault and yield no series.
#include "core/promql.h"

#include <QTest>
#include <QUrlQuery>

#include <cmath>

using namespace lutra::console::promql;

namespace {

QDateTime at(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC);
}

QString item(const QUrl &url, const QString &key)
{
    return QUrlQuery(url).queryItemValue(key, QUrl::FullyDecoded);
}

} // namespace

class TestConsolePromql : public QObject {
    Q_OBJECT

private slots:
    void baseUrlIsChecked()
    {
        QCOMPARE(checkBaseUrl(QUrl("http://prom:9090")), QString());
        QCOMPARE(checkBaseUrl(QUrl("https://ops.example/prometheus/")), QString());
        QVERIFY(checkBaseUrl(QUrl("ftp://prom:9090")).contains("not an http:// or https://"));
        QVERIFY(checkBaseUrl(QUrl("prom:9090")).contains("not an http://"));
        QVERIFY(checkBaseUrl(QUrl("http:///x")).contains("names no host"));
        QVERIFY(checkBaseUrl(QUrl("http://prom:9090/?x=1")).contains("without ?query"));
    }

    void instantQueryUrlKeepsThePathPrefixAndEncodesTheExpression()
    {
        const QString expr = R"(node:lutra_read_ahead_hit_ratio:rate1m{group="compute"} > 0.5)";
        const auto url =
            instantQueryUrl(QUrl("https://ops.example/prometheus/"), expr, at(1'700'000'000'500));
        QCOMPARE(url.scheme(), QString("https"));
        QCOMPARE(url.host(), QString("ops.example"));
        QCOMPARE(url.path(), QString("/prometheus/api/v1/query"));
        QCOMPARE(item(url, "query"), expr);
        QCOMPARE(item(url, "time"), QString("1700000000.5"));
        // '+', '&', '=' and '#' in an expression survive the round trip.
        const QString tricky = "sum(rate(x[1m])) + 1 == 2 & y # z";
        const auto other = instantQueryUrl(QUrl("http://prom:9090"), tricky);
        QCOMPARE(other.path(), QString("/api/v1/query"));
        QCOMPARE(item(other, "query"), tricky);
        QVERIFY(!QUrlQuery(other).hasQueryItem("time"));
        QVERIFY(!other.toEncoded().contains(' '));
        // Go reads a raw '+' in a query string as a space: it must go as %2B.
        QVERIFY(other.toEncoded().contains("%2B"));
        QVERIFY(!other.toEncoded().contains('+'));
    }

    void rangeQueryUrlAndStep()
    {
        const auto url = rangeQueryUrl(QUrl("http://prom:9090"), "up", at(1'700'000'000'000),
                                       at(1'700'003'600'000), 15);
        QCOMPARE(url.path(), QString("/api/v1/query_range"));
        QCOMPARE(item(url, "start"), QString("1700000000"));
        QCOMPARE(item(url, "end"), QString("1700003600"));
        QCOMPARE(item(url, "step"), QString("15"));
        // One hour in at most 241 points: 15 s steps; the same hour in 100 points: ceil(36.36).
        QCOMPARE(stepFor(at(0), at(3'600'000), 241), 15.0);
        QCOMPARE(stepFor(at(0), at(3'600'000), 100), 37.0);
        // Never below the minimum, never more points than Prometheus allows.
        QCOMPARE(stepFor(at(0), at(60'000), 1000, 1), 1.0);
        QCOMPARE(stepFor(at(0), at(10'000), 1000, 0.25), 0.25);
        const double yearStep = stepFor(at(0), at(365LL * 86'400'000), 1'000'000);
        QVERIFY(365.0 * 86'400 / yearStep + 1 <= kMaxPointsPerSeries);
        QCOMPARE(stepFor(at(5000), at(0), 100), 1.0); // an empty range
    }

    void selectorEscapesLabelValues()
    {
        QCOMPARE(selector("up"), QString("up"));
        const QString escaped = "node:lutra_llite_cache_use:ratio{cluster=\"site \\\"A\\\"\\\\b"
                                "\\nc\",group=\"compute\"}";
        const auto built = selector("node:lutra_llite_cache_use:ratio",
                                    {{"group", "compute"}, {"cluster", "site \"A\"\\b\nc"}});
        QCOMPARE(built, escaped);
    }

    void parsesAVector()
    {
        const auto result = parseQueryResponse(R"({"status":"success","data":{
            "resultType":"vector","result":[
              {"metric":{"__name__":"node:lutra_read_ahead_hit_ratio:rate1m","node":"n1",
                         "group":"compute"},"value":[1700000000.25,"0.8"]},
              {"metric":{"node":"n2"},"value":[1700000000.25,"NaN"]},
              {"metric":{"node":"n3"},"value":[1700000000.25,"+Inf"]},
              {"metric":{"node":"n4"},"value":[1700000000.25,"-Inf"]}]}})");
        QVERIFY2(result.ok(), qPrintable(result.error));
        QCOMPARE(result.resultType, QString("vector"));
        QCOMPARE(result.series.size(), 4);
        QCOMPARE(result.series[0].labels.value("group"), QString("compute"));
        QCOMPARE(result.series[0].labels.value("__name__"),
                 QString("node:lutra_read_ahead_hit_ratio:rate1m"));
        QCOMPARE(result.series[0].points, QList<QPointF>{QPointF(1700000000.25, 0.8)});
        QVERIFY(std::isnan(result.series[1].points[0].y()));
        QVERIFY(std::isinf(result.series[2].points[0].y()) && result.series[2].points[0].y() > 0);
        QVERIFY(std::isinf(result.series[3].points[0].y()) && result.series[3].points[0].y() < 0);
        QCOMPARE(labelValues(result.series, "node"), QStringList({"n1", "n2", "n3", "n4"}));
        QCOMPARE(labelValues(result.series, "group"), QStringList({"compute", "", "", ""}));
    }

    void parsesAMatrixWithWarnings()
    {
        const auto result = parseQueryResponse(R"({"status":"success","warnings":["partial"],
            "data":{"resultType":"matrix","result":[
              {"metric":{"job":"lutra-ctld"},"values":[[1700000000,"1"],[1700000015,"2.5"]]},
              {"metric":{"job":"other"},"values":[]}]}})");
        QVERIFY2(result.ok(), qPrintable(result.error));
        QCOMPARE(result.warnings, QStringList{"partial"});
        QCOMPARE(result.series.size(), 2);
        QCOMPARE(result.series[0].points,
                 QList<QPointF>({QPointF(1700000000, 1), QPointF(1700000015, 2.5)}));
        QVERIFY(result.series[1].points.isEmpty());
    }

    void parsesAScalar()
    {
        const auto result = parseQueryResponse(
            R"({"status":"success","data":{"resultType":"scalar","result":[1700000000,"3"]}})");
        QVERIFY2(result.ok(), qPrintable(result.error));
        QCOMPARE(result.series.size(), 1);
        QVERIFY(result.series[0].labels.isEmpty());
        QCOMPARE(result.series[0].points[0].y(), 3.0);
    }

    void errorsSayWhat_data()
    {
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<QString>("error");
        QTest::newRow("prometheus error")
            << QByteArray(R"({"status":"error","errorType":"bad_data",)"
                          R"("error":"1:5: parse error: unexpected end of input"})")
            << "bad_data: 1:5: parse error: unexpected end of input";
        QTest::newRow("not json") << QByteArray("<html>502 Bad Gateway</html>")
                                  << "the answer is not a JSON object";
        QTest::newRow("no status")
            << QByteArray(R"({"data":{}})") << "status: '', expected success or error";
        QTest::newRow("string result")
            << QByteArray(R"({"status":"success","data":{"resultType":"string",)"
                          R"("result":[1,"x"]}})")
            << "data.resultType: 'string', expected vector, matrix or scalar";
        QTest::newRow("bad value")
            << QByteArray(R"({"status":"success","data":{"resultType":"vector","result":[)"
                          R"({"metric":{},"value":[1,"2"]},{"metric":{},"value":[1,"abc"]}]}})")
            << "data.result[1].value: expected [time, \"value\"]";
        QTest::newRow("number not string")
            << QByteArray(R"({"status":"success","data":{"resultType":"matrix","result":[)"
                          R"({"metric":{},"values":[[1,"2"],[2,3]]}]}})")
            << "data.result[0].values[1]: expected [time, \"value\"]";
        QTest::newRow("no metric")
            << QByteArray(R"({"status":"success","data":{"resultType":"vector","result":[)"
                          R"({"value":[1,"2"]}]}})")
            << "data.result[0].metric: expected an object of labels";
        QTest::newRow("result not a list")
            << QByteArray(R"({"status":"success","data":{"resultType":"vector","result":{}}})")
            << "data.result: expected a list of series";
    }

    void errorsSayWhat()
    {
        QFETCH(QByteArray, body);
        QFETCH(QString, error);
        const auto result = parseQueryResponse(body);
        QVERIFY(!result.ok());
        QVERIFY2(result.error.startsWith(error), qPrintable(result.error));
        QVERIFY(result.series.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestConsolePromql)
#include "test_console_promql.moc"
