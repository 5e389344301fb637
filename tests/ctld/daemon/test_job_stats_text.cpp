// Reading job_stats text (Lustre's format, as the datapath renders it) back into counters.
#include "daemon/job_stats_text.h"

#include <QTest>

using namespace lutra::ctld;

class TestJobStatsText : public QObject {
    Q_OBJECT

private slots:
    void parsesJobs()
    {
        const std::string text =
            "job_stats:\n"
            "- job_id:          dd.0:odd#id\n"
            "  snapshot_time:   1700000123.000000001 secs.nsecs\n"
            "  start_time:      1700000000.000000000 secs.nsecs\n"
            "  elapsed_time:    123.000000001 secs.nsecs\n"
            "  read_bytes:      { samples:          16, unit: bytes, min:     4096, max:     "
            "4096, sum:            65536 }\n"
            "  open:            { samples:           2, unit:  reqs }\n"
            "- job_id:          42\n"
            "  snapshot_time:   1700000200.000000000 secs.nsecs\n"
            "  write_bytes:     { samples:           1, unit: bytes, min:        1, max:        "
            "1, sum:                1 }\n";
        auto jobs = parseJobStats(text);
        QVERIFY2(jobs.ok(), jobs.status().message().c_str());
        QCOMPARE(jobs->size(), std::size_t{2});
        const auto &first = (*jobs)[0];
        QCOMPARE(first.jobId, std::string("dd.0:odd#id"));
        QCOMPARE(first.snapshotTimeS, std::int64_t{1700000123});
        QCOMPARE(first.counters.size(), std::size_t{2});
        QCOMPARE(first.counters[0].name, std::string("read_bytes"));
        QCOMPARE(first.counters[0].samples, std::uint64_t{16});
        QCOMPARE(first.counters[0].sum, std::int64_t{65536});
        QVERIFY(first.counters[0].withMinMaxSum);
        QCOMPARE(first.counters[1].unit, std::string("reqs"));
        QVERIFY(!first.counters[1].withMinMaxSum);
        QCOMPARE((*jobs)[1].jobId, std::string("42"));
        QCOMPARE(parseJobStats("job_stats:\n")->size(), std::size_t{0});
    }

    void errorsNameTheLine()
    {
        const auto check = [](const std::string &text, const char *message) {
            auto jobs = parseJobStats(text);
            QVERIFY(!jobs.ok());
            QVERIFY2(jobs.status().message().find(message) != std::string::npos,
                     jobs.status().message().c_str());
        };
        check("jobs:\n", "line 1: expected 'job_stats:'");
        check("job_stats:\n  open: { samples: 1 }\n", "line 2: expected '- job_id:'");
        check("job_stats:\n- job_id: a\n  open: { samples: x }\n", "line 3: bad counter 'open'");
        check("job_stats:\n- job_id: a\n  open: samples 1\n", "line 3: bad counter 'open'");
        check("job_stats:\n- job_id:   \n", "line 2: empty job_id");
    }
};

QTEST_GUILESS_MAIN(TestJobStatsText)
#include "test_job_stats_text.moc"
