#pragma once
// Jobs: the jobs doing I/O (GetJobStats merged across every ready node) and per-job cleanup. A
// job is flushed on the nodes it ran on (or on the selected ones), every job only after the admin
// typed "flush all". Each flush is a fan-out in the operations dock, its per-node, per-instance
// report (locks cancelled, pages dropped, bytes written back, history point) is shown here, and
// every node that flushed gets a marker on its charts.

#include "app/fan_out_operation.h"

#include <QHash>
#include <QSet>
#include <QWidget>

#include <functional>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTreeView;

namespace lutra::console {

class ClusterController;
class FlushReportModel;
class JobsModel;

// The step of a flush on one node: FlushJob(job) or, with `all`, every job. `started` runs as the
// node's call starts, `sink` with the node's full reply (for the report).
FanOutOperation::Step
flushJobStep(QString job, bool all, std::function<void(const QString &address)> started,
             std::function<void(const QString &address, const Reply<FlushOutcome> &reply)> sink);

class JobsView : public QWidget {
    Q_OBJECT
public:
    // Returns what the admin typed ("" when the dialog was cancelled). Replaced by tests.
    using TypedConfirm = std::function<QString(const QString &title, const QString &text)>;
    // The word a flush of every job needs typed.
    static const QString kFlushAllWord;
    // GetJobStats is asked at most this often.
    static constexpr int kRefreshMs = 2000;

    // `selectedNodes`: the addresses chosen in the Cluster view (empty: none chosen).
    JobsView(ClusterController &cluster, std::function<QStringList()> selectedNodes,
             QWidget *parent = nullptr);

    void setTypedConfirm(TypedConfirm confirm) { m_typedConfirm = std::move(confirm); }
    JobsModel *jobs() const { return m_jobs; }
    FlushReportModel *report() const { return m_report; }

    // Called once a second while visible: job stats again when kRefreshMs have passed, controls.
    void refresh();
    // Asks every ready node for its job stats now.
    void reload();
    QString selectedJob() const;
    bool selectJob(const QString &job);

    // The selected job on the nodes it ran on, or on the selected nodes.
    void flushJobEverywhere();
    void flushJobOnSelectedNodes();
    // Every job on the selected nodes (none selected: every node), after the typed confirmation.
    void flushAllJobs();

signals:
    // Every node asked by reload() answered.
    void jobsLoaded();
    // A flush ran to its end; `ok` when every node flushed every instance.
    void flushFinished(bool ok);

private:
    void runFlush(const QString &job, bool all, const QStringList &addresses);
    void onFlushReply(const QString &address, const QString &label,
                      const Reply<FlushOutcome> &reply);
    // `what`: "Job 1001", "All jobs".
    void onFlushFinished(FanOutOperation *operation, const QStringList &addresses,
                         const QString &what);
    void updateControls();
    QStringList addressesOfNames(const QStringList &names) const;
    QStringList allOrSelected() const;

    ClusterController &m_cluster;
    std::function<QStringList()> m_selectedNodes;
    TypedConfirm m_typedConfirm;
    JobsModel *m_jobs;
    FlushReportModel *m_report;
    QLineEdit *m_filter;
    QTableView *m_table;
    QLabel *m_statsNote;
    QPushButton *m_flush;
    QPushButton *m_flushSelected;
    QPushButton *m_flushAll;
    QLabel *m_roleNote;
    QLabel *m_summary;
    QTreeView *m_reportView;
    qint64 m_loadedAtMs = 0;
    int m_loadsPending = 0;
    int m_rounds = 0; // of GetJobStats answered by every node asked
    QStringList m_loadErrors;
    bool m_busy = false;
    QHash<QString, quint64> m_historyIds; // node name → the point recording its flush
    QSet<QString> m_jobNodes;             // node names the jobs table has rows of
};

} // namespace lutra::console
