#include "model_print.h"
#include "models/counter_blocks_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

const QString readahead = QStringLiteral("llite.lutra.read_ahead_stats");
const QString rpcStats = QStringLiteral("osc.ost0.rpc_stats");

Counter counter(const QString &name, quint64 samples,
                const QString &unit = QStringLiteral("samples"))
{
    Counter result;
    result.name = name;
    result.unit = unit;
    result.samples = samples;
    return result;
}

CounterBlock block(const QString &name, QList<Counter> counters)
{
    CounterBlock result;
    result.name = name;
    result.snapshotTimeNs = 1'000'000'000;
    result.startTimeNs = 1;
    result.counters = std::move(counters);
    return result;
}

InstanceCounters instance(const QString &id, QList<CounterBlock> blocks)
{
    InstanceCounters result;
    result.instance = id;
    result.blocks = std::move(blocks);
    // Gauges are not counter blocks: the tree ignores them.
    result.gauges = {{id, QStringLiteral("ldlm.namespaces.ost0.lock_count"), QStringLiteral("7")}};
    return result;
}

CounterUpdate update(qint64 timeNs, QList<InstanceCounters> instances)
{
    CounterUpdate result;
    result.timeNs = timeNs;
    result.instances = std::move(instances);
    return result;
}

BlockRates rates(const QString &instanceId, const QString &blockName, QStringList counters,
                 QList<double> perSecond, bool reset = false)
{
    BlockRates result;
    result.instance = instanceId;
    result.block = blockName;
    result.intervalSeconds = 1;
    result.reset = reset;
    result.counters = std::move(counters);
    result.perSecond = std::move(perSecond);
    return result;
}

} // namespace

class TestCounterBlocksModel : public QObject {
    Q_OBJECT
private slots:
    // The data comes in name order; the readahead and page cache blocks lead, the rest follow in
    // that order, and a later update in the same order moves nothing.
    void readaheadAndPageCacheLead()
    {
        CounterBlocksModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QString pageCache = QStringLiteral("llite.lutra.page_cache_stats");
        const QString locks = QStringLiteral("ldlm.namespaces.ost0.lock_stats");
        const auto feed = [&](quint64 hits) {
            model.setCounters(update(
                1, {instance(QStringLiteral("client-lutra"),
                             {block(locks, {counter(QStringLiteral("granted"), 3)}),
                              block(pageCache, {counter(QStringLiteral("cache_hit"), 5)}),
                              block(readahead, {counter(QStringLiteral("hits"), hits)}),
                              block(rpcStats, {counter(QStringLiteral("read_rpcs"), 2)})})}));
        };
        feed(1);
        const QStringList expected{
            "client-lutra |  |  | ",           "  llite.lutra.read_ahead_stats |  |  | ",
            "    hits | 1 | — | samples",      "  llite.lutra.page_cache_stats |  |  | ",
            "    cache_hit | 5 | — | samples", "  ldlm.namespaces.ost0.lock_stats |  |  | ",
            "    granted | 3 | — | samples",   "  osc.ost0.rpc_stats |  |  | ",
            "    read_rpcs | 2 | — | samples"};
        QCOMPARE(printModel(model), expected);
        QSignalSpy moved(&model, &QAbstractItemModel::rowsMoved);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        feed(2);
        QCOMPARE(moved.size(), 0);
        QCOMPARE(removed.size(), 0);
        QCOMPARE(model.index(0, 1, model.index(0, 0, model.index(0, 0))).data().toString(),
                 QStringLiteral("2"));
    }

    void feedsInSteps()
    {
        CounterBlocksModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        Counter rpcs = counter(QStringLiteral("read_rpcs"), 1'000, QStringLiteral("rpcs"));
        rpcs.withMinMaxSum = true;
        rpcs.min = 1;
        rpcs.max = 256;
        rpcs.sum = 98'765;
        model.setCounters(
            update(1, {instance(QStringLiteral("client-lutra"),
                                {block(readahead, {counter(QStringLiteral("hits"), 1'234'567),
                                                   counter(QStringLiteral("misses"), 89)}),
                                 block(rpcStats, {rpcs})})}));
        QCOMPARE(
            printModel(model),
            QStringList({"client-lutra |  |  | ", "  llite.lutra.read_ahead_stats |  |  | ",
                         "    hits | 1,234,567 | — | samples", "    misses | 89 | — | samples",
                         "  osc.ost0.rpc_stats |  |  | ", "    read_rpcs | 1,000 | — | rpcs"}));
        const QModelIndex client = model.index(0, 0);
        const QModelIndex raBlock = model.index(0, 0, client);
        const QModelIndex hits = model.index(0, 0, raBlock);
        QCOMPARE(hits.data(CounterBlocksModel::CounterRole).toString(),
                 readahead + QStringLiteral(".hits"));
        QCOMPARE(hits.data(CounterBlocksModel::InstanceRole).toString(),
                 QStringLiteral("client-lutra"));
        QCOMPARE(raBlock.data(CounterBlocksModel::BlockRole).toString(), readahead);
        QCOMPARE(model.index(0, CounterBlocksModel::Value, model.index(1, 0, client))
                     .data(Qt::ToolTipRole)
                     .toString(),
                 QStringLiteral("min 1, max 256, sum 98,765"));

        // The next second: values and rates change in place.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setCounters(
            update(2, {instance(QStringLiteral("client-lutra"),
                                {block(readahead, {counter(QStringLiteral("hits"), 1'235'801),
                                                   counter(QStringLiteral("misses"), 89)}),
                                 block(rpcStats, {rpcs})})}));
        model.setRates({rates(QStringLiteral("client-lutra"), readahead,
                              {QStringLiteral("hits"), QStringLiteral("misses")}, {1234.5, 0})});
        QCOMPARE(reset.size() + removed.size() + inserted.size(), 0);
        // One signal for the changed value (hits only), one for the block's rates.
        QCOMPARE(changed.size(), 2);
        QCOMPARE(changed[0][0].toModelIndex(), hits.siblingAtColumn(CounterBlocksModel::Value));
        QCOMPARE(changed[0][1].toModelIndex(), hits.siblingAtColumn(CounterBlocksModel::Unit));
        QCOMPARE(printModel(model),
                 QStringList({"client-lutra |  |  | ", "  llite.lutra.read_ahead_stats |  |  | ",
                              "    hits | 1,235,801 | 1,234.5/s | samples",
                              "    misses | 89 | 0.0/s | samples", "  osc.ost0.rpc_stats |  |  | ",
                              "    read_rpcs | 1,000 | — | rpcs"}));
        QVERIFY(!hits.siblingAtColumn(CounterBlocksModel::Rate).data(Qt::ToolTipRole).isValid());

        // The counters were cleared: the rate of that interval is marked.
        model.setRates(
            {rates(QStringLiteral("client-lutra"), readahead,
                   {QStringLiteral("hits"), QStringLiteral("misses")}, {3.0, 1.0}, true)});
        QCOMPARE(hits.siblingAtColumn(CounterBlocksModel::Rate).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("counters restarted in this interval"));
        QCOMPARE(raBlock.siblingAtColumn(CounterBlocksModel::Rate).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("counters restarted in this interval"));
        model.setRates({rates(QStringLiteral("client-lutra"), readahead,
                              {QStringLiteral("hits"), QStringLiteral("misses")}, {3.0, 1.0})});
        QVERIFY(!hits.siblingAtColumn(CounterBlocksModel::Rate).data(Qt::ToolTipRole).isValid());
        // Rates for blocks the tree does not have are ignored.
        model.setRates(
            {rates(QStringLiteral("target-ost9"), readahead, {QStringLiteral("hits")}, {1.0})});
        QCOMPARE(reset.size() + removed.size() + inserted.size(), 0);

        // Structure changes: a counter appears in the block, a target instance appears, the rpc
        // block vanishes. Rows are inserted and removed where they change; persistent indexes
        // of the rows that stay keep pointing at them.
        const QPersistentModelIndex persistentHits(hits);
        model.setCounters(update(
            3, {instance(QStringLiteral("target-ost0"),
                         {block(QStringLiteral("obdfilter.ost0.stats"),
                                {counter(QStringLiteral("read_bytes"), 4096,
                                         QStringLiteral("bytes"))})}),
                instance(QStringLiteral("client-lutra"),
                         {block(readahead, {counter(QStringLiteral("hits"), 1'235'900),
                                            counter(QStringLiteral("misses"), 90),
                                            counter(QStringLiteral("zero_length_file"), 0)})})}));
        QCOMPARE(reset.size(), 0);
        QCOMPARE(inserted.size(), 4); // the instance, its block, its counter, the new counter
        QCOMPARE(removed.size(), 1);  // the rpc block
        QCOMPARE(printModel(model),
                 QStringList({"target-ost0 |  |  | ", "  obdfilter.ost0.stats |  |  | ",
                              "    read_bytes | 4,096 | — | bytes", "client-lutra |  |  | ",
                              "  llite.lutra.read_ahead_stats |  |  | ",
                              "    hits | 1,235,900 | 3.0/s | samples",
                              "    misses | 90 | 1.0/s | samples",
                              "    zero_length_file | 0 | — | samples"}));
        QVERIFY(persistentHits.isValid());
        QCOMPARE(persistentHits.data().toString(), QStringLiteral("hits"));
        QCOMPARE(persistentHits.parent().parent().row(), 1);

        // The client instance vanishes.
        model.setCounters(update(4, {instance(QStringLiteral("target-ost0"),
                                              {block(QStringLiteral("obdfilter.ost0.stats"),
                                                     {counter(QStringLiteral("read_bytes"), 8192,
                                                              QStringLiteral("bytes"))})})}));
        QCOMPARE(removed.size(), 2);
        QVERIFY(!persistentHits.isValid());
        QCOMPARE(printModel(model),
                 QStringList({"target-ost0 |  |  | ", "  obdfilter.ost0.stats |  |  | ",
                              "    read_bytes | 8,192 | — | bytes"}));

        model.clear();
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(reset.size(), 1);
    }
};

QTEST_GUILESS_MAIN(TestCounterBlocksModel)
#include "test_counter_blocks_model.moc"
