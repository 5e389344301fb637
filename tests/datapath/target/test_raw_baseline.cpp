// lutra-target's plain TCP baseline serving objects (op 4) to lutra-bench's raw client: the
// object's bytes as a file server would send them, a prefix when asked for less, and an error
// that names the object for a missing one, a name escaping the root, an empty name, or a
// baseline started without a root. Real sockets on loopback, a real backing directory.
#include "raw_client.h"
#include "target/raw_baseline.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <cstddef>
#include <fstream>
#include <vector>

using namespace lutra;
using namespace lutra::target;
using lutra::tools::RawConnection;

namespace {

std::vector<char> patterned(std::size_t size)
{
    std::vector<char> bytes(size);
    for (std::size_t i = 0; i < size; ++i) {
        bytes[i] = static_cast<char>((i * 31 + 7) & 0xff);
    }
    return bytes;
}

} // namespace

class TestRawBaseline : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        QVERIFY(m_root.isValid());
        QVERIFY(QDir(m_root.path()).mkdir("dir"));
        std::ofstream out(m_root.filePath("dir/obj").toStdString(), std::ios::binary);
        out.write(m_bytes.data(), static_cast<std::streamsize>(m_bytes.size()));
        QVERIFY(out.good());
        // Sparse and far larger than a socket's buffers: a send is still going on when a client
        // leaves.
        QFile big(m_root.filePath("dir/big"));
        QVERIFY(big.open(QIODevice::WriteOnly) && big.resize(qint64{64} << 20));
    }

    void sendsTheObjectsBytes()
    {
        auto baseline = RawBaseline::start("tcp://127.0.0.1:0", m_root.path().toStdString());
        QVERIFY2(baseline.ok(), baseline.status().message().c_str());
        auto connection = RawConnection::open((*baseline)->uri());
        QVERIFY(connection.ok());
        auto length = connection->requestObject("dir/obj", 1 << 20); // more than there is
        QVERIFY2(length.ok(), length.status().message().c_str());
        QCOMPARE(*length, std::uint64_t{m_bytes.size()});
        std::vector<char> got(m_bytes.size());
        QVERIFY(connection->receiveAll(got.data(), got.size()).ok());
        QVERIFY(got == m_bytes);
        char extra = 0;
        QVERIFY(!connection->receiveAll(&extra, 1).ok()); // the stream ends there
    }

    void sendsAPrefixWhenAskedForLess()
    {
        auto baseline = RawBaseline::start("tcp://127.0.0.1:0", m_root.path().toStdString());
        QVERIFY(baseline.ok());
        auto connection = RawConnection::open((*baseline)->uri());
        QVERIFY(connection.ok());
        auto length = connection->requestObject("dir/obj", 4096);
        QVERIFY(length.ok());
        QCOMPARE(*length, std::uint64_t{4096});
        std::vector<char> got(4096);
        QVERIFY(connection->receiveAll(got.data(), got.size()).ok());
        QVERIFY(std::equal(got.begin(), got.end(), m_bytes.begin()));
    }

    // A client that leaves in the middle of an object (lutra-bench's timed streams do) costs
    // that connection only: sendfile's SIGPIPE would have ended this whole process.
    void aClientGoneMidObjectLeavesTheBaselineServing()
    {
        auto baseline = RawBaseline::start("tcp://127.0.0.1:0", m_root.path().toStdString());
        QVERIFY(baseline.ok());
        for (int i = 0; i < 4; ++i) {
            auto leaving = RawConnection::open((*baseline)->uri());
            QVERIFY(leaving.ok());
            QVERIFY(leaving->requestObject("dir/big", std::uint64_t{64} << 20).ok());
            std::vector<char> some(1000);
            QVERIFY(leaving->receiveAll(some.data(), some.size()).ok());
        } // closed with most of the object unsent
        auto connection = RawConnection::open((*baseline)->uri());
        QVERIFY(connection.ok());
        auto length = connection->requestObject("dir/obj", 1 << 20);
        QVERIFY2(length.ok(), length.status().message().c_str());
        std::vector<char> got(*length);
        QVERIFY(connection->receiveAll(got.data(), got.size()).ok());
        QVERIFY(got == m_bytes);
    }

    void refusesWhatItCannotServe_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("withRoot");
        QTest::addColumn<QString>("said");
        QTest::newRow("missing") << "dir/none" << true << "dir/none";
        QTest::newRow("escape") << "../outside" << true << "outside";
        QTest::newRow("empty") << "" << true << "0 bytes";
        QTest::newRow("no root") << "dir/obj" << false << "no --root";
    }

    void refusesWhatItCannotServe()
    {
        QFETCH(QString, name);
        QFETCH(bool, withRoot);
        QFETCH(QString, said);
        auto baseline = RawBaseline::start("tcp://127.0.0.1:0",
                                           withRoot ? m_root.path().toStdString() : std::string());
        QVERIFY(baseline.ok());
        auto connection = RawConnection::open((*baseline)->uri());
        QVERIFY(connection.ok());
        auto length = connection->requestObject(name.toStdString(), 4096);
        QVERIFY(!length.ok());
        const std::string message = length.status().message();
        QVERIFY2(message.find(said.toStdString()) != std::string::npos, message.c_str());
    }

    void refusesARootThatIsNotThere()
    {
        auto baseline =
            RawBaseline::start("tcp://127.0.0.1:0", m_root.filePath("nowhere").toStdString());
        QVERIFY(!baseline.ok());
        QVERIFY2(baseline.status().message().find("nowhere") != std::string::npos,
                 baseline.status().message().c_str());
    }

private:
    QTemporaryDir m_root;
    const std::vector<char> m_bytes = patterned(300000);
};

QTEST_GUILESS_MAIN(TestRawBaseline)
#include "test_raw_baseline.moc"
