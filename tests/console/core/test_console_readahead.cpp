// The hit ratio the console derives from read_ahead_stats, and which blocks are readahead ones.
#include "core/readahead.h"

#include <QTest>

#include <cmath>

using namespace lutra::console;

class TestConsoleReadahead : public QObject {
    Q_OBJECT

private slots:
    void hitRatio_data()
    {
        QTest::addColumn<double>("hits");
        QTest::addColumn<double>("misses");
        QTest::addColumn<double>("ratio");
        QTest::newRow("no misses") << 120.0 << 0.0 << 1.0;
        QTest::newRow("no hits") << 0.0 << 8.0 << 0.0;
        QTest::newRow("three quarters") << 300.0 << 100.0 << 0.75;
        QTest::newRow("rates") << 0.5 << 1.5 << 0.25;
    }

    void hitRatio()
    {
        QFETCH(double, hits);
        QFETCH(double, misses);
        QFETCH(double, ratio);
        QCOMPARE(lutra::console::hitRatio(hits, misses), ratio);
    }

    void noReadsHaveNoRatio()
    {
        QVERIFY(std::isnan(lutra::console::hitRatio(0, 0)));
        QVERIFY(std::isnan(lutra::console::hitRatio(std::nan(""), 3)));
    }

    void readaheadBlocks()
    {
        QVERIFY(isReadaheadBlock(QStringLiteral("llite.lutra.read_ahead_stats")));
        QVERIFY(isReadaheadBlock(QStringLiteral("llite.scratch-ffff8a.read_ahead_stats")));
        QVERIFY(!isReadaheadBlock(QStringLiteral("llite.lutra.stats")));
        QVERIFY(!isReadaheadBlock(QStringLiteral("osc.ost0.rpc_stats")));
        QVERIFY(!isReadaheadBlock(QStringLiteral("llite.lutra.unread_ahead_stats")));
    }
};

QTEST_GUILESS_MAIN(TestConsoleReadahead)
#include "test_console_readahead.moc"
