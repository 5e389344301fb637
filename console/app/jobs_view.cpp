#include "app/jobs_view.h"

#include "app/cluster_controller.h"
#include "app/view_setup.h"
#include "models/flush_report_model.h"
#include "models/format.h"
#include "models/jobs_model.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSet>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>

namespace lutra::console {

namespace {

qint64 nowMs()
{
    return QDateTime::currentMSecsSinceEpoch();
}

bool mayFlush(Role role)
{
    return static_cast<int>(role) >= static_cast<int>(Role::operator_);
}

NodeOutcome flushNodeOutcome(const Reply<FlushOutcome> &reply)
{
    NodeOutcome outcome = callOutcome(reply);
    if (!reply.ok) {
        return outcome;
    }
    const FlushOutcome &flush = reply.value;
    for (const auto &instance : flush.instances) {
        InstanceLine line;
        line.instance = instance.instance;
        line.ok = instance.error.isEmpty();
        line.detail = line.ok ? QObject::tr("%1 locks, %2 pages, %3 written back")
                                    .arg(formatCount(instance.locksCancelled),
                                         formatCount(instance.pagesDropped),
                                         formatBytes(instance.bytesWrittenBack))
                              : instance.error;
        if (!instance.problems.isEmpty()) {
            line.detail += QObject::tr(" (worked around: %1)")
                               .arg(instance.problems.join(QStringLiteral("; ")));
        }
        outcome.instances << line;
    }
    outcome.state = flush.ok ? OpState::ok : OpState::failed;
    const QString point =
        flush.historyId != 0 ? QObject::tr(" (history #%1)").arg(flush.historyId) : QString();
    outcome.detail = flush.ok ? (flush.instances.isEmpty()
                                     ? QObject::tr("nothing to flush: no client instance") + point
                                     : QObject::tr("flushed") + point)
                              : QObject::tr("some instances failed") + point;
    return outcome;
}

} // namespace

const QString JobsView::kFlushAllWord = QStringLiteral("flush all");

FanOutOperation::Step
flushJobStep(QString job, bool all, std::function<void(const QString &address)> started,
             std::function<void(const QString &address, const Reply<FlushOutcome> &reply)> sink)
{
    return [job = std::move(job), all, started = std::move(started), sink = std::move(sink)](
               NodeConnection &connection, std::function<void(NodeOutcome)> finish) {
        const QString address = connection.address();
        if (started) {
            started(address);
        }
        // Timeout 0: ctld's 30 s per instance; the call's deadline allows for it.
        return connection.flushJob(
            all ? QString() : job, all, 0,
            [address, sink, finish = std::move(finish)](Reply<FlushOutcome> reply) {
                if (sink) {
                    sink(address, reply);
                }
                finish(flushNodeOutcome(reply));
            });
    };
}

JobsView::JobsView(ClusterController &cluster, std::function<QStringList()> selectedNodes,
                   QWidget *parent)
    : QWidget(parent), m_cluster(cluster), m_selectedNodes(std::move(selectedNodes)),
      m_jobs(new JobsModel(this)), m_report(new FlushReportModel(this)),
      m_filter(new QLineEdit(this)), m_table(new QTableView(this)), m_statsNote(new QLabel(this)),
      m_flush(new QPushButton(this)), m_flushSelected(new QPushButton(this)),
      m_flushAll(new QPushButton(this)), m_roleNote(new QLabel(this)), m_summary(new QLabel(this)),
      m_reportView(new QTreeView(this))
{
    m_typedConfirm = [this](const QString &title, const QString &text) {
        QInputDialog dialog(this);
        dialog.setWindowTitle(title);
        dialog.setLabelText(text);
        dialog.setInputMode(QInputDialog::TextInput);
        return dialog.exec() == QDialog::Accepted ? dialog.textValue() : QString();
    };
    m_filter->setObjectName("jobs.filter");
    m_filter->setPlaceholderText(tr("job id glob, e.g. 100*"));
    m_filter->setClearButtonEnabled(true);
    m_filter->setMinimumWidth(220);
    m_table->setObjectName("jobs.table");
    m_table->setModel(m_jobs);
    setupResultTable(m_table);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_statsNote->setObjectName("jobs.statsNote");
    m_flush->setObjectName("jobs.flush");
    m_flushSelected->setObjectName("jobs.flushSelected");
    m_flushAll->setObjectName("jobs.flushAll");
    m_roleNote->setObjectName("jobs.roleNote");
    m_roleNote->setWordWrap(true);
    m_roleNote->setStyleSheet("color: #8a5300");
    m_roleNote->hide();
    m_summary->setObjectName("jobs.summary");
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_reportView->setObjectName("jobs.report");
    m_reportView->setModel(m_report);
    setupResultTree(m_reportView);

    auto *top = new QHBoxLayout;
    top->addWidget(new QLabel(tr("Job filter:"), this));
    top->addWidget(m_filter);
    top->addWidget(m_statsNote, 1);
    auto *upper = new QWidget(this);
    auto *upperLayout = new QVBoxLayout(upper);
    upperLayout->setContentsMargins(0, 0, 0, 0);
    upperLayout->addLayout(top);
    upperLayout->addWidget(m_table, 1);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_flush);
    buttons->addWidget(m_flushSelected);
    buttons->addStretch(1);
    buttons->addWidget(m_flushAll);
    upperLayout->addLayout(buttons);
    upperLayout->addWidget(m_roleNote);

    auto *lower = new QWidget(this);
    auto *lowerLayout = new QVBoxLayout(lower);
    lowerLayout->setContentsMargins(0, 0, 0, 0);
    auto *reportTitle = new QLabel(tr("<b>Last flush</b>"), this);
    lowerLayout->addWidget(reportTitle);
    lowerLayout->addWidget(m_summary);
    lowerLayout->addWidget(m_reportView, 1);

    auto *split = new QSplitter(Qt::Vertical, this);
    split->addWidget(upper);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(split);

    m_summary->setText(tr("No flush yet. A flush writes back the job's dirty pages, cancels its "
                          "unused locks and drops its cached pages (what an epilog does)."));

    connect(m_filter, &QLineEdit::textChanged, m_jobs, &JobsModel::setJobFilter);
    connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            [this] { updateControls(); });
    connect(m_flush, &QPushButton::clicked, this, &JobsView::flushJobEverywhere);
    connect(m_flushSelected, &QPushButton::clicked, this, &JobsView::flushJobOnSelectedNodes);
    connect(m_flushAll, &QPushButton::clicked, this, &JobsView::flushAllJobs);
    updateControls();
}

void JobsView::refresh()
{
    const qint64 now = nowMs();
    m_jobs->setNowMs(now);
    if (isVisible() && now - m_loadedAtMs >= kRefreshMs) {
        reload();
    }
    updateControls();
}

void JobsView::reload()
{
    if (m_loadsPending > 0) {
        return; // the previous round is still being answered
    }
    m_loadedAtMs = nowMs();
    m_loadErrors.clear();
    const auto addresses = m_cluster.addresses();
    // Nodes that left the cluster (another cluster file) take their jobs with them.
    QSet<QString> names;
    for (const auto &address : addresses) {
        names.insert(m_cluster.nodeName(address));
    }
    for (const auto &name : m_jobNodes - names) {
        m_jobs->removeNode(name);
    }
    m_jobNodes &= names;
    QStringList asked;
    for (const auto &address : addresses) {
        auto *connection = m_cluster.connection(address);
        if (connection == nullptr || connection->state() != ConnectionState::ready) {
            continue;
        }
        asked << address;
    }
    if (asked.isEmpty()) {
        m_statsNote->setText(tr("No node is connected."));
        emit jobsLoaded();
        return;
    }
    m_loadsPending = int(asked.size());
    QPointer<JobsView> self(this);
    for (const auto &address : std::as_const(asked)) {
        m_cluster.connection(address)->getJobStats({}, [self, address, total = asked.size()](
                                                           Reply<QList<JobStat>> reply) {
            if (!self) {
                return;
            }
            const QString name = self->m_cluster.nodeName(address);
            if (reply.ok) {
                self->m_jobs->setNodeJobs(name, reply.value, nowMs());
                self->m_jobNodes.insert(name);
            } else {
                self->m_loadErrors << name + QStringLiteral(": ") + reply.error;
            }
            if (--self->m_loadsPending > 0) {
                return;
            }
            const QString when = QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss"));
            // The first round has nothing to compute a rate against: say when rates come.
            const QString rates = self->m_rounds++ == 0 ? tr("rates from the next sample, in %1 s")
                                                        : tr("rates over the last %1 s");
            QString note = tr("Job stats of %1 of %2 node(s) at %3; %4.")
                               .arg(total - self->m_loadErrors.size())
                               .arg(total)
                               .arg(when, rates.arg(kRefreshMs / 1000));
            if (!self->m_loadErrors.isEmpty()) {
                note += QStringLiteral(" <span style='color:#c00000'>%1</span>")
                            .arg(self->m_loadErrors.join(QStringLiteral("; ")).toHtmlEscaped());
            }
            self->m_statsNote->setText(note);
            self->updateControls();
            emit self->jobsLoaded();
        });
    }
}

QString JobsView::selectedJob() const
{
    const auto rows = m_table->selectionModel()->selectedRows(JobsModel::Job);
    return rows.isEmpty() ? QString() : rows.first().data(JobsModel::JobRole).toString();
}

bool JobsView::selectJob(const QString &job)
{
    const int row = int(m_jobs->jobs().indexOf(job));
    if (row < 0) {
        return false;
    }
    m_table->selectRow(row);
    return true;
}

QStringList JobsView::addressesOfNames(const QStringList &names) const
{
    QStringList addresses;
    for (const auto &name : names) {
        for (const auto &address : m_cluster.addresses()) {
            if (m_cluster.nodeName(address) == name) {
                addresses << address;
                break;
            }
        }
    }
    return addresses;
}

QStringList JobsView::allOrSelected() const
{
    const auto selected = m_selectedNodes ? m_selectedNodes() : QStringList{};
    return selected.isEmpty() ? m_cluster.addresses() : selected;
}

void JobsView::updateControls()
{
    // Why a flush on these nodes is not possible; "" when it is.
    const auto refusal = [this](const QStringList &addresses) -> QString {
        if (m_busy) {
            return tr("A flush is running; wait for its report.");
        }
        const Role role = m_cluster.roleOn(addresses);
        if (role == Role::unknown) {
            return tr("None of these nodes is connected.");
        }
        if (!mayFlush(role)) {
            return tr("Your role on these nodes is %1: flushing jobs needs operator.")
                .arg(roleName(role));
        }
        return {};
    };

    const QString job = selectedJob();
    const auto ranOn = m_jobs->nodesOf(job);
    if (job.isEmpty()) {
        m_flush->setText(tr("Flush job everywhere it ran"));
        m_flush->setEnabled(false);
        m_flush->setToolTip(tr("Select a job in the table first."));
    } else {
        const QString why = refusal(addressesOfNames(ranOn));
        m_flush->setText(tr("Flush job %1 on %2").arg(job, shortNodeList(ranOn)));
        m_flush->setEnabled(why.isEmpty());
        m_flush->setToolTip(why.isEmpty() ? tr("Write back job %1's dirty pages, cancel its "
                                               "unused locks and drop its pages on the nodes it "
                                               "ran on: %2.")
                                                .arg(job, ranOn.join(QStringLiteral(", ")))
                                          : why);
    }

    const auto selected = m_selectedNodes ? m_selectedNodes() : QStringList{};
    m_flushSelected->setText(selected.isEmpty()
                                 ? tr("Flush on selected nodes (none selected)")
                                 : tr("Flush on the %1 selected node(s)").arg(selected.size()));
    if (job.isEmpty() || selected.isEmpty()) {
        m_flushSelected->setEnabled(false);
        m_flushSelected->setToolTip(job.isEmpty() ? tr("Select a job in the table first.")
                                                  : tr("Select nodes in the Cluster tab first."));
    } else {
        const QString why = refusal(selected);
        m_flushSelected->setEnabled(why.isEmpty());
        m_flushSelected->setToolTip(
            why.isEmpty()
                ? tr("Flush job %1 on %2.").arg(job, m_cluster.nodeNames(selected).join(", "))
                : why);
    }

    const auto everyTarget = allOrSelected();
    const QString allWhy = refusal(everyTarget);
    m_flushAll->setText(selected.isEmpty()
                            ? tr("Flush all jobs on every node…")
                            : tr("Flush all jobs on %1 selected node(s)…").arg(selected.size()));
    m_flushAll->setEnabled(allWhy.isEmpty() && !everyTarget.isEmpty());
    m_flushAll->setToolTip(allWhy.isEmpty()
                               ? tr("Every job: lru_size=clear everywhere. Asks you to type "
                                    "\"%1\" first.")
                                     .arg(kFlushAllWord)
                               : allWhy);

    // The role is the reason worth a line of its own: it does not go away by waiting.
    const Role role = m_cluster.roleOn(everyTarget);
    const bool roleRefuses = role != Role::unknown && !mayFlush(role);
    m_roleNote->setVisible(roleRefuses);
    if (roleRefuses) {
        m_roleNote->setText(
            tr("Your role on %1 is %2: flushing jobs needs operator (ctld's "
               "roles: viewer reads; operator also flushes jobs, applies stored "
               "profiles and rolls back). The flush buttons stay disabled.")
                .arg(shortNodeList(m_cluster.nodeNames(everyTarget)), roleName(role)));
    }
}

void JobsView::flushJobEverywhere()
{
    const QString job = selectedJob();
    if (job.isEmpty()) {
        return;
    }
    runFlush(job, false, addressesOfNames(m_jobs->nodesOf(job)));
}

void JobsView::flushJobOnSelectedNodes()
{
    const QString job = selectedJob();
    const auto selected = m_selectedNodes ? m_selectedNodes() : QStringList{};
    if (job.isEmpty() || selected.isEmpty()) {
        return;
    }
    runFlush(job, false, selected);
}

void JobsView::flushAllJobs()
{
    const auto targets = allOrSelected();
    if (targets.isEmpty()) {
        return;
    }
    const QStringList names = m_cluster.nodeNames(targets);
    const QString text =
        tr("Flush EVERY job on %1 node(s) (%2): all dirty pages are written back, every unused "
           "lock is cancelled (lru_size=clear) and cached pages are dropped, so every running "
           "job's next reads go to the targets.\n\nType \"%3\" to go on.")
            .arg(targets.size())
            .arg(shortNodeList(names), kFlushAllWord);
    const QString typed = m_typedConfirm(tr("Flush all jobs"), text).trimmed();
    if (typed != kFlushAllWord) {
        m_summary->setText(typed.isEmpty()
                               ? tr("Flush all jobs cancelled: nothing was flushed.")
                               : tr("Flush all jobs cancelled: you typed \"%1\", not \"%2\". "
                                    "Nothing was flushed.")
                                     .arg(typed, kFlushAllWord));
        return;
    }
    runFlush({}, true, targets);
}

void JobsView::runFlush(const QString &job, bool all, const QStringList &addresses)
{
    if (addresses.isEmpty() || m_busy) {
        return;
    }
    m_busy = true;
    m_historyIds.clear();
    const QStringList names = m_cluster.nodeNames(addresses);
    m_report->setNodes(names);
    m_reportView->expandAll();
    const QString label = all ? QStringLiteral("flush all") : QStringLiteral("flush ") + job;
    m_summary->setText(all ? tr("Flushing every job on %1…").arg(shortNodeList(names))
                           : tr("Flushing job %1 on %2…").arg(job, shortNodeList(names)));
    QPointer<JobsView> self(this);
    auto started = [self](const QString &address) {
        if (self) {
            self->m_report->setNodeRunning(self->m_cluster.nodeName(address));
        }
    };
    auto sink = [self, label](const QString &address, const Reply<FlushOutcome> &reply) {
        if (self) {
            self->onFlushReply(address, label, reply);
        }
    };
    const QStringList arguments =
        all ? QStringList{QStringLiteral("flush"), QStringLiteral("--all")}
            : QStringList{QStringLiteral("flush"), QStringLiteral("--job"), job};
    auto *operation =
        new FanOutOperation(m_cluster, all ? tr("flush all jobs") : tr("flush job %1").arg(job),
                            addresses, flushJobStep(job, all, started, sink),
                            m_cluster.lutractlScript(addresses, arguments), this);
    // Nodes never asked (not connected, cancelled) have no reply: their outcome says why.
    connect(operation, &FanOutOperation::nodeFinished, this,
            [this](const QString &address, const NodeOutcome &outcome) {
                const QString name = m_cluster.nodeName(address);
                if (outcome.json.isEmpty() && outcome.state != OpState::ok) {
                    m_report->setNodeError(name, outcome.detail,
                                           outcome.state == OpState::unreachable);
                }
            });
    connect(operation, &FanOutOperation::finished, this,
            [this, operation, addresses, what = all ? tr("All jobs") : tr("Job %1").arg(job)] {
                onFlushFinished(operation, addresses, what);
            });
    updateControls();
    operation->start();
}

void JobsView::onFlushReply(const QString &address, const QString &label,
                            const Reply<FlushOutcome> &reply)
{
    const QString name = m_cluster.nodeName(address);
    if (!reply.ok) {
        m_report->setNodeError(name, reply.error,
                               failedCallState(reply.error) == OpState::unreachable);
        return;
    }
    m_report->setNodeReport(name, reply.value);
    m_historyIds.insert(name, reply.value.historyId);
    m_reportView->expandAll();
    // The node did flush (maybe not every instance): the drop shows on its charts here.
    m_cluster.addEvent(address, {nowMs(), label});
}

void JobsView::onFlushFinished(FanOutOperation *operation, const QStringList &addresses,
                               const QString &what)
{
    operation->deleteLater();
    m_busy = false;
    QStringList points;
    QStringList failures;
    bool ok = true;
    for (const auto &address : addresses) {
        const QString name = m_cluster.nodeName(address);
        const auto outcome = operation->outcomes().value(address);
        if (m_historyIds.value(name) != 0) {
            points << tr("#%1 on %2").arg(m_historyIds.value(name)).arg(name);
        }
        if (outcome.state != OpState::ok) {
            ok = false;
            failures << name + QStringLiteral(": ") + outcome.detail;
        }
    }
    const auto totals = m_report->totals();
    QString text =
        tr("%1: flushed on %2 of %3 node(s): %4 locks cancelled, %5 pages dropped, "
           "%6 written back")
            .arg(what, QString::number(m_report->okCount()), QString::number(addresses.size()),
                 formatCount(totals.locks), formatCount(totals.pages), formatBytes(totals.bytes));
    if (!points.isEmpty()) {
        text += tr("; history %1").arg(points.join(QStringLiteral(", ")));
    }
    text += '.';
    if (!failures.isEmpty()) {
        text += tr("\nFailed: %1").arg(failures.join(QStringLiteral("; ")));
    }
    m_summary->setText(text);
    updateControls();
    emit flushFinished(ok);
}

} // namespace lutra::console
