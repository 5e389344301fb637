#pragma once
// The console's main window: Cluster, Node, Readahead, Lock LRU and Tunables tabs over one
// ClusterController, the operations dock, and a frame tick that redraws the visible tab only.

#include <QMainWindow>

class QTabWidget;
class QTimer;

namespace lutra::console {

class ClusterController;
class ClusterView;
class LockLruView;
class NodeView;
class OperationsDock;
class ProfilesView;
class JobsView;
class AuditView;
class ReadaheadView;
class TunablesView;
struct ClusterFile;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    enum Tab {
        clusterTab,
        nodeTab,
        readaheadTab,
        lockLruTab,
        tunablesTab,
        profilesTab,
        jobsTab,
        auditTab
    };

    explicit MainWindow(ClusterController &cluster, QWidget *parent = nullptr);
    ~MainWindow() override;

    void openCluster(const ClusterFile &cluster, bool startConnections = true);
    void showTab(Tab tab);
    // Redraws what is visible now (the frame tick calls it once a second).
    void frame();
    void setFrameInterval(int ms);
    // The nodes the current tab shows one by one (with Prometheus, only they stream).
    QStringList onScreen() const;

    ClusterView *clusterView() const { return m_clusterView; }
    NodeView *nodeView() const { return m_nodeView; }
    ReadaheadView *readaheadView() const { return m_readaheadView; }
    LockLruView *lockLruView() const { return m_lockLruView; }
    TunablesView *tunablesView() const { return m_tunablesView; }
    ProfilesView *profilesView() const { return m_profilesView; }
    JobsView *jobsView() const { return m_jobsView; }
    AuditView *auditView() const { return m_auditView; }
    OperationsDock *operationsDock() const { return m_operations; }
    QTabWidget *tabs() const { return m_tabs; }

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void openClusterFileDialog();
    void showNode(const QString &address);

    ClusterController &m_cluster;
    QTabWidget *m_tabs;
    ClusterView *m_clusterView;
    NodeView *m_nodeView;
    ReadaheadView *m_readaheadView;
    LockLruView *m_lockLruView;
    TunablesView *m_tunablesView;
    ProfilesView *m_profilesView;
    JobsView *m_jobsView;
    AuditView *m_auditView;
    OperationsDock *m_operations;
    QTimer *m_frameTimer;
};

} // namespace lutra::console
