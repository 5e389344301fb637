#pragma once
// Profiles: the profiles the selected nodes know (stored and shipped, which nodes each matches,
// load errors); a YAML editor that checks the document as you type against the nodes' schema
// with ctld's own messages; a dry-run diff across nodes (node × instance × parameter, live →
// desired and the line that wants it); apply (stored on the nodes, then applied all-or-nothing
// per node, each node's outcome shown); verify (drift, also in the Cluster view's Drift column).

#include <QWidget>

#include <functional>

class QCheckBox;
class QLabel;
class QPushButton;
class QTableView;

namespace lutra::console {

class ClusterController;
class LoadErrorsModel;
class PlanModel;
class ProfileEditor;
class ProfilesModel;

class ProfilesView : public QWidget {
    Q_OBJECT
public:
    using TargetsProvider = std::function<QStringList()>; // empty: every node
    using Confirm = std::function<bool(const QString &title, const QString &text)>;

    ProfilesView(ClusterController &cluster, TargetsProvider targets, QWidget *parent = nullptr);

    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }
    QStringList targets() const;
    ProfilesModel *profiles() const { return m_profiles; }
    PlanModel *plan() const { return m_plan; }
    ProfileEditor *editor() const { return m_editor; }

    void reloadProfiles();
    // Loads a profile's text from a node that knows it into the editor.
    void openProfile(const QString &name);
    void diff();
    void apply();
    void verify();
    void store();
    void refresh();

signals:
    void profilesLoaded();
    void profileOpened(bool ok);
    void diffFinished(bool ok);
    void applyFinished(bool ok);
    void verifyFinished(int nodesWithDrift);
    void storeFinished(bool ok);

private:
    void updateControls();
    void updateSchema();
    QString documentName() const;
    QString scriptFor(const QStringList &addresses, const QString &verb) const;

    ClusterController &m_cluster;
    TargetsProvider m_targets;
    Confirm m_confirm;
    ProfilesModel *m_profiles;
    LoadErrorsModel *m_loadErrors;
    PlanModel *m_plan;
    QTableView *m_profilesView;
    QTableView *m_loadErrorsView;
    QTableView *m_planView;
    ProfileEditor *m_editor;
    QLabel *m_targetsLabel;
    QLabel *m_note;
    QPushButton *m_open;
    QPushButton *m_diff;
    QPushButton *m_apply;
    QPushButton *m_verify;
    QPushButton *m_store;
    QCheckBox *m_force;
    QCheckBox *m_changedOnly;
    QString m_openedText;      // a profile as the nodes have it: applied by name, not stored again
    QString m_diffedText;      // the document the last successful diff checked ...
    QStringList m_diffedNodes; // ... on these nodes
    int m_diffedChanges = 0;
    bool m_busy = false;
    int m_pendingLists = 0;
};

} // namespace lutra::console
