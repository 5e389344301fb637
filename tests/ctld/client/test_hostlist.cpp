// Hostlist expansion for lutractl -H: exact expansions and every error with its column.
#include "client/hostlist.h"

#include <QTest>

using namespace lutra::ctld;

class TestHostlist : public QObject {
    Q_OBJECT

private slots:
    void expands_data()
    {
        QTest::addColumn<QString>("hostlist");
        QTest::addColumn<QStringList>("hosts");
        QTest::newRow("single") << "node1" << QStringList{"node1"};
        QTest::newRow("with port") << "node1:7370" << QStringList{"node1:7370"};
        QTest::newRow("range") << "n[1-3]" << QStringList{"n1", "n2", "n3"};
        QTest::newRow("padding") << "node[08-11]:7370"
                                 << QStringList{"node08:7370", "node09:7370", "node10:7370",
                                                "node11:7370"};
        QTest::newRow("list and range")
            << "gpu[1,3-4,9]" << QStringList{"gpu1", "gpu3", "gpu4", "gpu9"};
        QTest::newRow("two brackets")
            << "r[1-2]n[01-02]" << QStringList{"r1n01", "r1n02", "r2n01", "r2n02"};
        QTest::newRow("items") << "login1,node[1-2],10.0.0.5:7370"
                               << QStringList{"login1", "node1", "node2", "10.0.0.5:7370"};
        QTest::newRow("ipv4 with ports")
            << "127.0.0.1:7370,127.0.0.1:[7371-7372]"
            << QStringList{"127.0.0.1:7370", "127.0.0.1:7371", "127.0.0.1:7372"};
    }

    void expands()
    {
        QFETCH(QString, hostlist);
        QFETCH(QStringList, hosts);
        auto expanded = expandHostlist(hostlist.toStdString());
        QVERIFY2(expanded.ok(), expanded.status().message().c_str());
        QStringList got;
        for (const auto &host : *expanded) {
            got << QString::fromStdString(host);
        }
        QCOMPARE(got, hosts);
    }

    void errors_data()
    {
        QTest::addColumn<QString>("hostlist");
        QTest::addColumn<QString>("message");
        QTest::newRow("unclosed") << "node[1-3"
                                  << "column 5: '[' is never closed";
        QTest::newRow("stray close") << "node1]"
                                     << "column 6: ']' without '['";
        QTest::newRow("empty brackets") << "node[]"
                                        << "column 5: empty brackets";
        QTest::newRow("backwards") << "node[5-1]"
                                   << "column 6: range 5-1 goes backwards";
        QTest::newRow("letters") << "node[a-b]"
                                 << "column 6: 'a-b' is not a number or a range";
        QTest::newRow("empty item") << "a,,b"
                                    << "column 3: empty host name";
        QTest::newRow("too many") << "n[0-99999]x[0-9]"
                                  << "names more than 100000 hosts";
    }

    void errors()
    {
        QFETCH(QString, hostlist);
        QFETCH(QString, message);
        auto expanded = expandHostlist(hostlist.toStdString());
        QVERIFY(!expanded.ok());
        QVERIFY2(QString::fromStdString(expanded.status().message()).contains(message),
                 expanded.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestHostlist)
#include "test_hostlist.moc"
