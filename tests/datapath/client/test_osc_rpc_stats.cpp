// osc.<t>.rpc_stats: the exact Lustre text for a fixed set of recorded RPCs (buckets,
// percentages, cumulative percentages, where each table stops), bucket edges, clear.
#include "client/osc_rpc_stats.h"

#include <QTest>

#include <chrono>

using namespace lutra;
using client::OscRpcStats;

namespace {

params::WallClock::time_point fixedNow()
{
    return params::WallClock::time_point(std::chrono::duration_cast<params::WallClock::duration>(
        std::chrono::seconds(1700000000) + std::chrono::nanoseconds(42)));
}

// reads: 6 RPCs, writes: 4 RPCs; (pages, in flight counting itself, first page).
void recordFixedSet(OscRpcStats &stats)
{
    stats.recordRpc(OscRpcStats::read, 1, 1, 0);
    stats.recordRpc(OscRpcStats::read, 1, 1, 0);
    stats.recordRpc(OscRpcStats::read, 2, 2, 1);
    stats.recordRpc(OscRpcStats::read, 3, 3, 5);
    stats.recordRpc(OscRpcStats::read, 4, 1, 8);
    stats.recordRpc(OscRpcStats::read, 256, 2, 1000);
    stats.recordRpc(OscRpcStats::write, 1024, 1, 0);
    stats.recordRpc(OscRpcStats::write, 1024, 2, 1024);
    stats.recordRpc(OscRpcStats::write, 1024, 3, 2048);
    stats.recordRpc(OscRpcStats::write, 16, 8, 3072);
    stats.addInFlight(OscRpcStats::read, 2);
    stats.addInFlight(OscRpcStats::write, 1);
    stats.addPendingPages(OscRpcStats::write, 64);
    stats.addPendingPages(OscRpcStats::read, 8);
}

} // namespace

class TestOscRpcStats : public QObject {
    Q_OBJECT

private slots:
    void log2BucketsAsLustre()
    {
        // lprocfs_oh_tally_log2: fls(value - 1), so bucket b holds (2^(b-1), 2^b].
        QCOMPARE(OscRpcStats::log2Bucket(0), std::size_t(0));
        QCOMPARE(OscRpcStats::log2Bucket(1), std::size_t(0));
        QCOMPARE(OscRpcStats::log2Bucket(2), std::size_t(1));
        QCOMPARE(OscRpcStats::log2Bucket(3), std::size_t(2));
        QCOMPARE(OscRpcStats::log2Bucket(4), std::size_t(2));
        QCOMPARE(OscRpcStats::log2Bucket(5), std::size_t(3));
        QCOMPARE(OscRpcStats::log2Bucket(1024), std::size_t(10));
        QCOMPARE(OscRpcStats::log2Bucket(1025), std::size_t(11));
    }

    void exactText()
    {
        OscRpcStats stats;
        recordFixedSet(stats);
        const std::string expected = "snapshot_time:         1700000000.000000042 (secs.nsecs)\n"
                                     "read RPCs in flight:  2\n"
                                     "write RPCs in flight: 1\n"
                                     "pending write pages:  64\n"
                                     "pending read pages:   8\n"
                                     "\n"
                                     "\t\t\tread\t\t\twrite\n"
                                     "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
                                     "1:\t\t         2  33  33   |          0   0   0\n"
                                     "2:\t\t         1  16  50   |          0   0   0\n"
                                     "4:\t\t         2  33  83   |          0   0   0\n"
                                     "8:\t\t         0   0  83   |          0   0   0\n"
                                     "16:\t\t         0   0  83   |          1  25  25\n"
                                     "32:\t\t         0   0  83   |          0   0  25\n"
                                     "64:\t\t         0   0  83   |          0   0  25\n"
                                     "128:\t\t         0   0  83   |          0   0  25\n"
                                     "256:\t\t         1  16 100   |          0   0  25\n"
                                     "512:\t\t         0   0 100   |          0   0  25\n"
                                     "1024:\t\t         0   0 100   |          3  75 100\n"
                                     "\n"
                                     "\t\t\tread\t\t\twrite\n"
                                     "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n"
                                     "0:\t\t         0   0   0   |          0   0   0\n"
                                     "1:\t\t         3  50  50   |          1  25  25\n"
                                     "2:\t\t         2  33  83   |          1  25  50\n"
                                     "3:\t\t         1  16 100   |          1  25  75\n"
                                     "4:\t\t         0   0 100   |          0   0  75\n"
                                     "5:\t\t         0   0 100   |          0   0  75\n"
                                     "6:\t\t         0   0 100   |          0   0  75\n"
                                     "7:\t\t         0   0 100   |          0   0  75\n"
                                     "8:\t\t         0   0 100   |          1  25 100\n"
                                     "\n"
                                     "\t\t\tread\t\t\twrite\n"
                                     "offset                rpcs   % cum % |       rpcs   % cum %\n"
                                     "0:\t\t         2  33  33   |          1  25  25\n"
                                     "1:\t\t         1  16  50   |          0   0  25\n"
                                     "2:\t\t         0   0  50   |          0   0  25\n"
                                     "4:\t\t         1  16  66   |          0   0  25\n"
                                     "8:\t\t         1  16  83   |          0   0  25\n"
                                     "16:\t\t         0   0  83   |          0   0  25\n"
                                     "32:\t\t         0   0  83   |          0   0  25\n"
                                     "64:\t\t         0   0  83   |          0   0  25\n"
                                     "128:\t\t         0   0  83   |          0   0  25\n"
                                     "256:\t\t         0   0  83   |          0   0  25\n"
                                     "512:\t\t         1  16 100   |          0   0  25\n"
                                     "1024:\t\t         0   0 100   |          1  25  50\n"
                                     "2048:\t\t         0   0 100   |          2  50 100\n";
        const std::string text = stats.render(fixedNow());
        if (text != expected) {
            qWarning("got:\n%s", text.c_str());
        }
        QCOMPARE(text, expected);
    }

    void emptyTablesPrintOneRow()
    {
        OscRpcStats stats;
        stats.addInFlight(OscRpcStats::read, 2);
        stats.addInFlight(OscRpcStats::write, 1);
        stats.addPendingPages(OscRpcStats::write, 64);
        stats.addPendingPages(OscRpcStats::read, 8);
        const std::string expected = "snapshot_time:         1700000000.000000042 (secs.nsecs)\n"
                                     "read RPCs in flight:  2\n"
                                     "write RPCs in flight: 1\n"
                                     "pending write pages:  64\n"
                                     "pending read pages:   8\n"
                                     "\n"
                                     "\t\t\tread\t\t\twrite\n"
                                     "pages per rpc         rpcs   % cum % |       rpcs   % cum %\n"
                                     "1:\t\t         0   0   0   |          0   0   0\n"
                                     "\n"
                                     "\t\t\tread\t\t\twrite\n"
                                     "rpcs in flight        rpcs   % cum % |       rpcs   % cum %\n"
                                     "0:\t\t         0   0   0   |          0   0   0\n"
                                     "\n"
                                     "\t\t\tread\t\t\twrite\n"
                                     "offset                rpcs   % cum % |       rpcs   % cum %\n"
                                     "0:\t\t         0   0   0   |          0   0   0\n";
        QCOMPARE(stats.render(fixedNow()), expected);
    }

    void clearResetsHistogramsNotGauges()
    {
        OscRpcStats stats;
        recordFixedSet(stats);
        QCOMPARE(stats.histograms().pagesPerRpc[OscRpcStats::write][10], std::uint64_t(3));
        stats.clear();
        const auto histograms = stats.histograms();
        for (std::size_t d = 0; d < 2; ++d) {
            for (std::size_t i = 0; i < OscRpcStats::kBuckets; ++i) {
                QCOMPARE(histograms.pagesPerRpc[d][i], std::uint64_t(0));
                QCOMPARE(histograms.rpcsInFlight[d][i], std::uint64_t(0));
                QCOMPARE(histograms.offset[d][i], std::uint64_t(0));
            }
        }
        // The gauges describe what is happening now: clear leaves them, as in Lustre.
        QCOMPARE(stats.inFlight(OscRpcStats::read), std::int64_t(2));
        QCOMPARE(stats.pendingPages(OscRpcStats::write), std::int64_t(64));
        QVERIFY(stats.render(fixedNow()).find("1:\t\t         0   0   0   |") != std::string::npos);
    }

    void largeValuesLandInTheLastBucket()
    {
        OscRpcStats stats;
        stats.recordRpc(OscRpcStats::write, 1, 300, std::uint64_t{1} << 40);
        const auto histograms = stats.histograms();
        QCOMPARE(histograms.rpcsInFlight[OscRpcStats::write][31], std::uint64_t(1));
        QCOMPARE(histograms.offset[OscRpcStats::write][31], std::uint64_t(1));
        // The offset table's last row is labelled 1 << 30, as Lustre prints it.
        QVERIFY(stats.render(fixedNow()).find("1073741824:\t\t") != std::string::npos);
    }

    void snapshotNamesBuckets()
    {
        OscRpcStats stats;
        recordFixedSet(stats);
        const auto snapshot = stats.snapshot();
        bool found = false;
        for (const auto &counter : snapshot.counters) {
            if (counter.name == "write_pages_per_rpc_1024") {
                QCOMPARE(counter.samples, std::uint64_t(3));
                found = true;
            }
        }
        QVERIFY(found);
    }
};

QTEST_GUILESS_MAIN(TestOscRpcStats)
#include "test_osc_rpc_stats.moc"
