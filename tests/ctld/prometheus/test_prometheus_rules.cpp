// config/prometheus/ checked by promtool as a real process: the scrape config (with a target
// file present: no warning), the recording rules, and their unit tests; a broken rule and a
// wrong expectation are rejected, so these checks can fail.
#include "promtool_runner.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using lutra::test::runPromtool;

namespace {

const QString kConfigDir = QStringLiteral(LUTRA_PROMETHEUS_CONFIG_DIR);

bool writeFile(const QString &path, const QByteArray &text)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(text) == text.size();
}

QByteArray readFile(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

class TestPrometheusRules : public QObject {
    Q_OBJECT

private slots:
    void scrapeConfigIsValidWithItsTargetFile()
    {
        // The config names lutra-targets.json next to it; check a copy with a real target list.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir().mkpath(dir.filePath("rules")));
        QVERIFY(QFile::copy(kConfigDir + "/prometheus.yml", dir.filePath("prometheus.yml")));
        QVERIFY(QFile::copy(kConfigDir + "/rules/lutra.rules.yml",
                            dir.filePath("rules/lutra.rules.yml")));
        QVERIFY(writeFile(dir.filePath("lutra-targets.json"),
                          R"([{"targets": ["node001:7371"], "labels": {"group": "compute"}}])"));
        const auto result = runPromtool({"check", "config", dir.filePath("prometheus.yml")});
        QVERIFY2(result.exitCode == 0, qPrintable(result.output));
        QVERIFY2(!result.output.contains("WARNING"), qPrintable(result.output));
        QVERIFY2(result.output.contains("1 rule files found"), qPrintable(result.output));
    }

    void recordingRulesAreValid()
    {
        const auto result = runPromtool({"check", "rules", kConfigDir + "/rules/lutra.rules.yml"});
        QVERIFY2(result.exitCode == 0, qPrintable(result.output));
        QVERIFY2(result.output.contains("SUCCESS"), qPrintable(result.output));
    }

    void ruleUnitTestsPass()
    {
        const auto result =
            runPromtool({"test", "rules", kConfigDir + "/tests/lutra.rules.test.yml"});
        QVERIFY2(result.exitCode == 0, qPrintable(result.output));
        QVERIFY2(result.output.contains("SUCCESS"), qPrintable(result.output));
    }

    void brokenRuleIsRejected()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        auto rules = readFile(kConfigDir + "/rules/lutra.rules.yml");
        QVERIFY(rules.contains("sum by (job) (node:lutra_read_ahead_misses:rate1m)"));
        rules.replace("sum by (job) (node:lutra_read_ahead_misses:rate1m)",
                      "sum by (job) (node:lutra_read_ahead_misses:rate1m");
        QVERIFY(writeFile(dir.filePath("broken.rules.yml"), rules));
        const auto result = runPromtool({"check", "rules", dir.filePath("broken.rules.yml")});
        QVERIFY2(result.exitCode != 0, qPrintable(result.output));
        QVERIFY2(result.output.contains("broken.rules.yml"), qPrintable(result.output));
    }

    void wrongExpectationFails()
    {
        // The unit tests compare values: one changed expectation must make promtool fail.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir().mkpath(dir.filePath("rules")));
        QVERIFY(QDir().mkpath(dir.filePath("tests")));
        QVERIFY(QFile::copy(kConfigDir + "/rules/lutra.rules.yml",
                            dir.filePath("rules/lutra.rules.yml")));
        auto tests = readFile(kConfigDir + "/tests/lutra.rules.test.yml");
        QVERIFY(tests.contains("value: 0.7\n"));
        tests.replace("value: 0.7\n", "value: 0.75\n");
        QVERIFY(writeFile(dir.filePath("tests/lutra.rules.test.yml"), tests));
        const auto result =
            runPromtool({"test", "rules", dir.filePath("tests/lutra.rules.test.yml")});
        QVERIFY2(result.exitCode != 0, qPrintable(result.output));
        QVERIFY2(result.output.contains("job:lutra_read_ahead_hit_ratio:rate1m"),
                 qPrintable(result.output));
    }
};

QTEST_GUILESS_MAIN(TestPrometheusRules)
#include "test_prometheus_rules.moc"
