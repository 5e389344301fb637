#include "app/cluster_file.h"

#include "client/hostlist.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSet>

#include <yaml-cpp/yaml.h>

namespace lutra::console {

namespace {

class Errors {
public:
    explicit Errors(QString file) : m_file(std::move(file)) {}
    void add(const YAML::Mark &mark, const QString &message)
    {
        m_list << QStringLiteral("%1:%2:%3: %4")
                      .arg(m_file)
                      .arg(mark.line + 1)
                      .arg(mark.column + 1)
                      .arg(message);
    }
    QStringList take() { return std::move(m_list); }

private:
    QString m_file;
    QStringList m_list;
};

struct Credentials {
    QString tokenFile, tlsCa, tlsCert, tlsKey;
    int timeoutMs = Endpoint{}.callTimeoutMs;
};

// "10s", "500ms", "2m": a call deadline; 0 when the text is not one.
int parseTimeout(const QString &text)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d+)(ms|s|m)$"));
    const auto match = pattern.match(text.trimmed());
    if (!match.hasMatch()) {
        return 0;
    }
    const qint64 value = match.captured(1).toLongLong();
    const qint64 ms = match.captured(2) == QLatin1String("ms")  ? value
                      : match.captured(2) == QLatin1String("s") ? value * 1000
                                                                : value * 60'000;
    return ms >= 500 && ms <= 600'000 ? int(ms) : 0;
}

QString resolve(const QString &path, const QString &baseDir)
{
    if (path.isEmpty() || QDir::isAbsolutePath(path) || baseDir.isEmpty()) {
        return path;
    }
    return QDir(baseDir).filePath(path);
}

// A scalar, or an error at the node.
bool scalar(const YAML::Node &node, const QString &key, QString &out, Errors &errors)
{
    if (!node.IsScalar()) {
        errors.add(node.Mark(), QStringLiteral("'%1' must be a single value").arg(key));
        return false;
    }
    out = QString::fromStdString(node.Scalar());
    return true;
}

// token_file, tls and timeout at the top level or in a group; unknown keys are left to the
// caller.
void readCredentials(const YAML::Node &map, Credentials &credentials, const QString &baseDir,
                     Errors &errors)
{
    if (const auto timeout = map["timeout"]) {
        QString value;
        if (scalar(timeout, "timeout", value, errors)) {
            const int ms = parseTimeout(value);
            if (ms == 0) {
                errors.add(timeout.Mark(),
                           QStringLiteral("'timeout' is '%1': give 500ms .. 10m, e.g. 10s, 500ms, "
                                          "2m")
                               .arg(value));
            } else {
                credentials.timeoutMs = ms;
            }
        }
    }
    if (const auto token = map["token_file"]) {
        QString value;
        if (scalar(token, "token_file", value, errors)) {
            credentials.tokenFile = resolve(value, baseDir);
        }
    }
    if (const auto tls = map["tls"]) {
        if (!tls.IsMap()) {
            errors.add(tls.Mark(), "'tls' must be a map with ca, cert, key");
            return;
        }
        for (const auto &entry : tls) {
            const auto key = QString::fromStdString(entry.first.Scalar());
            QString value;
            if (!scalar(entry.second, "tls." + key, value, errors)) {
                continue;
            }
            if (key == "ca") {
                credentials.tlsCa = resolve(value, baseDir);
            } else if (key == "cert") {
                credentials.tlsCert = resolve(value, baseDir);
            } else if (key == "key") {
                credentials.tlsKey = resolve(value, baseDir);
            } else {
                errors.add(entry.first.Mark(),
                           QStringLiteral("unknown key 'tls.%1' (known: ca, cert, key)").arg(key));
            }
        }
        if (credentials.tlsCert.isEmpty() != credentials.tlsKey.isEmpty()) {
            errors.add(tls.Mark(), "'tls' needs both cert and key for a client certificate");
        }
    }
}

Endpoint endpointFor(const QString &address, const Credentials &credentials)
{
    Endpoint endpoint;
    endpoint.address = address;
    endpoint.tokenFile = credentials.tokenFile;
    endpoint.tlsCa = credentials.tlsCa;
    endpoint.tlsCert = credentials.tlsCert;
    endpoint.tlsKey = credentials.tlsKey;
    endpoint.callTimeoutMs = credentials.timeoutMs;
    return endpoint;
}

// Expands a hostlist into "host:port" addresses (port 7370 when none is given).
Result<QStringList> expandAddresses(const QString &hostlist)
{
    auto expanded = ctld::expandHostlist(hostlist.toStdString());
    if (!expanded) {
        return expanded.status();
    }
    QStringList addresses;
    for (const auto &host : *expanded) {
        auto address = QString::fromStdString(host);
        if (!address.startsWith("unix:") && !address.contains(':')) {
            address += QStringLiteral(":%1").arg(ClusterFile::kDefaultPort);
        }
        addresses << address;
    }
    return addresses;
}

} // namespace

ClusterFile::Parsed ClusterFile::parse(const QString &text, const QString &path)
{
    Parsed parsed;
    parsed.file.path = path;
    const QString shownPath = path.isEmpty() ? QStringLiteral("cluster file") : path;
    const QString baseDir = path.isEmpty() ? QString() : QFileInfo(path).absolutePath();
    Errors errors(shownPath);
    YAML::Node root;
    try {
        root = YAML::Load(text.toStdString());
    } catch (const YAML::Exception &error) {
        errors.add(error.mark, QString::fromStdString(error.msg));
        parsed.errors = errors.take();
        return parsed;
    }
    if (!root.IsMap()) {
        parsed.errors << shownPath + ":1:1: a cluster file is a map with 'groups' (and optionally "
                                     "name, token_file, tls)";
        return parsed;
    }
    Credentials defaults;
    readCredentials(root, defaults, baseDir, errors);
    for (const auto &entry : root) {
        const auto key = QString::fromStdString(entry.first.Scalar());
        if (key == "name") {
            scalar(entry.second, key, parsed.file.name, errors);
        } else if (key != "groups" && key != "token_file" && key != "tls" && key != "timeout") {
            errors.add(entry.first.Mark(),
                       QStringLiteral("unknown key '%1' (known: name, token_file, tls, timeout, "
                                      "groups)")
                           .arg(key));
        }
    }
    const auto groups = root["groups"];
    if (!groups) {
        errors.add(root.Mark(), "no 'groups': list the nodes as groups: [{name, hosts}]");
    } else if (!groups.IsSequence()) {
        errors.add(groups.Mark(), "'groups' must be a list of {name, hosts}");
    } else {
        QSet<QString> seen;
        for (const auto &group : groups) {
            if (!group.IsMap()) {
                errors.add(group.Mark(), "a group is a map with name and hosts");
                continue;
            }
            Credentials credentials = defaults;
            readCredentials(group, credentials, baseDir, errors);
            QString name;
            QString hosts;
            for (const auto &entry : group) {
                const auto key = QString::fromStdString(entry.first.Scalar());
                if (key == "name") {
                    scalar(entry.second, key, name, errors);
                } else if (key == "hosts") {
                    if (scalar(entry.second, key, hosts, errors)) {
                        auto addresses = expandAddresses(hosts);
                        if (!addresses) {
                            errors.add(entry.second.Mark(),
                                       QString::fromStdString(addresses.status().message()));
                            continue;
                        }
                        for (const auto &address : *addresses) {
                            if (seen.contains(address)) {
                                errors.add(entry.second.Mark(),
                                           QStringLiteral("%1 is listed twice").arg(address));
                                continue;
                            }
                            seen.insert(address);
                            parsed.file.nodes << ClusterNode{{}, endpointFor(address, credentials)};
                        }
                    }
                } else if (key != "token_file" && key != "tls" && key != "timeout") {
                    errors.add(entry.first.Mark(),
                               QStringLiteral("unknown key '%1' in a group (known: name, hosts, "
                                              "token_file, tls, timeout)")
                                   .arg(key));
                }
            }
            if (!group["hosts"]) {
                errors.add(group.Mark(), "a group needs 'hosts' (a hostlist: node[001-064])");
            }
            if (name.isEmpty()) {
                name = QStringLiteral("group%1").arg(parsed.file.groups.size() + 1);
            }
            parsed.file.groups << name;
            for (auto &node : parsed.file.nodes) {
                if (node.group.isEmpty()) {
                    node.group = name;
                }
            }
        }
    }
    parsed.errors = errors.take();
    if (!parsed.ok()) {
        parsed.file.nodes.clear();
    }
    return parsed;
}

ClusterFile::Parsed ClusterFile::load(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        Parsed parsed;
        parsed.errors << QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return parsed;
    }
    return parse(QString::fromUtf8(file.readAll()), path);
}

ClusterFile::Parsed ClusterFile::fromHostlist(const QString &hostlist, const Endpoint &credentials)
{
    Parsed parsed;
    auto addresses = expandAddresses(hostlist);
    if (!addresses) {
        parsed.errors << "-H " + hostlist + ": " +
                             QString::fromStdString(addresses.status().message());
        return parsed;
    }
    parsed.file.name = hostlist;
    parsed.file.groups << QStringLiteral("hosts");
    for (const auto &address : *addresses) {
        Endpoint endpoint = credentials;
        endpoint.address = address;
        parsed.file.nodes << ClusterNode{QStringLiteral("hosts"), endpoint};
    }
    return parsed;
}

} // namespace lutra::console
