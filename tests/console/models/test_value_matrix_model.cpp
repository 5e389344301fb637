#include "model_print.h"
#include "models/format.h"
#include "models/value_matrix_model.h"

#include <QAbstractItemModelTester>
#include <QBrush>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

const QString pages = QStringLiteral("osc.ost0.max_pages_per_rpc");
const QString readahead = QStringLiteral("llite.lutra.max_read_ahead_mb");

// A client node: its mount has both parameters; its bench job only the readahead one.
QList<InstanceValue> clientValues(const QString &pagesValue, const QString &readaheadValue)
{
    return {{QStringLiteral("client-lutra"), pages, pagesValue},
            {QStringLiteral("client-lutra"), readahead, readaheadValue},
            {QStringLiteral("client-lutra"), QStringLiteral("osc.ost0.checksums"),
             QStringLiteral("on")}}; // not selected: ignored
}

bool anyChangeCovers(const QSignalSpy &spy, int row, int column)
{
    for (const QList<QVariant> &signal : spy) {
        const QModelIndex topLeft = signal[0].toModelIndex();
        const QModelIndex bottomRight = signal[1].toModelIndex();
        if (topLeft.row() <= row && row <= bottomRight.row() && topLeft.column() <= column &&
            column <= bottomRight.column()) {
            return true;
        }
    }
    return false;
}

QColor background(const QAbstractItemModel &model, int row, int column)
{
    return model.index(row, column).data(Qt::BackgroundRole).value<QBrush>().color();
}

} // namespace

class TestValueMatrixModel : public QObject {
    Q_OBJECT
private slots:
    void feedsInSteps()
    {
        ValueMatrixModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);

        model.setParameters({pages, readahead});
        QCOMPARE(model.columnCount(), 4);
        QCOMPARE(model.headerData(2, Qt::Horizontal).toString(),
                 QStringLiteral("max_pages_per_rpc"));
        QCOMPARE(model.headerData(2, Qt::Horizontal, Qt::ToolTipRole).toString(), pages);
        QCOMPARE(model.headerData(3, Qt::Horizontal).toString(),
                 QStringLiteral("max_read_ahead_mb"));

        // Three nodes, answering in any order; node002 has the odd max_pages_per_rpc.
        model.setValues(QStringLiteral("node003"),
                        clientValues(QStringLiteral("256"), QStringLiteral("64")));
        model.setValues(QStringLiteral("node001"),
                        clientValues(QStringLiteral("256"), QStringLiteral("64")) +
                            QList<InstanceValue>{{QStringLiteral("bench-job1001"), readahead,
                                                  QStringLiteral("64")}});
        model.setValues(QStringLiteral("node002"),
                        clientValues(QStringLiteral("1024"), QStringLiteral("64")));
        QCOMPARE(printModel(model),
                 QStringList(
                     {"node001 | bench-job1001 | — | 64", "node001 | client-lutra | 256 | 64",
                      "node002 | client-lutra | 1024 | 64", "node003 | client-lutra | 256 | 64"}));
        QCOMPARE(model.commonValue(2), QStringLiteral("256"));
        for (int row = 0; row < model.rowCount(); ++row) {
            for (int column = 0; column < model.columnCount(); ++column) {
                const bool odd = row == 2 && column == 2;
                QCOMPARE(model.differs(row, column), odd);
                QCOMPARE(model.index(row, column).data(ValueMatrixModel::DiffersRole).toBool(),
                         odd);
                QCOMPARE(model.index(row, column).data(Qt::BackgroundRole).isValid(), odd);
            }
        }
        QCOMPARE(background(model, 2, 2), warningColor());
        QCOMPARE(model.index(2, 2).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("1024 (most nodes: 256)"));
        // The bench job has no max_pages_per_rpc: a gray dash, never "differs".
        QCOMPARE(model.index(0, 2).data(Qt::ForegroundRole).value<QBrush>().color(), mutedColor());
        QCOMPARE(model.index(2, 3).data(ValueMatrixModel::NodeRole).toString(),
                 QStringLiteral("node002"));
        QCOMPARE(model.index(2, 3).data(ValueMatrixModel::InstanceRole).toString(),
                 QStringLiteral("client-lutra"));
        QCOMPARE(model.index(2, 3).data(ValueMatrixModel::ParamRole).toString(), readahead);

        // Periodic refresh of node002 with the same values: no signal at all.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        model.setValues(QStringLiteral("node002"),
                        clientValues(QStringLiteral("1024"), QStringLiteral("64")));
        QCOMPARE(changed.size(), 0);

        // node001 follows node002: 1024 is now the most common value, so node003's untouched
        // cell differs, and the view hears of it.
        model.setValues(QStringLiteral("node001"),
                        clientValues(QStringLiteral("1024"), QStringLiteral("64")) +
                            QList<InstanceValue>{{QStringLiteral("bench-job1001"), readahead,
                                                  QStringLiteral("64")}});
        QCOMPARE(reset.size() + removed.size() + inserted.size(), 0);
        QVERIFY(anyChangeCovers(changed, 1, 2));
        QVERIFY(anyChangeCovers(changed, 3, 2));
        QVERIFY(!model.differs(2, 2));
        QVERIFY(model.differs(3, 2));
        QCOMPARE(model.commonValue(2), QStringLiteral("1024"));

        // Structure: node001's bench job ended; node002 lost its client mount.
        model.setValues(QStringLiteral("node001"),
                        clientValues(QStringLiteral("1024"), QStringLiteral("64")));
        QCOMPARE(removed.size(), 1);
        model.setValues(QStringLiteral("node002"), {});
        QCOMPARE(removed.size(), 2);
        QCOMPARE(printModel(model), QStringList({"node001 | client-lutra | 1024 | 64",
                                                 "node003 | client-lutra | 256 | 64"}));
        // A tie: the first value seen (in row order) counts as common.
        QCOMPARE(model.commonValue(2), QStringLiteral("1024"));
        QVERIFY(model.differs(1, 2));
        QVERIFY(!model.differs(0, 2));

        // A new node lands at its sorted place; a node leaves.
        model.setValues(QStringLiteral("node002"),
                        clientValues(QStringLiteral("256"), QStringLiteral("64")));
        QCOMPARE(inserted.size(), 1);
        model.removeNode(QStringLiteral("node001"));
        QCOMPARE(removed.size(), 3);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(printModel(model), QStringList({"node002 | client-lutra | 256 | 64",
                                                 "node003 | client-lutra | 256 | 64"}));
        QVERIFY(!model.differs(0, 2) && !model.differs(1, 2));

        // New columns reset the model and keep what is known for parameters that stay.
        model.setParameters({readahead, QStringLiteral("osc.ost1.max_pages_per_rpc"), pages});
        QCOMPARE(reset.size(), 1);
        QCOMPARE(model.headerData(3, Qt::Horizontal).toString(),
                 QStringLiteral("ost1.max_pages_per_rpc"));
        QCOMPARE(model.headerData(4, Qt::Horizontal).toString(),
                 QStringLiteral("ost0.max_pages_per_rpc"));
        QCOMPARE(printModel(model), QStringList({"node002 | client-lutra | 64 | — | 256",
                                                 "node003 | client-lutra | 64 | — | 256"}));
    }
};

QTEST_GUILESS_MAIN(TestValueMatrixModel)
#include "test_value_matrix_model.moc"
