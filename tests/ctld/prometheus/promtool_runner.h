#pragma once
// Runs Debian's promtool (package prometheus) as a real process and returns its exit code and
// combined output.

#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QStringList>

namespace lutra::test {

struct PromtoolResult {
    int exitCode = -1;
    QString output;
};

inline PromtoolResult runPromtool(const QStringList &arguments, const QString &workingDir = {})
{
    const QString promtool = QStandardPaths::findExecutable("promtool");
    if (promtool.isEmpty()) {
        return {-1, "promtool not found: install Debian's prometheus package "
                    "(packaging/install-deps.sh)"};
    }
    QProcess process;
    process.setProcessChannelMode(QProcess::MergedChannels);
    if (!workingDir.isEmpty()) {
        process.setWorkingDirectory(workingDir);
    }
    process.start(promtool, arguments);
    if (!process.waitForFinished(60000)) {
        process.kill();
        process.waitForFinished();
        return {-1, "promtool " + arguments.join(' ') + " did not finish"};
    }
    const int code = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    return {code, QString::fromUtf8(process.readAll())};
}

} // namespace lutra::test
