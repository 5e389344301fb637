#pragma once
// A test node: two lutra-bench --loop datapath processes (bench-a, bench-b) in a temporary run
// dir, lutra-ctld started on demand with a real SQLite file, and lutractl on its local socket.

#include "ctld_fixture.h"
#include "lutra/datapath/v1/control.grpc.pb.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <grpcpp/grpcpp.h>

namespace lutra::test {

inline QString ctldConfig(const QString &dir, const QString &extra = {})
{
    return QString("node: testnode\n"
                   "labels: {rack: r7}\n"
                   "listen: 127.0.0.1:0\n"
                   "metrics_listen: 127.0.0.1:0\n"
                   "run_dir: %1/run\n"
                   "db: %1/ctld.db\n"
                   "profiles_dir: %2\n"
                   "sample_interval: 1s\n"
                   "poll_interval: 200ms\n")
               .arg(dir, QStringLiteral(LUTRA_PROFILES_DIR)) +
           extra;
}

// One parameter of one datapath process, read straight from its control socket.
inline std::string datapathValue(const QString &runDir, const std::string &instance,
                                 const std::string &name)
{
    auto stub = lutra::datapath::v1::DatapathControl::NewStub(
        grpc::CreateChannel("unix:" + runDir.toStdString() + "/" + instance + ".sock",
                            grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    lutra::datapath::v1::GetParamsRequest request;
    request.add_patterns(name);
    lutra::datapath::v1::GetParamsReply reply;
    if (!stub->GetParams(&context, request, &reply).ok() || reply.values_size() != 1) {
        return "<unreachable>";
    }
    return reply.values(0).value();
}

// Sets one parameter of one datapath process straight through its control socket.
inline bool setDatapathValue(const QString &runDir, const std::string &instance,
                             const std::string &name, const std::string &value)
{
    auto stub = lutra::datapath::v1::DatapathControl::NewStub(
        grpc::CreateChannel("unix:" + runDir.toStdString() + "/" + instance + ".sock",
                            grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    lutra::datapath::v1::SetParamsRequest request;
    request.set_principal("test");
    auto *assignment = request.add_assignments();
    assignment->set_pattern(name);
    assignment->set_value(value);
    lutra::datapath::v1::SetParamsReply reply;
    return stub->SetParams(&context, request, &reply).ok() && reply.result().applied();
}

inline QJsonObject jsonOf(const CommandResult &result)
{
    return QJsonDocument::fromJson(result.out.toUtf8()).object();
}

class CtldNode {
public:
    // Starts bench-a and bench-b; check ready() before use.
    CtldNode()
    {
        m_runDir = m_dir.path() + "/run";
        std::filesystem::create_directories(m_runDir.toStdString());
        m_benchA = std::make_unique<BenchProcess>(m_runDir, "a", "jobA");
        m_benchB = std::make_unique<BenchProcess>(m_runDir, "b", "jobB");
    }

    bool ready() { return m_dir.isValid() && m_benchA->waitReady() && m_benchB->waitReady(); }
    QString dir() const { return m_dir.path(); }
    const QString &runDir() const { return m_runDir; }
    std::string dbPath() const { return m_dir.path().toStdString() + "/ctld.db"; }
    BenchProcess &bench(char which) { return which == 'a' ? *m_benchA : *m_benchB; }

    std::string value(const std::string &instance, const std::string &name) const
    {
        return datapathValue(m_runDir, instance, name);
    }

    CommandResult lutractl(const QStringList &arguments, int timeoutMs = 60000) const
    {
        return runProcess(QStringLiteral(LUTRACTL_BIN),
                          QStringList{"--socket", m_runDir + "/ctld.sock"} + arguments, m_runDir,
                          timeoutMs);
    }

    // A ctld that is not waited for (it may kill itself before it is ready).
    std::unique_ptr<CtldProcess> launchCtld(const QString &program, const QStringList &environment,
                                            const QString &extra = {}) const
    {
        ::unlink((m_runDir + "/ctld.sock").toLocal8Bit().constData());
        auto config = ctldConfig(m_dir.path(), extra);
        if (!m_profilesDir.isEmpty()) {
            config.replace(QStringLiteral(LUTRA_PROFILES_DIR), m_profilesDir);
        }
        return std::make_unique<CtldProcess>(m_runDir, config, "ctld.yaml", environment, program);
    }

    // A ready ctld connected to both datapath processes, or nullptr (with its log as a warning).
    std::unique_ptr<CtldProcess> startCtld(const QString &extra = {},
                                           const QStringList &environment = {},
                                           const QString &program = QStringLiteral(LUTRA_CTLD_BIN),
                                           int expectedInstances = 2) const
    {
        auto ctld = launchCtld(program, environment, extra);
        if (!ctld->waitReady()) {
            qWarning("%s", qPrintable(ctld->log()));
            return nullptr;
        }
        QElapsedTimer timer;
        timer.start();
        while (lutractl({"instances"}).out.count("connected") != expectedInstances) {
            if (timer.elapsed() > 30000) {
                qWarning("ctld did not connect to the datapath processes");
                return nullptr;
            }
            QTest::qWait(100);
        }
        return ctld;
    }

    // profiles_dir for the next ctld (empty: the shipped config/profiles).
    void setProfilesDir(const QString &dir) { m_profilesDir = dir; }

    void freshDatabase() const
    {
        for (const char *suffix : {"", "-wal", "-shm"}) {
            std::filesystem::remove(dbPath() + suffix);
        }
    }

private:
    QTemporaryDir m_dir;
    QString m_runDir;
    QString m_profilesDir;
    std::unique_ptr<BenchProcess> m_benchA;
    std::unique_ptr<BenchProcess> m_benchB;
};

} // namespace lutra::test
