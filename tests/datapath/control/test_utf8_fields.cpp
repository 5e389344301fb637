// Request text is protobuf `bytes`, checked for UTF-8 by lutra itself (control/utf8_fields.h).
#include "control/utf8_fields.h"
#include "lutra/datapath/v1/control.pb.h"

#include <QTest>

using lutra::control::checkUtf8Fields;
using lutra::control::firstInvalidUtf8;

class TestUtf8Fields : public QObject {
    Q_OBJECT

private slots:
    void wellFormedText()
    {
        QCOMPARE(firstInvalidUtf8(""), std::string_view::npos);
        QCOMPARE(firstInvalidUtf8("llite.*.max_cached_mb"), std::string_view::npos);
        QCOMPARE(firstInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x90\xa7"),
                 std::string_view::npos);
        QCOMPARE(firstInvalidUtf8("\xf4\x8f\xbf\xbf"), std::string_view::npos); // U+10FFFF
    }

    void malformedText_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("offset");
        QTest::newRow("lone continuation") << QByteArray("ab\x80") << 2;
        QTest::newRow("invalid lead") << QByteArray("\xff\xfe") << 0;
        QTest::newRow("overlong 2-byte") << QByteArray("\xc0\xaf") << 0;
        QTest::newRow("overlong 3-byte") << QByteArray("x\xe0\x80\xaf") << 1;
        QTest::newRow("surrogate") << QByteArray("\xed\xa0\x80") << 0;
        QTest::newRow("above U+10FFFF") << QByteArray("\xf4\x90\x80\x80") << 0;
        QTest::newRow("truncated") << QByteArray("ok\xe2\x82") << 2;
        QTest::newRow("bad third byte") << QByteArray("\xe2\x82\x41") << 0;
    }
    void malformedText()
    {
        QFETCH(QByteArray, text);
        QFETCH(int, offset);
        QCOMPARE(firstInvalidUtf8(
                     std::string_view(text.constData(), static_cast<std::size_t>(text.size()))),
                 static_cast<std::size_t>(offset));
    }

    void checkNamesTheNestedField()
    {
        lutra::datapath::v1::SetParamsRequest request;
        request.set_principal("test");
        auto *good = request.add_assignments();
        good->set_pattern("osc.*.max_rpcs_in_flight");
        good->set_value("8");
        QVERIFY(checkUtf8Fields(request).ok());
        auto *bad = request.add_assignments();
        bad->set_pattern("osc.*.max_dirty_mb");
        bad->set_value(std::string("1\xff", 2));
        const auto status = checkUtf8Fields(request);
        QCOMPARE(status.code(), lutra::Errc::invalid_argument);
        QCOMPARE(QString::fromStdString(status.message()),
                 QStringLiteral("SetParamsRequest.assignments[1].value: not UTF-8 (byte 1 of 2)"));
    }
};

QTEST_GUILESS_MAIN(TestUtf8Fields)
#include "test_utf8_fields.moc"
