// ProfileEditor: a document typed into the editor is checked after the pause, its errors show as
// "file:line:col: message" (ctld's words), underlined in the text and counted in the status line;
// a click on an error goes there; fixing the text makes it valid. Screenshots of both states.

#include "widgets/profile_editor.h"
#include "widgets/yaml_highlighter.h"

#include <QCoreApplication>
#include <QDir>
#include <QLabel>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextLayout>
#include <QTimer>

using namespace lutra::console;

namespace {

QString screenshotPath(const QString &name)
{
    QString dir = qEnvironmentVariable("LUTRA_SCREENSHOT_DIR");
    if (dir.isEmpty()) {
        dir = QDir(QCoreApplication::applicationDirPath()).filePath(QStringLiteral("screenshots"));
    }
    QDir().mkpath(dir);
    return QDir(dir).filePath(name + QStringLiteral(".png"));
}

ParamSpec spec(const char *name, ParamType type, const char *unit, qint64 min, qint64 max)
{
    ParamSpec s;
    s.name = QString::fromLatin1(name);
    s.type = type;
    s.unit = QString::fromLatin1(unit);
    s.min = min;
    s.max = max;
    s.writable = true;
    return s;
}

// A client node as lutra-ctld reports it (datapath/core/params/catalog.cpp).
QList<InstanceSpecs> clientNode()
{
    ParamSpec lruSize =
        spec("ldlm.namespaces.ost0.lru_size", ParamType::integer, "", 0, qint64(1) << 24);
    lruSize.specialValues = {
        {QStringLiteral("clear"), QStringLiteral("cancel every unused lock now")}};
    return {InstanceSpecs{
        QStringLiteral("client-lutra"),
        {spec("osc.ost0.max_pages_per_rpc", ParamType::size, "pages", 1, 4096),
         spec("osc.ost0.max_rpcs_in_flight", ParamType::integer, "", 1, 512),
         spec("llite.lutra.max_read_ahead_mb", ParamType::size, "MiB", 0, qint64(1) << 20),
         lruSize}}};
}

// Typed line by line, as an admin would; two mistakes: a value out of range (line 7) and a
// misspelled parameter (line 8).
const QString kTyped = QStringLiteral("# Compute nodes: bigger RPCs and readahead for streaming\n"
                                      "name: compute\n"
                                      "extends: base\n"
                                      "match:\n"
                                      "  nodes: node[001-128]\n"
                                      "params:\n"
                                      "  osc.*.max_pages_per_rpc: 99999\n"
                                      "  osc.*.max_rpc_in_flight: 32\n"
                                      "  llite.*.max_read_ahead_mb: 256\n"
                                      "  ldlm.namespaces.*.lru_size: 0\n");

struct Parts {
    QPlainTextEdit *text = nullptr;
    QListWidget *errors = nullptr;
    QLabel *status = nullptr;
    QTimer *timer = nullptr;
};

Parts parts(ProfileEditor &editor)
{
    return {editor.findChild<QPlainTextEdit *>(QStringLiteral("profileEditor.text")),
            editor.findChild<QListWidget *>(QStringLiteral("profileEditor.errors")),
            editor.findChild<QLabel *>(QStringLiteral("profileEditor.status")),
            editor.findChild<QTimer *>(QStringLiteral("profileEditor.timer"))};
}

QStringList itemTexts(const QListWidget *list)
{
    QStringList texts;
    for (int i = 0; i < list->count(); ++i) {
        texts.append(list->item(i)->text());
    }
    return texts;
}

// QTest::keyClicks takes no '\n': each line is typed, then Return.
void type(QWidget *widget, const QString &text)
{
    const QStringList lines = text.split(QLatin1Char('\n'));
    for (qsizetype i = 0; i < lines.size(); ++i) {
        if (i > 0) {
            QTest::keyClick(widget, Qt::Key_Return);
        }
        QTest::keyClicks(widget, lines.at(i));
    }
}

void clickItem(QListWidget *list, int row)
{
    QListWidgetItem *item = list->item(row);
    QTest::mouseClick(list->viewport(), Qt::LeftButton, {}, list->visualItemRect(item).center());
}

// The characters of a line (1-based) the highlighter underlines with a wave.
QList<int> wavyColumns(QPlainTextEdit *text, int line)
{
    QList<int> columns;
    const QTextBlock block = text->document()->findBlockByNumber(line - 1);
    for (const QTextLayout::FormatRange &range : block.layout()->formats()) {
        if (range.format.underlineStyle() == QTextCharFormat::WaveUnderline) {
            for (int i = range.start; i < range.start + range.length; ++i) {
                columns.append(i);
            }
        }
    }
    std::sort(columns.begin(), columns.end());
    return columns;
}

QList<int> range(int from, int count)
{
    QList<int> list;
    for (int i = from; i < from + count; ++i) {
        list.append(i);
    }
    return list;
}

} // namespace

class TestProfileEditor : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void typeCheckClickFix()
    {
        ProfileEditor editor;
        editor.setSchema(clientNode());
        editor.setKnownProfiles({QStringLiteral("base"), QStringLiteral("site")});
        editor.resize(760, 520);
        editor.show();
        QVERIFY(QTest::qWaitForWindowExposed(&editor));
        const Parts p = parts(editor);
        QVERIFY(p.text && p.errors && p.status && p.timer);
        QSignalSpy checked(&editor, &ProfileEditor::checked);

        p.text->setFocus();
        type(p.text, kTyped);
        QCOMPARE(editor.text(), kTyped);
        QVERIFY(p.timer->isActive()); // the check waits for a pause in typing
        editor.checkNow();
        QVERIFY(!p.timer->isActive());
        QCOMPARE(checked.size(), 1);
        QCOMPARE(checked.last().at(0).toBool(), false);

        QVERIFY(!editor.isValid());
        QCOMPARE(editor.lastCheck().name, QStringLiteral("compute"));
        const QStringList items = itemTexts(p.errors);
        QCOMPARE(items.size(), 2);
        QCOMPARE(items.at(0), QStringLiteral("inline:7:28: osc.ost0.max_pages_per_rpc=99999: out "
                                             "of range; allowed: 1..4096 pages, or a size with a "
                                             "K/M/G/T/P suffix (16M = 4096 pages)"));
        QCOMPARE(items.at(1), QStringLiteral("inline:8:3: unknown parameter "
                                             "'osc.*.max_rpc_in_flight' (no parameter matches; did "
                                             "you mean osc.*.max_rpcs_in_flight?)"));
        QCOMPARE(p.status->text(), QStringLiteral("2 errors: fix them before a dry run"));
        QCOMPARE(editor.statusText(), p.status->text());
        // Underlined from the error's column to the end of its token, nothing else.
        QCOMPARE(wavyColumns(p.text, 7), range(27, 5)); // 99999
        QCOMPARE(wavyColumns(p.text, 8), range(2, 23)); // osc.*.max_rpc_in_flight
        QCOMPARE(wavyColumns(p.text, 9), QList<int>());

        clickItem(p.errors, 0);
        QCOMPARE(p.text->textCursor().blockNumber() + 1, 7);
        QCOMPARE(p.text->textCursor().positionInBlock() + 1, 28);
        QVERIFY(p.text->hasFocus()); // typing goes on where the error is
        QVERIFY(editor.grab().save(screenshotPath(QStringLiteral("profile-editor-error"))));

        // Fix the value where the click put the cursor.
        QTextCursor cursor = p.text->textCursor();
        cursor.movePosition(QTextCursor::EndOfBlock, QTextCursor::KeepAnchor);
        p.text->setTextCursor(cursor);
        QTest::keyClicks(p.text, QStringLiteral("16M"));
        editor.checkNow();
        QVERIFY(!editor.isValid());
        QCOMPARE(p.errors->count(), 1);
        QCOMPARE(p.status->text(), QStringLiteral("1 error: fix it before a dry run"));
        QVERIFY(wavyColumns(p.text, 7).isEmpty());

        // And the name: the click lands on the pattern.
        clickItem(p.errors, 0);
        QCOMPARE(p.text->textCursor().blockNumber() + 1, 8);
        QCOMPARE(p.text->textCursor().positionInBlock() + 1, 3);
        cursor = p.text->textCursor();
        cursor.movePosition(QTextCursor::Right, QTextCursor::KeepAnchor, 23);
        p.text->setTextCursor(cursor);
        QTest::keyClicks(p.text, QStringLiteral("osc.*.max_rpcs_in_flight"));
        editor.checkNow();

        QVERIFY(editor.isValid());
        QCOMPARE(checked.last().at(0).toBool(), true);
        QCOMPARE(p.errors->count(), 0);
        QCOMPARE(p.status->text(), QStringLiteral("✓ valid for the connected nodes' schema"));
        QVERIFY(wavyColumns(p.text, 8).isEmpty());
        p.text->moveCursor(QTextCursor::End);
        QVERIFY(editor.grab().save(screenshotPath(QStringLiteral("profile-editor-valid"))));
    }

    void checksAfterThePause()
    {
        ProfileEditor editor;
        editor.setSchema(clientNode());
        const Parts p = parts(editor);
        QSignalSpy checked(&editor, &ProfileEditor::checked);
        type(p.text, QStringLiteral("name: c\nparams:\n  osc.ost0.max_rpcs_in_flight: 0"));
        QCOMPARE(checked.size(), 0); // not on every keystroke
        QCOMPARE(p.timer->interval(), ProfileEditor::kCheckDelayMs);
        QVERIFY(p.timer->isActive());
        QVERIFY(checked.wait(5000));
        QCOMPARE(checked.size(), 1);
        QCOMPARE(checked.last().at(0).toBool(), false);
        QCOMPARE(itemTexts(p.errors),
                 QStringList{QStringLiteral("inline:3:32: osc.ost0.max_rpcs_in_flight=0: out of "
                                            "range; allowed: an integer, 1..512")});
        // Showing the result (re-highlighting) is no edit: nothing is pending.
        QVERIFY(!p.timer->isActive());
        editor.setText(QStringLiteral("name: c\n"));
        QVERIFY(!p.timer->isActive());
        QVERIFY(editor.isValid());
    }

    void columnsAreBytes()
    {
        // ctld counts UTF-8 bytes; the editor goes to the character.
        ProfileEditor editor;
        editor.setSchema(clientNode());
        const QString line = QStringLiteral(
            "{name: c, description: \"Müller's nodes\", params: {osc.ost0.max_rpcs_in_flight: 0}}");
        editor.setText(line);
        const Parts p = parts(editor);
        QCOMPARE(editor.lastCheck().errors.size(), 1);
        const int at = static_cast<int>(line.indexOf(QStringLiteral(": 0}"))) + 2;
        QCOMPARE(editor.lastCheck().errors.first().column, at + 2); // 1-based, ü is two bytes
        QCOMPARE(wavyColumns(p.text, 1), QList<int>{at});
        clickItem(p.errors, 0);
        QCOMPARE(p.text->textCursor().positionInBlock(), at);
    }

    void withoutSchemaOrText()
    {
        ProfileEditor editor;
        const Parts p = parts(editor);
        // Blank: not valid, and not shouted at either.
        QVERIFY(!editor.isValid());
        QCOMPARE(p.errors->count(), 0);
        QCOMPARE(p.status->text(), QStringLiteral("Empty profile: write one or open a file"));

        editor.setText(QStringLiteral("name: c\nparams:\n  osc.ost0.max_rpcs_in_flight: 0\n"));
        QVERIFY(editor.isValid());
        QCOMPARE(p.status->text(), QStringLiteral("✓ well-formed; parameters are checked once a "
                                                  "node is connected"));
        editor.setSchema(clientNode());
        QVERIFY(!editor.isValid());
        editor.setSchema({});
        QVERIFY(editor.isValid());

        editor.setSource(QStringLiteral("compute.yaml"));
        editor.setText(QStringLiteral("name: c\nextends: bse\n"));
        editor.setKnownProfiles({QStringLiteral("base")});
        QCOMPARE(itemTexts(p.errors),
                 QStringList{QStringLiteral(
                     "compute.yaml:2:10: unknown profile 'bse' in extends (did you mean base?)")});
    }

    void errorSpans()
    {
        using Span = YamlHighlighter::Span;
        const auto span = [](const QString &line, int start) {
            const Span s = YamlHighlighter::errorSpan(line, start);
            return QPair<int, int>(s.start, s.length);
        };
        QCOMPARE(span(QStringLiteral("  nodes: node[01-04],login1"), 9), qMakePair(9, 11));
        QCOMPARE(span(QStringLiteral("  nodes: node[01-04],login1"), 21), qMakePair(21, 6));
        QCOMPARE(span(QStringLiteral("  a.b: \"x y\" # c"), 7), qMakePair(7, 5));
        QCOMPARE(span(QStringLiteral("  a.b: [1, 2]"), 7), qMakePair(7, 6));
        QCOMPARE(span(QStringLiteral("  osc.*.x: 5"), 2), qMakePair(2, 7));
        QCOMPARE(span(QStringLiteral("{a: 0}"), 4), qMakePair(4, 1));
        QCOMPARE(span(QStringLiteral("ab"), 9), qMakePair(1, 1)); // past the end: the last one
        QCOMPARE(span(QString(), 0), qMakePair(0, 0));
        QCOMPARE(YamlHighlighter::textColumn(QStringLiteral("aü😀b"), 8), 4);
        QCOMPARE(YamlHighlighter::textColumn(QStringLiteral("ab"), 40), 2);
    }
};

QTEST_MAIN(TestProfileEditor)
#include "test_profile_editor.moc"
