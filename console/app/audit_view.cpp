#include "app/audit_view.h"

#include "app/cluster_controller.h"
#include "app/fan_out_operation.h"
#include "app/jobs_view.h"
#include "app/view_setup.h"
#include "models/history_model.h"
#include "models/plan_model.h"

#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDateTime>
#include <QDateTimeEdit>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace lutra::console {

namespace {

// How many changes the confirmation lists before "… and N more".
constexpr int kListedChanges = 12;

bool mayRollBack(Role role)
{
    return static_cast<int>(role) >= static_cast<int>(Role::operator_);
}

// A rollback's plan in the shape the plan table shows: entries live → desired, the node-level
// errors (values of instances that are gone) as error rows.
ProfilePlan planOf(const QString &node, quint64 id, const RollbackOutcome &outcome)
{
    ProfilePlan plan;
    plan.profile = QStringLiteral("rollback to #%1").arg(id);
    plan.matchesNode = true;
    plan.entries = outcome.entries;
    plan.applied = outcome.applied;
    plan.historyId = outcome.historyId;
    plan.results = outcome.results;
    for (const auto &error : outcome.errors) {
        plan.errors << ProfileError{node, 0, 0, error};
    }
    return plan;
}

int changedCount(const RollbackOutcome &outcome)
{
    return int(std::count_if(outcome.entries.cbegin(), outcome.entries.cend(),
                             [](const PlanEntry &entry) { return entry.changed; }));
}

NodeOutcome rollbackNodeOutcome(const Reply<RollbackOutcome> &reply)
{
    NodeOutcome outcome = callOutcome(reply);
    if (!reply.ok) {
        return outcome;
    }
    const RollbackOutcome &rollback = reply.value;
    for (const auto &instance : rollback.results) {
        InstanceLine line;
        line.instance = instance.instance;
        line.ok = instance.applied && instance.errors.isEmpty();
        line.detail = instance.errors.isEmpty()
                          ? QObject::tr("%1 parameter(s) restored").arg(instance.entries.size())
                          : instance.errors.join(QStringLiteral("; "));
        outcome.instances << line;
    }
    outcome.state = rollback.applied ? OpState::ok : OpState::failed;
    if (rollback.applied) {
        outcome.detail = QObject::tr("rolled back (history #%1)").arg(rollback.historyId);
        if (!rollback.errors.isEmpty()) {
            outcome.detail += QStringLiteral("; ") + rollback.errors.join(QStringLiteral("; "));
        }
    } else {
        outcome.detail = rollback.errors.isEmpty() ? QObject::tr("refused: nothing changed")
                                                   : rollback.errors.join(QStringLiteral("; "));
    }
    return outcome;
}

FanOutOperation::Step
rollbackStep(quint64 id,
             std::function<void(const QString &address, const Reply<RollbackOutcome> &)> sink)
{
    return [id, sink = std::move(sink)](NodeConnection &connection,
                                        std::function<void(NodeOutcome)> finish) {
        const QString address = connection.address();
        return connection.rollback(
            id, false, [address, sink, finish = std::move(finish)](Reply<RollbackOutcome> reply) {
                if (sink) {
                    sink(address, reply);
                }
                finish(rollbackNodeOutcome(reply));
            });
    };
}

QDateTimeEdit *timeEdit(const QString &objectName, const QDateTime &initial, QWidget *parent)
{
    auto *edit = new QDateTimeEdit(initial, parent);
    edit->setObjectName(objectName);
    edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    edit->setCalendarPopup(true);
    edit->setEnabled(false);
    return edit;
}

QCheckBox *anyBox(const QString &objectName, QDateTimeEdit *edit, QWidget *parent)
{
    auto *box = new QCheckBox(QObject::tr("any"), parent);
    box->setObjectName(objectName);
    box->setChecked(true);
    QObject::connect(box, &QCheckBox::toggled, edit, [edit](bool any) { edit->setEnabled(!any); });
    return box;
}

} // namespace

AuditView::AuditView(ClusterController &cluster, std::function<QStringList()> selectedNodes,
                     QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_selectedNodes(std::move(selectedNodes)),
      m_history(new HistoryModel(this)), m_plan(new PlanModel(this)),
      m_principal(new QLineEdit(this)), m_action(new QComboBox(this)), m_param(new QLineEdit(this)),
      m_instance(new QLineEdit(this)),
      m_since(timeEdit("audit.since", QDateTime::currentDateTime().addDays(-1), this)),
      m_until(timeEdit("audit.until", QDateTime::currentDateTime(), this)),
      m_apply(new QPushButton(tr("Apply filter"), this)),
      m_copy(new QPushButton(tr("Copy as lutractl"), this)), m_nodesNote(new QLabel(this)),
      m_errors(new QLabel(this)), m_tree(new QTreeView(this)), m_detail(new QLabel(this)),
      m_rollback(new QPushButton(tr("Roll back to here…"), this)), m_status(new QLabel(this)),
      m_planTitle(new QLabel(this)), m_planView(new QTableView(this))
{
    m_sinceAny = anyBox("audit.sinceAny", m_since, this);
    m_untilAny = anyBox("audit.untilAny", m_until, this);
    m_confirm = [this](const QString &title, const QString &text) {
        return QMessageBox::question(this, title, text, QMessageBox::Yes | QMessageBox::Cancel,
                                     QMessageBox::Cancel) == QMessageBox::Yes;
    };
    m_principal->setObjectName("audit.principal");
    m_principal->setPlaceholderText(tr("any (exact name)"));
    m_principal->setClearButtonEnabled(true);
    m_action->setObjectName("audit.action");
    m_action->addItems({tr("any"), "set", "apply", "rollback", "reconcile", "flush"});
    m_param->setObjectName("audit.param");
    m_param->setPlaceholderText(tr("any (glob: osc.*.max_*)"));
    m_param->setClearButtonEnabled(true);
    m_instance->setObjectName("audit.instance");
    m_instance->setPlaceholderText(tr("any (glob: bench-*)"));
    m_instance->setClearButtonEnabled(true);
    m_apply->setObjectName("audit.apply");
    m_copy->setObjectName("audit.copy");
    m_nodesNote->setObjectName("audit.nodes");
    m_errors->setObjectName("audit.errors");
    m_errors->setStyleSheet("color: #c00000");
    m_errors->setWordWrap(true);
    m_errors->hide();
    m_tree->setObjectName("audit.tree");
    m_tree->setModel(m_history);
    setupResultTree(m_tree);
    m_tree->setSelectionMode(QAbstractItemView::SingleSelection);
    m_detail->setObjectName("audit.detail");
    m_detail->setWordWrap(true);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_rollback->setObjectName("audit.rollback");
    m_status->setObjectName("audit.status");
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_planTitle->setObjectName("audit.planTitle");
    m_planTitle->setText(tr("<b>Rollback plan</b>: \"Roll back to here…\" on a point lists here "
                            "what it would restore on its node (live → desired) before anything "
                            "changes."));
    m_planView->setObjectName("audit.rollbackPlan");
    m_planView->setModel(m_plan);
    setupResultTable(m_planView);

    auto *filters = new QGridLayout;
    filters->addWidget(new QLabel(tr("Principal:"), this), 0, 0);
    filters->addWidget(m_principal, 0, 1);
    filters->addWidget(new QLabel(tr("Action:"), this), 0, 2);
    filters->addWidget(m_action, 0, 3);
    filters->addWidget(new QLabel(tr("Parameter:"), this), 0, 4);
    filters->addWidget(m_param, 0, 5);
    filters->addWidget(new QLabel(tr("Instance:"), this), 0, 6);
    filters->addWidget(m_instance, 0, 7);
    auto *times = new QHBoxLayout;
    times->addWidget(new QLabel(tr("Since:"), this));
    times->addWidget(m_sinceAny);
    times->addWidget(m_since);
    times->addSpacing(12);
    times->addWidget(new QLabel(tr("Until:"), this));
    times->addWidget(m_untilAny);
    times->addWidget(m_until);
    times->addSpacing(12);
    times->addWidget(m_apply);
    times->addWidget(m_copy);
    times->addStretch(1);
    filters->addLayout(times, 1, 0, 1, 8);
    filters->setColumnStretch(1, 1);
    filters->setColumnStretch(5, 1);
    filters->setColumnStretch(7, 1);

    auto *upper = new QWidget(this);
    auto *upperLayout = new QVBoxLayout(upper);
    upperLayout->setContentsMargins(0, 0, 0, 0);
    upperLayout->addWidget(m_nodesNote);
    upperLayout->addWidget(m_errors);
    upperLayout->addWidget(m_tree, 1);

    auto *lower = new QWidget(this);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    lowerLayout->addWidget(m_detail);
    auto *rollbackRow = new QHBoxLayout;
    rollbackRow->addWidget(m_rollback);
    rollbackRow->addWidget(m_status, 1);
    lowerLayout->addLayout(rollbackRow);
    lowerLayout->addWidget(m_planTitle);
    lowerLayout->addWidget(m_planView, 1);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(upper);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(filters);
    layout->addWidget(split, 1);

    m_detail->setText(tr("Select a point to see its changes; \"Roll back to here…\" restores its "
                         "node's values to those right after it."));

    connect(m_apply, &QPushButton::clicked, this, &AuditView::applyFilter);
    for (auto *edit : {m_principal, m_param, m_instance}) {
        connect(edit, &QLineEdit::returnPressed, this, &AuditView::applyFilter);
        connect(edit, &QLineEdit::textChanged, this, &AuditView::updateCopyTip);
    }
    connect(m_action, &QComboBox::currentIndexChanged, this, &AuditView::updateCopyTip);
    for (auto *box : {m_sinceAny, m_untilAny}) {
        connect(box, &QCheckBox::toggled, this, &AuditView::updateCopyTip);
    }
    connect(m_copy, &QPushButton::clicked, this, [this] { copyAsLutractl(); });
    connect(m_rollback, &QPushButton::clicked, this, &AuditView::rollbackToSelected);
    connect(m_tree->selectionModel(), &QItemSelectionModel::currentChanged, this,
            &AuditView::onCurrentChanged);
    connect(m_history, &HistoryModel::errorsChanged, this, [this] {
        const auto errors = m_history->errors();
        m_errors->setText(tr("Not listed: %1").arg(errors.join(QStringLiteral("\n"))));
        m_errors->setVisible(!errors.isEmpty());
    });
    connect(m_history, &HistoryModel::pendingFetchesChanged, this, &AuditView::updateNodesNote);
    connect(m_history, &HistoryModel::rowsInserted, this, &AuditView::updateNodesNote);
    connect(m_history, &HistoryModel::modelReset, this, &AuditView::updateNodesNote);
    updateCopyTip();
    updateControls();
}

QStringList AuditView::targets() const
{
    const auto selected = m_selectedNodes ? m_selectedNodes() : QStringList{};
    return selected.isEmpty() ? m_cluster.addresses() : selected;
}

QStringList AuditView::targetNames() const
{
    return m_cluster.nodeNames(targets());
}

void AuditView::refresh()
{
    // A name still the address means the node has not answered yet: list once it has.
    const auto names = targetNames();
    if (isVisible() && !m_busy && (!m_listed || names != m_listedNames)) {
        applyFilter();
    }
    updateControls();
}

HistoryQuery AuditView::query() const
{
    HistoryQuery query;
    query.limit = kPageSize;
    query.principal = m_principal->text().trimmed();
    query.action = m_action->currentIndex() == 0 ? QString() : m_action->currentText();
    query.param = m_param->text().trimmed();
    query.instance = m_instance->text().trimmed();
    if (!m_sinceAny->isChecked()) {
        query.sinceNs = m_since->dateTime().toMSecsSinceEpoch() * 1'000'000;
    }
    if (!m_untilAny->isChecked()) {
        query.untilNs = m_until->dateTime().toMSecsSinceEpoch() * 1'000'000;
    }
    return query;
}

void AuditView::applyFilter()
{
    const auto addresses = targets();
    m_addressOf.clear();
    m_listedNames.clear();
    for (const auto &address : addresses) {
        const QString name = m_cluster.nodeName(address);
        m_addressOf.insert(name, address);
        m_listedNames << name;
    }
    m_listed = true;
    ClusterController *cluster = &m_cluster;
    auto fetch = [cluster, addressOf = m_addressOf](const QString &node, const HistoryQuery &query,
                                                    HistoryModel::Done done) {
        auto *connection = cluster->connection(addressOf.value(node));
        if (connection == nullptr) {
            done(false, QStringLiteral("not in the cluster"), {});
            return;
        }
        connection->listHistory(query, [done = std::move(done)](Reply<HistoryPage> reply) {
            done(reply.ok, reply.error, reply.value);
        });
    };
    m_history->setSource(m_listedNames, query(), fetch);
    // The tree asks for more as it is scrolled; the first page is asked for here, shown or not.
    if (m_history->canFetchMore({})) {
        m_history->fetchMore({});
    }
    onCurrentChanged();
}

QString AuditView::lutractlCommand() const
{
    const HistoryQuery filter = query();
    QStringList arguments{QStringLiteral("history"), QStringLiteral("--limit"),
                          QString::number(kPageSize)};
    const auto option = [&arguments](const QString &name, const QString &value) {
        if (!value.isEmpty()) {
            arguments << name << value;
        }
    };
    option(QStringLiteral("--principal"), filter.principal);
    option(QStringLiteral("--action"), filter.action);
    option(QStringLiteral("--param"), filter.param);
    option(QStringLiteral("--instance"), filter.instance);
    return m_cluster.lutractlScript(targets(), arguments);
}

QString AuditView::copyAsLutractl()
{
    const QString command = lutractlCommand();
    QGuiApplication::clipboard()->setText(command);
    return command;
}

void AuditView::updateCopyTip()
{
    const HistoryQuery filter = query();
    QString tip =
        tr("Copies the lutractl command line listing this history:\n%1").arg(lutractlCommand());
    if (filter.sinceNs != 0 || filter.untilNs != 0) {
        tip += tr("\n\nlutractl history has no --since/--until: the command lists every time, "
                  "newest first, without the time range set here.");
    }
    m_copy->setToolTip(tip);
}

void AuditView::updateNodesNote()
{
    QString text = tr("History of %1, newest first, %2 point(s) per node at a time: %3 listed")
                       .arg(m_listedNames.join(QStringLiteral(", ")))
                       .arg(kPageSize)
                       .arg(m_history->rowCount());
    if (m_history->pendingFetches() > 0) {
        text += tr(", loading…");
    } else if (m_history->canFetchMore({})) {
        text += tr(", more as you scroll");
    }
    m_nodesNote->setText(text + '.');
}

bool AuditView::selectPoint(const QString &node, quint64 id)
{
    for (int row = 0; row < m_history->rowCount(); ++row) {
        const auto index = m_history->index(row, 0);
        if (index.data(HistoryModel::NodeRole).toString() == node &&
            index.data(HistoryModel::PointIdRole).toULongLong() == id) {
            m_tree->setCurrentIndex(index);
            m_tree->scrollTo(index);
            return true;
        }
    }
    return false;
}

void AuditView::onCurrentChanged()
{
    const auto current = m_tree->currentIndex();
    const HistoryPoint *point = m_history->point(current);
    if (point == nullptr) {
        m_detail->setText(tr("Select a point to see its changes; \"Roll back to here…\" restores "
                             "its node's values to those right after it."));
        updateControls();
        return;
    }
    const QString node = m_history->nodeOf(current);
    // Its changes are its children: shown as soon as it is chosen.
    const auto pointIndex = current.parent().isValid() ? current.parent() : current;
    m_tree->expand(pointIndex.siblingAtColumn(0));
    const QString when = QDateTime::fromMSecsSinceEpoch(point->timeNs / 1'000'000)
                             .toString(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
    QString html = tr("<b>#%1 on %2</b>: %3 by %4 at %5 — %6 (%7)")
                       .arg(point->id)
                       .arg(node.toHtmlEscaped(), point->action.toHtmlEscaped(),
                            point->principal.toHtmlEscaped(), when,
                            (point->description.isEmpty() ? point->profile : point->description)
                                .toHtmlEscaped(),
                            point->outcome.toHtmlEscaped());
    if (!point->changes.isEmpty()) {
        html += tr("<br>%1 change(s): instance · parameter · old → requested · read back")
                    .arg(point->changes.size());
        int shown = 0;
        for (const auto &change : point->changes) {
            if (++shown > 4) {
                html +=
                    tr("<br>… and %1 more (expand the point above)").arg(point->changes.size() - 4);
                break;
            }
            html += QStringLiteral("<br>&nbsp;&nbsp;%1 · %2 · %3 → %4 · %5%6")
                        .arg(change.instance.toHtmlEscaped(), change.name.toHtmlEscaped(),
                             change.oldValue.toHtmlEscaped(), change.requested.toHtmlEscaped(),
                             change.readBack.toHtmlEscaped(),
                             change.ok ? QString()
                                       : QStringLiteral(" <span style='color:#c00000'>%1</span>")
                                             .arg(change.error.toHtmlEscaped()));
        }
    }
    m_detail->setText(html);
    updateControls();
}

void AuditView::updateControls()
{
    const auto current = m_tree->currentIndex();
    const HistoryPoint *point = m_history->point(current);
    QString why;
    if (m_busy) {
        why = tr("A rollback is running.");
    } else if (point == nullptr) {
        why = tr("Select a history point first.");
    } else {
        const QString address = m_addressOf.value(m_history->nodeOf(current));
        const Role role = m_cluster.roleOn({address});
        if (role == Role::unknown) {
            why = tr("%1 is not connected.").arg(m_history->nodeOf(current));
        } else if (!mayRollBack(role)) {
            why = tr("Your role on %1 is %2: rolling back needs operator.")
                      .arg(m_history->nodeOf(current), roleName(role));
        }
    }
    m_rollback->setEnabled(why.isEmpty());
    m_rollback->setToolTip(
        why.isEmpty()
            ? tr("Shows what would be restored on #%1's node first, then asks.").arg(point->id)
            : why);
}

void AuditView::setStatus(const QString &text, bool error)
{
    m_status->setStyleSheet(error ? QStringLiteral("color: #c00000") : QString());
    m_status->setText(text);
}

void AuditView::rollbackToSelected()
{
    const auto current = m_tree->currentIndex();
    const HistoryPoint *point = m_history->point(current);
    if (point == nullptr || m_busy) {
        return;
    }
    const QString node = m_history->nodeOf(current);
    const QString address = m_addressOf.value(node);
    auto *connection = m_cluster.connection(address);
    if (connection == nullptr) {
        return;
    }
    const quint64 id = point->id;
    m_busy = true;
    m_newPoint = 0;
    m_plan->clear();
    m_planTitle->setText(tr("<b>Rollback to #%1 on %2</b>: what a dry run says it would restore "
                            "(live → desired); nothing has changed yet.")
                             .arg(id)
                             .arg(node.toHtmlEscaped()));
    setStatus(tr("Checking what a rollback to #%1 would restore on %2…").arg(id).arg(node), false);
    updateControls();
    QPointer<AuditView> self(this);
    connection->rollback(id, true, [self, node, address, id](Reply<RollbackOutcome> reply) {
        if (self) {
            self->onRollbackDryRun(node, address, id, reply);
        }
    });
}

void AuditView::onRollbackDryRun(const QString &node, const QString &address, quint64 id,
                                 const Reply<RollbackOutcome> &reply)
{
    const auto stop = [this](const QString &text, bool error) {
        m_busy = false;
        setStatus(text, error);
        updateControls();
        emit rollbackFinished(false);
    };
    if (!reply.ok) {
        // ctld refuses a rollback with nothing after the point (FAILED_PRECONDITION).
        if (reply.error.contains(QLatin1String("nothing to roll back"))) {
            stop(tr("Nothing to roll back: nothing changed on %1 after #%2.").arg(node).arg(id),
                 false);
            return;
        }
        m_plan->setNodeError(node, reply.error);
        stop(tr("The dry run of a rollback to #%1 failed on %2: %3").arg(id).arg(node, reply.error),
             true);
        return;
    }
    m_plan->setPlan(node, planOf(node, id, reply.value), PlanModel::Mode::diff);
    const int changes = changedCount(reply.value);
    if (changes == 0) {
        stop(tr("A rollback to #%1 would change nothing on %2: every parameter already has the "
                "value it had right after #%1.")
                 .arg(id)
                 .arg(node),
             false);
        return;
    }
    QString text = tr("Restore %1 parameter(s) on %2 to their values right after #%3:\n")
                       .arg(changes)
                       .arg(node)
                       .arg(id);
    int listed = 0;
    for (const auto &entry : reply.value.entries) {
        if (!entry.changed) {
            continue;
        }
        if (++listed > kListedChanges) {
            text += tr("  … and %1 more\n").arg(changes - kListedChanges);
            break;
        }
        text += QStringLiteral("  %1 %2: %3 → %4\n")
                    .arg(entry.instance, entry.name, entry.live, entry.desired);
    }
    if (!reply.value.errors.isEmpty()) {
        text += tr("\nNot restored:\n  %1\n").arg(reply.value.errors.join(QStringLiteral("\n  ")));
    }
    text += tr("\nThe rollback is recorded as a new history point (itself undoable).");
    if (!m_confirm(tr("Roll back %1 to #%2").arg(node).arg(id), text)) {
        stop(tr("Rollback to #%1 on %2 cancelled: nothing changed.").arg(id).arg(node), false);
        return;
    }
    runRollback(node, address, id, changes);
}

void AuditView::runRollback(const QString &node, const QString &address, quint64 id, int changes)
{
    setStatus(tr("Rolling back %1 to #%2…").arg(node).arg(id), false);
    QPointer<AuditView> self(this);
    auto sink = [self, node, id](const QString &, const Reply<RollbackOutcome> &reply) {
        if (!self) {
            return;
        }
        if (reply.ok) {
            self->m_newPoint = reply.value.historyId;
            self->m_plan->setPlan(node, planOf(node, id, reply.value), PlanModel::Mode::apply);
            self->m_planTitle->setText(tr("<b>Rollback to #%1 on %2</b>: what it restored.")
                                           .arg(id)
                                           .arg(node.toHtmlEscaped()));
        } else {
            self->m_plan->setNodeError(node, reply.error);
        }
    };
    auto *operation = new FanOutOperation(
        m_cluster, tr("rollback to #%1 on %2").arg(id).arg(node), {address}, rollbackStep(id, sink),
        m_cluster.lutractlScript({address}, {QStringLiteral("rollback"), QString::number(id)}),
        this);
    connect(
        operation, &FanOutOperation::finished, this, [this, operation, node, address, id, changes] {
            operation->deleteLater();
            m_busy = false;
            const auto outcome = operation->outcomes().value(address);
            const bool ok = outcome.state == OpState::ok;
            if (ok) {
                setStatus(tr("Rolled back %1 to #%2: %3 parameter(s) restored, recorded as #%4 "
                             "(now at the top of the list).")
                              .arg(node)
                              .arg(id)
                              .arg(changes)
                              .arg(m_newPoint),
                          false);
            } else {
                setStatus(tr("Rollback to #%1 on %2 failed: %3").arg(id).arg(node, outcome.detail),
                          true);
            }
            // The rollback is a new point: list again so it shows at the top.
            applyFilter();
            emit rollbackFinished(ok);
        });
    operation->start();
}

} // namespace lutra::console
