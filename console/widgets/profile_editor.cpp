#include "widgets/profile_editor.h"

#include "widgets/yaml_highlighter.h"

#include <QFontDatabase>
#include <QHelpEvent>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPlainTextEdit>
#include <QSet>
#include <QSplitter>
#include <QStyle>
#include <QTextBlock>
#include <QTimer>
#include <QToolTip>
#include <QVBoxLayout>

#include <algorithm>

namespace lutra::console {

namespace {

const QColor kErrorColor(0xc6, 0x28, 0x28);
const QColor kErrorLine(0xfd, 0xec, 0xea);
const QColor kValidColor(0x2e, 0x7d, 0x32);
const QColor kGutterBackground(0xf3, 0xf3, 0xf3);
const QColor kGutterText(0x90, 0x90, 0x90);

constexpr int kLineRole = Qt::UserRole;
constexpr int kColumnRole = Qt::UserRole + 1;

} // namespace

// The text with a line-number gutter that marks the lines holding errors.
class ProfileTextEdit : public QPlainTextEdit {
public:
    explicit ProfileTextEdit(QWidget *parent);

    void setErrorLines(const QList<int> &lines);
    int gutterWidth() const;
    void paintGutter(const QRect &rect);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void updateGutterGeometry();

    QWidget *m_gutter = nullptr;
    QSet<int> m_errorLines; // 1-based
};

namespace {

class Gutter : public QWidget {
public:
    explicit Gutter(ProfileTextEdit *edit) : QWidget(edit), m_edit(edit) {}

    QSize sizeHint() const override { return {m_edit->gutterWidth(), 0}; }

protected:
    void paintEvent(QPaintEvent *event) override { m_edit->paintGutter(event->rect()); }

private:
    ProfileTextEdit *m_edit;
};

} // namespace

ProfileTextEdit::ProfileTextEdit(QWidget *parent) : QPlainTextEdit(parent)
{
    m_gutter = new Gutter(this);
    connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { updateGutterGeometry(); });
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect &rect, int dy) {
        if (dy != 0) {
            m_gutter->scroll(0, dy);
        } else {
            m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
        }
    });
    updateGutterGeometry();
}

void ProfileTextEdit::setErrorLines(const QList<int> &lines)
{
    m_errorLines = QSet<int>(lines.cbegin(), lines.cend());
    // The whole line tinted, so a long document shows its problems while scrolling.
    QList<QTextEdit::ExtraSelection> selections;
    for (const int line : lines) {
        const QTextBlock block = document()->findBlockByNumber(line - 1);
        if (!block.isValid()) {
            continue;
        }
        QTextEdit::ExtraSelection selection;
        selection.format.setBackground(kErrorLine);
        selection.format.setProperty(QTextFormat::FullWidthSelection, true);
        selection.cursor = QTextCursor(block);
        selections.append(selection);
    }
    setExtraSelections(selections);
    m_gutter->update();
}

int ProfileTextEdit::gutterWidth() const
{
    int digits = 1;
    for (int count = std::max(1, blockCount()); count >= 10; count /= 10) {
        ++digits;
    }
    digits = std::max(digits, 2);
    return 12 + fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits;
}

void ProfileTextEdit::paintGutter(const QRect &rect)
{
    QPainter painter(m_gutter);
    painter.fillRect(rect, kGutterBackground);
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    const int lineHeight = fontMetrics().height();
    const int width = m_gutter->width();
    QFont bold = font();
    bold.setBold(true);
    while (block.isValid() && top <= rect.bottom()) {
        const int bottom = top + qRound(blockBoundingRect(block).height());
        if (block.isVisible() && bottom >= rect.top()) {
            const int line = block.blockNumber() + 1;
            const bool error = m_errorLines.contains(line);
            if (error) {
                painter.fillRect(0, top, width, bottom - top, kErrorLine);
                painter.fillRect(0, top, 3, bottom - top, kErrorColor);
            }
            painter.setFont(error ? bold : font());
            painter.setPen(error ? kErrorColor : kGutterText);
            painter.drawText(0, top, width - 6, lineHeight, Qt::AlignRight | Qt::AlignVCenter,
                             QString::number(line));
        }
        block = block.next();
        top = bottom;
    }
}

void ProfileTextEdit::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    updateGutterGeometry();
}

void ProfileTextEdit::updateGutterGeometry()
{
    const int width = gutterWidth();
    setViewportMargins(width, 0, 0, 0);
    const QRect contents = contentsRect();
    m_gutter->setGeometry(contents.left(), contents.top(), width, contents.height());
}

ProfileEditor::ProfileEditor(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("profileEditor"));

    m_text = new ProfileTextEdit(this);
    m_text->setObjectName(QStringLiteral("profileEditor.text"));
    m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_text->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_text->setTabChangesFocus(false);
    m_text->setPlaceholderText(tr("name: compute\nparams:\n  osc.*.max_pages_per_rpc: 16M"));
    m_text->viewport()->installEventFilter(this);
    m_highlighter = new YamlHighlighter(m_text->document());

    m_status = new QLabel(this);
    m_status->setObjectName(QStringLiteral("profileEditor.status"));
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_status->setContentsMargins(4, 3, 4, 3);
    QFont statusFont = m_status->font();
    statusFont.setBold(true);
    m_status->setFont(statusFont);

    m_errors = new QListWidget(this);
    m_errors->setObjectName(QStringLiteral("profileEditor.errors"));
    m_errors->setWordWrap(true);
    m_errors->setTextElideMode(Qt::ElideNone);
    m_errors->setUniformItemSizes(false);
    connect(m_errors, &QListWidget::itemClicked, this,
            [this](const QListWidgetItem *item) { goToError(item); });
    connect(m_errors, &QListWidget::itemActivated, this,
            [this](const QListWidgetItem *item) { goToError(item); });

    auto *bottom = new QWidget(this);
    auto *bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    bottomLayout->setSpacing(2);
    bottomLayout->addWidget(m_status);
    bottomLayout->addWidget(m_errors, 1);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->addWidget(m_text);
    splitter->addWidget(bottom);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setChildrenCollapsible(false);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(splitter);

    m_timer = new QTimer(this);
    m_timer->setObjectName(QStringLiteral("profileEditor.timer"));
    m_timer->setSingleShot(true);
    m_timer->setInterval(kCheckDelayMs);
    connect(m_timer, &QTimer::timeout, this, &ProfileEditor::checkNow);
    connect(m_text, &QPlainTextEdit::textChanged, this, [this] {
        if (!m_showingCheck) {
            m_timer->start(); // restarts: the check runs once typing pauses
        }
    });

    checkNow();
}

void ProfileEditor::setSchema(const QList<InstanceSpecs> &schema)
{
    m_schema = schema;
    checkNow();
}

void ProfileEditor::setKnownProfiles(const QStringList &names)
{
    m_knownProfiles = names;
    checkNow();
}

void ProfileEditor::setSource(const QString &source)
{
    m_source = source;
    checkNow();
}

void ProfileEditor::setText(const QString &yaml)
{
    m_text->setPlainText(yaml);
    checkNow();
}

QString ProfileEditor::text() const
{
    return m_text->toPlainText();
}

void ProfileEditor::checkNow()
{
    m_timer->stop();
    m_check = checkProfile(text(), m_source, m_schema, m_knownProfiles);
    showCheck();
    Q_EMIT checked(isValid());
}

bool ProfileEditor::isValid() const
{
    return m_check.errors.isEmpty() && !m_check.name.isEmpty();
}

bool ProfileEditor::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_text->viewport() && event->type() == QEvent::ToolTip) {
        // The messages of the line under the mouse, where the underline is.
        const auto *help = static_cast<QHelpEvent *>(event);
        const int line = m_text->cursorForPosition(help->pos()).blockNumber() + 1;
        QStringList messages;
        for (const ProfileError &error : std::as_const(m_check.errors)) {
            if (error.line == line) {
                messages.append(error.message);
            }
        }
        if (messages.isEmpty()) {
            QToolTip::hideText();
        } else {
            QToolTip::showText(help->globalPos(), messages.join(QLatin1Char('\n')),
                               m_text->viewport());
        }
        return true;
    }
    return QWidget::eventFilter(watched, event);
}

QString ProfileEditor::statusText() const
{
    if (text().trimmed().isEmpty()) {
        return tr("Empty profile: write one or open a file");
    }
    const auto count = m_check.errors.size();
    if (count == 1) {
        return tr("1 error: fix it before a dry run");
    }
    if (count > 1) {
        return tr("%1 errors: fix them before a dry run").arg(count);
    }
    if (m_check.name.isEmpty()) {
        return tr("The profile has no name");
    }
    const bool anySpec = std::any_of(m_schema.cbegin(), m_schema.cend(),
                                     [](const InstanceSpecs &i) { return !i.specs.isEmpty(); });
    if (!anySpec) {
        return tr("✓ well-formed; parameters are checked once a node is connected");
    }
    return tr("✓ valid for the connected nodes' schema");
}

void ProfileEditor::showCheck()
{
    m_showingCheck = true;
    // A blank document is where one starts, not a mistake: no red until something is written.
    const bool blank = text().trimmed().isEmpty();
    const QList<ProfileError> shown = blank ? QList<ProfileError>() : m_check.errors;
    m_highlighter->setErrors(shown);
    m_text->setErrorLines(blank ? QList<int>() : m_check.errorLines);
    m_showingCheck = false;

    m_errors->clear();
    const QIcon icon = style()->standardIcon(QStyle::SP_MessageBoxCritical);
    for (const ProfileError &error : shown) {
        auto *item = new QListWidgetItem(icon, profileErrorText(error), m_errors);
        item->setData(kLineRole, error.line);
        item->setData(kColumnRole, error.column);
        item->setToolTip(item->text());
    }

    m_status->setText(statusText());
    QPalette palette = m_status->palette();
    palette.setColor(QPalette::WindowText,
                     isValid() ? kValidColor
                               : (blank ? palette.color(QPalette::Text) : kErrorColor));
    m_status->setPalette(palette);
}

void ProfileEditor::goToError(const QListWidgetItem *item)
{
    const int line = item->data(kLineRole).toInt();
    if (line <= 0) {
        return; // the whole file: nowhere to go
    }
    const QTextBlock block = m_text->document()->findBlockByNumber(line - 1);
    if (!block.isValid()) {
        return;
    }
    const int column = YamlHighlighter::textColumn(block.text(), item->data(kColumnRole).toInt());
    QTextCursor cursor(block);
    cursor.setPosition(block.position() + column);
    m_text->setTextCursor(cursor);
    m_text->ensureCursorVisible();
    m_text->setFocus(Qt::OtherFocusReason);
}

} // namespace lutra::console
