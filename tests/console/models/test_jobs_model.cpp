#include "model_print.h"
#include "models/jobs_model.h"

#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QTest>

using namespace lutra::console;
using lutra::console::test::printModel;

namespace {

constexpr qint64 MiB = 1024 * 1024;
constexpr qint64 GiB = 1024 * MiB;
constexpr qint64 epochS = 1'700'000'000;

const QString client = QStringLiteral("client-lutra");
const QString clientBlock = QStringLiteral("llite.lutra.job_stats");
const QString target = QStringLiteral("target-ost0");
const QString targetBlock = QStringLiteral("obdfilter.ost0.job_stats");
const QString client2 = QStringLiteral("client-lutra2");
const QString client2Block = QStringLiteral("llite.lutra2.job_stats");

Counter counter(const QString &name, quint64 samples, qint64 sum = 0)
{
    Counter result;
    result.name = name;
    result.unit = sum != 0 ? QStringLiteral("bytes") : QStringLiteral("reqs");
    result.samples = samples;
    result.withMinMaxSum = sum != 0;
    result.sum = sum;
    return result;
}

JobStat stat(const QString &instance, const QString &block, const QString &job, qint64 snapshotS,
             const QList<Counter> &counters)
{
    JobStat result;
    result.instance = instance;
    result.block = block;
    result.jobId = job;
    result.snapshotTimeS = epochS + snapshotS;
    result.counters = counters;
    return result;
}

QList<JobStat> node001(qint64 job1001Read, qint64 job1002Written)
{
    return {stat(client, clientBlock, QStringLiteral("job.1001"), 88,
                 {counter(QStringLiteral("read_bytes"), 10, job1001Read),
                  counter(QStringLiteral("write_bytes"), 4, 512 * MiB),
                  counter(QStringLiteral("getattr"), 7)}),
            stat(client, clientBlock, QStringLiteral("job.1002"), 95,
                 {counter(QStringLiteral("write_bytes"), 2, job1002Written)})};
}

} // namespace

class TestJobsModel : public QObject {
    Q_OBJECT
private slots:
    void mergesRatesAndFilters()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setNowMs((epochS + 100) * 1000);

        model.setNodeJobs(QStringLiteral("node001"), node001(GiB, 2048), 1'000);
        model.setNodeJobs(QStringLiteral("node003"),
                          {stat(client, clientBlock, QStringLiteral("job.1001"), 80,
                                {counter(QStringLiteral("read_bytes"), 5, 512 * MiB)}),
                           stat(client, clientBlock, QStringLiteral("job.10"), 40,
                                {counter(QStringLiteral("punch"), 3)})},
                          1'000);
        QCOMPARE(printModel(model),
                 QStringList({"job.10 | node003 | clients | 0 bytes | 0 bytes | measuring… | "
                              "measuring… | 3 | 1m 0s ago",
                              "job.1001 | node001, node003 | clients | 1.5 GiB | 512.0 MiB | "
                              "measuring… | measuring… | 26 | 12s ago",
                              "job.1002 | node001 | clients | 0 bytes | 2.0 KiB | measuring… | "
                              "measuring… | 2 | 5s ago"}));
        // An admin hovering over the placeholder learns why and when the rate comes.
        QCOMPARE(model.index(1, JobsModel::ReadRate).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("Measuring: a rate needs two samples of the job's counters; it "
                                "comes with the next one.\nnode001: first sample of this job\n"
                                "node003: first sample of this job"));
        QCOMPARE(model.nodesOf(QStringLiteral("job.1001")), QStringList({"node001", "node003"}));
        QCOMPARE(model.index(1, JobsModel::Nodes).data(JobsModel::SortRole).toInt(), 2);
        QCOMPARE(model.index(1, JobsModel::ReadBytes).data(JobsModel::SortRole).toLongLong(),
                 GiB + 512 * MiB);
        QCOMPARE(model.index(1, JobsModel::ReadRate).data(JobsModel::SortRole).toDouble(), -1.0);
        QCOMPARE(model.index(2, 0).data(JobsModel::JobRole).toString(), QStringLiteral("job.1002"));

        // node001 two seconds later: job.1001 read 200 MiB more, job.1002's counters restarted.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.setNodeJobs(QStringLiteral("node001"), node001(GiB + 200 * MiB, 1024), 3'000);
        QCOMPARE(inserted.size() + removed.size() + reset.size(), 0);
        QCOMPARE(changed.size(), 1); // job.1001 and job.1002: one run
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::ReadBytes, JobsModel::ReadRate,
                                    JobsModel::WriteRate}),
                 QStringList({"job.10 | 0 bytes | measuring… | measuring…",
                              "job.1001 | 1.7 GiB | 100.0 MiB/s | 0 bytes/s",
                              "job.1002 | 0 bytes | measuring… | measuring…"}));
        QCOMPARE(model.index(1, JobsModel::ReadRate).data(JobsModel::SortRole).toDouble(),
                 100.0 * MiB);
        // node003 has one sample yet: job.1001's rate is node001's, and says so.
        QCOMPARE(model.index(1, JobsModel::ReadRate).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("100.0 MiB/s, without these nodes (their rate comes with the next "
                                "sample):\nnode003: first sample of this job"));
        QVERIFY(model.index(2, JobsModel::WriteRate)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .endsWith(QStringLiteral("node001: its counters went down since the previous "
                                             "sample (a process restarted or the job's entry "
                                             "expired)")));

        // node003 ten seconds after its first: job.10 is gone, job.2001 is new; the rates of
        // job.1001 on both nodes add up.
        changed.clear();
        model.setNodeJobs(QStringLiteral("node003"),
                          {stat(client, clientBlock, QStringLiteral("job.1001"), 90,
                                {counter(QStringLiteral("read_bytes"), 6, 612 * MiB)}),
                           stat(client, clientBlock, QStringLiteral("job.2001"), 90,
                                {counter(QStringLiteral("write_bytes"), 1, 4096)})},
                          11'000);
        QCOMPARE(removed.size(), 1);
        QCOMPARE(inserted.size(), 1);
        QCOMPARE(reset.size(), 0);
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::Nodes, JobsModel::ReadRate,
                                    JobsModel::Ops, JobsModel::LastSeen}),
                 QStringList({"job.1001 | node001, node003 | 110.0 MiB/s | 27 | 10s ago",
                              "job.1002 | node001 | measuring… | 2 | 5s ago",
                              "job.2001 | node003 | measuring… | 1 | 10s ago"}));
        QCOMPARE(model.index(0, JobsModel::ReadRate).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("110.0 MiB/s"));

        // The clock moves: only the LastSeen column is signalled.
        changed.clear();
        model.setNowMs((epochS + 160) * 1000);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed[0][0].toModelIndex(), model.index(0, JobsModel::LastSeen));
        QCOMPARE(changed[0][1].toModelIndex(), model.index(2, JobsModel::LastSeen));
        QCOMPARE(model.index(0, JobsModel::LastSeen).data().toString(),
                 QStringLiteral("1m 10s ago"));

        // A glob filter: rows leave and come back by removals and inserts.
        removed.clear();
        inserted.clear();
        model.setJobFilter(QStringLiteral("job.100?"));
        QCOMPARE(model.jobs(), QStringList({"job.1001", "job.1002"}));
        QCOMPARE(removed.size(), 1);
        model.setJobFilter(QStringLiteral("*.2*"));
        QCOMPARE(model.jobs(), QStringList({"job.2001"}));
        model.setJobFilter(QString());
        QCOMPARE(model.jobs(), QStringList({"job.1001", "job.1002", "job.2001"}));
        QCOMPARE(reset.size(), 0);
        // Filtered out or not, a job's nodes are known.
        model.setJobFilter(QStringLiteral("nothing*"));
        QCOMPARE(model.rowCount(), 0);
        QCOMPARE(model.nodesOf(QStringLiteral("job.1002")), QStringList({"node001"}));
        model.setJobFilter(QString());

        // node001 leaves: job.1002 goes, job.1001 keeps node003's share.
        model.removeNode(QStringLiteral("node001"));
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::Nodes, JobsModel::ReadBytes,
                                    JobsModel::ReadRate}),
                 QStringList({"job.1001 | node003 | 612.0 MiB | 10.0 MiB/s",
                              "job.2001 | node003 | 0 bytes | measuring…"}));
        QCOMPARE(reset.size(), 0);
    }

    // Clients and targets describe the same I/O: counted once, from the clients.
    void bothSidesCountTheClientsOnce()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QString job = QStringLiteral("job.1001");
        auto clientSide = [&](qint64 read, qint64 snapshotS) {
            return stat(client, clientBlock, job, snapshotS,
                        {counter(QStringLiteral("read_bytes"), 10, read),
                         counter(QStringLiteral("getattr"), 3)});
        };
        auto targetSide = [&](qint64 read, qint64 snapshotS) {
            return stat(target, targetBlock, job, snapshotS,
                        {counter(QStringLiteral("read_bytes"), 8, read)});
        };
        // node001 runs the job and a target; oss1 serves it too.
        model.setNodeJobs(QStringLiteral("node001"),
                          {clientSide(1'409'286'144, 1), targetSide(700 * MiB, 1)}, 0);
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(644 * MiB, 1)}, 0);
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::Nodes, JobsModel::CountedFrom,
                                    JobsModel::ReadBytes, JobsModel::Ops}),
                 QStringList({"job.1001 | node001 | clients | 1.3 GiB | 13"}));
        QCOMPARE(model.index(0, JobsModel::ReadBytes).data(JobsModel::SortRole).toLongLong(),
                 1'409'286'144);
        QCOMPARE(model.index(0, JobsModel::CountedFrom).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("Counted from the clients' job_stats (llite) on node001\nNot "
                                "added: the targets' job_stats on node001, oss1 describe the same "
                                "I/O"));
        // A flush goes where its clients ran: oss1 only serves it, with none of its pages or locks.
        QCOMPARE(model.nodesOf(job), QStringList({"node001"}));
        // A job no client reported (its clients are not lutra's): every node that knows it.
        const QString targetOnly = QStringLiteral("job.2002");
        model.setNodeJobs(
            QStringLiteral("oss1"),
            {targetSide(644 * MiB, 1), stat(target, targetBlock, targetOnly, 1,
                                            {counter(QStringLiteral("read_bytes"), 8, 4 * MiB)})},
            0);
        QCOMPARE(model.nodesOf(targetOnly), QStringList({"oss1"}));
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(644 * MiB, 1)}, 0);

        // Rates are the clients' too.
        model.setNodeJobs(QStringLiteral("node001"),
                          {clientSide(1'409'286'144 + 200 * MiB, 2), targetSide(900 * MiB, 2)},
                          2'000);
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(844 * MiB, 2)}, 2'000);
        QCOMPARE(model.index(0, JobsModel::ReadRate).data().toString(),
                 QStringLiteral("100.0 MiB/s"));
        QCOMPARE(model.index(0, JobsModel::ReadRate).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("100.0 MiB/s"));
    }

    void targetsOnlyAreCounted()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QString job = QStringLiteral("job.5");
        auto targetSide = [&](qint64 written, qint64 snapshotS) {
            return stat(target, targetBlock, job, snapshotS,
                        {counter(QStringLiteral("write_bytes"), 4, written)});
        };
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(100 * MiB, 1)}, 0);
        model.setNodeJobs(QStringLiteral("oss2"), {targetSide(50 * MiB, 1)}, 0);
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(120 * MiB, 2)}, 1'000);
        model.setNodeJobs(QStringLiteral("oss2"), {targetSide(60 * MiB, 2)}, 1'000);
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::Nodes, JobsModel::CountedFrom,
                                    JobsModel::WriteBytes, JobsModel::WriteRate}),
                 QStringList({"job.5 | oss1, oss2 | targets | 180.0 MiB | 30.0 MiB/s"}));
        QCOMPARE(model.index(0, JobsModel::CountedFrom).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("Counted from the targets' job_stats (obdfilter) on oss1, oss2: "
                                "no client reports this job"));

        // A client reports the job: from now on it is counted from its clients alone, in place.
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);
        model.setNodeJobs(QStringLiteral("node001"),
                          {stat(client, clientBlock, job, 2,
                                {counter(QStringLiteral("write_bytes"), 1, 8 * MiB)})},
                          1'000);
        QCOMPARE(inserted.size() + removed.size(), 0);
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::Nodes, JobsModel::CountedFrom,
                                    JobsModel::WriteBytes, JobsModel::WriteRate}),
                 QStringList({"job.5 | node001 | clients | 8.0 MiB | measuring…"}));
    }

    void clientsOfTwoNodesAddUp()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QString job = QStringLiteral("job.9");
        auto clientSide = [&](qint64 read, qint64 snapshotS) {
            return stat(client, clientBlock, job, snapshotS,
                        {counter(QStringLiteral("read_bytes"), 2, read)});
        };
        auto targetSide = [&](qint64 read, qint64 snapshotS) {
            return stat(target, targetBlock, job, snapshotS,
                        {counter(QStringLiteral("read_bytes"), 2, read)});
        };
        model.setNodeJobs(QStringLiteral("node001"), {clientSide(300 * MiB, 1)}, 0);
        model.setNodeJobs(QStringLiteral("node002"), {clientSide(200 * MiB, 1)}, 0);
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(500 * MiB, 1)}, 0);
        model.setNodeJobs(QStringLiteral("node001"), {clientSide(330 * MiB, 3)}, 2'000);
        model.setNodeJobs(QStringLiteral("node002"), {clientSide(220 * MiB, 3)}, 2'000);
        model.setNodeJobs(QStringLiteral("oss1"), {targetSide(550 * MiB, 3)}, 2'000);
        QCOMPARE(printModel(model, {JobsModel::Job, JobsModel::Nodes, JobsModel::CountedFrom,
                                    JobsModel::ReadBytes, JobsModel::ReadRate, JobsModel::Ops}),
                 QStringList({"job.9 | node001, node002 | clients | 550.0 MiB | 25.0 MiB/s | 4"}));
        QCOMPARE(model.index(0, JobsModel::Nodes).data(JobsModel::SortRole).toInt(), 2);
        QCOMPARE(model.index(0, JobsModel::CountedFrom).data(Qt::ToolTipRole).toString(),
                 QStringLiteral("Counted from the clients' job_stats (llite) on node001, node002"
                                "\nNot added: the targets' job_stats on oss1 describe the same "
                                "I/O"));
    }

    void newInstanceHasNoRateYet()
    {
        JobsModel model;
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        const QString job = QStringLiteral("job.7");
        model.setNodeJobs(
            QStringLiteral("n1"),
            {stat(client, clientBlock, job, 1, {counter(QStringLiteral("write_bytes"), 1, 1000)})},
            0);
        // The job starts writing through a second client instance: its earlier bytes are not known.
        model.setNodeJobs(
            QStringLiteral("n1"),
            {stat(client, clientBlock, job, 2, {counter(QStringLiteral("write_bytes"), 2, 3000)}),
             stat(client2, client2Block, job, 2, {counter(QStringLiteral("write_bytes"), 1, 500)})},
            1'000);
        QCOMPARE(model.index(0, JobsModel::WriteRate).data().toString(),
                 JobsModel::measuringText());
        QVERIFY(model.index(0, JobsModel::WriteRate)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .endsWith(QStringLiteral("n1: the job reached another process since the "
                                             "previous sample")));
        QCOMPARE(model.index(0, JobsModel::WriteBytes).data().toString(),
                 QStringLiteral("3.4 KiB"));
        model.setNodeJobs(
            QStringLiteral("n1"),
            {stat(client, clientBlock, job, 3, {counter(QStringLiteral("write_bytes"), 3, 4000)}),
             stat(client2, client2Block, job, 3,
                  {counter(QStringLiteral("write_bytes"), 2, 1524)})},
            3'000);
        QCOMPARE(model.index(0, JobsModel::WriteRate).data().toString(),
                 QStringLiteral("1,012 bytes/s"));
        // Without a clock nothing is "ago".
        QCOMPARE(model.index(0, JobsModel::LastSeen).data().toString(), QStringLiteral("—"));
    }
};

QTEST_GUILESS_MAIN(TestJobsModel)
#include "test_jobs_model.moc"
