#pragma once
// A real Prometheus (Debian's package) for the tests: config/prometheus/ as shipped with its
// intervals shortened to 1 s, on a loopback port, killed with the test. Used by the scrape test
// and by the console's fleet test.

#include "../daemon/ctld_fixture.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>

#include <httplib.h>

#include <map>

namespace lutra::test {

// Writes config/prometheus/ (from `configDir`) into `dir` with 1 s scrape and rule intervals;
// the file_sd list goes to dir/lutra-targets.json. "" on success, else what failed.
inline QString writeFastPrometheusConfig(const QString &configDir, const QString &dir)
{
    QFile shipped(configDir + "/prometheus.yml");
    if (!shipped.open(QIODevice::ReadOnly)) {
        return "cannot read " + shipped.fileName();
    }
    auto config = shipped.readAll();
    for (const auto &[from, to] :
         std::map<QByteArray, QByteArray>{{"scrape_interval: 15s", "scrape_interval: 1s"},
                                          {"evaluation_interval: 15s", "evaluation_interval: 1s"},
                                          {"scrape_timeout: 10s", "scrape_timeout: 1s"}}) {
        if (!config.contains(from)) {
            return "prometheus.yml no longer says " + QString::fromLatin1(from);
        }
        config.replace(from, to);
    }
    QDir().mkpath(dir + "/rules");
    QFile out(dir + "/prometheus.yml");
    if (!out.open(QIODevice::WriteOnly) || out.write(config) != config.size()) {
        return "cannot write " + out.fileName();
    }
    if (!QFile::copy(configDir + "/rules/lutra.rules.yml", dir + "/rules/lutra.rules.yml")) {
        return "cannot copy the rules into " + dir;
    }
    return {};
}

class Prometheus {
public:
    Prometheus(const QString &dir, int port) : m_port(port)
    {
        dieWithParent(m_process);
        m_process.setProcessChannelMode(QProcess::MergedChannels);
        m_process.start(
            QStandardPaths::findExecutable("prometheus"),
            {"--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/data",
             QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(port), "--log.level=warn"});
    }
    ~Prometheus() { stop(); }
    void stop()
    {
        if (m_process.state() == QProcess::NotRunning) {
            return;
        }
        m_process.terminate();
        if (!m_process.waitForFinished(20000)) {
            m_process.kill();
            m_process.waitForFinished();
        }
    }
    bool running() { return m_process.state() != QProcess::NotRunning; }
    QString log() { return QString::fromUtf8(m_process.readAll()); }
    int port() const { return m_port; }

    // The result vector of an instant query, keyed by one label's value.
    std::map<QString, QJsonObject> query(const QString &promql, const QString &keyLabel)
    {
        httplib::Client client("127.0.0.1", m_port);
        const httplib::Params params{{"query", promql.toStdString()}};
        auto response = client.Get("/api/v1/query", params, httplib::Headers{});
        std::map<QString, QJsonObject> series;
        if (!response || response->status != 200) {
            return series;
        }
        const auto reply = QJsonDocument::fromJson(QByteArray::fromStdString(response->body));
        for (const auto &item : reply["data"]["result"].toArray()) {
            const auto object = item.toObject();
            series[object["metric"].toObject()[keyLabel].toString()] = object;
        }
        return series;
    }
    bool ready()
    {
        httplib::Client client("127.0.0.1", m_port);
        auto response = client.Get("/-/ready");
        return response && response->status == 200;
    }

private:
    QProcess m_process;
    int m_port;
};

inline double valueOf(const QJsonObject &sample)
{
    return sample["value"].toArray().at(1).toString().toDouble();
}

} // namespace lutra::test
