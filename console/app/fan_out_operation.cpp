#include "app/fan_out_operation.h"

#include "app/cluster_controller.h"

namespace lutra::console {

FanOutOperation::FanOutOperation(ClusterController &cluster, QString title, QStringList addresses,
                                 Step step, QString script, QObject *parent)
    : QObject(parent), m_cluster(cluster), m_title(std::move(title)), m_script(std::move(script)),
      m_addresses(std::move(addresses)), m_step(std::move(step))
{
}

void FanOutOperation::start(int concurrency)
{
    m_concurrency = std::max(1, concurrency);
    m_id = m_cluster.operationsModel().addOperation(m_title, m_cluster.nodeNames(m_addresses));
    m_cluster.registerOperation(m_id, this, OperationRecord{m_title, m_script, m_addresses, {}});
    startNext();
}

void FanOutOperation::startNext()
{
    while (!m_cancelled && m_running < m_concurrency && m_next < m_addresses.size()) {
        const QString address = m_addresses.at(m_next++);
        const QString name = m_cluster.nodeName(address);
        auto *connection = m_cluster.connection(address);
        if (connection == nullptr || connection->state() != ConnectionState::ready) {
            const QString why = connection == nullptr ? QStringLiteral("not in the cluster")
                                                      : connection->lastError();
            complete(address, {OpState::unreachable, why.isEmpty() ? "not connected" : why, {}});
            continue;
        }
        ++m_running;
        m_cluster.operationsModel().setNodeState(m_id, name, OpState::running);
        QPointer<FanOutOperation> self(this);
        const quint64 call = m_step(*connection, [self, address](NodeOutcome outcome) {
            if (self) {
                --self->m_running;
                self->m_inFlight.remove(address);
                self->complete(address, std::move(outcome));
                self->startNext();
            }
        });
        if (m_outcomes.contains(address)) {
            continue; // the step finished synchronously (a local refusal)
        }
        m_inFlight.insert(address, call);
    }
    if (!m_finished && m_running == 0 && (m_cancelled || m_next >= m_addresses.size())) {
        for (int i = m_next; i < m_addresses.size(); ++i) {
            complete(m_addresses.at(i), {OpState::cancelled, QStringLiteral("not contacted"), {}});
        }
        m_next = static_cast<int>(m_addresses.size());
        m_finished = true;
        m_cluster.operationsModel().finish(m_id);
        emit finished();
    }
}

void FanOutOperation::complete(const QString &address, NodeOutcome outcome)
{
    const QString name = m_cluster.nodeName(address);
    auto &model = m_cluster.operationsModel();
    for (const auto &line : std::as_const(outcome.instances)) {
        model.setInstanceResult(m_id, name, line.instance, line.ok, line.detail);
    }
    model.setNodeState(m_id, name, outcome.state, outcome.detail);
    m_outcomes.insert(address, outcome);
    m_cluster.recordOutcome(m_id, address, outcome);
    emit nodeFinished(address, outcome);
}

void FanOutOperation::cancel()
{
    if (m_finished) {
        return;
    }
    m_cancelled = true;
    // Calls in flight finish with CANCELLED (or with their real outcome if it was already on its
    // way): either way their node reports what happened.
    const auto inFlight = m_inFlight;
    for (auto it = inFlight.begin(); it != inFlight.end(); ++it) {
        if (auto *connection = m_cluster.connection(it.key())) {
            connection->cancel(it.value());
        }
    }
    startNext();
}

} // namespace lutra::console

namespace lutra::console {

OpState failedCallState(const QString &grpcError)
{
    if (grpcError.startsWith(QLatin1String("CANCELLED"))) {
        return OpState::cancelled;
    }
    if (grpcError.startsWith(QLatin1String("UNAVAILABLE")) ||
        grpcError.startsWith(QLatin1String("DEADLINE_EXCEEDED"))) {
        return OpState::unreachable;
    }
    return OpState::failed;
}

QStringList setParamsArguments(const QList<Assignment> &assignments, bool dryRun)
{
    QStringList arguments{QStringLiteral("set_param")};
    if (dryRun) {
        arguments << QStringLiteral("--dry-run");
    }
    for (const auto &assignment : assignments) {
        arguments << assignment.pattern + '=' + assignment.value;
    }
    return arguments;
}

FanOutOperation::Step
setParamsStep(QList<Assignment> assignments, QString instanceGlob, bool dryRun,
              std::function<void(const QString &address, const Reply<SetOutcome> &reply)> sink)
{
    return [assignments = std::move(assignments), instanceGlob = std::move(instanceGlob), dryRun,
            sink = std::move(sink)](NodeConnection &connection,
                                    std::function<void(NodeOutcome)> finish) {
        const QString address = connection.address();
        return connection.setParams(
            assignments, instanceGlob, dryRun,
            [address, dryRun, sink, finish = std::move(finish)](Reply<SetOutcome> reply) {
                if (sink) {
                    sink(address, reply);
                }
                NodeOutcome outcome = callOutcome(reply);
                if (!reply.ok) {
                    finish(std::move(outcome));
                    return;
                }
                const auto &set = reply.value;
                int errors = set.errors.size();
                if (dryRun && set.instances.isEmpty()) {
                    // Nothing was sent to the instances: the plan says what each would change.
                    QHash<QString, int> changes;
                    QStringList order;
                    for (const auto &entry : set.plan) {
                        if (!changes.contains(entry.instance)) {
                            order << entry.instance;
                        }
                        changes[entry.instance] += entry.changed;
                    }
                    for (const auto &instance : order) {
                        outcome.instances << InstanceLine{
                            instance, true,
                            QStringLiteral("would change %1 parameter(s)").arg(changes[instance])};
                    }
                }
                for (const auto &instance : set.instances) {
                    InstanceLine line;
                    line.instance = instance.instance;
                    int clamped = 0;
                    for (const auto &entry : instance.entries) {
                        clamped += entry.clamped;
                    }
                    line.ok = instance.errors.isEmpty() && (dryRun || instance.applied);
                    line.detail =
                        !instance.errors.isEmpty()
                            ? instance.errors.join(QStringLiteral("; "))
                            : QStringLiteral("%1 parameter(s)%2")
                                  .arg(instance.entries.size())
                                  .arg(clamped > 0 ? QStringLiteral(", %1 clamped").arg(clamped)
                                                   : QString());
                    errors += instance.errors.size();
                    outcome.instances << line;
                }
                const bool ok = errors == 0 && (dryRun || set.applied);
                outcome.state = ok ? OpState::ok : OpState::failed;
                outcome.detail =
                    ok ? (dryRun ? QStringLiteral("dry run: valid on %1 instance(s)")
                                       .arg(outcome.instances.size())
                                 : QStringLiteral("applied (history #%1)").arg(set.historyId))
                       : (set.errors.isEmpty() ? QStringLiteral("refused: nothing changed")
                                               : set.errors.join(QStringLiteral("; ")));
                finish(std::move(outcome));
            });
    };
}

} // namespace lutra::console
