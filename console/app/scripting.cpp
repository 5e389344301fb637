#include "app/scripting.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>

namespace lutra::console {

QString shellQuote(const QString &word)
{
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9_./:=,@%+\\-]+$"));
    if (!word.isEmpty() && safe.match(word).hasMatch()) {
        return word;
    }
    QString quoted = word;
    quoted.replace('\'', QStringLiteral("'\\''"));
    return '\'' + quoted + '\'';
}

QStringList lutractlCommands(const ClusterFile &cluster, const QStringList &addresses,
                             const QStringList &arguments)
{
    // Nodes sharing credentials share a command line, in the order they first appear.
    QList<QPair<Endpoint, QStringList>> groups;
    for (const auto &address : addresses) {
        Endpoint endpoint;
        endpoint.address = address;
        for (const auto &node : cluster.nodes) {
            if (node.endpoint.address == address) {
                endpoint = node.endpoint;
                break;
            }
        }
        auto same = [&](const Endpoint &other) {
            return other.tokenFile == endpoint.tokenFile && other.tlsCa == endpoint.tlsCa &&
                   other.tlsCert == endpoint.tlsCert && other.tlsKey == endpoint.tlsKey;
        };
        auto found = std::find_if(groups.begin(), groups.end(),
                                  [&](const auto &group) { return same(group.first); });
        if (found == groups.end()) {
            groups.append({endpoint, {address}});
        } else {
            found->second << address;
        }
    }
    QStringList lines;
    for (const auto &[endpoint, nodes] : groups) {
        QStringList words{QStringLiteral("lutractl")};
        const auto option = [&](const QString &name, const QString &value) {
            if (!value.isEmpty()) {
                words << name << shellQuote(value);
            }
        };
        option(QStringLiteral("--token-file"), endpoint.tokenFile);
        option(QStringLiteral("--tls-ca"), endpoint.tlsCa);
        option(QStringLiteral("--tls-cert"), endpoint.tlsCert);
        option(QStringLiteral("--tls-key"), endpoint.tlsKey);
        words << (nodes.size() == 1 ? QStringLiteral("--node") : QStringLiteral("-H"))
              << shellQuote(nodes.join(','));
        for (const auto &argument : arguments) {
            words << shellQuote(argument);
        }
        lines << words.join(' ');
    }
    return lines;
}

QByteArray lutractlJson(const QList<NodeJson> &nodes)
{
    QJsonArray array;
    int ok = 0;
    for (const auto &node : nodes) {
        QJsonObject entry{{"node", node.node}, {"ok", node.ok}};
        if (!node.error.isEmpty()) {
            entry.insert("error", node.error);
        }
        if (!node.result.isEmpty()) {
            entry.insert("result", QJsonDocument::fromJson(node.result).object());
        }
        ok += node.ok;
        array.append(entry);
    }
    const QJsonObject summary{
        {"nodes", int(nodes.size())}, {"ok", ok}, {"failed", int(nodes.size()) - ok}};
    return QJsonDocument(QJsonObject{{"nodes", array}, {"summary", summary}})
        .toJson(QJsonDocument::Indented);
}

} // namespace lutra::console
