#include "app/profiles_view.h"

#include "app/cluster_controller.h"
#include "app/fan_out_operation.h"
#include "app/scripting.h"
#include "app/view_setup.h"
#include "models/load_errors_model.h"
#include "models/plan_model.h"
#include "models/profiles_model.h"
#include "net/profile_text.h"
#include "widgets/profile_editor.h"

#include <QCheckBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>

namespace lutra::console {

namespace {

const QString kNewProfile = QStringLiteral("name: my-profile\n"
                                           "description: what this tuning is for\n"
                                           "extends: base\n"
                                           "match:\n"
                                           "  labels: {role: compute}\n"
                                           "params:\n"
                                           "  llite.*.max_read_ahead_mb: 256\n");

// What a node's plan says, for its line in the operations dock.
NodeOutcome planOutcome(const Reply<ProfilePlan> &reply, PlanModel::Mode mode)
{
    NodeOutcome outcome = callOutcome(reply);
    if (!reply.ok) {
        return outcome;
    }
    const auto &plan = reply.value;
    if (!plan.errors.isEmpty()) {
        outcome.state = OpState::failed;
        outcome.detail =
            profileErrorText(plan.errors.first()) +
            (plan.errors.size() > 1 ? QStringLiteral(" (+%1 more)").arg(plan.errors.size() - 1)
                                    : QString());
        return outcome;
    }
    int changed = 0;
    for (const auto &entry : plan.entries) {
        changed += entry.changed;
    }
    for (const auto &result : plan.results) {
        outcome.instances << InstanceLine{
            result.instance, result.errors.isEmpty(),
            result.errors.isEmpty()
                ? QStringLiteral("%1 parameter(s) set").arg(result.entries.size())
                : result.errors.join(QStringLiteral("; "))};
    }
    switch (mode) {
    case PlanModel::Mode::diff:
        outcome.detail =
            QStringLiteral("%1 change(s)%2")
                .arg(changed)
                .arg(plan.matchesNode ? QString() : QStringLiteral(" (match excludes the node)"));
        break;
    case PlanModel::Mode::apply:
        outcome.state = plan.applied ? OpState::ok : OpState::failed;
        outcome.detail = plan.applied ? QStringLiteral("applied %1 change(s) (history #%2)")
                                            .arg(changed)
                                            .arg(plan.historyId)
                                      : QStringLiteral("refused: nothing changed");
        break;
    case PlanModel::Mode::verify:
        outcome.detail = plan.drift == 0
                             ? QStringLiteral("no drift")
                             : QStringLiteral("%1 parameter(s) drifted").arg(plan.drift);
        break;
    }
    return outcome;
}

} // namespace

ProfilesView::ProfilesView(ClusterController &cluster, TargetsProvider targets, QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_targets(std::move(targets)),
      m_profiles(new ProfilesModel(this)), m_loadErrors(new LoadErrorsModel(this)),
      m_plan(new PlanModel(this)), m_profilesView(new QTableView(this)),
      m_loadErrorsView(new QTableView(this)), m_planView(new QTableView(this)),
      m_editor(new ProfileEditor(this)), m_targetsLabel(new QLabel(this)), m_note(new QLabel(this)),
      m_open(new QPushButton(tr("Open"), this)), m_diff(new QPushButton(tr("Dry-run diff"), this)),
      m_apply(new QPushButton(tr("Apply…"), this)), m_verify(new QPushButton(tr("Verify"), this)),
      m_store(new QPushButton(tr("Store on nodes"), this)),
      m_force(new QCheckBox(tr("also where match excludes the node"), this)),
      m_changedOnly(new QCheckBox(tr("changes only"), this))
{
    m_confirm = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_profilesView->setObjectName("profiles.table");
    m_profilesView->setModel(m_profiles);
    setupResultTable(m_profilesView);
    m_profilesView->setSelectionMode(QAbstractItemView::SingleSelection);
    // Descriptions are long: they get what is left, the rest what they need.
    m_profilesView->horizontalHeader()->setSectionResizeMode(ProfilesModel::Description,
                                                             QHeaderView::Stretch);
    m_profilesView->horizontalHeader()->setStretchLastSection(false);
    m_loadErrorsView->setObjectName("profiles.loadErrors");
    m_loadErrorsView->setModel(m_loadErrors);
    setupResultTable(m_loadErrorsView);
    m_loadErrorsView->hide();
    m_planView->setObjectName("profiles.plan");
    m_planView->setModel(m_plan);
    setupResultTable(m_planView);
    m_editor->setObjectName("profiles.editor");
    m_editor->setText(kNewProfile);
    m_targetsLabel->setObjectName("profiles.targets");
    m_note->setObjectName("profiles.note");
    m_note->setWordWrap(true);
    m_open->setObjectName("profiles.open");
    m_diff->setObjectName("profiles.diff");
    m_apply->setObjectName("profiles.apply");
    m_verify->setObjectName("profiles.verify");
    m_store->setObjectName("profiles.store");
    m_force->setObjectName("profiles.force");
    m_changedOnly->setObjectName("profiles.changedOnly");
    m_changedOnly->setChecked(true);
    m_plan->setChangedOnly(true);

    auto *left = new QWidget(this);
    auto *leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(0, 0, 0, 0);
    leftLayout->addWidget(new QLabel(tr("<b>Profiles on the target nodes</b>"), this));
    leftLayout->addWidget(m_profilesView, 3);
    leftLayout->addWidget(m_open, 0, Qt::AlignLeft);
    leftLayout->addWidget(m_loadErrorsView, 1);

    auto *buttons = new QHBoxLayout;
    for (auto *button : {m_diff, m_apply, m_verify, m_store}) {
        buttons->addWidget(button);
    }
    buttons->addWidget(m_force);
    buttons->addStretch(1);
    buttons->addWidget(m_changedOnly);
    auto *right = new QWidget(this);
    auto *rightLayout = new QVBoxLayout(right);
    rightLayout->setContentsMargins(0, 0, 0, 0);
    auto *rightSplit = new QSplitter(Qt::Vertical, right);
    rightSplit->addWidget(m_editor);
    auto *lower = new QWidget(rightSplit);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(m_targetsLabel);
    lowerLayout->addLayout(buttons);
    lowerLayout->addWidget(m_note);
    lowerLayout->addWidget(m_planView, 1);
    rightSplit->addWidget(lower);
    rightLayout->addWidget(rightSplit);
    auto *split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(left);
    split->addWidget(right);
    split->setSizes({440, 960});
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(split);

    connect(m_open, &QPushButton::clicked, this, [this] {
        const auto index = m_profilesView->currentIndex();
        if (index.isValid()) {
            openProfile(m_profiles->index(index.row(), ProfilesModel::Name).data().toString());
        }
    });
    connect(m_profilesView, &QTableView::doubleClicked, this, [this](const QModelIndex &index) {
        openProfile(m_profiles->index(index.row(), ProfilesModel::Name).data().toString());
    });
    connect(m_diff, &QPushButton::clicked, this, &ProfilesView::diff);
    connect(m_apply, &QPushButton::clicked, this, &ProfilesView::apply);
    connect(m_verify, &QPushButton::clicked, this, &ProfilesView::verify);
    connect(m_store, &QPushButton::clicked, this, &ProfilesView::store);
    connect(m_changedOnly, &QCheckBox::toggled, m_plan, &PlanModel::setChangedOnly);
    connect(m_editor, &ProfileEditor::checked, this, &ProfilesView::updateControls);
    connect(m_profiles, &ProfilesModel::loadErrorsChanged, this, [this] {
        m_loadErrors->setErrors(m_profiles->loadErrors());
        m_loadErrorsView->setVisible(!m_profiles->loadErrors().isEmpty());
    });
    connect(&m_cluster, &ClusterController::schemaChanged, this, &ProfilesView::updateSchema);
    updateControls();
}

QStringList ProfilesView::targets() const
{
    auto chosen = m_targets ? m_targets() : QStringList{};
    return chosen.isEmpty() ? m_cluster.addresses() : chosen;
}

QString ProfilesView::documentName() const
{
    return m_editor->lastCheck().name;
}

void ProfilesView::updateSchema()
{
    // The union of the targets' schemas: what ctld on each of them would check against.
    QList<InstanceSpecs> schema;
    for (const auto &address : targets()) {
        schema << m_cluster.schema(address);
    }
    m_editor->setSchema(schema);
}

void ProfilesView::reloadProfiles()
{
    const auto chosen = targets();
    for (const auto &name : m_profiles->nodes()) {
        m_profiles->removeNode(name);
    }
    m_pendingLists = 0;
    for (const auto &address : chosen) {
        auto *connection = m_cluster.connection(address);
        if (connection == nullptr || connection->state() != ConnectionState::ready) {
            continue;
        }
        ++m_pendingLists;
        connection->listProfiles([this, address](Reply<ProfileList> reply) {
            if (reply.ok) {
                m_profiles->setNodeProfiles(m_cluster.nodeName(address), reply.value);
            }
            if (--m_pendingLists == 0) {
                QStringList names;
                for (int row = 0; row < m_profiles->rowCount(); ++row) {
                    names << m_profiles->index(row, ProfilesModel::Name).data().toString();
                }
                m_editor->setKnownProfiles(names);
                emit profilesLoaded();
            }
        });
    }
    updateSchema();
}

void ProfilesView::openProfile(const QString &name)
{
    const auto knowing = m_profiles->nodesKnowing(name);
    for (const auto &address : targets()) {
        auto *connection = m_cluster.connection(address);
        if (!knowing.contains(m_cluster.nodeName(address)) ||
            connection->state() != ConnectionState::ready) {
            continue;
        }
        connection->getProfile(name, [this, name](Reply<ProfileText> reply) {
            if (!reply.ok) {
                m_note->setText(tr("Cannot open %1: %2").arg(name, reply.error));
                emit profileOpened(false);
                return;
            }
            m_editor->setSource(reply.value.source == QLatin1String("stored")
                                    ? QStringLiteral("profile:") + name
                                    : reply.value.source.section('/', -1));
            m_editor->setText(reply.value.yaml);
            m_openedText = reply.value.yaml;
            m_note->setText(reply.value.source == QLatin1String("stored")
                                ? tr("%1: stored on the nodes").arg(name)
                                : tr("%1: shipped in %2 — a changed copy is stored on the nodes "
                                     "under the document's name")
                                      .arg(name, reply.value.source));
            emit profileOpened(true);
        });
        return;
    }
    m_note->setText(tr("No reachable target node knows %1.").arg(name));
    emit profileOpened(false);
}

QString ProfilesView::scriptFor(const QStringList &addresses, const QString &verb) const
{
    // lutractl reads documents from files: the script writes this one first.
    const QString file = QStringLiteral("/tmp/%1.yaml").arg(documentName());
    QString script = QStringLiteral("cat > %1 <<'EOF'\n%2%3EOF\n")
                         .arg(shellQuote(file), m_editor->text(),
                              m_editor->text().endsWith('\n') ? QString() : QStringLiteral("\n"));
    if (verb == QLatin1String("diff")) {
        script += m_cluster.lutractlScript(addresses, {"diff", "-f", file});
    } else if (verb == QLatin1String("store")) {
        script += m_cluster.lutractlScript(addresses, {"put-profile", file});
    } else {
        QStringList apply{"apply", documentName()};
        if (m_force->isChecked()) {
            apply << "--force";
        }
        script += m_cluster.lutractlScript(addresses, {"put-profile", file}) + '\n' +
                  m_cluster.lutractlScript(addresses, apply);
    }
    return script;
}

void ProfilesView::diff()
{
    m_editor->checkNow();
    if (!m_editor->isValid() || m_busy) {
        return;
    }
    const auto chosen = targets();
    const QString text = m_editor->text();
    m_busy = true;
    m_plan->clear();
    m_diffedText.clear();
    updateControls();
    auto step = [this, text](NodeConnection &connection, std::function<void(NodeOutcome)> finish) {
        const QString address = connection.address();
        return connection.profile(
            ProfileMode::diff, {}, text, false,
            [this, address, finish = std::move(finish)](Reply<ProfilePlan> reply) {
                const auto name = m_cluster.nodeName(address);
                if (reply.ok) {
                    m_plan->setPlan(name, reply.value, PlanModel::Mode::diff);
                } else {
                    m_plan->setNodeError(name, reply.error);
                }
                finish(planOutcome(reply, PlanModel::Mode::diff));
            });
    };
    auto *operation =
        new FanOutOperation(m_cluster, tr("diff profile %1").arg(documentName()), chosen, step,
                            scriptFor(chosen, QStringLiteral("diff")), this);
    connect(operation, &FanOutOperation::finished, this, [this, operation, chosen, text] {
        operation->deleteLater();
        m_busy = false;
        bool ok = true;
        for (const auto &outcome : operation->outcomes()) {
            ok = ok && outcome.state == OpState::ok;
        }
        if (ok) {
            m_diffedText = text;
            m_diffedNodes = chosen;
            m_diffedChanges = m_plan->changedCount();
        }
        m_note->setText(ok ? tr("Dry run: %1 change(s) on %2 node(s). Nothing was changed.")
                                 .arg(m_plan->changedCount())
                                 .arg(chosen.size())
                           : tr("The dry run failed on some nodes: see the red rows."));
        updateControls();
        emit diffFinished(ok);
    });
    operation->start();
}

void ProfilesView::apply()
{
    if (m_busy || m_diffedText.isEmpty() || m_diffedText != m_editor->text()) {
        return;
    }
    const auto chosen = m_diffedNodes;
    const QString name = documentName();
    if (!m_confirm(tr("Apply profile %1").arg(name),
                   tr("%1 profile %2 on %3 node(s): %4 parameter change(s) from the dry run. "
                      "Each node applies all of it or none of it; a node that refuses keeps its "
                      "values and says why.")
                       .arg(m_editor->text() == m_openedText ? tr("Apply") : tr("Store and apply"))
                       .arg(name)
                       .arg(chosen.size())
                       .arg(m_diffedChanges))) {
        return;
    }
    const QString text = m_editor->text();
    const bool force = m_force->isChecked();
    const bool asKnown = text == m_openedText; // the nodes have this very document already
    m_busy = true;
    m_plan->clear();
    updateControls();
    const auto applyByName = [this, name, force](NodeConnection &connection, const QString &node,
                                                 std::function<void(NodeOutcome)> finish) {
        return connection.profile(
            ProfileMode::apply, name, {}, force, [this, node, finish](Reply<ProfilePlan> reply) {
                if (reply.ok) {
                    m_plan->setPlan(node, reply.value, PlanModel::Mode::apply);
                } else {
                    m_plan->setNodeError(node, reply.error);
                }
                finish(planOutcome(reply, PlanModel::Mode::apply));
            });
    };
    // An edited document is stored first, so the node records which profile it runs and
    // verify can name it later; one the nodes already have is applied by its name.
    auto step = [this, text, asKnown, applyByName](NodeConnection &connection,
                                                   std::function<void(NodeOutcome)> finish) {
        const QString address = connection.address();
        if (asKnown) {
            return applyByName(connection, m_cluster.nodeName(address), std::move(finish));
        }
        QPointer<NodeConnection> guard(&connection);
        return connection.putProfile(text, [this, guard, address, applyByName,
                                            finish](Reply<QList<ProfileError>> stored) {
            const auto node = m_cluster.nodeName(address);
            if (!stored.ok || !stored.value.isEmpty() || guard == nullptr) {
                const QString why = !stored.ok         ? stored.error
                                    : guard == nullptr ? QStringLiteral("connection closed")
                                                       : QStringLiteral("not stored: ") +
                                                             profileErrorText(stored.value.first());
                m_plan->setNodeError(node, why);
                finish({stored.ok ? OpState::failed : failedCallState(stored.error),
                        why,
                        {},
                        stored.json});
                return;
            }
            applyByName(*guard, node, finish);
        });
    };
    auto *operation = new FanOutOperation(
        m_cluster, tr("apply profile %1").arg(name), chosen, step,
        asKnown ? m_cluster.lutractlScript(chosen, force ? QStringList{"apply", name, "--force"}
                                                         : QStringList{"apply", name})
                : scriptFor(chosen, QStringLiteral("apply")),
        this);
    connect(operation, &FanOutOperation::finished, this, [this, operation, chosen] {
        operation->deleteLater();
        m_busy = false;
        int applied = 0;
        for (const auto &outcome : operation->outcomes()) {
            applied += outcome.state == OpState::ok;
        }
        m_note->setText(tr("Applied on %1 of %2 node(s).").arg(applied).arg(chosen.size()));
        m_diffedText.clear();
        updateControls();
        reloadProfiles();
        emit applyFinished(applied == chosen.size());
    });
    operation->start();
}

void ProfilesView::verify()
{
    const QString name = documentName();
    if (m_busy || name.isEmpty()) {
        return;
    }
    const auto chosen = targets();
    m_busy = true;
    m_plan->clear();
    updateControls();
    auto step = [this, name](NodeConnection &connection, std::function<void(NodeOutcome)> finish) {
        const QString address = connection.address();
        return connection.profile(
            ProfileMode::verify, name, {}, false,
            [this, address, name, finish = std::move(finish)](Reply<ProfilePlan> reply) {
                const auto node = m_cluster.nodeName(address);
                if (reply.ok) {
                    m_plan->setPlan(node, reply.value, PlanModel::Mode::verify);
                    m_cluster.clusterModel().setDrift(address, reply.value.drift, name);
                } else {
                    m_plan->setNodeError(node, reply.error);
                    m_cluster.clusterModel().setDrift(address, -1, {});
                }
                finish(planOutcome(reply, PlanModel::Mode::verify));
            });
    };
    auto *operation =
        new FanOutOperation(m_cluster, tr("verify profile %1").arg(name), chosen, step,
                            m_cluster.lutractlScript(chosen, {"verify", name}), this);
    connect(operation, &FanOutOperation::finished, this, [this, operation] {
        operation->deleteLater();
        m_busy = false;
        int drifted = 0;
        for (const auto &outcome : operation->outcomes()) {
            drifted += outcome.detail.contains(QLatin1String("drifted"));
        }
        m_note->setText(drifted == 0 ? tr("No drift on the nodes that answered.")
                                     : tr("Drift on %1 node(s): amber rows show live vs the "
                                          "profile.")
                                           .arg(drifted));
        updateControls();
        emit verifyFinished(drifted);
    });
    operation->start();
}

void ProfilesView::store()
{
    m_editor->checkNow();
    if (m_busy || !m_editor->isValid()) {
        return;
    }
    const auto chosen = targets();
    const QString text = m_editor->text();
    m_busy = true;
    updateControls();
    auto step = [text](NodeConnection &connection, std::function<void(NodeOutcome)> finish) {
        return connection.putProfile(text, [finish](Reply<QList<ProfileError>> reply) {
            NodeOutcome outcome = callOutcome(reply);
            if (reply.ok && !reply.value.isEmpty()) {
                outcome.state = OpState::failed;
                outcome.detail = profileErrorText(reply.value.first());
            } else if (reply.ok) {
                outcome.detail = QStringLiteral("stored");
            }
            finish(std::move(outcome));
        });
    };
    auto *operation =
        new FanOutOperation(m_cluster, tr("store profile %1").arg(documentName()), chosen, step,
                            scriptFor(chosen, QStringLiteral("store")), this);
    connect(operation, &FanOutOperation::finished, this, [this, operation, chosen] {
        operation->deleteLater();
        m_busy = false;
        int stored = 0;
        for (const auto &outcome : operation->outcomes()) {
            stored += outcome.state == OpState::ok;
        }
        m_note->setText(tr("Stored on %1 of %2 node(s).").arg(stored).arg(chosen.size()));
        updateControls();
        reloadProfiles();
        emit storeFinished(stored == chosen.size());
    });
    operation->start();
}

void ProfilesView::refresh()
{
    updateControls();
}

void ProfilesView::updateControls()
{
    const auto chosen = targets();
    const Role role = m_cluster.roleOn(chosen);
    m_targetsLabel->setText(
        tr("Targets: %1").arg(shortNodeList(m_cluster.nodeNames(chosen), 4)) +
        (chosen.size() > 4 ? tr(" (select rows in Cluster to narrow)") : QString()));
    const bool valid = m_editor->isValid();
    const QString invalid = m_editor->statusText();
    const bool admin = role == Role::admin;
    const bool diffed =
        !m_diffedText.isEmpty() && m_diffedText == m_editor->text() && m_diffedNodes == chosen;
    m_diff->setEnabled(!m_busy && valid && role != Role::unknown);
    m_diff->setToolTip(valid ? tr("Show what the document would change on each target node; "
                                  "nothing is changed")
                             : invalid);
    m_apply->setEnabled(!m_busy && valid && admin && diffed);
    m_apply->setToolTip(!valid   ? invalid
                        : !admin ? tr("Your role on the targets is %1: storing and applying a "
                                      "document needs admin")
                                       .arg(roleName(role))
                        : !diffed ? tr("Run a dry-run diff of this document on these nodes first")
                                  : tr("Store the document on the nodes and apply it"));
    m_store->setEnabled(!m_busy && valid && admin);
    m_verify->setEnabled(!m_busy && !documentName().isEmpty() && role != Role::unknown);
}

} // namespace lutra::console
