// Parsing parameter values the lctl way: every type, unit and suffix, edges at min/max, and
// errors that name the parameter, the value and what is allowed.
#include "core/params/value.h"

#include <QTest>

using namespace lutra;
using namespace lutra::params;

namespace {

Spec makeSpec(const QString &kind)
{
    Spec spec;
    if (kind == "pages") {
        spec = {"osc.ost0.max_pages_per_rpc", Type::size, Unit::pages, 1, 4096, std::int64_t{1024}};
    } else if (kind == "mib") {
        spec = {
            "llite.lutra.max_read_ahead_mb", Type::size, Unit::mib, 0, 1 << 20, std::int64_t{64}};
    } else if (kind == "bytes") {
        spec = {
            "test.size_bytes", Type::size, Unit::bytes, 0, std::numeric_limits<std::int64_t>::max(),
            std::int64_t{0}};
    } else if (kind == "int") {
        spec = {"osc.ost0.max_rpcs_in_flight", Type::integer, Unit::none, 1, 256, std::int64_t{8}};
    } else if (kind == "signed") {
        spec = {"test.signed", Type::integer, Unit::none, -1000, 1000, std::int64_t{0}};
    } else if (kind == "bool") {
        spec = {"osc.ost0.checksums", Type::boolean, Unit::none, 0, 1, std::int64_t{1}};
    } else if (kind == "enum") {
        spec = {"osc.ost0.checksum_type", Type::enumeration, Unit::none, 0, 0, std::int64_t{0}};
        spec.enumValues = {"crc32c", "none"};
    } else if (kind == "seconds") {
        spec = {"ldlm.namespaces.ost0.lru_max_age",
                Type::duration,
                Unit::seconds,
                1,
                604800,
                std::int64_t{3900}};
    } else if (kind == "ms") {
        spec = {"test.timeout", Type::duration, Unit::milliseconds, 0, 60000, std::int64_t{100}};
    } else if (kind == "string") {
        spec = {"jobid_var", Type::string, Unit::none, 0, 0, std::string("procname_uid")};
    } else if (kind == "lru") {
        spec = {"ldlm.namespaces.ost0.lru_size",
                Type::integer,
                Unit::none,
                0,
                1 << 24,
                std::int64_t{0}};
        spec.specialValues = {{"clear", "cancel unused locks"}};
    } else if (kind == "counters") {
        spec = {"llite.lutra.read_ahead_stats", Type::counters, Unit::none, 0, 0, std::string()};
        spec.specialValues = {{"clear", "reset"}};
    }
    return spec;
}

} // namespace

class TestParamValues : public QObject {
    Q_OBJECT
private slots:
    void parsesValid_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("text");
        QTest::addColumn<qint64>("expected");
        // max_pages_per_rpc: pages without a unit, bytes -> pages with one.
        QTest::newRow("pages plain") << "pages"
                                     << "1024" << qint64(1024);
        QTest::newRow("pages 16M") << "pages"
                                   << "16M" << qint64(4096);
        QTest::newRow("pages lower-case 4m") << "pages"
                                             << "4m" << qint64(1024);
        QTest::newRow("pages fraction 1.5M") << "pages"
                                             << "1.5M" << qint64(384);
        QTest::newRow("pages 16K") << "pages"
                                   << "16K" << qint64(4);
        QTest::newRow("pages min 4K") << "pages"
                                      << "4K" << qint64(1);
        QTest::newRow("pages min plain") << "pages"
                                         << "1" << qint64(1);
        QTest::newRow("pages max plain") << "pages"
                                         << "4096" << qint64(4096);
        QTest::newRow("pages trimmed") << "pages"
                                       << " 16M \n"
                                       << qint64(4096);
        // *_mb: MiB without a unit.
        QTest::newRow("mib plain") << "mib"
                                   << "2048" << qint64(2048);
        QTest::newRow("mib 2G") << "mib"
                                << "2G" << qint64(2048);
        QTest::newRow("mib 1.5G") << "mib"
                                  << "1.5G" << qint64(1536);
        QTest::newRow("mib 0.5g") << "mib"
                                  << "0.5g" << qint64(512);
        QTest::newRow("mib 1024K") << "mib"
                                   << "1024K" << qint64(1);
        QTest::newRow("mib max 1T") << "mib"
                                    << "1T" << qint64(1 << 20);
        QTest::newRow("mib min 0") << "mib"
                                   << "0" << qint64(0);
        QTest::newRow("mib 2.0 exact") << "mib"
                                       << "2.0" << qint64(2);
        // plain byte sizes
        QTest::newRow("bytes 1.5K") << "bytes"
                                    << "1.5K" << qint64(1536);
        QTest::newRow("bytes 1P") << "bytes"
                                  << "1P" << (qint64(1) << 50);
        QTest::newRow("bytes 3T") << "bytes"
                                  << "3T" << (qint64(3) << 40);
        QTest::newRow("bytes 0.25k") << "bytes"
                                     << "0.25k" << qint64(256);
        QTest::newRow("bytes int64 max")
            << "bytes"
            << "9223372036854775807" << std::numeric_limits<qint64>::max();
        // integers
        QTest::newRow("int") << "int"
                             << "8" << qint64(8);
        QTest::newRow("int min") << "int"
                                 << "1" << qint64(1);
        QTest::newRow("int max") << "int"
                                 << "256" << qint64(256);
        QTest::newRow("int plus sign") << "int"
                                       << "+16" << qint64(16);
        QTest::newRow("signed negative") << "signed"
                                         << "-5" << qint64(-5);
        QTest::newRow("signed min") << "signed"
                                    << "-1000" << qint64(-1000);
        // booleans
        QTest::newRow("bool 0") << "bool"
                                << "0" << qint64(0);
        QTest::newRow("bool 1") << "bool"
                                << "1" << qint64(1);
        QTest::newRow("bool on") << "bool"
                                 << "on" << qint64(1);
        QTest::newRow("bool OFF") << "bool"
                                  << "OFF" << qint64(0);
        QTest::newRow("bool yes") << "bool"
                                  << "yes" << qint64(1);
        QTest::newRow("bool false") << "bool"
                                    << "false" << qint64(0);
        // enumerations store the index of the choice
        QTest::newRow("enum first") << "enum"
                                    << "crc32c" << qint64(0);
        QTest::newRow("enum second") << "enum"
                                     << "none" << qint64(1);
        // durations
        QTest::newRow("seconds plain") << "seconds"
                                       << "3900" << qint64(3900);
        QTest::newRow("seconds 10s") << "seconds"
                                     << "10s" << qint64(10);
        QTest::newRow("seconds 2000ms") << "seconds"
                                        << "2000ms" << qint64(2);
        QTest::newRow("seconds max") << "seconds"
                                     << "604800" << qint64(604800);
        QTest::newRow("ms plain") << "ms"
                                  << "250" << qint64(250);
        QTest::newRow("ms 1.5s") << "ms"
                                 << "1.5s" << qint64(1500);
        QTest::newRow("ms 250MS") << "ms"
                                  << "250MS" << qint64(250);
        QTest::newRow("lru plain") << "lru"
                                   << "100" << qint64(100);
    }

    void parsesValid()
    {
        QFETCH(QString, kind);
        QFETCH(QString, text);
        QFETCH(qint64, expected);
        const Spec spec = makeSpec(kind);
        auto parsed = parseValue(spec, text.toStdString());
        QVERIFY2(parsed.ok(), parsed.status().toString().c_str());
        QVERIFY(!parsed->isSpecial());
        QCOMPARE(std::get<std::int64_t>(parsed->value), expected);
        // What get_param prints parses back to the same value.
        auto again = parseValue(spec, formatValue(spec, parsed->value));
        QVERIFY(again.ok());
        QCOMPARE(again->value, parsed->value);
    }

    void rejectsInvalid_data()
    {
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("reason");
        const int invalid = int(Errc::invalid_argument);
        const int range = int(Errc::out_of_range);
        QTest::newRow("pages zero") << "pages"
                                    << "0" << range << "out of range";
        QTest::newRow("pages above max") << "pages"
                                         << "4097" << range << "out of range";
        QTest::newRow("pages 32M above max") << "pages"
                                             << "32M" << range << "out of range";
        QTest::newRow("pages 2K not whole") << "pages"
                                            << "2K" << invalid << "not a whole number of pages";
        QTest::newRow("pages word") << "pages"
                                    << "lots" << invalid << "not a number";
        QTest::newRow("pages empty") << "pages"
                                     << "" << invalid << "empty value";
        QTest::newRow("pages blank") << "pages"
                                     << "  " << invalid << "empty value";
        QTest::newRow("pages unknown suffix") << "pages"
                                              << "16Q" << invalid << "unknown unit suffix 'Q'";
        QTest::newRow("pages MB suffix") << "pages"
                                         << "16MB" << invalid << "unknown unit suffix 'MB'";
        QTest::newRow("pages dot only") << "pages"
                                        << "1." << invalid << "no digits after the decimal point";
        QTest::newRow("pages space inside") << "pages"
                                            << "16 M" << invalid << "unknown unit suffix ' M'";
        QTest::newRow("mib fraction no unit") << "mib"
                                              << "1.5" << invalid << "not a whole number of MiB";
        QTest::newRow("mib 512K") << "mib"
                                  << "512K" << invalid << "not a whole number of MiB";
        QTest::newRow("mib above max") << "mib"
                                       << "2T" << range << "out of range";
        QTest::newRow("mib negative") << "mib"
                                      << "-1" << range << "out of range";
        QTest::newRow("mib huge") << "mib"
                                  << "100000000000000000000" << range << "number too large";
        QTest::newRow("mib overflow via suffix")
            << "mib"
            << "9999999999999999P" << range << "number too large";
        QTest::newRow("bytes 0.1K") << "bytes"
                                    << "0.1K" << invalid << "not a whole number of bytes";
        QTest::newRow("bytes 10 decimals")
            << "bytes"
            << "1.0000000001K" << invalid << "more than 9 decimal places";
        QTest::newRow("bytes int64 max + 1")
            << "bytes"
            << "9223372036854775808" << range << "number too large";
        QTest::newRow("int zero") << "int"
                                  << "0" << range << "out of range";
        QTest::newRow("int above max") << "int"
                                       << "257" << range << "out of range";
        QTest::newRow("int with suffix") << "int"
                                         << "8K" << invalid << "an integer takes no unit suffix";
        QTest::newRow("int fraction") << "int"
                                      << "8.5" << invalid << "not a whole number";
        QTest::newRow("int hex") << "int"
                                 << "0x10" << invalid << "an integer takes no unit suffix";
        QTest::newRow("int sign only") << "int"
                                       << "-" << invalid << "not a number";
        QTest::newRow("signed below min") << "signed"
                                          << "-1001" << range << "out of range";
        QTest::newRow("bool 2") << "bool"
                                << "2" << invalid << "not a boolean";
        QTest::newRow("bool word") << "bool"
                                   << "maybe" << invalid << "not a boolean";
        QTest::newRow("enum unknown") << "enum"
                                      << "adler" << invalid << "not a known choice";
        QTest::newRow("enum case") << "enum"
                                   << "CRC32C" << invalid << "not a known choice";
        QTest::newRow("seconds 1500ms") << "seconds"
                                        << "1500ms" << invalid << "not a whole number of s";
        QTest::newRow("seconds hours") << "seconds"
                                       << "1h" << invalid << "unknown unit suffix 'h'";
        QTest::newRow("seconds zero") << "seconds"
                                      << "0" << range << "out of range";
        QTest::newRow("seconds size suffix") << "seconds"
                                             << "1M" << invalid << "unknown unit suffix 'M'";
        QTest::newRow("ms above max") << "ms"
                                      << "61s" << range << "out of range";
        QTest::newRow("string too long")
            << "string" << QString(256, 'x') << invalid << "text too long";
        QTest::newRow("string control char") << "string"
                                             << "SLURM\x01" << invalid << "unprintable";
        QTest::newRow("lru special misspelled") << "lru"
                                                << "clr" << invalid << "not a number";
        QTest::newRow("counters number") << "counters"
                                         << "5" << invalid << "a counter block cannot be set";
    }

    void rejectsInvalid()
    {
        QFETCH(QString, kind);
        QFETCH(QString, text);
        QFETCH(int, code);
        QFETCH(QString, reason);
        const Spec spec = makeSpec(kind);
        auto parsed = parseValue(spec, text.toStdString());
        QVERIFY2(!parsed.ok(), "expected an error");
        QCOMPARE(int(parsed.status().code()), code);
        const QString message = QString::fromStdString(parsed.status().message());
        // The message names the parameter, the reason and what is allowed.
        QVERIFY2(message.startsWith(QString::fromStdString(spec.name) + "="), qPrintable(message));
        QVERIFY2(message.contains(reason), qPrintable(message));
        QVERIFY2(message.contains("; allowed: " + QString::fromStdString(describeAllowed(spec))),
                 qPrintable(message));
    }

    void errorMessageIsComplete()
    {
        auto parsed = parseValue(makeSpec("pages"), "5000");
        QCOMPARE(parsed.status().message(),
                 std::string("osc.ost0.max_pages_per_rpc=5000: out of range; allowed: 1..4096 "
                             "pages, or a size with a K/M/G/T/P suffix (16M = 4096 pages)"));
        auto lru = parseValue(makeSpec("lru"), "x");
        QCOMPARE(lru.status().message(),
                 std::string("ldlm.namespaces.ost0.lru_size=x: not a number; allowed: an integer, "
                             "0..16777216; or 'clear' (cancel unused locks)"));
    }

    void specialValues()
    {
        auto clear = parseValue(makeSpec("lru"), "clear");
        QVERIFY(clear.ok());
        QVERIFY(clear->isSpecial());
        QCOMPARE(clear->special, std::string("clear"));
        auto stats = parseValue(makeSpec("counters"), " clear\n");
        QVERIFY(stats.ok());
        QCOMPARE(stats->special, std::string("clear"));
    }

    void stringsAndEnumsFormat()
    {
        const Spec stringSpec = makeSpec("string");
        auto text = parseValue(stringSpec, "SLURM_JOB_ID");
        QVERIFY(text.ok());
        QCOMPARE(formatValue(stringSpec, text->value), std::string("SLURM_JOB_ID"));
        auto empty = parseValue(stringSpec, "");
        QVERIFY(empty.ok());
        QCOMPARE(formatValue(stringSpec, empty->value), std::string());
        const Spec enumSpec = makeSpec("enum");
        QCOMPARE(formatValue(enumSpec, std::int64_t{1}), std::string("none"));
        QCOMPARE(formatValue(makeSpec("bool"), std::int64_t{1}), std::string("1"));
        QCOMPARE(describeAllowed(enumSpec), std::string("one of crc32c, none"));
        QCOMPARE(describeAllowed(makeSpec("seconds")),
                 std::string("1..604800 s, or a duration with an s or ms suffix"));
    }
};

QTEST_GUILESS_MAIN(TestParamValues)
#include "test_param_values.moc"
