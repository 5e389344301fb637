#include "model_print.h"
#include "models/schema_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

#include <limits>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

ParamSpec integer(const QString &name, qint64 min, qint64 max, const QString &unit,
                  const QString &defaultValue)
{
    ParamSpec spec;
    spec.name = name;
    spec.type = ParamType::integer;
    spec.min = min;
    spec.max = max;
    spec.unit = unit;
    spec.defaultValue = defaultValue;
    spec.writable = true;
    return spec;
}

ParamSpec other(const QString &name, ParamType type, QStringList choices = {})
{
    ParamSpec spec;
    spec.name = name;
    spec.type = type;
    spec.choices = std::move(choices);
    spec.writable = true;
    return spec;
}

// What a client node reports: one client mount, its osc and ldlm namespace, counters.
QList<InstanceSpecs> clientSpecs()
{
    ParamSpec lru = integer(QStringLiteral("ldlm.namespaces.ost0.lru_size"), 0, 65536,
                            QStringLiteral("locks"), QStringLiteral("0"));
    lru.specialValues = {{QStringLiteral("clear"), QStringLiteral("cancel unused locks")}};
    lru.allowed = QStringLiteral("0 (dynamic) or a lock count");
    ParamSpec readahead =
        integer(QStringLiteral("llite.lutra.max_read_ahead_mb"), 0,
                std::numeric_limits<qint64>::max(), QStringLiteral("MiB"), QStringLiteral("64"));
    readahead.type = ParamType::size;
    ParamSpec lockCount = integer(QStringLiteral("ldlm.namespaces.ost0.lock_count"), 0, 0, {}, {});
    lockCount.writable = false;
    lockCount.max = std::numeric_limits<qint64>::max();
    ParamSpec stats = other(QStringLiteral("llite.lutra.read_ahead_stats"), ParamType::counters);
    ParamSpec pages = integer(QStringLiteral("osc.ost0.max_pages_per_rpc"), 1, 4096,
                              QStringLiteral("pages"), QStringLiteral("256"));
    pages.help = QStringLiteral("Pages per bulk RPC.\nLarger RPCs need more memory.");
    return {
        {QStringLiteral("client-lutra"),
         {pages,
          other(QStringLiteral("osc.ost0.checksum_type"), ParamType::enumeration,
                {QStringLiteral("crc32c"), QStringLiteral("adler")}),
          other(QStringLiteral("osc.ost0.checksums"), ParamType::boolean), lru, lockCount,
          readahead, stats, other(QStringLiteral("llite.lutra.jobid_name"), ParamType::string)}}};
}

} // namespace

class TestSchemaModel : public QObject {
    Q_OBJECT
private slots:
    void feedsInSteps()
    {
        SchemaModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        model.setSchema(clientSpecs());
        QCOMPARE(printModel(model),
                 QStringList({
                     "ldlm |  |  |  |  |  | ",
                     "  namespaces |  |  |  |  |  | ",
                     "    ost0 |  |  |  |  |  | ",
                     "      lock_count | integer |  | ≥ 0 |  | read-only | ",
                     "      lru_size | integer | locks | 0 … 65536 locks or clear | 0 | yes | ",
                     "llite |  |  |  |  |  | ",
                     "  lutra |  |  |  |  |  | ",
                     "    jobid_name | string |  | any text |  | yes | ",
                     "    max_read_ahead_mb | size | MiB | ≥ 0 MiB | 64 | yes | ",
                     "osc |  |  |  |  |  | ",
                     "  ost0 |  |  |  |  |  | ",
                     "    checksum_type | enum |  | crc32c | adler |  | yes | ",
                     "    checksums | boolean |  | on/off |  | yes | ",
                     "    max_pages_per_rpc | integer | pages | 1 … 4096 pages | 256 | yes | Pages "
                     "per bulk RPC.",
                 }));

        const QModelIndex osc = model.indexOf(QStringLiteral("osc"));
        const QModelIndex ost0 = model.indexOf(QStringLiteral("osc.ost0"));
        const QModelIndex pages = model.indexOf(QStringLiteral("osc.ost0.max_pages_per_rpc"));
        QVERIFY(pages.isValid());
        QCOMPARE(pages.parent(), ost0);
        QCOMPARE(ost0.parent(), osc);
        QVERIFY(!model.indexOf(QStringLiteral("llite.lutra.read_ahead_stats")).isValid());
        QVERIFY(!model.indexOf(QStringLiteral("osc.ost9")).isValid());
        QCOMPARE(model.fullName(ost0), QStringLiteral("osc.ost0"));
        QCOMPARE(model.fullName(pages), QStringLiteral("osc.ost0.max_pages_per_rpc"));
        QCOMPARE(ost0.data(SchemaModel::FullNameRole).toString(), QStringLiteral("osc.ost0"));
        QVERIFY(model.spec(ost0) == nullptr);
        QVERIFY(model.spec(pages) != nullptr);
        QCOMPARE(model.spec(pages)->max, 4096);
        QCOMPARE(pages.data(SchemaModel::WritableRole).toBool(), true);
        QCOMPARE(model.indexOf(QStringLiteral("ldlm.namespaces.ost0.lock_count"))
                     .data(SchemaModel::WritableRole)
                     .toBool(),
                 false);
        QCOMPARE(model.leafNamesUnder(ost0),
                 QStringList({"osc.ost0.checksum_type", "osc.ost0.checksums",
                              "osc.ost0.max_pages_per_rpc"}));
        QCOMPARE(model.leafNamesUnder(pages), QStringList({"osc.ost0.max_pages_per_rpc"}));
        QCOMPARE(model.leafNamesUnder({}).size(), 7);
        // The whole help and what the range accepts are tooltips.
        QCOMPARE(pages.siblingAtColumn(SchemaModel::Help).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("Pages per bulk RPC.\nLarger RPCs need more memory."));
        QCOMPARE(model.indexOf(QStringLiteral("ldlm.namespaces.ost0.lru_size"))
                     .siblingAtColumn(SchemaModel::Range)
                     .data(Qt::ToolTipRole)
                     .toString(),
                 QStringLiteral("0 … 65536 locks or clear\n0 (dynamic) or a lock count\n"
                                "clear: cancel unused locks"));

        // A second node brings more targets (ost2, ost10) and a changed range for ost0 (its
        // pages limit is lower there): merged, nothing reset, natural order kept.
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        const QPersistentModelIndex keptPages(pages);
        model.setSchema({{QStringLiteral("client-lutra"),
                          {integer(QStringLiteral("osc.ost10.max_pages_per_rpc"), 1, 4096,
                                   QStringLiteral("pages"), QStringLiteral("256")),
                           integer(QStringLiteral("osc.ost2.max_pages_per_rpc"), 1, 4096,
                                   QStringLiteral("pages"), QStringLiteral("256")),
                           integer(QStringLiteral("osc.ost0.max_pages_per_rpc"), 1, 1024,
                                   QStringLiteral("pages"), QStringLiteral("256"))}},
                         {QStringLiteral("target-ost0"),
                          {integer(QStringLiteral("obdfilter.ost0.readcache_max_filesize"), 0,
                                   1 << 30, QStringLiteral("bytes"), QStringLiteral("0"))}}});
        QCOMPARE(reset.size(), 0);
        QCOMPARE(removed.size(), 0);
        // One insert per run of new siblings: obdfilter with its subtree, then ost2 and ost10.
        QCOMPARE(inserted.size(), 2);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(keptPages.data().toString(), QStringLiteral("max_pages_per_rpc"));
        QCOMPARE(QModelIndex(keptPages).siblingAtColumn(SchemaModel::Range).data().toString(),
                 QStringLiteral("1 … 1024 pages"));
        QCOMPARE(printModel(model, {SchemaModel::Name}), QStringList({"ldlm",
                                                                      "  namespaces",
                                                                      "    ost0",
                                                                      "      lock_count",
                                                                      "      lru_size",
                                                                      "llite",
                                                                      "  lutra",
                                                                      "    jobid_name",
                                                                      "    max_read_ahead_mb",
                                                                      "obdfilter",
                                                                      "  ost0",
                                                                      "    readcache_max_filesize",
                                                                      "osc",
                                                                      "  ost0",
                                                                      "    checksum_type",
                                                                      "    checksums",
                                                                      "    max_pages_per_rpc",
                                                                      "  ost2",
                                                                      "    max_pages_per_rpc",
                                                                      "  ost10",
                                                                      "    max_pages_per_rpc"}));
        QCOMPARE(model.leafNamesUnder(model.indexOf(QStringLiteral("osc"))),
                 QStringList({"osc.ost0.checksum_type", "osc.ost0.checksums",
                              "osc.ost0.max_pages_per_rpc", "osc.ost2.max_pages_per_rpc",
                              "osc.ost10.max_pages_per_rpc"}));
        QCOMPARE(model.indexOf(QStringLiteral("osc.ost10")).row(), 2);

        // The first node reports again: nothing new to insert; ost0's range follows the last
        // report.
        model.setSchema(clientSpecs());
        QCOMPARE(inserted.size(), 2);
        QCOMPARE(changed.size(), 2);
        QCOMPARE(QModelIndex(keptPages).siblingAtColumn(SchemaModel::Range).data().toString(),
                 QStringLiteral("1 … 4096 pages"));
        model.setSchema(clientSpecs());
        QCOMPARE(changed.size(), 2);
        QCOMPARE(reset.size() + removed.size(), 0);
    }

    void rangeTexts()
    {
        ParamSpec spec = other(QStringLiteral("a.b"), ParamType::duration);
        spec.min = 1;
        spec.max = 600;
        spec.unit = QStringLiteral("s");
        QCOMPARE(SchemaModel::rangeText(spec), QStringLiteral("1 … 600 s"));
        spec.specialValues = {{QStringLiteral("clear"), {}}, {QStringLiteral("default"), {}}};
        QCOMPARE(SchemaModel::rangeText(spec), QStringLiteral("1 … 600 s or clear or default"));
        QCOMPARE(SchemaModel::rangeText(
                     other(QStringLiteral("a.c"), ParamType::enumeration,
                           {QStringLiteral("x"), QStringLiteral("y"), QStringLiteral("z")})),
                 QStringLiteral("x | y | z"));
        QCOMPARE(SchemaModel::typeName(ParamType::enumeration), QStringLiteral("enum"));
        QCOMPARE(SchemaModel::typeName(ParamType::duration), QStringLiteral("duration"));
    }
};

QTEST_GUILESS_MAIN(TestSchemaModel)
#include "test_schema_model.moc"
