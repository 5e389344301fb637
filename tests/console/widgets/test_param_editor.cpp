// ParamEditor: one editor per type, built from the spec alone; the registry's own message shows
// as you type; special words; read-only.

#include "screenshot.h"
#include "widgets/param_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>

#include <memory>

using namespace lutra::console;

namespace {

// Specs as lutra-ctld sends them (datapath/core/params/catalog.cpp), allowed text included.
ParamSpec maxPagesPerRpc()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.max_pages_per_rpc");
    spec.type = ParamType::size;
    spec.unit = QStringLiteral("pages");
    spec.min = 1;
    spec.max = 4096;
    spec.defaultValue = QStringLiteral("1024");
    spec.writable = true;
    spec.help = QStringLiteral("pages in one bulk RPC (a size such as 4M is converted)");
    spec.allowed =
        QStringLiteral("1..4096 pages, or a size with a K/M/G/T/P suffix (16M = 4096 pages)");
    return spec;
}

ParamSpec lruSize()
{
    ParamSpec spec;
    spec.name = QStringLiteral("ldlm.namespaces.ost0.lru_size");
    spec.type = ParamType::integer;
    spec.min = 0;
    spec.max = 1 << 24;
    spec.writable = true;
    spec.help = QStringLiteral("unused locks kept cached (0 = sized dynamically)");
    spec.specialValues = {
        {QStringLiteral("clear"), QStringLiteral("cancel every unused lock now")}};
    spec.allowed = QStringLiteral("an integer, 0..16777216; or 'clear' (cancel every unused lock "
                                  "now)");
    return spec;
}

ParamSpec lruMaxAge()
{
    ParamSpec spec;
    spec.name = QStringLiteral("ldlm.namespaces.ost0.lru_max_age");
    spec.type = ParamType::duration;
    spec.unit = QStringLiteral("s");
    spec.min = 1;
    spec.max = 7 * 24 * 3600;
    spec.writable = true;
    spec.allowed = QStringLiteral("1..604800 s, or a duration with an s or ms suffix");
    return spec;
}

ParamSpec checksums()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.checksums");
    spec.type = ParamType::boolean;
    spec.max = 1;
    spec.writable = true;
    spec.help = QStringLiteral("verify bulk data with per-page checksums");
    return spec;
}

ParamSpec checksumType()
{
    ParamSpec spec;
    spec.name = QStringLiteral("osc.ost0.checksum_type");
    spec.type = ParamType::enumeration;
    spec.choices = {QStringLiteral("crc32c"), QStringLiteral("adler"), QStringLiteral("t10ip4K")};
    spec.writable = true;
    return spec;
}

ParamSpec jobidVar()
{
    ParamSpec spec;
    spec.name = QStringLiteral("jobid_var");
    spec.type = ParamType::string;
    spec.writable = true;
    spec.allowed = QStringLiteral("printable text of at most 255 characters");
    return spec;
}

ParamSpec lockCount()
{
    ParamSpec spec;
    spec.name = QStringLiteral("ldlm.namespaces.ost0.lock_count");
    spec.type = ParamType::integer;
    spec.max = std::numeric_limits<qint64>::max();
    spec.writable = false;
    spec.help = QStringLiteral("locks held or cached");
    return spec;
}

template <typename T> T *child(QWidget *editor, const QString &name)
{
    return editor->findChild<T *>(name);
}

} // namespace

class TestParamEditor : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void sizeEditorShowsTheRegistrysError()
    {
        std::unique_ptr<ParamEditor> editor(ParamEditor::create(maxPagesPerRpc(), nullptr));
        editor->resize(560, 72); // room for the two-line error in the screenshot
        editor->show();
        QVERIFY(QTest::qWaitForWindowExposed(editor.get()));
        auto *line = child<QLineEdit>(editor.get(), QStringLiteral("paramEditor.lineEdit"));
        auto *error = child<QLabel>(editor.get(), QStringLiteral("paramEditor.error"));
        auto *unit = child<QLabel>(editor.get(), QStringLiteral("paramEditor.unit"));
        QVERIFY(line && error && unit);
        QCOMPARE(line->placeholderText(), maxPagesPerRpc().allowed);
        QCOMPARE(unit->text(), QStringLiteral("pages"));
        QVERIFY(!editor->findChild<QCheckBox *>());
        QVERIFY(!editor->findChild<QToolButton *>());

        editor->setValue(QStringLiteral("1024"));
        QCOMPARE(editor->text(), QStringLiteral("1024"));
        QVERIFY(error->isHidden());

        QSignalSpy edited(editor.get(), &ParamEditor::edited);
        line->clear();
        QTest::keyClicks(line, QStringLiteral("8192"));
        QVERIFY(edited.count() >= 4);
        QVERIFY(!error->isHidden());
        QVERIFY2(error->text().contains(QStringLiteral("1..4096 pages")),
                 qPrintable(error->text()));
        QCOMPARE(error->text(), checkValue(maxPagesPerRpc(), QStringLiteral("8192")).error);
        QVERIFY(!editor->check().ok);
        QCOMPARE(editor->check().error, error->text());
        QVERIFY(test::saveScreenshot(editor.get(), QStringLiteral("param-editor-error")));

        line->clear();
        QTest::keyClicks(line, QStringLiteral("16M"));
        QVERIFY(error->isHidden());
        QCOMPARE(editor->text(), QStringLiteral("16M")); // sent as written; the datapath converts
        QVERIFY(editor->check().ok);
        QCOMPARE(editor->check().canonical, QStringLiteral("4096"));

        // The live value arriving is not an edit.
        const int before = static_cast<int>(edited.count());
        editor->setValue(QStringLiteral("256"));
        QCOMPARE(edited.count(), before);
        QCOMPARE(editor->text(), QStringLiteral("256"));
    }

    void durationAndString()
    {
        std::unique_ptr<ParamEditor> age(ParamEditor::create(lruMaxAge(), nullptr));
        QCOMPARE(child<QLabel>(age.get(), QStringLiteral("paramEditor.unit"))->text(),
                 QStringLiteral("s"));
        auto *line = child<QLineEdit>(age.get(), QStringLiteral("paramEditor.lineEdit"));
        QTest::keyClicks(line, QStringLiteral("1500ms"));
        QVERIFY(!age->check().ok);
        QVERIFY(age->check().error.contains(QStringLiteral("not a whole number of s")));

        std::unique_ptr<ParamEditor> var(ParamEditor::create(jobidVar(), nullptr));
        QVERIFY(!child<QLabel>(var.get(), QStringLiteral("paramEditor.unit")));
        auto *text = child<QLineEdit>(var.get(), QStringLiteral("paramEditor.lineEdit"));
        QVERIFY(text);
        QTest::keyClicks(text, QStringLiteral("SLURM_JOB_ID"));
        QCOMPARE(var->text(), QStringLiteral("SLURM_JOB_ID"));
        QVERIFY(var->check().ok);
    }

    void booleanIsACheckBox()
    {
        std::unique_ptr<ParamEditor> editor(ParamEditor::create(checksums(), nullptr));
        auto *box = child<QCheckBox>(editor.get(), QStringLiteral("paramEditor.checkBox"));
        QVERIFY(box);
        QVERIFY(!editor->findChild<QLineEdit *>());
        editor->setValue(QStringLiteral("on"));
        QVERIFY(box->isChecked());
        QCOMPARE(editor->text(), QStringLiteral("1"));
        QSignalSpy edited(editor.get(), &ParamEditor::edited);
        box->click();
        QCOMPARE(edited.count(), 1);
        QCOMPARE(editor->text(), QStringLiteral("0"));
        QVERIFY(editor->check().ok);
        editor->setValue(QStringLiteral("1"));
        QCOMPARE(editor->text(), QStringLiteral("1"));
        QCOMPARE(edited.count(), 1);
    }

    void enumerationIsAComboBox()
    {
        std::unique_ptr<ParamEditor> editor(ParamEditor::create(checksumType(), nullptr));
        auto *combo = child<QComboBox>(editor.get(), QStringLiteral("paramEditor.comboBox"));
        QVERIFY(combo);
        QStringList items;
        for (int i = 0; i < combo->count(); ++i) {
            items.append(combo->itemText(i));
        }
        QCOMPARE(items, checksumType().choices);
        editor->setValue(QStringLiteral("adler"));
        QCOMPARE(editor->text(), QStringLiteral("adler"));
        QSignalSpy edited(editor.get(), &ParamEditor::edited);
        combo->setFocus();
        QTest::keyClick(combo, Qt::Key_Down); // the user picks the next choice
        QCOMPARE(editor->text(), QStringLiteral("t10ip4K"));
        QCOMPARE(edited.count(), 1);
        QCOMPARE(editor->check().canonical, QStringLiteral("t10ip4K"));
    }

    void specialWordButton()
    {
        std::unique_ptr<ParamEditor> editor(ParamEditor::create(lruSize(), nullptr));
        auto *clear = child<QToolButton>(editor.get(), QStringLiteral("paramEditor.special.clear"));
        auto *line = child<QLineEdit>(editor.get(), QStringLiteral("paramEditor.lineEdit"));
        QVERIFY(clear && line);
        QCOMPARE(clear->text(), QStringLiteral("clear"));
        QCOMPARE(clear->toolTip(), QStringLiteral("cancel every unused lock now"));
        QVERIFY(clear->isCheckable());
        editor->setValue(QStringLiteral("100"));
        QVERIFY(!clear->isChecked());

        QSignalSpy edited(editor.get(), &ParamEditor::edited);
        clear->click();
        QCOMPARE(edited.count(), 1);
        QVERIFY(clear->isChecked());
        QCOMPARE(editor->text(), QStringLiteral("clear"));
        const ValueCheck check = editor->check();
        QVERIFY(check.ok);
        QVERIFY(check.special);
        QCOMPARE(check.canonical, QStringLiteral("clear"));

        // Unchecking gives the number back; typing the word checks the button.
        clear->click();
        QVERIFY(!clear->isChecked());
        QCOMPARE(editor->text(), QStringLiteral("100"));
        line->clear();
        QTest::keyClicks(line, QStringLiteral("clear"));
        QVERIFY(clear->isChecked());
        QTest::keyClick(line, Qt::Key_Backspace);
        QVERIFY(!clear->isChecked());
        QVERIFY(!editor->check().ok); // "clea" is not a number
    }

    void specialWordOnACounterBlock()
    {
        ParamSpec stats;
        stats.name = QStringLiteral("llite.lutra.read_ahead_stats");
        stats.type = ParamType::counters;
        stats.writable = true;
        stats.specialValues = {{QStringLiteral("clear"), QStringLiteral("reset the counters")}};
        std::unique_ptr<ParamEditor> editor(ParamEditor::create(stats, nullptr));
        QVERIFY(!editor->findChild<QLineEdit *>()); // nothing to type into
        QVERIFY(editor->text().isEmpty());
        QVERIFY(!editor->check().ok);
        auto *clear = child<QToolButton>(editor.get(), QStringLiteral("paramEditor.special.clear"));
        QVERIFY(clear);
        clear->click();
        QCOMPARE(editor->text(), QStringLiteral("clear"));
        QVERIFY(editor->check().special);
        clear->click();
        QVERIFY(editor->text().isEmpty());
    }

    void readOnlyIsDisabled()
    {
        std::unique_ptr<ParamEditor> editor(ParamEditor::create(lockCount(), nullptr));
        QVERIFY(!editor->isEnabled());
        QVERIFY(editor->toolTip().contains(QStringLiteral("read-only")));
        auto *line = child<QLineEdit>(editor.get(), QStringLiteral("paramEditor.lineEdit"));
        QVERIFY(line);
        QVERIFY(!line->isEnabled());
        QVERIFY(line->toolTip().contains(QStringLiteral("read-only")));
        editor->setValue(QStringLiteral("1234"));
        QCOMPARE(editor->text(), QStringLiteral("1234"));
        QVERIFY(child<QLabel>(editor.get(), QStringLiteral("paramEditor.error"))->isHidden());
    }

    void formScreenshot()
    {
        QWidget form;
        form.setObjectName(QStringLiteral("paramForm"));
        auto *layout = new QFormLayout(&form);
        const QList<std::pair<ParamSpec, QString>> rows{
            {maxPagesPerRpc(), QStringLiteral("1024")},
            {lruSize(), QStringLiteral("0")},
            {lruMaxAge(), QStringLiteral("3900")},
            {checksums(), QStringLiteral("1")},
            {checksumType(), QStringLiteral("crc32c")},
            {jobidVar(), QStringLiteral("SLURM_JOB_ID")},
            {lockCount(), QStringLiteral("1873")},
        };
        ParamEditor *pages = nullptr;
        for (const auto &[spec, value] : rows) {
            ParamEditor *editor = ParamEditor::create(spec, &form);
            editor->setValue(value);
            layout->addRow(spec.name.section(QLatin1Char('.'), -1), editor);
            if (!pages) {
                pages = editor;
            }
        }
        form.resize(640, form.sizeHint().height() + 40);
        form.show();
        QVERIFY(QTest::qWaitForWindowExposed(&form));
        auto *line = child<QLineEdit>(pages, QStringLiteral("paramEditor.lineEdit"));
        line->clear();
        QTest::keyClicks(line, QStringLiteral("32M"));
        QVERIFY(!pages->check().ok);
        QVERIFY(test::saveScreenshot(&form, QStringLiteral("param-editors")));
    }
};

QTEST_MAIN(TestParamEditor)
#include "test_param_editor.moc"
