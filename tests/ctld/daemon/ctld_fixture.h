#pragma once
// Real processes for ctld tests: lutra-bench --loop as live datapath processes, lutra-ctld, and
// lutractl, all in one temporary run dir.

#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <sys/prctl.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

namespace lutra::test {

struct CommandResult {
    int exitCode = -1;
    QString out;
    QString err;
};

// Children die with the test, even when CTest kills it on a timeout.
inline void dieWithParent(QProcess &process)
{
    process.setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGKILL); });
}

inline QProcessEnvironment environmentWith(const QString &runDir)
{
    auto environment = QProcessEnvironment::systemEnvironment();
    environment.insert("LUTRA_RUN_DIR", runDir);
    // The processes are stopped with SIGKILL on purpose in some tests; their leaks don't matter.
    environment.insert("ASAN_OPTIONS", "detect_leaks=0");
    return environment;
}

inline CommandResult runProcess(const QString &program, const QStringList &arguments,
                                const QString &runDir, int timeoutMs = 60000)
{
    QProcess process;
    dieWithParent(process);
    process.setProcessEnvironment(environmentWith(runDir));
    process.start(program, arguments);
    CommandResult result;
    if (!process.waitForFinished(timeoutMs)) {
        process.kill();
        process.waitForFinished();
        result.err = "timed out";
        return result;
    }
    result.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

// A lutra-bench --loop process (with its own targets) serving bench-<name>.sock.
class BenchProcess {
public:
    // `options`: lutra-bench's own, before the mode ("--target", uri).
    BenchProcess(const QString &runDir, const QString &name, const QString &job,
                 const QStringList &options = {})
        : m_runDir(runDir)
    {
        dieWithParent(m_process);
        m_process.setProcessEnvironment(environmentWith(runDir));
        m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_process.start(QStringLiteral(LUTRA_BENCH_BIN),
                        QStringList{"--loop", "--job", job, "--name", name} + options +
                            QStringList{"ior-easy", "--file-mb", "2"});
        m_socket = runDir.toStdString() + "/bench-" + name.toStdString() + ".sock";
    }
    ~BenchProcess() { stop(); }

    bool waitReady(int timeoutMs = 60000)
    {
        QElapsedTimer timer;
        timer.start();
        while (!std::filesystem::exists(m_socket)) {
            if (timer.elapsed() > timeoutMs || m_process.state() == QProcess::NotRunning) {
                return false;
            }
            QTest::qWait(50);
        }
        return true;
    }
    qint64 pid() const { return m_process.processId(); }
    void stop()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.terminate();
            if (!m_process.waitForFinished(30000)) {
                m_process.kill();
                m_process.waitForFinished();
            }
        }
    }
    void kill()
    {
        m_process.kill();
        m_process.waitForFinished();
    }

private:
    QString m_runDir;
    QProcess m_process;
    std::filesystem::path m_socket;
};

// lutra-ctld with a config written into the run dir; ready when it printed its ready line.
class CtldProcess {
public:
    CtldProcess(const QString &runDir, const QString &configText,
                const QString &configName = "ctld.yaml", const QStringList &extraEnvironment = {},
                const QString &program = QStringLiteral(LUTRA_CTLD_BIN))
    {
        m_config = runDir + "/" + configName;
        std::ofstream(m_config.toStdString()) << configText.toStdString();
        auto environment = environmentWith(runDir);
        for (const auto &entry : extraEnvironment) {
            environment.insert(entry.section('=', 0, 0), entry.section('=', 1));
        }
        dieWithParent(m_process);
        m_process.setProcessEnvironment(environment);
        m_process.start(program, {"--config", m_config});
    }
    ~CtldProcess() { stop(); }

    // Waits for "lutra-ctld: ready ..." and reads the ports it chose.
    bool waitReady(int timeoutMs = 60000)
    {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < timeoutMs) {
            if (m_process.state() == QProcess::NotRunning) {
                m_stderr += QString::fromUtf8(m_process.readAllStandardError());
                return false;
            }
            m_process.waitForReadyRead(100);
            m_stdout += QString::fromUtf8(m_process.readAllStandardOutput());
            m_stderr += QString::fromUtf8(m_process.readAllStandardError());
            const auto match =
                QRegularExpression(R"(ready node=\S+ grpc=(\S+)(?: unix=\S+)?(?: metrics=(\S+))?)")
                    .match(m_stdout);
            if (match.hasMatch()) {
                m_grpc = match.captured(1);
                m_metrics = match.captured(2);
                return true;
            }
        }
        return false;
    }
    const QString &grpcAddress() const { return m_grpc; }
    const QString &metricsAddress() const { return m_metrics; }
    QString log()
    {
        return m_stdout + m_stderr + QString::fromUtf8(m_process.readAllStandardError());
    }
    QProcess &process() { return m_process; }
    qint64 pid() const { return m_process.processId(); }

    int stop()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.terminate();
            if (!m_process.waitForFinished(30000)) {
                m_process.kill();
                m_process.waitForFinished();
            }
        }
        return m_process.exitStatus() == QProcess::NormalExit ? m_process.exitCode() : -1;
    }

private:
    QString m_config;
    QProcess m_process;
    QString m_stdout;
    QString m_stderr;
    QString m_grpc;
    QString m_metrics;
};

} // namespace lutra::test
