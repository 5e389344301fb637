// The whole console, offscreen, against real lutra-ctld processes each with a lutra-bench --loop
// workload: every view driven with QTest, what it shows asserted, and saved as a screenshot PNG
// into $LUTRA_SCREENSHOT_DIR (default: screenshots/ next to the test binary).

#include "app/chart_grid.h"
#include "app/cluster_controller.h"
#include "app/cluster_view.h"
#include "app/fan_out_operation.h"
#include "app/lock_lru_view.h"
#include "app/main_window.h"
#include "app/node_picker.h"
#include "app/node_view.h"
#include "app/operations_dock.h"
#include "app/profiles_view.h"
#include "app/readahead_view.h"
#include "app/tunables_view.h"
#include "console_test_cluster.h"
#include "models/cluster_model.h"
#include "models/counter_blocks_model.h"
#include "models/operations_model.h"
#include "models/plan_model.h"
#include "models/ranking_model.h"
#include "models/set_result_model.h"
#include "models/value_matrix_model.h"
#include "widgets/heat_map.h"
#include "widgets/param_editor.h"
#include "widgets/profile_editor.h"
#include "widgets/time_chart.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QTreeView>

#include <cmath>
#include <csignal>

using namespace lutra::console;

using namespace lutra::console::test;

class TestConsoleGui : public QObject {
    Q_OBJECT

private:
    TestCluster m_nodes;
    std::unique_ptr<ClusterController> m_cluster;
    std::unique_ptr<MainWindow> m_window;

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings of the window stay out of ~/.config
        const auto error = m_nodes.start(2);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        m_cluster = std::make_unique<ClusterController>();
        m_window = std::make_unique<MainWindow>(*m_cluster);
        m_window->resize(1400, 900);
        m_window->show();
        const auto parsed = ClusterFile::load(m_nodes.clusterFile("admin"));
        QVERIFY2(parsed.ok(), qPrintable(parsed.errors.join('\n')));
        m_window->openCluster(parsed.file);
        QVERIFY(TestCluster::waitAllReady(*m_cluster));
    }

    void cleanupTestCase()
    {
        m_window.reset();
        m_cluster.reset();
        m_nodes.stop();
    }

    void clusterViewShowsEveryNode()
    {
        m_window->showTab(MainWindow::clusterTab);
        auto *table = m_window->findChild<QTableView *>("cluster.table");
        QVERIFY(table);
        const auto &model = *table->model();
        QCOMPARE(model.rowCount(), 2);
        // A few updates in, every node has a hit ratio and lock counts.
        QTRY_VERIFY_WITH_TIMEOUT(cell(model, 0, ClusterModel::HitRatio).endsWith('%') &&
                                     cell(model, 1, ClusterModel::HitRatio).endsWith('%'),
                                 30000);
        m_window->frame();
        for (int row = 0; row < 2; ++row) {
            QCOMPARE(cell(model, row, ClusterModel::Node), m_nodes.node(row).name);
            QCOMPARE(cell(model, row, ClusterModel::State), QString("ready"));
            QCOMPARE(cell(model, row, ClusterModel::You), QString("ada (admin)"));
            QVERIFY(cell(model, row, ClusterModel::Labels).contains("role=compute"));
            QVERIFY(cell(model, row, ClusterModel::Instances).toInt() >= 1);
            QVERIFY2(cell(model, row, ClusterModel::Locks).contains(" / "),
                     qPrintable(cell(model, row, ClusterModel::Locks)));
        }
        // The label filter narrows the table.
        auto *filter = m_window->findChild<QLineEdit *>("cluster.filter");
        QTest::keyClicks(filter, m_nodes.node(1).name);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(cell(model, 0, ClusterModel::Node), m_nodes.node(1).name);
        filter->clear();
        QCOMPARE(model.rowCount(), 2);
        screenshot(*m_window, "cluster");
    }

    void nodeViewShowsInstancesAndLiveCounters()
    {
        m_window->nodeView()->showNode(m_cluster->addresses().first());
        m_window->showTab(MainWindow::nodeTab);
        auto *instances = m_window->findChild<QTableView *>("node.instances");
        QTRY_VERIFY(instances->model()->rowCount() >= 1);
        QVERIFY(cell(*instances->model(), 0, 0).startsWith("bench-"));
        auto *counters = m_window->findChild<QTreeView *>("node.counters");
        const auto &model = *counters->model();
        QTRY_VERIFY_WITH_TIMEOUT(model.rowCount() >= 1, 10000);
        // instance → blocks → counters: the read_ahead_stats block has Lustre's 18 counters.
        bool found = false;
        const auto instance = model.index(0, 0);
        for (int b = 0; b < model.rowCount(instance); ++b) {
            const auto block = model.index(b, 0, instance);
            if (block.data().toString().endsWith("read_ahead_stats")) {
                found = true;
                QCOMPARE(model.rowCount(block), 18);
                QCOMPARE(model.index(0, 0, block).data().toString(), QString("hits"));
            }
        }
        QVERIFY(found);
        // Rates arrive with the second update the view sees.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_window->frame();
                for (int b = 0; b < model.rowCount(instance); ++b) {
                    const auto block = model.index(b, 0, instance);
                    if (block.data().toString().endsWith("read_ahead_stats")) {
                        return model.index(0, 2, block).data().toString().endsWith("/s");
                    }
                }
                return false;
            }(),
            10000);
        screenshot(*m_window, "node");
    }

    // At a glance the blocks an admin reads first are open (they were all collapsed: names, no
    // values); what the user opens or closes stays so across updates and other nodes.
    void nodeViewOpensTheBlocksReadFirstAndKeepsTheUsersChoice()
    {
        auto *counters = m_window->findChild<QTreeView *>("node.counters");
        const auto &model = *counters->model();
        const auto block = [&](const QString &suffix) {
            const auto instance = model.index(0, 0);
            for (int b = 0; b < model.rowCount(instance); ++b) {
                const auto index = model.index(b, 0, instance);
                if (index.data().toString().endsWith(suffix)) {
                    return index;
                }
            }
            return QModelIndex();
        };
        const auto waitForBlocks = [&] {
            return QTest::qWaitFor(
                [&] {
                    m_window->frame();
                    return block(".read_ahead_stats").isValid() &&
                           block(".page_cache_stats").isValid() && block(".rpc_stats").isValid();
                },
                10000);
        };
        QVERIFY(waitForBlocks());
        QVERIFY(counters->isExpanded(model.index(0, 0)));
        int collapsed = 0;
        const auto instance = model.index(0, 0);
        for (int b = 0; b < model.rowCount(instance); ++b) {
            const auto index = model.index(b, 0, instance);
            const QString name = index.data().toString();
            const bool readFirst =
                name.endsWith(".read_ahead_stats") || name.endsWith(".page_cache_stats");
            QVERIFY2(counters->isExpanded(index) == readFirst, qPrintable(name));
            collapsed += readFirst ? 0 : 1;
        }
        QVERIFY(collapsed >= 2); // lock_stats and rpc_stats stay closed

        // The user closes the readahead block and opens an RPC histogram.
        counters->collapse(block(".read_ahead_stats"));
        counters->expand(block(".rpc_stats"));
        const QString rpcStats = block(".rpc_stats").data().toString();
        QSignalSpy updated(&model, &QAbstractItemModel::dataChanged);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_window->frame();
                return updated.count() >= 2;
            }(),
            10000);
        QVERIFY(!counters->isExpanded(block(".read_ahead_stats")));
        QVERIFY(counters->isExpanded(block(".rpc_stats")));
        QVERIFY(counters->isExpanded(block(".page_cache_stats")));

        // Another node, and back: the tree is built anew with the user's choices.
        for (const auto &address : {m_cluster->addresses().at(1), m_cluster->addresses().at(0)}) {
            m_window->nodeView()->showNode(address);
            QVERIFY(waitForBlocks());
            QCOMPARE(model.index(0, 0).data(CounterBlocksModel::InstanceRole).toString(),
                     "bench-job" + m_cluster->nodeName(address));
            QVERIFY(!counters->isExpanded(block(".read_ahead_stats")));
            QVERIFY(counters->isExpanded(block(".page_cache_stats")));
            QCOMPARE(block(".rpc_stats").data().toString(), rpcStats);
            QVERIFY(counters->isExpanded(block(".rpc_stats")));
        }
        screenshot(*m_window, "node-user-choice");
        counters->expand(block(".read_ahead_stats"));
        counters->collapse(block(".rpc_stats"));
    }

    void readaheadChartsPerInstanceAndAcrossTheCluster()
    {
        auto *view = m_window->readaheadView();
        m_window->showTab(MainWindow::readaheadTab);
        view->setScope(ReadaheadView::Scope::node);
        view->setWindowMinutes(1);
        view->picker()->setCurrentAddress(m_cluster->addresses().first());
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_window->frame();
                return view->nodeCharts()->charts().size() == 2;
            }(),
            10000);
        auto *ratio = view->nodeCharts()->charts().first();
        QVERIFY(ratio->seriesNames().contains("hit ratio"));
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_window->frame();
                return ratio->drawnPointCount("hit ratio") >= 8;
            }(),
            30000);
        // The rates chart draws the chosen counters, named from the data.
        auto *rates = view->nodeCharts()->charts().last();
        QCOMPARE(view->chosenCounters(), QStringList({"hits", "misses", "read_but_discarded"}));
        QVERIFY(rates->seriesNames().contains("misses"));
        screenshot(*m_window, "readahead-node");

        view->setScope(ReadaheadView::Scope::cluster);
        m_window->frame();
        QCOMPARE(view->heatMap()->rowCount(), 2);
        QCOMPARE(view->ranking()->rowCount(), 2);
        QCOMPARE(view->bandChart()->bandNames(), QStringList({"hit ratio"}));
        QVERIFY(view->bandChart()->drawnPointCount("hit ratio") >= 1);
        // One time axis read down both: the heat map's cells span the band's plot area (the
        // chart makes room for the colour scale first, in a later layout pass).
        QChartView *band = view->bandChart()->chartView();
        const auto onHeatMap = [&](const QPointF &scene) {
            return view->heatMap()
                ->mapFromGlobal(band->viewport()->mapToGlobal(band->mapFromScene(scene)))
                .x();
        };
        const auto misalignment = [&] {
            const QRectF plot = band->chart()->plotArea();
            const QRect cells = view->heatMap()->cellsRect();
            return std::max(std::abs(cells.left() - onHeatMap(plot.topLeft())),
                            std::abs(cells.right() + 1 - onHeatMap(plot.topRight())));
        };
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_window->frame();
                return misalignment() <= 1;
            }(),
            5000);
        screenshot(*m_window, "readahead-cluster");
    }

    void lockLruClearIsDryRunConfirmedAppliedAndMarked()
    {
        auto *view = m_window->lockLruView();
        m_window->showTab(MainWindow::lockLruTab);
        const auto address = m_cluster->addresses().first();
        view->picker()->setCurrentAddress(address);
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                m_window->frame();
                return !view->charts()->charts().isEmpty();
            }(),
            10000);
        QString asked;
        view->setConfirm([&](const QString &, const QString &text) {
            asked = text;
            return true;
        });
        QSignalSpy finished(view, &LockLruView::clearFinished);
        auto *clear = m_window->findChild<QPushButton *>("lru.clear");
        QVERIFY(clear->isEnabled());
        QTest::mouseClick(clear, Qt::LeftButton);
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY2(asked.contains("Cancel every unused lock") && asked.contains("on 1 node(s)"),
                 qPrintable(asked));
        QVERIFY(view->results()->rowCount() >= 1);
        QCOMPARE(view->results()->errorCount(), 0);
        QCOMPARE(m_cluster->events(address).size(), 1);
        QCOMPARE(m_cluster->events(address).first().label, QString("clear"));
        // The dock lists the dry run and the clear, each with its node.
        const auto &operations = m_cluster->operationsModel();
        QVERIFY(operations.rowCount() >= 2);
        const auto last = operations.index(operations.rowCount() - 1, 0);
        QCOMPARE(last.data().toString(), QString("lru_size=clear"));
        QCOMPARE(operations.rowCount(last), 1);
        m_window->frame();
        screenshot(*m_window, "lock-lru");
    }

    void tunablesDryRunThenApplyOnEveryNode()
    {
        auto *view = m_window->tunablesView();
        m_window->showTab(MainWindow::tunablesTab);
        const QString param = "osc.ost0.max_rpcs_in_flight";
        QTRY_VERIFY_WITH_TIMEOUT(view->selectParameter(param), 10000);
        auto *matrix = view->matrix();
        QTRY_COMPARE_WITH_TIMEOUT(matrix->rowCount(), 2, 10000);
        QVERIFY(view->editor() != nullptr);
        auto *dryRun = m_window->findChild<QPushButton *>("tunables.dryRun");
        auto *apply = m_window->findChild<QPushButton *>("tunables.apply");

        // A value out of range: the registry's own message, before anything is sent.
        auto *edit = view->editor()->findChild<QLineEdit *>();
        QVERIFY(edit);
        edit->selectAll();
        QTest::keyClicks(edit, "99999");
        QVERIFY(!view->editor()->check().ok);
        QVERIFY(!dryRun->isEnabled());
        QVERIFY(!apply->isEnabled());

        edit->selectAll();
        QTest::keyClicks(edit, "12");
        QVERIFY(dryRun->isEnabled());
        QVERIFY(!apply->isEnabled()); // only after a dry run of this value
        QSignalSpy dry(view, &TunablesView::dryRunFinished);
        QTest::mouseClick(dryRun, Qt::LeftButton);
        QVERIFY(dry.wait(30000));
        QCOMPARE(dry.first().first().toBool(), true);
        QVERIFY(apply->isEnabled());
        QCOMPARE(view->results()->nodes().size(), 2);
        screenshot(*m_window, "tunables-dry-run");

        QSignalSpy applied(view, &TunablesView::applyFinished);
        QTest::mouseClick(apply, Qt::LeftButton);
        QVERIFY(applied.wait(30000));
        QCOMPARE(applied.first().first().toBool(), true);
        QCOMPARE(view->results()->errorCount(), 0);
        // The matrix reads the values back: 12 everywhere, nothing differs.
        QTRY_VERIFY_WITH_TIMEOUT(cell(*matrix, 0, 2) == "12" && cell(*matrix, 1, 2) == "12", 10000);
        QVERIFY(!matrix->differs(0, 2) && !matrix->differs(1, 2));
        screenshot(*m_window, "tunables");
    }

    void aBatchWithOneBadValueChangesNothingAnywhere()
    {
        // Two assignments, the second out of range: every node refuses the whole batch, the
        // operation says why per node, and the good assignment took effect nowhere.
        const auto addresses = m_cluster->addresses();
        const QList<Assignment> batch{{"osc.ost0.max_rpcs_in_flight", "11"},
                                      {"osc.ost0.max_pages_per_rpc", "99999"}};
        auto *operation = new FanOutOperation(*m_cluster, "set batch", addresses,
                                              setParamsStep(batch, {}, false, {}), "lutractl ...",
                                              m_window.get());
        QSignalSpy finished(operation, &FanOutOperation::finished);
        operation->start();
        QVERIFY(finished.wait(30000));
        for (const auto &address : addresses) {
            const auto outcome = operation->outcomes().value(address);
            QCOMPARE(outcome.state, OpState::failed);
            QVERIFY2(outcome.detail.contains("max_pages_per_rpc"), qPrintable(outcome.detail));
            const auto read = await<QList<InstanceValue>>([&](auto done) {
                m_cluster->connection(address)->getParams({"osc.ost0.max_rpcs_in_flight"}, {},
                                                          std::move(done));
            });
            QVERIFY(read.ok && !read.value.isEmpty());
            QCOMPARE(read.value.first().value, QString("12")); // as the last apply left it
        }
    }

    void valuesThatDifferBetweenNodesStandOut()
    {
        // Node 2 gets its own value through a set of its own: the matrix marks the odd one.
        auto *view = m_window->tunablesView();
        auto *matrix = view->matrix();
        auto *connection = m_cluster->connection(m_cluster->addresses().at(1));
        bool done = false;
        connection->setParams({{"osc.ost0.max_rpcs_in_flight", "9"}}, {}, false,
                              [&](Reply<SetOutcome> reply) {
                                  QVERIFY(reply.ok && reply.value.applied);
                                  done = true;
                              });
        QTRY_VERIFY(done);
        view->reloadValues();
        QTRY_COMPARE_WITH_TIMEOUT(cell(*matrix, 1, 2), QString("9"), 10000);
        QVERIFY(matrix->differs(1, 2) || matrix->differs(0, 2));
        screenshot(*m_window, "tunables-differ");
    }

    void aProfileWithABadValueCannotBeSent()
    {
        auto *view = m_window->profilesView();
        m_window->showTab(MainWindow::profilesTab);
        QSignalSpy loaded(view, &ProfilesView::profilesLoaded);
        view->reloadProfiles();
        QVERIFY(loaded.wait(10000));
        view->editor()->setText("name: gui-tuning\n"
                                "match:\n"
                                "  labels: {role: compute}\n"
                                "params:\n"
                                "  osc.*.max_rpcs_in_flight: 16\n"
                                "  osc.*.max_pages_per_rpc: 99999\n");
        view->editor()->checkNow();
        QVERIFY(!view->editor()->isValid());
        const auto errors = view->editor()->lastCheck().errors;
        QCOMPARE(errors.size(), 1);
        QCOMPARE(errors.first().line, 6);
        QVERIFY2(errors.first().message.contains("max_pages_per_rpc"),
                 qPrintable(errors.first().message));
        auto *diff = m_window->findChild<QPushButton *>("profiles.diff");
        QVERIFY(!diff->isEnabled());
        QVERIFY2(diff->toolTip().contains("1 error"), qPrintable(diff->toolTip()));
        QVERIFY(!m_window->findChild<QPushButton *>("profiles.apply")->isEnabled());
        screenshot(*m_window, "profiles-error");
    }

    void profileDiffApplyVerifyAcrossNodes()
    {
        auto *view = m_window->profilesView();
        m_window->showTab(MainWindow::profilesTab);
        view->editor()->setText("name: gui-tuning\n"
                                "match:\n"
                                "  labels: {role: compute}\n"
                                "params:\n"
                                "  osc.*.max_rpcs_in_flight: 16\n"
                                "  llite.*.max_read_ahead_mb: 48\n");
        view->editor()->checkNow();
        QVERIFY2(view->editor()->isValid(), qPrintable(view->editor()->statusText()));
        QSignalSpy diffed(view, &ProfilesView::diffFinished);
        QTest::mouseClick(m_window->findChild<QPushButton *>("profiles.diff"), Qt::LeftButton);
        QVERIFY(diffed.wait(30000));
        QCOMPARE(diffed.first().first().toBool(), true);
        // Both nodes, every osc target and the readahead budget: live -> desired with the line.
        const auto &plan = *view->plan();
        QCOMPARE(plan.nodes(), QStringList({m_nodes.node(0).name, m_nodes.node(1).name}));
        QVERIFY(plan.changedCount() >= 4);
        bool sawSource = false;
        for (int row = 0; row < plan.rowCount(); ++row) {
            if (cell(plan, row, PlanModel::Parameter) == "llite.bench.max_read_ahead_mb") {
                QCOMPARE(cell(plan, row, PlanModel::Desired), QString("48"));
                QVERIFY2(cell(plan, row, PlanModel::Source) == "inline:6:3",
                         qPrintable(cell(plan, row, PlanModel::Source)));
                sawSource = true;
            }
        }
        QVERIFY(sawSource);
        screenshot(*m_window, "profiles-diff");

        QString asked;
        view->setConfirm([&](const QString &, const QString &text) {
            asked = text;
            return true;
        });
        auto *apply = m_window->findChild<QPushButton *>("profiles.apply");
        QVERIFY(apply->isEnabled());
        QSignalSpy applied(view, &ProfilesView::applyFinished);
        QTest::mouseClick(apply, Qt::LeftButton);
        QVERIFY(applied.wait(30000));
        QCOMPARE(applied.first().first().toBool(), true);
        QVERIFY2(asked.contains("gui-tuning") && asked.contains("2 node(s)"), qPrintable(asked));
        // Every node now runs it: the value is read back through the node itself.
        for (const auto &address : m_cluster->addresses()) {
            bool done = false;
            m_cluster->connection(address)->getParams(
                {"llite.*.max_read_ahead_mb"}, {}, [&](Reply<QList<InstanceValue>> reply) {
                    QVERIFY(reply.ok && !reply.value.isEmpty());
                    QCOMPARE(reply.value.first().value, QString("48"));
                    done = true;
                });
            QTRY_VERIFY(done);
        }
        screenshot(*m_window, "profiles-applied");

        QSignalSpy verified(view, &ProfilesView::verifyFinished);
        QTest::mouseClick(m_window->findChild<QPushButton *>("profiles.verify"), Qt::LeftButton);
        QVERIFY(verified.wait(30000));
        QCOMPARE(verified.first().first().toInt(), 0);
        auto *table = m_window->findChild<QTableView *>("cluster.table");
        QCOMPARE(cell(*table->model(), 0, ClusterModel::Drift), QString("none (gui-tuning)"));
        // The operations dock can redo it from a shell and export it as lutractl --json would.
        auto *dock = m_window->operationsDock();
        const auto &operations = m_cluster->operationsModel();
        dock->tree()->setCurrentIndex(operations.index(operations.rowCount() - 2, 0));
        const auto script = dock->copySelectedAsLutractl();
        QVERIFY2(script.contains("put-profile /tmp/gui-tuning.yaml") &&
                     script.contains("apply gui-tuning"),
                 qPrintable(script));
        const auto path = m_nodes.filePath("apply.json");
        QVERIFY(dock->exportSelected(path));
        QFile exported(path);
        QVERIFY(exported.open(QIODevice::ReadOnly));
        const auto json = QJsonDocument::fromJson(exported.readAll()).object();
        QCOMPARE(json["summary"].toObject()["ok"].toInt(), 2);
        QVERIFY(
            json["nodes"].toArray().first().toObject()["result"].toObject().contains("history_id"));
    }

    void aViewerSeesNoEditControlsAndIsToldWhy()
    {
        ClusterController cluster;
        MainWindow window(cluster);
        window.resize(1400, 900);
        window.show();
        window.openCluster(ClusterFile::load(m_nodes.clusterFile("viewer")).file);
        QVERIFY(TestCluster::waitAllReady(cluster));
        QCOMPARE(cluster.roleOn(cluster.addresses()), Role::viewer);
        window.showTab(MainWindow::tunablesTab);
        QTRY_VERIFY_WITH_TIMEOUT(
            window.tunablesView()->selectParameter("osc.ost0.max_rpcs_in_flight"), 10000);
        window.frame();
        auto *note = window.findChild<QLabel *>("tunables.roleNote");
        QVERIFY(note->isVisible());
        QVERIFY2(note->text().contains("is viewer") && note->text().contains("needs admin"),
                 qPrintable(note->text()));
        QVERIFY(!window.findChild<QPushButton *>("tunables.dryRun")->isVisible());
        QVERIFY(!window.tunablesView()->editor()->isVisible());
        window.showTab(MainWindow::lockLruTab);
        window.frame();
        QVERIFY(!window.findChild<QPushButton *>("lru.clear")->isEnabled());
        window.showTab(MainWindow::tunablesTab);
        screenshot(window, "tunables-viewer");
        cluster.shutdown();
    }

    void aHungNodeNeverBlocksTheConsoleAndIsReported()
    {
        // node002's ctld stops answering (SIGSTOP): the dry run reports it unreachable when its
        // deadline passes, node001's outcome stands, and the GUI thread keeps turning meanwhile.
        auto &hung = m_nodes.node(1);
        ::kill(static_cast<pid_t>(hung.ctld->pid()), SIGSTOP);
        auto *view = m_window->tunablesView();
        m_window->showTab(MainWindow::tunablesTab);
        QVERIFY(view->selectParameter("osc.ost0.max_rpcs_in_flight"));
        auto *edit = view->editor()->findChild<QLineEdit *>();
        edit->selectAll();
        QTest::keyClicks(edit, "14");
        int ticks = 0;
        QTimer ticker;
        connect(&ticker, &QTimer::timeout, [&] { ++ticks; });
        ticker.start(50);
        QSignalSpy dry(view, &TunablesView::dryRunFinished);
        view->dryRun();
        QVERIFY(dry.wait(30000));
        ::kill(static_cast<pid_t>(hung.ctld->pid()), SIGCONT);
        QCOMPARE(dry.first().first().toBool(), false);
        QVERIFY2(ticks >= 10, qPrintable(QString::number(ticks)));
        const auto &operations = m_cluster->operationsModel();
        const auto op = operations.index(operations.rowCount() - 1, 0);
        QCOMPARE(operations.rowCount(op), 2);
        QCOMPARE(cell(operations, 0, 1, op), QString("ok"));
        QCOMPARE(cell(operations, 1, 1, op), QString("unreachable"));
        QVERIFY2(cell(operations, 1, 2, op).startsWith("DEADLINE_EXCEEDED"),
                 qPrintable(cell(operations, 1, 2, op)));
        QVERIFY(!m_window->findChild<QPushButton *>("tunables.apply")->isEnabled());
        screenshot(*m_window, "hung-node");
    }

    void cancelStopsContactingFurtherNodes()
    {
        // One node at a time; the first hangs. Cancel: the second is never contacted and keeps
        // its value; the dock says so per node.
        auto &hung = m_nodes.node(0);
        const auto addresses = m_cluster->addresses();
        // Every node answering first: the node the last test stopped may still be reconnecting,
        // and the second node's value is read back below.
        QVERIFY(TestCluster::waitAllReady(*m_cluster, 30000));
        ::kill(static_cast<pid_t>(hung.ctld->pid()), SIGSTOP);
        auto *operation = new FanOutOperation(
            *m_cluster, "set osc.ost0.max_rpcs_in_flight=7", addresses,
            setParamsStep({{"osc.ost0.max_rpcs_in_flight", "7"}}, {}, false, {}), "lutractl ...",
            m_window.get());
        QSignalSpy finished(operation, &FanOutOperation::finished);
        operation->start(1);
        const int id = operation->id();
        auto *dock = m_window->operationsDock();
        dock->tree()->setCurrentIndex(m_cluster->operationsModel().operationIndex(id));
        QTest::qWait(200); // the first call is out; the node does not answer
        dock->cancelSelected();
        QVERIFY(finished.wait(10000));
        ::kill(static_cast<pid_t>(hung.ctld->pid()), SIGCONT);
        const auto &operations = m_cluster->operationsModel();
        QCOMPARE(operations.operationState(id), OpState::cancelled);
        const auto op = operations.operationIndex(id);
        QCOMPARE(cell(operations, 0, 1, op), QString("cancelled"));
        QCOMPARE(cell(operations, 1, 1, op), QString("cancelled"));
        QCOMPARE(cell(operations, 1, 2, op), QString("not contacted"));
        bool read = false;
        m_cluster->connection(addresses[1])
            ->getParams({"osc.ost0.max_rpcs_in_flight"}, {},
                        [&](Reply<QList<InstanceValue>> reply) {
                            QVERIFY2(reply.ok && !reply.value.isEmpty(), qPrintable(reply.error));
                            QVERIFY(reply.value.first().value != "7");
                            read = true;
                        });
        QTRY_VERIFY(read);
    }

    void aNodeThatDiesIsUnreachableThenComesBack()
    {
        m_window->showTab(MainWindow::clusterTab);
        auto &node = m_nodes.node(1);
        const auto address = m_cluster->addresses().at(1);
        auto *connection = m_cluster->connection(address);
        connection->setBackoffForTests(200, 1000);
        ::kill(static_cast<pid_t>(node.ctld->pid()), SIGKILL);
        QTRY_COMPARE_WITH_TIMEOUT(connection->state(), ConnectionState::unreachable, 20000);
        m_window->frame();
        auto *table = m_window->findChild<QTableView *>("cluster.table");
        const int row = 1;
        QCOMPARE(cell(*table->model(), row, ClusterModel::State), QString("unreachable"));
        QVERIFY(!cell(*table->model(), row, ClusterModel::Error).isEmpty());
        screenshot(*m_window, "cluster-unreachable");
        node.ctld->stop();
        QVERIFY2(m_nodes.startCtld(1), qPrintable(node.ctld->log()));
        QTRY_COMPARE_WITH_TIMEOUT(connection->state(), ConnectionState::ready, 30000);
        // Counters flow again after the restart.
        const auto before = m_cluster->latestCounters(address)->timeNs;
        QTRY_VERIFY_WITH_TIMEOUT(m_cluster->latestCounters(address)->timeNs > before, 20000);
    }
};

QTEST_MAIN(TestConsoleGui)
#include "test_console_gui.moc"
