#pragma once
// The profile editor: YAML with line numbers and highlighting, checked 250 ms after the last
// keystroke with ctld's own profile checks (core/profile_check.h) against the connected nodes'
// schema. Errors show inline (wavy underline, marked line) and as a list of
// "file:line:col: message" that jumps to the place; the status line is the reason the console
// gives while Diff and Apply are disabled.

#include "core/profile_check.h"
#include "core/types.h"

#include <QList>
#include <QStringList>
#include <QWidget>

class QLabel;
class QListWidget;
class QListWidgetItem;
class QTimer;

namespace lutra::console {

class ProfileTextEdit;
class YamlHighlighter;

class ProfileEditor : public QWidget {
    Q_OBJECT

public:
    static constexpr int kCheckDelayMs = 250;

    explicit ProfileEditor(QWidget *parent = nullptr);

    // Each re-checks at once: a node connecting changes what the document means.
    void setSchema(const QList<InstanceSpecs> &schema);
    void setKnownProfiles(const QStringList &names);
    // How errors name the document: "inline" (as ctld does for a sent document) or a file name.
    void setSource(const QString &source);

    void setText(const QString &yaml); // checks at once
    QString text() const;

    // Checks now instead of after the delay (tests; before sending).
    void checkNow();
    const ProfileCheck &lastCheck() const { return m_check; }
    // No errors and the document has a name.
    bool isValid() const;
    QString statusText() const;

Q_SIGNALS:
    void checked(bool valid);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void showCheck();
    void goToError(const QListWidgetItem *item);

    ProfileTextEdit *m_text = nullptr;
    YamlHighlighter *m_highlighter = nullptr;
    QLabel *m_status = nullptr;
    QListWidget *m_errors = nullptr;
    QTimer *m_timer = nullptr;
    QList<InstanceSpecs> m_schema;
    QStringList m_knownProfiles;
    QString m_source = QStringLiteral("inline");
    ProfileCheck m_check;
    bool m_showingCheck = false; // re-highlighting is no edit
};

} // namespace lutra::console
