// ctld.yaml audit_retention: defaults, accepted values, and errors that say what and where
// (file:line:column) while leaving the defaults unchanged.
#include "daemon/config.h"

#include <QTest>

using namespace lutra;
using namespace lutra::ctld;

class TestAuditRetentionConfig : public QObject {
    Q_OBJECT

private slots:
    void defaultsKeepAYearOrAHundredThousandPoints()
    {
        auto config = parseConfig("node: n1\n", "ctld.yaml");
        QVERIFY2(config.ok(), config.status().message().c_str());
        QCOMPARE(config->auditMaxPoints, std::uint64_t(100'000));
        QCOMPARE(config->auditMaxAge, std::chrono::hours(24 * 365));
        // The shipped example spells the defaults out.
        auto example = loadConfig(LUTRA_EXAMPLE_CONFIG);
        QVERIFY2(example.ok(), example.status().message().c_str());
        QCOMPARE(example->auditMaxPoints, std::uint64_t(100'000));
        QCOMPARE(example->auditMaxAge, std::chrono::hours(24 * 365));
    }

    void acceptsLimitsAndZeroForNone()
    {
        auto config =
            parseConfig("audit_retention:\n  max_points: 5000\n  max_age: 2160h\n", "ctld.yaml");
        QVERIFY2(config.ok(), config.status().message().c_str());
        QCOMPARE(config->auditMaxPoints, std::uint64_t(5000));
        QCOMPARE(config->auditMaxAge, std::chrono::hours(2160));
        config = parseConfig("audit_retention: {max_points: 0, max_age: 0}\n", "ctld.yaml");
        QVERIFY2(config.ok(), config.status().message().c_str());
        QCOMPARE(config->auditMaxPoints, std::uint64_t(0));
        QCOMPARE(config->auditMaxAge, std::chrono::hours(0));
    }

    void errorsSayWhatAndWhere_data()
    {
        QTest::addColumn<QString>("yaml");
        QTest::addColumn<QString>("error");
        QTest::newRow("not a number") << "audit_retention:\n  max_points: lots\n"
                                      << "ctld.yaml:2:15: 'audit_retention.max_points' is 'lots'";
        QTest::newRow("negative") << "audit_retention:\n  max_points: -5\n"
                                  << "ctld.yaml:2:15: 'audit_retention.max_points' is '-5'";
        QTest::newRow("too few") << "audit_retention:\n  max_points: 10\n"
                                 << "expected 0 (no limit) or a whole number from 100";
        QTest::newRow("trailing text") << "audit_retention:\n  max_points: 100x\n"
                                       << "'audit_retention.max_points' is '100x'";
        QTest::newRow("age unit") << "audit_retention:\n  max_age: 90d\n"
                                  << "ctld.yaml:2:12: 'audit_retention.max_age' is '90d'";
        QTest::newRow("age too short") << "audit_retention:\n  max_age: 30m\n"
                                       << "'audit_retention.max_age' is '30m'";
        QTest::newRow("age not whole hours") << "audit_retention:\n  max_age: 90m\n"
                                             << "give whole hours";
        QTest::newRow("unknown key") << "audit_retention:\n  max_count: 100\n"
                                     << "ctld.yaml:2:3: unknown key 'audit_retention.max_count'";
        QTest::newRow("not a map") << "audit_retention: 100\n"
                                   << "ctld.yaml:1:18: 'audit_retention' must be a map";
        QTest::newRow("list value") << "audit_retention:\n  max_points: [1]\n"
                                    << "'audit_retention.max_points' must be a single value";
    }

    void errorsSayWhatAndWhere()
    {
        QFETCH(QString, yaml);
        QFETCH(QString, error);
        auto config = parseConfig(yaml.toStdString(), "ctld.yaml");
        QVERIFY(!config.ok());
        QCOMPARE(config.status().code(), Errc::invalid_argument);
        QVERIFY2(config.status().message().find(error.toStdString()) != std::string::npos,
                 config.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestAuditRetentionConfig)
#include "test_audit_retention_config.moc"
