// lutra-bench's ib_write_bw baseline (rpc --transport verbs): the output parser against perftest's
// real format, and the server/client dance against a stand-in ib_write_bw (a real process that
// refuses the first clients, as the real server does while it starts: fake_ib_write_bw.sh). The
// real perftest runs on rxe0 in the vm_verbs_bench test; this machine has no RDMA device.
#include "ib_write_bw.h"

#include <QFile>
#include <QTemporaryDir>
#include <QTest>

using namespace lutra::tools;

namespace {

// perftest 4.5's client output for -s 1048576 -n 64 on rxe0 (trimmed header).
constexpr const char *kClientOutput =
    "---------------------------------------------------------------------------------------\n"
    "                    RDMA_Write BW Test\n"
    " Dual-port       : OFF\t\tDevice         : rxe0\n"
    " local address: LID 0000 QPN 0x0011 PSN 0x8d2f01 RKey 0x0001b4 VAddr 0x007f5cb4d00000\n"
    " GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:02:15\n"
    "---------------------------------------------------------------------------------------\n"
    " #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n"
    " 1048576    64               18.34              17.95  \t\t   0.000018\n"
    "---------------------------------------------------------------------------------------\n";

} // namespace

class TestIbWriteBw : public QObject {
    Q_OBJECT
private slots:
    void init()
    {
        QVERIFY(m_dir.isValid());
        QFile::remove(m_dir.filePath("calls"));
        QFile::remove(m_dir.filePath("done"));
        QFile output(m_dir.filePath("output"));
        QVERIFY(output.open(QIODevice::WriteOnly));
        output.write(kClientOutput);
        qputenv("FAKE_DIR", m_dir.path().toUtf8());
        qunsetenv("FAKE_SERVER_FAILS");
    }

    void parsesTheAverageColumn()
    {
        auto average = parseIbWriteBwAverage(kClientOutput, 1 << 20);
        QVERIFY2(average, average.status().message().c_str());
        QCOMPARE(*average, 17.95);
    }

    void parseErrorsSayWhat()
    {
        auto other = parseIbWriteBwAverage(kClientOutput, 4096);
        QVERIFY(!other);
        QVERIFY2(other.status().message().find("no result row for 4096 bytes") != std::string::npos,
                 other.status().message().c_str());
        auto garbled = parseIbWriteBwAverage(" 1048576 64 18.34 fast 0.1\n", 1 << 20);
        QVERIFY(!garbled);
        QVERIFY2(garbled.status().message().find("' 1048576 64 18.34 fast 0.1'") !=
                     std::string::npos,
                 garbled.status().message().c_str());
        QVERIFY(!parseIbWriteBwAverage("", 1 << 20));
        auto zero = parseIbWriteBwAverage(" 1048576 64 0.00 0.00 0.000000\n", 1 << 20);
        QVERIFY(!zero);
        QCOMPARE(zero.status().code(), lutra::Errc::out_of_range);
        QVERIFY2(zero.status().message().find("measured 0 MB/s") != std::string::npos,
                 zero.status().message().c_str());
    }

    // perftest under emulation sometimes prints 0.00 for a run that moved data: one more run,
    // with as many queue pairs as asked (-q), gives the number.
    void aZeroRunIsRunOnceMore()
    {
        QFile zero(m_dir.filePath("zero"));
        QVERIFY(zero.open(QIODevice::WriteOnly));
        zero.write(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate\n"
                   " 4194304    32               0.00               0.00  \t\t   0.000000\n");
        zero.close();
        QFile output(m_dir.filePath("output"));
        QVERIFY(output.open(QIODevice::WriteOnly));
        output.write(" 4194304    32               25.00              24.18  \t\t   0.000006\n");
        output.close();
        IbWriteBwOptions options;
        options.binary = LUTRA_FAKE_IB_WRITE_BW;
        options.bytes = std::size_t{4} << 20;
        options.iterations = 16;
        options.qps = 2;
        options.timeout = std::chrono::seconds(60);
        auto average = measureIbWriteBw(options);
        QVERIFY2(average, average.status().message().c_str());
        QCOMPARE(*average, 24.18);
        QFile calls(m_dir.filePath("calls"));
        QVERIFY(calls.open(QIODevice::ReadOnly));
        const auto lines = QString::fromUtf8(calls.readAll()).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.count("server -x 1 -F -s 4194304 -n 16 -q 2"), 2);
        QCOMPARE(lines.count("client -x 1 -F -s 4194304 -n 16 -q 2 127.0.0.1"), 4);
        QVERIFY(!QFile::exists(m_dir.filePath("zero")));
    }

    // Server first, clients retried while it starts, the average from the client that ran.
    void runsServerAndClient()
    {
        IbWriteBwOptions options;
        options.binary = LUTRA_FAKE_IB_WRITE_BW;
        options.device = "rxe0";
        options.address = "10.0.2.15";
        options.timeout = std::chrono::seconds(60);
        auto average = measureIbWriteBw(options);
        QVERIFY2(average, average.status().message().c_str());
        QCOMPARE(*average, 17.95);
        QFile calls(m_dir.filePath("calls"));
        QVERIFY(calls.open(QIODevice::ReadOnly));
        const auto lines = QString::fromUtf8(calls.readAll()).split('\n', Qt::SkipEmptyParts);
        // One server; two refused clients and the one that ran (the order of the server's and
        // the first client's start is the scheduler's).
        QCOMPARE(lines.count("server -d rxe0 -x 1 -F -s 1048576 -n 64"), 1);
        QCOMPARE(lines.count("client -d rxe0 -x 1 -F -s 1048576 -n 64 10.0.2.15"), 3);
        QCOMPARE(lines.size(), 4);
    }

    // A server that cannot start (no RDMA device) is an error carrying what it said.
    void serverFailureIsReported()
    {
        qputenv("FAKE_SERVER_FAILS", "1");
        IbWriteBwOptions options;
        options.binary = LUTRA_FAKE_IB_WRITE_BW;
        options.timeout = std::chrono::seconds(60);
        auto average = measureIbWriteBw(options);
        QVERIFY(!average);
        const std::string message = average.status().message();
        QVERIFY2(message.find("(server) exited with status 1") != std::string::npos,
                 message.c_str());
        QVERIFY2(message.find("Failed to get IB devices list") != std::string::npos,
                 message.c_str());
    }

    void missingBinaryIsReported()
    {
        IbWriteBwOptions options;
        options.binary = m_dir.filePath("no-such-ib_write_bw").toStdString();
        auto average = measureIbWriteBw(options);
        QVERIFY(!average);
        QVERIFY2(average.status().message().find("could not be run") != std::string::npos,
                 average.status().message().c_str());
    }

private:
    QTemporaryDir m_dir;
};

QTEST_GUILESS_MAIN(TestIbWriteBw)
#include "test_ib_write_bw.moc"
