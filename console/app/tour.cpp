#include "app/tour.h"

#include "app/audit_view.h"
#include "app/cluster_controller.h"
#include "app/cluster_view.h"
#include "app/jobs_view.h"
#include "app/lock_lru_view.h"
#include "app/main_window.h"
#include "app/node_picker.h"
#include "app/node_view.h"
#include "app/operations_dock.h"
#include "app/profiles_view.h"
#include "app/readahead_view.h"
#include "app/tunables_view.h"
#include "app/window_picker.h"
#include "models/history_model.h"
#include "models/jobs_model.h"
#include "models/profiles_model.h"
#include "models/ranking_model.h"
#include "widgets/profile_editor.h"
#include "widgets/time_chart.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QImage>
#include <QSet>
#include <QStatusBar>
#include <QThread>

#include <cmath>
#include <cstdio>
#include <functional>

namespace lutra::console {

namespace {

// Runs the event loop until `done` holds or the time is up.
bool waitFor(const std::function<bool()> &done, int timeoutMs)
{
    QElapsedTimer timer;
    timer.start();
    while (!done()) {
        if (timer.elapsed() > timeoutMs) {
            return false;
        }
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(20);
    }
    return true;
}

// Waits while the frames tick, so charts draw what arrived meanwhile.
void settle(MainWindow &window, int ms)
{
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < ms) {
        QApplication::processEvents(QEventLoop::AllEvents, 50);
        QThread::msleep(20);
    }
    window.frame();
    QApplication::processEvents();
}

class Tour {
public:
    Tour(MainWindow &window, ClusterController &cluster, QString directory)
        : m_window(window), m_cluster(cluster), m_directory(std::move(directory))
    {
    }

    int run()
    {
        QDir().mkpath(m_directory);
        m_window.resize(1500, 950);
        m_window.show();
        if (!step("every node connected", waitFor([this] { return allReady(); }, 90'000))) {
            return 1;
        }
        // Charts open with the stored history and go on live: give them some live seconds.
        // With Prometheus only the node on screen streams: the seconds go to the node shown
        // next, and the cluster table already has Prometheus' numbers.
        const bool fleet = m_cluster.fleet() != nullptr;
        if (!fleet) {
            settle(m_window, 8000);
        }

        m_window.showTab(MainWindow::clusterTab);
        settle(m_window, 300);
        if (fleet) {
            // What tells an admin (and demo_tour) where the cluster views get their numbers.
            std::printf("lutra-console tour: status bar: %s\n",
                        qPrintable(m_window.statusBar()->currentMessage()));
        }
        shoot("01-cluster",
              fleet ? "one row per node: state, version, you, labels; hit ratio, "
                      "locks and cache from Prometheus"
                    : "one row per node: state, version, you, labels, hit ratio, locks");

        const QString client = pickClient();
        m_window.nodeView()->showNode(client);
        m_window.showTab(MainWindow::nodeTab);
        step("node " + m_cluster.nodeName(client) + " streams",
             waitFor([&] { return m_cluster.latestCounters(client) != nullptr; }, 20'000));
        settle(m_window, fleet ? 8000 : 1200);
        shoot("02-node", "instances and the live counter blocks of " + m_cluster.nodeName(client));

        auto *readahead = m_window.readaheadView();
        readahead->setWindowMinutes(1);
        readahead->setScope(ReadaheadView::Scope::node);
        readahead->picker()->setCurrentAddress(client);
        m_window.showTab(MainWindow::readaheadTab);
        settle(m_window, 1200);
        shoot("03-readahead-node", "hit ratio and read_ahead_stats rates per instance");
        readahead->setScope(ReadaheadView::Scope::cluster);
        settle(m_window, 1200);
        if (fleet) {
            fleetCharts();
        }
        shoot("04-readahead-cluster",
              fleet ? "min/median/max band, worst nodes, node x time heat map from Prometheus"
                    : "min/median/max band, worst nodes, node x time heat map");

        auto *locks = m_window.lockLruView();
        locks->picker()->setCurrentAddress(client);
        locks->windowPicker()->setMinutes(1);
        m_window.showTab(MainWindow::lockLruTab);
        settle(m_window, 1200);
        shoot("05-lock-lru", "lock_count, lock_unused_count and lru_size per namespace");

        auto *tunables = m_window.tunablesView();
        m_window.showTab(MainWindow::tunablesTab);
        if (step("tunables schema loaded",
                 waitFor([&] { return tunables->selectParameter("osc.ost0.max_rpcs_in_flight"); },
                         20'000))) {
            settle(m_window, 1500);
            shoot("06-tunables", "osc.ost0.max_rpcs_in_flight on every node and instance");
        }

        profiles();
        jobs();
        audit();
        return m_failures == 0 ? 0 : 1;
    }

private:
    // Connected, and counters to draw: every node's stream, or Prometheus' first answer for
    // the Cluster table (then no node streams until it is on screen).
    bool allReady() const
    {
        const auto *fleet = m_cluster.fleet();
        for (const auto &address : m_cluster.addresses()) {
            const auto *connection = m_cluster.connection(address);
            if (connection->state() != ConnectionState::ready ||
                (fleet == nullptr && m_cluster.latestCounters(address) == nullptr)) {
                return false;
            }
        }
        return !m_cluster.addresses().isEmpty() && (fleet == nullptr || !fleet->facts().isEmpty());
    }

    // The cluster charts drawn from a fresh Prometheus answer; says what they show.
    void fleetCharts()
    {
        auto *fleet = m_cluster.fleet();
        auto *view = m_window.readaheadView();
        const qint64 before = fleet->lastUpdateMs();
        // The console polls as often as Prometheus evaluates its rules; the tour shows the latest.
        std::printf("lutra-console tour: Prometheus asked every %d ms (%s)\n",
                    fleet->pollIntervalMs(), qPrintable(fleet->pollIntervalSource()));
        fleet->poll();
        step(
            "Prometheus answered",
            waitFor([&] { return fleet->lastUpdateMs() > before || !fleet->lastError().isEmpty(); },
                    15'000) &&
                fleet->lastError().isEmpty());
        settle(m_window, 300);
        int withHistory = 0;
        for (const auto &points : fleet->hitRatioHistory()) {
            withHistory += !points.isEmpty();
        }
        const int bandPoints =
            view->bandChart()->drawnPointCount(view->bandChart()->bandNames().value(0));
        std::printf("lutra-console tour: cluster charts from Prometheus %s: %d of %d nodes with a "
                    "hit ratio history, %d band points, %d worst nodes ranked\n",
                    qPrintable(fleet->base().toString()), withHistory,
                    int(m_cluster.addresses().size()), bandPoints, view->ranking()->rowCount());
        step("the cluster charts have Prometheus' data",
             withHistory > 0 && bandPoints > 0 && view->ranking()->rowCount() > 0);
    }

    // A node with a client (a readahead block): the views have most to show there.
    QString pickClient() const
    {
        if (const auto *fleet = m_cluster.fleet()) {
            for (const auto &address : m_cluster.addresses()) {
                if (std::isfinite(fleet->facts().value(address).hitRatio)) {
                    return address; // Prometheus has its reads' hit ratio
                }
            }
        }
        for (const auto &address : m_cluster.addresses()) {
            const auto *series = m_cluster.series(address);
            for (const auto &instance : series->instances()) {
                for (const auto &key : series->keys(instance)) {
                    if (key.contains(QLatin1String("read_ahead_stats"))) {
                        return address;
                    }
                }
            }
        }
        return m_cluster.addresses().value(0);
    }

    void profiles()
    {
        auto *view = m_window.profilesView();
        view->setConfirm([](const QString &, const QString &) { return true; });
        m_window.showTab(MainWindow::profilesTab); // lists the nodes' profiles
        if (!step("profiles listed",
                  waitFor([&] { return view->profiles()->rowCount() > 0; }, 20'000))) {
            return;
        }
        bool opened = false;
        bool openOk = false;
        QObject::connect(view, &ProfilesView::profileOpened, view, [&](bool ok) {
            opened = true;
            openOk = ok;
        });
        view->openProfile(QStringLiteral("compute"));
        if (!step("profile compute opened", waitFor([&] { return opened; }, 20'000) && openOk)) {
            return;
        }
        // Only the nodes the profile is for: the others would refuse its parameters.
        QStringList matching;
        for (const auto &address : m_cluster.addresses()) {
            if (view->profiles()
                    ->nodesMatching(QStringLiteral("compute"))
                    .contains(m_cluster.nodeName(address))) {
                matching << address;
            }
        }
        m_window.clusterView()->selectAddresses(matching);
        view->editor()->checkNow();
        settle(m_window, 300);
        shoot("07-profile-editor", "the compute profile, checked against the nodes' schema");
        bool diffed = false;
        bool diffOk = false;
        QObject::connect(view, &ProfilesView::diffFinished, view, [&](bool ok) {
            diffed = true;
            diffOk = ok;
        });
        view->diff();
        if (!step("dry-run diff", waitFor([&] { return diffed; }, 60'000) && diffOk)) {
            return;
        }
        settle(m_window, 300);
        shoot("08-profile-diff", "what compute would change: node x instance x parameter");
        bool applied = false;
        bool applyOk = false;
        QObject::connect(view, &ProfilesView::applyFinished, view, [&](bool ok) {
            applied = true;
            applyOk = ok;
        });
        view->apply();
        step("apply", waitFor([&] { return applied; }, 60'000) && applyOk);
        settle(m_window, 300);
        shoot("09-profile-applied", "compute applied: each node's outcome");
    }

    void jobs()
    {
        auto *view = m_window.jobsView();
        m_window.clusterView()->selectAddresses({});
        m_window.showTab(MainWindow::jobsTab);
        if (!step("jobs listed", waitFor(
                                     [&] {
                                         m_window.frame();
                                         return view->jobs()->rowCount() >= 2;
                                     },
                                     30'000))) {
            return;
        }
        // A rate needs a second job_stats sample (the view asks every 2 s): without waiting for
        // it the picture showed "measuring…" for jobs that read and write all the time.
        const auto *model = view->jobs();
        const auto rated = [model] {
            for (int row = 0; row < model->rowCount(); ++row) {
                for (const int column : {JobsModel::ReadRate, JobsModel::WriteRate}) {
                    if (model->index(row, column).data(JobsModel::SortRole).toDouble() < 0) {
                        return false;
                    }
                }
            }
            return model->rowCount() > 0;
        };
        const bool measured = waitFor(
            [&] {
                m_window.frame();
                return rated();
            },
            20'000);
        step("jobs' read and write rates measured", measured);
        QStringList rates;
        for (int row = 0; row < model->rowCount(); ++row) {
            rates << QStringLiteral("%1 read %2 write %3")
                         .arg(model->index(row, JobsModel::Job).data().toString(),
                              model->index(row, JobsModel::ReadRate).data().toString(),
                              model->index(row, JobsModel::WriteRate).data().toString());
        }
        std::printf("lutra-console tour: job rates: %s\n", qPrintable(rates.join("; ")));
        const QString job = model->index(model->rowCount() - 1, 0).data().toString();
        view->selectJob(job);
        settle(m_window, 300);
        shoot("10-jobs", "job_stats merged across nodes: where each job ran, bytes and rates");
        bool flushed = false;
        bool flushOk = false;
        QObject::connect(view, &JobsView::flushFinished, view, [&](bool ok) {
            flushed = true;
            flushOk = ok;
        });
        view->flushJobEverywhere();
        step("flush job " + job, waitFor([&] { return flushed; }, 60'000) && flushOk);
        settle(m_window, 300);
        shoot("11-jobs-flushed", "job " + job + " flushed where it ran: the report per node");
    }

    void audit()
    {
        auto *view = m_window.auditView();
        m_window.showTab(MainWindow::auditTab);
        view->applyFilter();
        step("audit listed", waitFor([&] { return view->history()->rowCount() >= 3; }, 30'000));
        settle(m_window, 300);
        shoot("12-audit", "every change on every node, newest first, with who and what");
    }

    bool step(const QString &what, bool ok)
    {
        if (!ok) {
            ++m_failures;
            std::fprintf(stderr, "lutra-console tour: %s: failed\n", qPrintable(what));
        }
        return ok;
    }

    // Saves the window; a picture with hardly any colours means the view drew nothing.
    void shoot(const QString &name, const QString &what)
    {
        const QImage image = m_window.grab().toImage();
        QSet<QRgb> colours;
        for (int y = 0; y < image.height() && colours.size() < 16; y += 7) {
            for (int x = 0; x < image.width() && colours.size() < 16; x += 7) {
                colours.insert(image.pixel(x, y));
            }
        }
        const auto path = QDir(m_directory).filePath(name + ".png");
        const bool saved = image.save(path);
        step(name + " has content", colours.size() >= 16);
        step("write " + path, saved);
        std::printf("  %s  %s\n", qPrintable(path), qPrintable(what));
        std::fflush(stdout);
    }

    MainWindow &m_window;
    ClusterController &m_cluster;
    QString m_directory;
    int m_failures = 0;
};

} // namespace

int runTour(MainWindow &window, ClusterController &cluster, const QString &directory)
{
    std::printf("lutra-console tour: screenshots in %s\n", qPrintable(directory));
    return Tour(window, cluster, directory).run();
}

} // namespace lutra::console
