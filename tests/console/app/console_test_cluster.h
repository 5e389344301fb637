#pragma once
// What the console's GUI tests share: a cluster of real processes (per node a lutra-bench --loop
// workload and a lutra-ctld with an admin and a viewer token, on a port that survives a
// restart), the cluster file for it, screenshots that must have content, and small helpers.

#include "../../ctld/daemon/ctld_fixture.h"
#include "app/cluster_controller.h"

#include <QApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QWidget>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <memory>
#include <vector>

namespace lutra::console::test {

// A port the kernel just handed out, for a ctld that must come back on the same address.
inline int freePort()
{
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address);
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
    ::close(fd);
    return ntohs(address.sin_port);
}

inline QString screenshotDir()
{
    QString dir = qEnvironmentVariable("LUTRA_SCREENSHOT_DIR");
    if (dir.isEmpty()) {
        dir = QDir(QCoreApplication::applicationDirPath()).filePath("screenshots");
    }
    QDir().mkpath(dir);
    return dir;
}

// Saves the widget as console-<name>.png and checks the picture is not blank (it must have more
// than a handful of colours).
inline void screenshot(QWidget &widget, const QString &name)
{
    QApplication::processEvents();
    const QImage image = widget.grab().toImage();
    QSet<QRgb> colours;
    for (int y = 0; y < image.height() && colours.size() < 16; y += 7) {
        for (int x = 0; x < image.width() && colours.size() < 16; x += 7) {
            colours.insert(image.pixel(x, y));
        }
    }
    QVERIFY2(colours.size() >= 16, qPrintable(name + " looks blank"));
    const auto path = QDir(screenshotDir()).filePath("console-" + name + ".png");
    QVERIFY2(image.save(path), qPrintable("cannot write " + path));
}

inline QString cell(const QAbstractItemModel &model, int row, int column,
                    const QModelIndex &parent = {})
{
    return model.index(row, column, parent).data().toString();
}

// Waits for a NodeConnection call: `start` gets the done callback.
template <typename T>
Reply<T> await(const std::function<void(std::function<void(Reply<T>)>)> &start)
{
    Reply<T> result;
    bool done = false;
    start([&](Reply<T> reply) {
        result = std::move(reply);
        done = true;
    });
    if (!QTest::qWaitFor([&] { return done; }, 60000)) {
        result.error = QStringLiteral("timed out");
    }
    return result;
}

class TestCluster {
public:
    struct Node {
        QString name; // node001 ...
        QString runDir;
        int port = 0;
        int metricsPort = 0; // 0: no /metrics endpoint
        // With a target: lutra-target "ost0" in this node's run dir, serving its workload.
        std::unique_ptr<QProcess> target;
        std::unique_ptr<lutra::test::BenchProcess> bench;
        std::unique_ptr<lutra::test::CtldProcess> ctld;
        ~Node()
        {
            ctld.reset();
            bench.reset();
            if (target) {
                target->terminate();
                if (!target->waitForFinished(30000)) {
                    target->kill();
                    target->waitForFinished();
                }
            }
        }
    };

    // Tokens, then per node its workload (job 1001, 1002, ...) and its ctld (serving /metrics
    // on a port of its own with `withMetrics`). `withTarget`: node001's workload reads and
    // writes through a lutra-target in node001's run dir, so its ctld reports job 1001 from the
    // client (llite) and the target (obdfilter). Empty on success, else what failed.
    QString start(int nodes, bool withMetrics = false, bool withTarget = false)
    {
        if (!m_dir.isValid()) {
            return QStringLiteral("no temporary directory");
        }
        for (const auto &[token, secret] : {std::pair{"admin", "admin-secret-0123456789ab"},
                                            std::pair{"viewer", "viewer-secret-0123456789"}}) {
            QFile file(m_dir.filePath(QString(token) + ".token"));
            if (!file.open(QIODevice::WriteOnly)) {
                return "cannot write " + file.fileName();
            }
            file.write(QByteArray(secret) + "\n");
            file.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        }
        for (int i = 1; i <= nodes; ++i) {
            auto node = std::make_unique<Node>();
            node->name = QString("node%1").arg(i, 3, 10, QChar('0'));
            node->runDir = m_dir.filePath(node->name + "/run");
            QDir().mkpath(node->runDir);
            node->port = freePort();
            node->metricsPort = withMetrics ? freePort() : 0;
            QStringList benchOptions;
            if (withTarget && i == 1) {
                QString uri;
                if (const auto error = startTarget(*node, uri); !error.isEmpty()) {
                    return node->name + ": " + error;
                }
                benchOptions = {"--target", uri};
            }
            node->bench = std::make_unique<lutra::test::BenchProcess>(
                node->runDir, "job" + node->name, QString("100%1").arg(i), benchOptions);
            if (!node->bench->waitReady()) {
                return node->name + ": lutra-bench did not start";
            }
            m_nodes.push_back(std::move(node));
            if (!startCtld(i - 1)) {
                return m_nodes.back()->name + ": " + m_nodes.back()->ctld->log();
            }
        }
        return {};
    }

    // (Re)starts node i's ctld on its port, with its database kept.
    bool startCtld(int i)
    {
        auto &node = *m_nodes.at(std::size_t(i));
        node.ctld = std::make_unique<lutra::test::CtldProcess>(node.runDir, configFor(node, i));
        return node.ctld->waitReady();
    }

    Node &node(int i) { return *m_nodes.at(std::size_t(i)); }
    int size() const { return int(m_nodes.size()); }
    QString filePath(const QString &name) const { return m_dir.filePath(name); }
    void stop() { m_nodes.clear(); }

    // A cluster file of every node with `token` ("admin" or "viewer") and a short deadline: the
    // hung-node checks wait for it.
    QString clusterFile(const QString &token, const QString &prometheusUrl = {}) const
    {
        QString hosts;
        for (const auto &node : m_nodes) {
            hosts += (hosts.isEmpty() ? "" : ",") + QString("127.0.0.1:%1").arg(node->port);
        }
        const auto path = m_dir.filePath(token + "-cluster.yaml");
        QFile file(path);
        file.open(QIODevice::WriteOnly);
        file.write(
            QString("name: console-test\n"
                    "%3"
                    "timeout: 4s\n"
                    "token_file: %1.token\n"
                    "groups:\n"
                    "  - name: compute\n"
                    "    hosts: %2\n")
                .arg(token, hosts,
                     prometheusUrl.isEmpty() ? QString() : "prometheus: " + prometheusUrl + "\n")
                .toUtf8());
        return path;
    }

    // Every node connected, with its instances and a first counter update.
    static bool waitAllReady(ClusterController &cluster, int timeoutMs = 60000)
    {
        return QTest::qWaitFor(
            [&] {
                for (const auto &address : cluster.addresses()) {
                    const auto *connection = cluster.connection(address);
                    if (connection->state() != ConnectionState::ready ||
                        connection->instances().isEmpty() ||
                        cluster.latestCounters(address) == nullptr) {
                        return false;
                    }
                }
                return !cluster.addresses().isEmpty();
            },
            timeoutMs);
    }

private:
    // Starts node's lutra-target ost0 and sets `uri` to where it listens; else what failed.
    QString startTarget(Node &node, QString &uri) const
    {
        const QString root = m_dir.filePath(node.name + "/ost0");
        QDir().mkpath(root);
        node.target = std::make_unique<QProcess>();
        auto &process = *node.target;
        lutra::test::dieWithParent(process);
        process.setProcessEnvironment(lutra::test::environmentWith(node.runDir));
        process.setReadChannel(QProcess::StandardOutput);
        process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        process.start(QStringLiteral(LUTRA_TARGET_BIN),
                      {"--name", "ost0", "--root", root, "--listen", "tcp://127.0.0.1:0"});
        QElapsedTimer timer;
        timer.start();
        QByteArray output;
        while (timer.elapsed() < 60000 && process.state() != QProcess::NotRunning) {
            process.waitForReadyRead(200);
            output += process.readAll();
            static const QRegularExpression listening(QStringLiteral("listening on (\\S+)"));
            const auto match = listening.match(QString::fromUtf8(output));
            if (match.hasMatch()) {
                uri = match.captured(1);
                return {};
            }
        }
        return "lutra-target did not say where it listens: " + QString::fromUtf8(output);
    }

    QString configFor(const Node &node, int index) const
    {
        return QString("node: %1\n"
                       "labels: {role: compute, rack: r%2}\n"
                       "listen: 127.0.0.1:%3\n"
                       "metrics_listen: '%6'\n"
                       "run_dir: %4\n"
                       "db: %4/../ctld.db\n"
                       "sample_interval: 1s\n"
                       "poll_interval: 500ms\n"
                       "auth:\n"
                       "  tokens:\n"
                       "    - {name: ada, token_file: %5/admin.token, role: admin}\n"
                       "    - {name: vera, token_file: %5/viewer.token, role: viewer}\n")
            .arg(node.name)
            .arg(index + 1)
            .arg(node.port)
            .arg(node.runDir, m_dir.path(),
                 node.metricsPort > 0 ? QString("127.0.0.1:%1").arg(node.metricsPort) : QString());
    }

    QTemporaryDir m_dir;
    std::vector<std::unique_ptr<Node>> m_nodes;
};

} // namespace lutra::console::test
