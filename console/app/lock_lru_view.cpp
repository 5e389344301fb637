#include "app/lock_lru_view.h"

#include "app/chart_grid.h"
#include "app/cluster_controller.h"
#include "app/fan_out_operation.h"
#include "app/node_picker.h"
#include "app/view_setup.h"
#include "app/window_picker.h"
#include "models/set_result_model.h"
#include "widgets/time_chart.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace lutra::console {

namespace {

const QString kNamespaces = QStringLiteral("ldlm.namespaces.");
const QString kClear = QStringLiteral("ldlm.namespaces.*.lru_size");

} // namespace

LockLruView::LockLruView(ClusterController &cluster, TargetsProvider targets, QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_targets(std::move(targets)),
      m_picker(new NodePicker(cluster, this)), m_window(new WindowPicker(5, this)),
      m_targetsLabel(new QLabel(this)), m_clear(new QPushButton(tr("Clear unused locks…"), this)),
      m_charts(new ChartGrid(2)), m_results(new SetResultModel(this)),
      m_resultsView(new QTableView(this))
{
    m_confirm = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_picker->setObjectName("lru.picker");
    m_window->setObjectName("lru.window");
    m_targetsLabel->setObjectName("lru.targets");
    m_clear->setObjectName("lru.clear");
    m_clear->setToolTip(tr("lru_size=clear: cancel every unused lock (dirty pages are written "
                           "back, cached pages under them dropped). Locks in use stay."));
    m_resultsView->setObjectName("lru.results");
    m_resultsView->setModel(m_results);
    setupResultTable(m_resultsView);

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Node:"), this));
    top->addWidget(m_picker);
    top->addWidget(m_window);
    top->addStretch(1);
    top->addWidget(m_targetsLabel);
    top->addWidget(m_clear);
    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_charts);
    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(scroll);
    split->addWidget(m_resultsView);
    split->setStretchFactor(0, 3);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(split, 1);

    connect(m_clear, &QPushButton::clicked, this, &LockLruView::clearUnusedLocks);
    connect(m_picker, &NodePicker::addressChanged, this, [this] {
        m_charts->retain({});
        refresh();
    });
    connect(&m_cluster, &ClusterController::nodeEventAdded, this, [this] { refresh(); });
    connect(m_window, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
}

QStringList LockLruView::targets() const
{
    auto chosen = m_targets ? m_targets() : QStringList{};
    if (chosen.isEmpty() && !m_picker->currentAddress().isEmpty()) {
        chosen << m_picker->currentAddress();
    }
    return chosen;
}

void LockLruView::refresh()
{
    const auto chosen = targets();
    m_targetsLabel->setText(tr("Clear on: %1").arg(shortNodeList(m_cluster.nodeNames(chosen))));
    const Role role = m_cluster.roleOn(chosen);
    const bool allowed = role == Role::admin;
    m_clear->setEnabled(allowed && !chosen.isEmpty());
    if (!allowed) {
        m_clear->setToolTip(tr("Your role on these nodes is %1: lru_size=clear is a parameter set "
                               "and needs admin.")
                                .arg(roleName(role)));
    }
    if (!isVisible()) {
        return;
    }
    const QString address = m_picker->currentAddress();
    const auto *series = m_cluster.series(address);
    if (series == nullptr) {
        m_charts->retain({});
        return;
    }
    const qint64 toMs = QDateTime::currentMSecsSinceEpoch();
    const qint64 fromMs = toMs - m_window->windowMs();
    QList<TimeChart::Marker> markers;
    for (const auto &event : m_cluster.events(address)) {
        markers << TimeChart::Marker{event.timeMs, event.label};
    }
    QStringList keep;
    for (const auto &instance : series->instances()) {
        for (const auto &key : series->keys(instance)) {
            if (!key.startsWith(kNamespaces) || !key.endsWith(QLatin1String(".lock_count"))) {
                continue;
            }
            const auto prefix = key.left(key.size() - int(qstrlen("lock_count")));
            const auto ns = prefix.mid(kNamespaces.size()).chopped(1);
            const auto chartKey = instance + "/" + ns;
            keep << chartKey;
            const double lru = series->latest(instance, prefix + "lru_size");
            auto *chart = m_charts->chart(chartKey, tr("%1 · lock namespace %2").arg(instance, ns),
                                          tr("locks"));
            chart->setAutoY(true);
            chart->setYWholeNumbers(true); // lock counts
            chart->setLegendVisible(true);
            chart->setSeries(tr("locks"), series->points(instance, prefix + "lock_count", fromMs));
            chart->setSeries(tr("unused"),
                             series->points(instance, prefix + "lock_unused_count", fromMs));
            // lru_size 0 means "dynamic": there is no limit to draw, so those points are gaps,
            // and the legend says so.
            auto limit = series->points(instance, prefix + "lru_size", fromMs);
            for (auto &point : limit) {
                if (point.y() == 0) {
                    point.setY(qQNaN());
                }
            }
            const bool dynamic = lru == 0;
            chart->removeSeries(dynamic ? tr("lru_size") : tr("lru_size: 0 = dynamic"));
            chart->setSeries(dynamic ? tr("lru_size: 0 = dynamic") : tr("lru_size"), limit);
            chart->setMarkers(markers);
            chart->setTimeWindow(fromMs, toMs);
            chart->refresh();
        }
    }
    m_charts->retain(keep);
}

void LockLruView::clearUnusedLocks()
{
    const auto chosen = targets();
    if (chosen.isEmpty()) {
        return;
    }
    m_clear->setEnabled(false);
    m_results->clear();
    auto sink = [this](const QString &address, const Reply<SetOutcome> &reply) {
        const auto name = m_cluster.nodeName(address);
        if (reply.ok) {
            m_results->setOutcome(name, reply.value);
        } else {
            m_results->setNodeError(name, reply.error);
        }
    };
    const QList<Assignment> clear{{kClear, QStringLiteral("clear")}};
    auto *dryRun = new FanOutOperation(
        m_cluster, tr("dry run: lru_size=clear"), chosen, setParamsStep(clear, {}, true, sink),
        m_cluster.lutractlScript(chosen, setParamsArguments(clear, true)), this);
    connect(dryRun, &FanOutOperation::finished, this,
            [this, chosen, dryRun] { onDryRunDone(chosen, dryRun); });
    dryRun->start();
}

void LockLruView::onDryRunDone(const QStringList &chosen, FanOutOperation *dryRun)
{
    dryRun->deleteLater();
    QStringList ready;
    QStringList refused;
    qint64 unused = 0;
    int namespaces = 0;
    for (const auto &address : chosen) {
        const auto outcome = dryRun->outcomes().value(address);
        if (outcome.state != OpState::ok) {
            refused << m_cluster.nodeName(address) + ": " + outcome.detail;
            continue;
        }
        ready << address;
        if (const auto *latest = m_cluster.latestCounters(address)) {
            for (const auto &instance : latest->instances) {
                for (const auto &gauge : instance.gauges) {
                    if (gauge.name.endsWith(QLatin1String(".lock_unused_count"))) {
                        unused += gauge.value.toLongLong();
                        ++namespaces;
                    }
                }
            }
        }
    }
    if (ready.isEmpty()) {
        m_clear->setEnabled(true);
        emit clearFinished(false);
        return;
    }
    QString text = tr("Cancel every unused lock in %1 lock namespace(s) on %2 node(s) — about %3 "
                      "unused lock(s) now. Dirty pages under them are written back first and "
                      "their cached pages are dropped, so the next reads go to the targets. "
                      "Locks in use are not touched.")
                       .arg(namespaces)
                       .arg(ready.size())
                       .arg(unused);
    if (!refused.isEmpty()) {
        text += tr("\n\nThe dry run failed on %1 node(s), which will be left alone:\n%2")
                    .arg(refused.size())
                    .arg(refused.join('\n'));
    }
    if (!m_confirm(tr("Clear unused locks"), text)) {
        m_clear->setEnabled(true);
        emit clearFinished(false);
        return;
    }
    auto sink = [this](const QString &address, const Reply<SetOutcome> &reply) {
        const auto name = m_cluster.nodeName(address);
        if (reply.ok) {
            m_results->setOutcome(name, reply.value);
            if (reply.value.applied) {
                m_cluster.addEvent(address,
                                   {QDateTime::currentMSecsSinceEpoch(), QStringLiteral("clear")});
            }
        } else {
            m_results->setNodeError(name, reply.error);
        }
    };
    m_results->clear();
    const QList<Assignment> clear{{kClear, QStringLiteral("clear")}};
    auto *apply = new FanOutOperation(
        m_cluster, tr("lru_size=clear"), ready, setParamsStep(clear, {}, false, sink),
        m_cluster.lutractlScript(ready, setParamsArguments(clear, false)), this);
    connect(apply, &FanOutOperation::finished, this, [this, apply] {
        apply->deleteLater();
        m_clear->setEnabled(true);
        bool all = true;
        for (const auto &outcome : apply->outcomes()) {
            all = all && outcome.state == OpState::ok;
        }
        emit clearFinished(all);
    });
    apply->start();
}

} // namespace lutra::console
