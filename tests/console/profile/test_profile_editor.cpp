// ProfileEditor: placeholder while the editor is written.

#include <QTest>

class TestProfileEditor : public QObject {
    Q_OBJECT
};

QTEST_MAIN(TestProfileEditor)
#include "test_profile_editor.moc"
