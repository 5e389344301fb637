#pragma once
// One operation across nodes (a set, a clear, later a flush): each node's step runs on its
// connection, at most `concurrency` at a time, shown in the operations dock as operation → node →
// instance. Cancel stops contacting further nodes and cancels the calls in flight; the nodes that
// already answered keep their outcome, so the dock says which nodes changed.

#include "models/operations_model.h"
#include "net/node_connection.h"

#include <QObject>
#include <QPointer>

#include <functional>

namespace lutra::console {

class ClusterController;
class NodeConnection;

struct InstanceLine {
    QString instance;
    bool ok = false;
    QString detail;
};

struct NodeOutcome {
    OpState state = OpState::ok;
    QString detail;
    QList<InstanceLine> instances;
    QByteArray json; // the node's reply as lutractl --json prints it ("" when the call failed)
};

// What stays of an operation after it ran: enough to redo it from a shell and to export its
// result as `lutractl --json` would print it.
struct OperationRecord {
    QString title;
    QString script;        // the lutractl command line(s) that do the same
    QStringList addresses; // in the order they were asked
    QHash<QString, NodeOutcome> outcomes;
};

class FanOutOperation : public QObject {
    Q_OBJECT
public:
    // Starts the node's call; returns its call id (for cancel) and calls `finish` exactly once.
    using Step =
        std::function<quint64(NodeConnection &connection, std::function<void(NodeOutcome)> finish)>;

    // `script`: the lutractl command line(s) doing the same (see scripting.h).
    FanOutOperation(ClusterController &cluster, QString title, QStringList addresses, Step step,
                    QString script, QObject *parent = nullptr);

    void start(int concurrency = 16);
    void cancel();
    int id() const { return m_id; }
    bool isFinished() const { return m_finished; }
    const QHash<QString, NodeOutcome> &outcomes() const { return m_outcomes; }

signals:
    void nodeFinished(const QString &address, const lutra::console::NodeOutcome &outcome);
    void finished();

private:
    void startNext();
    void complete(const QString &address, NodeOutcome outcome);

    ClusterController &m_cluster;
    QString m_title;
    QString m_script;
    QStringList m_addresses;
    Step m_step;
    int m_id = -1;
    int m_next = 0;
    int m_running = 0;
    int m_concurrency = 16;
    bool m_cancelled = false;
    bool m_finished = false;
    QHash<QString, quint64> m_inFlight;
    QHash<QString, NodeOutcome> m_outcomes;
};

} // namespace lutra::console

namespace lutra::console {

// The step of a set (or its dry run) on one node; `sink` also gets every node's full reply, for
// the per-instance result table.
// How a failed call shows in the operations dock: cancelled, unreachable (the node did not
// answer in time or at all) or failed (it answered no).
OpState failedCallState(const QString &grpcError);

// Where every node's outcome starts: the reply's JSON and, when the call failed, how and why.
template <typename T> NodeOutcome callOutcome(const Reply<T> &reply)
{
    NodeOutcome outcome;
    outcome.json = reply.json;
    if (!reply.ok) {
        outcome.state = failedCallState(reply.error);
        outcome.detail = reply.error;
    }
    return outcome;
}

// The lutractl arguments of a set: `set_param [--dry-run] NAME=VALUE ...`.
QStringList setParamsArguments(const QList<Assignment> &assignments, bool dryRun);

FanOutOperation::Step
setParamsStep(QList<Assignment> assignments, QString instanceGlob, bool dryRun,
              std::function<void(const QString &address, const Reply<SetOutcome> &reply)> sink);

} // namespace lutra::console
