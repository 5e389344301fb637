#pragma once
// Where widget tests put their screenshots: $LUTRA_SCREENSHOT_DIR, else screenshots/ next to
// the test binary.

#include <QCoreApplication>
#include <QDir>
#include <QString>
#include <QWidget>

namespace lutra::console::test {

inline QString screenshotPath(const QString &name)
{
    QString dir = qEnvironmentVariable("LUTRA_SCREENSHOT_DIR");
    if (dir.isEmpty()) {
        dir = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("screenshots"));
    }
    QDir().mkpath(dir);
    return QDir(dir).filePath(QStringLiteral("widgets-") + name + QStringLiteral(".png"));
}

// Saves widget->grab(); true when the file was written.
inline bool saveScreenshot(QWidget *widget, const QString &name)
{
    return widget->grab().save(screenshotPath(name));
}

} // namespace lutra::console::test
