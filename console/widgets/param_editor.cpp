#include "widgets/param_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>

namespace lutra::console {

namespace {

const QColor kErrorColor(0xc6, 0x28, 0x28);

} // namespace

ParamEditor::ParamEditor(const ParamSpec &spec, QWidget *parent) : QWidget(parent), m_spec(spec)
{
    setObjectName(QStringLiteral("paramEditor"));
    auto *outer = new QVBoxLayout(this);
    outer->setContentsMargins(0, 0, 0, 0);
    outer->setSpacing(2);
    auto *row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    outer->addLayout(row);

    QString tip = m_spec.help;
    if (!m_spec.allowed.isEmpty()) {
        tip += (tip.isEmpty() ? QString() : QStringLiteral("\n")) +
               tr("Allowed: %1").arg(m_spec.allowed);
    }

    switch (m_spec.type) {
    case ParamType::boolean:
        m_checkBox = new QCheckBox(this);
        m_checkBox->setObjectName(QStringLiteral("paramEditor.checkBox"));
        m_checkBox->setToolTip(tip);
        connect(m_checkBox, &QCheckBox::clicked, this, &ParamEditor::edited);
        row->addWidget(m_checkBox);
        break;
    case ParamType::enumeration:
        m_comboBox = new QComboBox(this);
        m_comboBox->setObjectName(QStringLiteral("paramEditor.comboBox"));
        m_comboBox->addItems(m_spec.choices);
        m_comboBox->setToolTip(tip);
        connect(m_comboBox, &QComboBox::activated, this, &ParamEditor::edited);
        row->addWidget(m_comboBox);
        break;
    case ParamType::counters:
        // A counter block takes no value: only its special words, or a command argument.
        if (!m_spec.textCommands) {
            break;
        }
        [[fallthrough]];
    case ParamType::integer:
    case ParamType::size:
    case ParamType::duration:
    case ParamType::string:
    case ParamType::unspecified:
        m_lineEdit = new QLineEdit(this);
        m_lineEdit->setObjectName(QStringLiteral("paramEditor.lineEdit"));
        m_lineEdit->setPlaceholderText(m_spec.allowed);
        m_lineEdit->setToolTip(tip);
        connect(m_lineEdit, &QLineEdit::textChanged, this, [this] {
            syncSpecialButtons();
            updateError();
        });
        connect(m_lineEdit, &QLineEdit::textEdited, this, &ParamEditor::edited);
        row->addWidget(m_lineEdit, 1);
        break;
    }

    if (!m_spec.unit.isEmpty()) {
        m_unit = new QLabel(m_spec.unit, this);
        m_unit->setObjectName(QStringLiteral("paramEditor.unit"));
        row->addWidget(m_unit);
    }

    for (const SpecialValue &special : std::as_const(m_spec.specialValues)) {
        auto *button = new QToolButton(this);
        button->setObjectName(QStringLiteral("paramEditor.special.") + special.word);
        button->setText(special.word);
        button->setToolTip(special.help);
        button->setCheckable(true);
        connect(button, &QToolButton::clicked, this,
                [this, button](bool checked) { specialToggled(button, checked); });
        row->addWidget(button);
        m_specials.append(button);
    }
    if (!m_lineEdit) {
        row->addStretch(1);
    }

    m_error = new QLabel(this);
    m_error->setObjectName(QStringLiteral("paramEditor.error"));
    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QPalette errorPalette = m_error->palette();
    errorPalette.setColor(QPalette::WindowText, kErrorColor);
    m_error->setPalette(errorPalette);
    m_error->hide();
    outer->addWidget(m_error);

    if (!m_spec.writable) {
        const QString readOnly =
            m_spec.help.isEmpty() ? tr("read-only") : tr("read-only: %1").arg(m_spec.help);
        setEnabled(false);
        setToolTip(readOnly);
        for (QWidget *child : findChildren<QWidget *>()) {
            child->setToolTip(readOnly);
        }
    }
}

ParamEditor *ParamEditor::create(const ParamSpec &spec, QWidget *parent)
{
    return new ParamEditor(spec, parent);
}

QString ParamEditor::text() const
{
    if (m_lineEdit) {
        return m_lineEdit->text().trimmed();
    }
    if (!m_special.isEmpty()) {
        return m_special;
    }
    if (m_checkBox) {
        return m_checkBox->isChecked() ? QStringLiteral("1") : QStringLiteral("0");
    }
    if (m_comboBox) {
        return m_comboBox->currentText();
    }
    return {};
}

void ParamEditor::setValue(const QString &current)
{
    m_special.clear();
    m_beforeSpecial.clear();
    if (m_lineEdit) {
        const QSignalBlocker blocker(m_lineEdit);
        m_lineEdit->setText(current);
    }
    if (m_checkBox) {
        // The live value is canonical ("1"), but parse it as the registry would ("on").
        const ValueCheck parsed = checkValue(m_spec, current);
        const QSignalBlocker blocker(m_checkBox);
        m_checkBox->setChecked(parsed.ok && !parsed.special && parsed.canonical == u"1");
    }
    if (m_comboBox) {
        const QSignalBlocker blocker(m_comboBox);
        const int index = m_comboBox->findText(current);
        if (index >= 0) {
            m_comboBox->setCurrentIndex(index);
        }
    }
    syncSpecialButtons();
    updateError();
}

ValueCheck ParamEditor::check() const
{
    return checkValue(m_spec, text());
}

void ParamEditor::specialToggled(QToolButton *button, bool checked)
{
    const QString word = button->text();
    for (QToolButton *other : std::as_const(m_specials)) {
        if (other != button) {
            other->setChecked(false);
        }
    }
    if (m_lineEdit) {
        // The word goes into the field itself, so what is sent is what is shown.
        const QSignalBlocker blocker(m_lineEdit);
        if (checked) {
            const QString previous = m_lineEdit->text();
            const bool wasSpecial = std::any_of(
                m_spec.specialValues.cbegin(), m_spec.specialValues.cend(),
                [&previous](const SpecialValue &special) { return special.word == previous; });
            if (!wasSpecial) {
                m_beforeSpecial = previous;
            }
            m_lineEdit->setText(word);
        } else if (m_lineEdit->text() == word) {
            m_lineEdit->setText(m_beforeSpecial);
        }
    } else {
        m_special = checked ? word : QString();
        if (m_checkBox) {
            m_checkBox->setEnabled(!checked);
        }
        if (m_comboBox) {
            m_comboBox->setEnabled(!checked);
        }
    }
    updateError();
    Q_EMIT edited();
}

void ParamEditor::syncSpecialButtons()
{
    const QString current = text();
    for (QToolButton *button : std::as_const(m_specials)) {
        button->setChecked(button->text() == current);
    }
    if (!m_lineEdit) {
        if (m_checkBox) {
            m_checkBox->setEnabled(m_special.isEmpty());
        }
        if (m_comboBox) {
            m_comboBox->setEnabled(m_special.isEmpty());
        }
    }
}

void ParamEditor::updateError()
{
    const QString current = text();
    // Nothing typed yet is not an error worth red text; check() still reports it.
    if (!m_spec.writable || current.isEmpty()) {
        m_error->clear();
        m_error->hide();
        return;
    }
    const ValueCheck result = checkValue(m_spec, current);
    m_error->setText(result.ok ? QString() : result.error);
    m_error->setVisible(!result.ok);
}

} // namespace lutra::console
