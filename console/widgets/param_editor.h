#pragma once
// An editor for one parameter, built from its live ParamSpec: the input fits the type, the unit,
// placeholder, choices and special words come from the spec, and every keystroke is checked with
// the registry's own parser, so the editor says what the datapath would say before anything is
// sent. No range or choice is written in the console.

#include "core/param_check.h"
#include "core/types.h"

#include <QList>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace lutra::console {

class ParamEditor : public QWidget {
    Q_OBJECT

public:
    explicit ParamEditor(const ParamSpec &spec, QWidget *parent = nullptr);

    static ParamEditor *create(const ParamSpec &spec, QWidget *parent = nullptr);

    const ParamSpec &spec() const { return m_spec; }
    // What to send, in lctl syntax ("16M", "1", "crc32c", "clear").
    QString text() const;
    // Shows the live value; not an edit (edited() is not emitted).
    void setValue(const QString &current);
    ValueCheck check() const;

Q_SIGNALS:
    // The user changed the value (typing, toggling, choosing, a special word).
    void edited();

private:
    void specialToggled(QToolButton *button, bool checked);
    void syncSpecialButtons();
    void updateError();

    ParamSpec m_spec;
    QLineEdit *m_lineEdit = nullptr;
    QCheckBox *m_checkBox = nullptr;
    QComboBox *m_comboBox = nullptr;
    QLabel *m_unit = nullptr;
    QLabel *m_error = nullptr;
    QList<QToolButton *> m_specials;
    // The word of the checked special button, for inputs that cannot show a word themselves.
    QString m_special;
    // What the line edit held before a special word replaced it, restored when it is unchecked.
    QString m_beforeSpecial;
};

} // namespace lutra::console
