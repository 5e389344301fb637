#include "app/readahead_view.h"

#include "app/chart_grid.h"
#include "app/cluster_controller.h"
#include "app/node_picker.h"
#include "app/view_setup.h"
#include "app/window_picker.h"
#include "core/aggregate.h"
#include "core/decimate.h"
#include "models/ranking_model.h"
#include "widgets/heat_map.h"
#include "widgets/time_chart.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include <cmath>

namespace lutra::console {

namespace {

const QString kStatsSuffix = QStringLiteral(".read_ahead_stats.");
const QStringList kDefaultCounters{"hits", "misses", "read_but_discarded"};
// Time buckets of the heat map and the band: their cost stays the same whatever the window.
constexpr int kBuckets = 120;

// Ratios are drawn in percent: the axis reads "97 %", and a dip stays visible when the y range
// fits the data.
QList<QPointF> inPercent(QList<QPointF> points)
{
    for (auto &point : points) {
        point.setY(point.y() * 100);
    }
    return points;
}

QList<BandPoint> inPercent(QList<BandPoint> band)
{
    for (auto &point : band) {
        point.spread.min *= 100;
        point.spread.median *= 100;
        point.spread.max *= 100;
    }
    return band;
}

// Where the cluster charts come from, how fresh, and how much of the cluster they cover.
QString sourceText(const FleetTelemetry &fleet, int withSeries, int nodes)
{
    const QString server = fleet.base().toString();
    if (!fleet.lastError().isEmpty()) {
        return ReadaheadView::tr("Prometheus %1 did not answer: %2 — the charts show its last "
                                 "answer")
            .arg(server, fleet.lastError());
    }
    if (fleet.lastUpdateMs() == 0) {
        return ReadaheadView::tr("Asking Prometheus %1…").arg(server);
    }
    const qint64 age = (QDateTime::currentMSecsSinceEpoch() - fleet.lastUpdateMs()) / 1000;
    // The poll interval and where it comes from: how stale a chart can be, and what to change.
    return ReadaheadView::tr("From Prometheus %1 (1-minute rates, polled every %2 s as %3, "
                             "updated %4 s ago): %5 of %6 nodes have reads to rate; only the node "
                             "you open streams.")
        .arg(server)
        .arg(QString::number(fleet.pollIntervalMs() / 1000.0))
        .arg(fleet.pollIntervalSource())
        .arg(age)
        .arg(withSeries)
        .arg(nodes);
}

// A bucket narrower than the samples' spacing (half-second buckets of a minute, samples a second
// apart) gets none every other time: it shows the bucket before it, so a steady node is a steady
// row, not stripes. A longer gap (a node down, not reading) stays empty.
QList<double> bridgeSingleGaps(QList<double> buckets)
{
    for (qsizetype b = 1; b + 1 < buckets.size(); ++b) {
        if (std::isnan(buckets[b]) && !std::isnan(buckets[b - 1]) && !std::isnan(buckets[b + 1])) {
            buckets[b] = buckets[b - 1];
        }
    }
    return buckets;
}

void showRatio(TimeChart &chart)
{
    chart.setAutoY(true, false);
    chart.setYLabelFormat(QStringLiteral("%.0f %%"));
}

QList<TimeChart::Marker> markersOf(const QList<NodeEvent> &events)
{
    QList<TimeChart::Marker> markers;
    for (const auto &event : events) {
        markers << TimeChart::Marker{event.timeMs, event.label};
    }
    return markers;
}

} // namespace

ReadaheadView::ReadaheadView(ClusterController &cluster, QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_scope(new QComboBox(this)),
      m_window(new WindowPicker(15, this)), m_picker(new NodePicker(cluster, this)),
      m_counters(new QListWidget(this)), m_stack(new QStackedWidget(this)),
      m_nodeCharts(new ChartGrid(2)),
      m_band(new TimeChart(tr("Readahead hit ratio across nodes (min / median / max)"),
                           tr("hit ratio"))),
      m_heatMap(new HeatMap), m_ranking(new RankingModel(this)), m_worst(new QTableView),
      m_source(new QLabel)
{
    m_scope->setObjectName("readahead.scope");
    m_scope->addItem(tr("One node"));
    m_scope->addItem(tr("Cluster"));
    m_window->setObjectName("readahead.window");
    m_picker->setObjectName("readahead.picker");
    m_counters->setObjectName("readahead.counters");
    m_counters->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_counters->setToolTip(tr("read_ahead_stats counters drawn as rates (pages/s)"));

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Show:"), this));
    top->addWidget(m_scope);
    top->addWidget(m_picker);
    top->addWidget(m_window);
    top->addStretch(1);

    // Node scope: counter choices at the left, the charts of every instance at the right.
    auto *nodePage = new QWidget;
    auto *nodeLayout = new QHBoxLayout(nodePage);
    nodeLayout->setContentsMargins(0, 0, 0, 0);
    auto *scroll = new QScrollArea;
    scroll->setWidgetResizable(true);
    scroll->setWidget(m_nodeCharts);
    nodeLayout->addWidget(m_counters);
    nodeLayout->addWidget(scroll, 1);

    // Cluster scope: the band over the heat map, one time axis read down both (alignTimeAxes),
    // and the worst nodes beside them.
    auto *clusterPage = new QSplitter(Qt::Horizontal);
    auto *timeColumn = new QSplitter(Qt::Vertical);
    m_band->setObjectName("readahead.band");
    showRatio(*m_band);
    m_worst->setObjectName("readahead.worst");
    m_worst->setModel(m_ranking);
    setupResultTable(m_worst);
    auto *worstBox = new QWidget;
    auto *worstLayout = new QVBoxLayout(worstBox);
    worstLayout->setContentsMargins(0, 0, 0, 0);
    worstLayout->addWidget(new QLabel(tr("Worst hit ratio now")));
    worstLayout->addWidget(m_worst);
    m_heatMap->setObjectName("readahead.heatmap");
    m_heatMap->setToolTip(tr("Hit ratio per node over time; double-click a node to open it"));
    timeColumn->addWidget(m_band);
    timeColumn->addWidget(m_heatMap);
    clusterPage->addWidget(timeColumn);
    clusterPage->addWidget(worstBox);
    clusterPage->setStretchFactor(0, 3);
    // Either side's geometry moves the shared axis: the chart's layout, the heat map's size.
    connect(m_band->chartView()->chart(), &QChart::plotAreaChanged, this,
            [this] { alignTimeAxes(); });
    m_heatMap->installEventFilter(this);
    m_source->setObjectName("readahead.source");
    m_source->setWordWrap(true);
    m_source->setVisible(false);
    auto *clusterBox = new QWidget;
    auto *clusterLayout = new QVBoxLayout(clusterBox);
    clusterLayout->setContentsMargins(0, 0, 0, 0);
    clusterLayout->addWidget(m_source);
    clusterLayout->addWidget(clusterPage, 1);

    m_stack->addWidget(nodePage);
    m_stack->addWidget(clusterBox);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_stack, 1);

    connect(m_scope, &QComboBox::currentIndexChanged, this, [this](int index) {
        m_stack->setCurrentIndex(index);
        m_picker->setVisible(index == 0);
        refresh();
    });
    connect(m_window, &QComboBox::currentIndexChanged, this, [this] { refresh(); });
    connect(m_picker, &NodePicker::addressChanged, this, [this] {
        m_nodeCharts->retain({});
        refresh();
    });
    connect(m_counters, &QListWidget::itemChanged, this, [this] { refresh(); });
    connect(&m_cluster, &ClusterController::fleetUpdated, this, [this] {
        if (scope() == Scope::cluster) {
            refresh();
        }
    });
    connect(m_heatMap, &HeatMap::rowActivated, this, [this](const QString &label) {
        for (const auto &address : m_cluster.addresses()) {
            if (m_cluster.nodeName(address) == label) {
                m_picker->setCurrentAddress(address);
                setScope(Scope::node);
                return;
            }
        }
    });
}

bool ReadaheadView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_heatMap &&
        (event->type() == QEvent::Resize || event->type() == QEvent::Show)) {
        alignTimeAxes();
    }
    return QWidget::eventFilter(watched, event);
}

void ReadaheadView::alignTimeAxes()
{
    QChartView *view = m_band->chartView();
    QChart *chart = view->chart();
    const QRectF plot = chart->plotArea();
    if (plot.width() < 1 || !m_heatMap->isVisible() || !view->isVisible()) {
        return; // not laid out or not on screen yet: plotAreaChanged or the heat map's show comes
    }
    // Room at the chart's right for the heat map's colour scale, so the cells can end where the
    // plot ends. A new margin lays the chart out again later (plotAreaChanged calls this once
    // more); until then the plot area is the one the margin was set for, so it is not measured
    // against it again.
    const int plotRight = view->mapFromScene(plot.topRight()).x();
    const int missing = m_heatMap->legendSpace() - (view->viewport()->width() - plotRight);
    if (std::abs(missing) > 1 && plot != m_plotAtMarginChange) {
        QMargins margins = chart->margins();
        margins.setRight(std::max(kBandRightMargin, margins.right() + missing));
        if (margins != chart->margins()) {
            m_plotAtMarginChange = plot;
            chart->setMargins(margins);
            return;
        }
    }
    // The plot's left and right edges in the heat map's coordinates (siblings: through global).
    const auto toHeatMap = [&](const QPointF &scene) {
        return m_heatMap->mapFromGlobal(view->viewport()->mapToGlobal(view->mapFromScene(scene)))
            .x();
    };
    m_heatMap->setCellsSpan(toHeatMap(plot.topLeft()), toHeatMap(plot.topRight()));
}

void ReadaheadView::setScope(Scope scope)
{
    m_scope->setCurrentIndex(scope == Scope::node ? 0 : 1);
}

ReadaheadView::Scope ReadaheadView::scope() const
{
    return m_scope->currentIndex() == 0 ? Scope::node : Scope::cluster;
}

void ReadaheadView::setWindowMinutes(int minutes)
{
    m_window->setMinutes(minutes);
}

qint64 ReadaheadView::windowMs() const
{
    return m_window->windowMs();
}

QStringList ReadaheadView::chosenCounters() const
{
    QStringList chosen;
    for (int i = 0; i < m_counters->count(); ++i) {
        if (m_counters->item(i)->checkState() == Qt::Checked) {
            chosen << m_counters->item(i)->text();
        }
    }
    return chosen;
}

void ReadaheadView::updateCounterChoices(const QStringList &names)
{
    QSignalBlocker block(m_counters);
    const int before = m_counters->count();
    for (const auto &name : names) {
        if (m_counters->findItems(name, Qt::MatchExactly).isEmpty()) {
            auto *item = new QListWidgetItem(name, m_counters);
            item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
            item->setCheckState(kDefaultCounters.contains(name) ? Qt::Checked : Qt::Unchecked);
        }
    }
    if (m_counters->count() != before) {
        // Wide enough for the longest counter name the data brought.
        m_counters->setFixedWidth(m_counters->sizeHintForColumn(0) + 2 * m_counters->frameWidth() +
                                  m_counters->verticalScrollBar()->sizeHint().width());
    }
}

void ReadaheadView::refresh()
{
    if (!isVisible()) {
        return; // hidden views do not draw
    }
    const qint64 toMs = QDateTime::currentMSecsSinceEpoch();
    const qint64 fromMs = toMs - windowMs();
    if (scope() == Scope::node) {
        refreshNode(fromMs, toMs);
    } else {
        refreshCluster(fromMs, toMs);
    }
}

void ReadaheadView::refreshNode(qint64 fromMs, qint64 toMs)
{
    const auto *series = m_cluster.series(m_picker->currentAddress());
    if (series == nullptr) {
        m_nodeCharts->retain({});
        return;
    }
    const auto markers = markersOf(m_cluster.events(m_picker->currentAddress()));
    QStringList keep;
    QStringList counterNames;
    for (const auto &instance : series->instances()) {
        const auto keys = series->keys(instance);
        QStringList blocks;
        for (const auto &key : keys) {
            const int at = key.indexOf(kStatsSuffix);
            if (at < 0) {
                continue;
            }
            const auto block = key.left(at + kStatsSuffix.size() - 1);
            const auto counter = key.mid(at + kStatsSuffix.size());
            if (!blocks.contains(block)) {
                blocks << block;
            }
            if (counter != QLatin1String("hit_ratio") && !counterNames.contains(counter)) {
                counterNames << counter;
            }
        }
        if (blocks.isEmpty()) {
            continue; // a target: no client cache, no readahead
        }
        const auto ratioKey = instance + "/ratio";
        const auto ratesKey = instance + "/rates";
        keep << ratioKey << ratesKey;
        auto *ratio = m_nodeCharts->chart(ratioKey, tr("%1: readahead hit ratio").arg(instance),
                                          tr("hit ratio"));
        showRatio(*ratio);
        auto *rates = m_nodeCharts->chart(
            ratesKey, tr("%1: read_ahead_stats (pages/s)").arg(instance), tr("pages/s"));
        rates->setAutoY(true);
        rates->setLegendVisible(true);
        const auto chosen = chosenCounters();
        for (const auto &block : blocks) {
            const auto fs = block.section('.', 1, -2); // llite.<fs>.read_ahead_stats
            const auto label = blocks.size() > 1 ? fs + " " : QString();
            ratio->setSeries(label + tr("hit ratio"),
                             inPercent(series->points(instance, block + ".hit_ratio", fromMs)));
            for (const auto &counter : counterNames) {
                const auto name = label + counter;
                if (chosen.contains(counter)) {
                    rates->setSeries(name, series->points(instance, block + "." + counter, fromMs));
                } else {
                    rates->removeSeries(name);
                }
            }
        }
        for (auto *chart : {ratio, rates}) {
            chart->setMarkers(markers);
            chart->setTimeWindow(fromMs, toMs);
            chart->refresh();
        }
    }
    updateCounterChoices(counterNames);
    m_nodeCharts->retain(keep);
}

void ReadaheadView::refreshCluster(qint64 fromMs, qint64 toMs)
{
    const auto addresses = m_cluster.addresses();
    auto *fleet = m_cluster.fleet();
    if (fleet != nullptr) {
        fleet->setWindow(toMs - fromMs, kBuckets);
    }
    m_source->setVisible(fleet != nullptr);
    // Each node is bucketed once: the heat map draws the buckets, the band is their spread.
    QList<QList<double>> heat;
    const QStringList names = m_cluster.nodeNames(addresses);
    QList<double> latest;
    QList<double> misses;
    heat.reserve(addresses.size());
    int withSeries = 0;
    for (const auto &address : addresses) {
        const bool unreachable =
            m_cluster.connection(address)->state() == ConnectionState::unreachable;
        if (fleet != nullptr) {
            // Prometheus' 1-minute rates: the same for every node, streamed or not.
            const auto history = fleet->hitRatioHistory().value(address);
            withSeries += !history.isEmpty();
            heat << bridgeSingleGaps(bucketMeans(history, double(fromMs), double(toMs), kBuckets));
            const auto facts = fleet->facts().value(address);
            latest << (unreachable ? qQNaN() : facts.hitRatio);
            misses << facts.missesPerSecond;
            continue;
        }
        const auto *series = m_cluster.series(address);
        heat << bridgeSingleGaps(
            bucketMeans(series->nodeHitRatio(fromMs), double(fromMs), double(toMs), kBuckets));
        const auto readahead = series->latestNodeReadahead();
        latest << (unreachable ? qQNaN() : readahead.hitRatio);
        misses << readahead.missesPerSecond;
    }
    if (fleet != nullptr) {
        m_source->setText(sourceText(*fleet, withSeries, int(addresses.size())));
    }
    m_band->setBand(tr("hit ratio"),
                    inPercent(spreadOfBuckets(heat, double(fromMs), double(toMs), kBuckets)));
    m_band->setTimeWindow(fromMs, toMs);
    m_band->refresh();
    m_heatMap->setData(names, heat, fromMs, toMs);

    QList<RankingEntry> worst;
    for (const int index : lowestN(latest, kWorstNodes)) {
        worst << RankingEntry{names.at(index), latest.at(index), misses.at(index)};
    }
    m_ranking->setEntries(worst);
    // New names and numbers: the header sizes columns from contents only on layout changes.
    for (int column = 0; column + 1 < m_ranking->columnCount(); ++column) {
        m_worst->resizeColumnToContents(column); // the last one stretches
    }
}

} // namespace lutra::console
