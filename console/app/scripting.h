#pragma once
// What makes every console operation scriptable: the lutractl command line that does the same,
// and the operation's result in lutractl's --json shape
//   {"nodes": [{"node", "ok", "error"?, "result"?}], "summary": {"nodes", "ok", "failed"}}
// where "result" is the node's reply as lutractl prints it (protobuf JSON, field names as in
// ctl.proto).

#include "app/cluster_file.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <QStringList>

namespace lutra::console {

// `lutractl [credentials] -H a:1,b:2 <arguments>`, each word shell-quoted where needed. The
// credentials are those of the first node (a cluster file may give groups their own; then one
// line per group is needed, and the function returns one line per distinct credential set).
QStringList lutractlCommands(const ClusterFile &cluster, const QStringList &addresses,
                             const QStringList &arguments);

QString shellQuote(const QString &word);

struct NodeJson {
    QString node; // the address, as lutractl names nodes
    bool ok = false;
    QString error;
    QByteArray result; // the reply's JSON ("" when the call failed)
};

QByteArray lutractlJson(const QList<NodeJson> &nodes);

} // namespace lutra::console
