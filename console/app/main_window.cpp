#include "app/main_window.h"

#include "app/audit_view.h"
#include "app/cluster_controller.h"
#include "app/cluster_view.h"
#include "app/jobs_view.h"
#include "app/lock_lru_view.h"
#include "app/node_picker.h"
#include "app/node_view.h"
#include "app/operations_dock.h"
#include "app/profiles_view.h"
#include "app/readahead_view.h"
#include "app/tunables_view.h"

#include <QApplication>
#include <QCloseEvent>
#include <QFileDialog>
#include <QMenuBar>
#include <QMessageBox>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>

namespace lutra::console {

MainWindow::MainWindow(ClusterController &cluster, QWidget *parent)
    : QMainWindow(parent), m_cluster(cluster), m_tabs(new QTabWidget(this)),
      m_clusterView(new ClusterView(cluster)), m_nodeView(new NodeView(cluster)),
      m_readaheadView(new ReadaheadView(cluster)),
      m_lockLruView(
          new LockLruView(cluster, [this] { return m_clusterView->selectedAddresses(); })),
      m_tunablesView(
          new TunablesView(cluster, [this] { return m_clusterView->selectedAddresses(); })),
      m_profilesView(
          new ProfilesView(cluster, [this] { return m_clusterView->selectedAddresses(); })),
      m_jobsView(new JobsView(cluster, [this] { return m_clusterView->selectedAddresses(); })),
      m_auditView(new AuditView(cluster, [this] { return m_clusterView->selectedAddresses(); })),
      m_operations(new OperationsDock(cluster, this)), m_frameTimer(new QTimer(this))
{
    setObjectName("mainWindow");
    m_tabs->setObjectName("main.tabs");
    m_tabs->addTab(m_clusterView, tr("Cluster"));
    m_tabs->addTab(m_nodeView, tr("Node"));
    m_tabs->addTab(m_readaheadView, tr("Readahead"));
    m_tabs->addTab(m_lockLruView, tr("Lock LRU"));
    m_tabs->addTab(m_tunablesView, tr("Tunables"));
    m_tabs->addTab(m_profilesView, tr("Profiles"));
    m_tabs->addTab(m_jobsView, tr("Jobs"));
    m_tabs->addTab(m_auditView, tr("Audit"));
    setCentralWidget(m_tabs);
    addDockWidget(Qt::BottomDockWidgetArea, m_operations);
    resizeDocks({m_operations}, {170}, Qt::Vertical);

    auto *file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open cluster file…"), QKeySequence::Open, this,
                    &MainWindow::openClusterFileDialog);
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    auto *view = menuBar()->addMenu(tr("&View"));
    view->addAction(m_operations->toggleViewAction());

    connect(m_clusterView, &ClusterView::nodeActivated, this, &MainWindow::showNode);
    connect(m_clusterView, &ClusterView::selectionChanged, this, [this] {
        m_lockLruView->refresh();
        m_tunablesView->refresh();
    });
    connect(m_tabs, &QTabWidget::currentChanged, this, [this](int index) {
        if (index == profilesTab) {
            m_profilesView->reloadProfiles(); // what the nodes store changes behind our back
        }
        frame();
    });
    connect(m_frameTimer, &QTimer::timeout, this, &MainWindow::frame);
    m_frameTimer->start(1000);

    QSettings settings;
    restoreGeometry(settings.value("mainWindow/geometry").toByteArray());
    resize(size().isEmpty() ? QSize(1400, 900) : size());
    m_tabs->setCurrentIndex(settings.value("mainWindow/tab", 0).toInt());
}

MainWindow::~MainWindow() = default;

void MainWindow::openCluster(const ClusterFile &cluster, bool startConnections)
{
    m_cluster.open(cluster, startConnections);
    for (auto *picker :
         {m_nodeView->picker(), m_readaheadView->picker(), m_lockLruView->picker()}) {
        picker->reload();
    }
    setWindowTitle(tr("lutra-console — %1 (%2 nodes)")
                       .arg(cluster.name.isEmpty() ? cluster.path : cluster.name)
                       .arg(cluster.nodes.size()));
    if (!cluster.path.isEmpty()) {
        QSettings().setValue("cluster/lastFile", cluster.path);
    }
    frame();
}

void MainWindow::showTab(Tab tab)
{
    m_tabs->setCurrentIndex(tab);
}

void MainWindow::showNode(const QString &address)
{
    m_nodeView->showNode(address);
    m_readaheadView->picker()->setCurrentAddress(address);
    m_lockLruView->picker()->setCurrentAddress(address);
    showTab(nodeTab);
}

void MainWindow::setFrameInterval(int ms)
{
    m_frameTimer->setInterval(ms);
}

void MainWindow::frame()
{
    // The cluster table is the status of everything: it stays current even when hidden.
    m_clusterView->refresh();
    int ready = 0;
    const auto addresses = m_cluster.addresses();
    for (const auto &address : addresses) {
        ready += m_cluster.connection(address)->state() == ConnectionState::ready;
    }
    QString status = tr("%1 of %2 nodes ready").arg(ready).arg(addresses.size());
    if (const auto *fleet = m_cluster.fleet()) {
        status +=
            fleet->lastError().isEmpty()
                ? tr(" · fleet charts from Prometheus %1").arg(fleet->base().toString())
                : tr(" · Prometheus %1: %2").arg(fleet->base().toString(), fleet->lastError());
    }
    statusBar()->showMessage(status);
    m_cluster.setOnScreen(onScreen());
    switch (m_tabs->currentIndex()) {
    case nodeTab: m_nodeView->refresh(); break;
    case readaheadTab: m_readaheadView->refresh(); break;
    case lockLruTab: m_lockLruView->refresh(); break;
    case tunablesTab: m_tunablesView->refresh(); break;
    case profilesTab: m_profilesView->refresh(); break;
    case jobsTab: m_jobsView->refresh(); break;
    case auditTab: m_auditView->refresh(); break;
    default: break;
    }
}

QStringList MainWindow::onScreen() const
{
    switch (m_tabs->currentIndex()) {
    case nodeTab: return {m_nodeView->picker()->currentAddress()};
    case readaheadTab:
        if (m_readaheadView->scope() == ReadaheadView::Scope::node) {
            return {m_readaheadView->picker()->currentAddress()};
        }
        return {};
    case lockLruTab: return {m_lockLruView->picker()->currentAddress()};
    default: return {};
    }
}

void MainWindow::openClusterFileDialog()
{
    const auto path = QFileDialog::getOpenFileName(
        this, tr("Open a cluster file"), QSettings().value("cluster/lastFile").toString(),
        tr("Cluster files (*.yaml *.yml);;All files (*)"));
    if (path.isEmpty()) {
        return;
    }
    const auto parsed = ClusterFile::load(path);
    if (!parsed.ok()) {
        QMessageBox::warning(this, tr("Cluster file has errors"), parsed.errors.join('\n'));
        return;
    }
    openCluster(parsed.file);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    QSettings settings;
    settings.setValue("mainWindow/geometry", saveGeometry());
    settings.setValue("mainWindow/tab", m_tabs->currentIndex());
    m_frameTimer->stop();
    m_cluster.shutdown();
    event->accept();
}

} // namespace lutra::console
