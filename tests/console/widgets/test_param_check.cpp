// checkValue: the console's ParamSpec checked with the registry's own parser and printer.

#include "core/param_check.h"

#include <QTest>

using namespace lutra::console;

namespace {

// Specs as lutra-ctld sends them for the catalog's parameters (datapath/core/params/catalog.cpp).
ParamSpec maxPagesPerRpc()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.max_pages_per_rpc");
    spec.type = ParamType::size;
    spec.unit = QStringLiteral("pages");
    spec.min = 1;
    spec.max = 4096;
    spec.writable = true;
    return spec;
}

ParamSpec maxDirtyMb()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.max_dirty_mb");
    spec.type = ParamType::size;
    spec.unit = QStringLiteral("MiB");
    spec.min = 1;
    spec.max = 65536;
    spec.writable = true;
    return spec;
}

ParamSpec lruSize()
{
    ParamSpec spec;
    spec.name = QStringLiteral("ldlm.namespaces.ost0.lru_size");
    spec.type = ParamType::integer;
    spec.min = 0;
    spec.max = 1 << 24;
    spec.writable = true;
    spec.specialValues = {
        {QStringLiteral("clear"), QStringLiteral("cancel every unused lock now")}};
    return spec;
}

ParamSpec lruMaxAge()
{
    ParamSpec spec;
    spec.name = QStringLiteral("ldlm.namespaces.ost0.lru_max_age");
    spec.type = ParamType::duration;
    spec.unit = QStringLiteral("s");
    spec.min = 1;
    spec.max = 7 * 24 * 3600;
    spec.writable = true;
    return spec;
}

ParamSpec checksumType()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.checksum_type");
    spec.type = ParamType::enumeration;
    spec.choices = {QStringLiteral("crc32c"), QStringLiteral("adler")};
    spec.writable = true;
    return spec;
}

ParamSpec checksums()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.checksums");
    spec.type = ParamType::boolean;
    spec.max = 1;
    spec.writable = true;
    return spec;
}

} // namespace

class TestParamCheck : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sizeSuffixConvertsToPages()
    {
        const ValueCheck check = checkValue(maxPagesPerRpc(), QStringLiteral("16M"));
        QVERIFY2(check.ok, qPrintable(check.error));
        QCOMPARE(check.canonical, QStringLiteral("4096"));
        QVERIFY(!check.special);
        QVERIFY(check.error.isEmpty());
    }

    void sizeWithoutSuffixIsInBaseUnit()
    {
        QCOMPARE(checkValue(maxPagesPerRpc(), QStringLiteral("256")).canonical,
                 QStringLiteral("256"));
        // MiB, not bytes: the unit string picks the registry's unit.
        QCOMPARE(checkValue(maxDirtyMb(), QStringLiteral("1G")).canonical, QStringLiteral("1024"));
        QCOMPARE(checkValue(maxDirtyMb(), QStringLiteral("512")).canonical, QStringLiteral("512"));
        QCOMPARE(checkValue(maxDirtyMb(), QStringLiteral("2048K")).canonical, QStringLiteral("2"));
        // 1536 KiB is 1.5 MiB: refused, not rounded.
        const ValueCheck partial = checkValue(maxDirtyMb(), QStringLiteral("1536K"));
        QVERIFY(!partial.ok);
        QVERIFY2(partial.error.contains(QStringLiteral("not a whole number of MiB")),
                 qPrintable(partial.error));
    }

    void outOfRangeNamesTheRange()
    {
        const ValueCheck check = checkValue(maxPagesPerRpc(), QStringLiteral("32M"));
        QVERIFY(!check.ok);
        QVERIFY2(check.error.contains(QStringLiteral("1..4096 pages")), qPrintable(check.error));
        QVERIFY2(check.error.contains(QStringLiteral("out of range")), qPrintable(check.error));
        QVERIFY2(check.error.startsWith(QStringLiteral("osc.ost0.max_pages_per_rpc=32M")),
                 qPrintable(check.error));
        QVERIFY(check.canonical.isEmpty());

        const ValueCheck zero = checkValue(maxPagesPerRpc(), QStringLiteral("0"));
        QVERIFY(!zero.ok);
        QVERIFY(zero.error.contains(QStringLiteral("1..4096 pages")));
    }

    void duration()
    {
        QCOMPARE(checkValue(lruMaxAge(), QStringLiteral("3900")).canonical, QStringLiteral("3900"));
        QCOMPARE(checkValue(lruMaxAge(), QStringLiteral("2000ms")).canonical, QStringLiteral("2"));
        const ValueCheck fraction = checkValue(lruMaxAge(), QStringLiteral("1500ms"));
        QVERIFY(!fraction.ok);
        QVERIFY2(fraction.error.contains(QStringLiteral("not a whole number of s")),
                 qPrintable(fraction.error));
    }

    void enumeration()
    {
        const ValueCheck known = checkValue(checksumType(), QStringLiteral("adler"));
        QVERIFY(known.ok);
        QCOMPARE(known.canonical, QStringLiteral("adler"));
        const ValueCheck unknown = checkValue(checksumType(), QStringLiteral("md5"));
        QVERIFY(!unknown.ok);
        QVERIFY2(unknown.error.contains(QStringLiteral("one of crc32c, adler")),
                 qPrintable(unknown.error));
    }

    void boolean()
    {
        QCOMPARE(checkValue(checksums(), QStringLiteral("on")).canonical, QStringLiteral("1"));
        QCOMPARE(checkValue(checksums(), QStringLiteral("off")).canonical, QStringLiteral("0"));
        QCOMPARE(checkValue(checksums(), QStringLiteral("1")).canonical, QStringLiteral("1"));
        const ValueCheck maybe = checkValue(checksums(), QStringLiteral("maybe"));
        QVERIFY(!maybe.ok);
        QVERIFY2(maybe.error.contains(QStringLiteral("not a boolean")), qPrintable(maybe.error));
    }

    void specialWord()
    {
        const ValueCheck clear = checkValue(lruSize(), QStringLiteral("clear"));
        QVERIFY2(clear.ok, qPrintable(clear.error));
        QVERIFY(clear.special);
        QCOMPARE(clear.canonical, QStringLiteral("clear"));

        const ValueCheck number = checkValue(lruSize(), QStringLiteral(" 100 "));
        QVERIFY(number.ok);
        QVERIFY(!number.special);
        QCOMPARE(number.canonical, QStringLiteral("100"));

        // Without the special value in the spec the same word is just not a number.
        ParamSpec plain = lruSize();
        plain.specialValues.clear();
        QVERIFY(!checkValue(plain, QStringLiteral("clear")).ok);
    }

    void garbage()
    {
        const ValueCheck letters = checkValue(lruSize(), QStringLiteral("lots"));
        QVERIFY(!letters.ok);
        QVERIFY2(letters.error.contains(QStringLiteral("not a number")), qPrintable(letters.error));
        // The error says what is allowed, special words included.
        QVERIFY2(letters.error.contains(QStringLiteral("'clear'")), qPrintable(letters.error));

        const ValueCheck suffix = checkValue(lruSize(), QStringLiteral("16M"));
        QVERIFY(!suffix.ok);
        QVERIFY(suffix.error.contains(QStringLiteral("no unit suffix")));

        QVERIFY(!checkValue(maxPagesPerRpc(), QString()).ok);
        QVERIFY(!checkValue(maxPagesPerRpc(), QStringLiteral("16Q")).ok);

        ParamSpec unknown = lruSize();
        unknown.type = ParamType::unspecified;
        const ValueCheck untyped = checkValue(unknown, QStringLiteral("1"));
        QVERIFY(!untyped.ok);
        QVERIFY(untyped.error.contains(QStringLiteral("unknown parameter type")));
    }

    void stringsAndCounters()
    {
        ParamSpec var;
        var.name = QStringLiteral("jobid_var");
        var.type = ParamType::string;
        var.writable = true;
        QCOMPARE(checkValue(var, QStringLiteral("SLURM_JOB_ID")).canonical,
                 QStringLiteral("SLURM_JOB_ID"));

        ParamSpec stats;
        stats.name = QStringLiteral("llite.lutra.read_ahead_stats");
        stats.type = ParamType::counters;
        stats.specialValues = {{QStringLiteral("clear"), QStringLiteral("reset the counters")}};
        QVERIFY(checkValue(stats, QStringLiteral("clear")).special);
        QVERIFY(!checkValue(stats, QStringLiteral("5")).ok);
    }
};

QTEST_GUILESS_MAIN(TestParamCheck)
#include "test_param_check.moc"
