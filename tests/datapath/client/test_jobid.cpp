// Job ids the way Lustre derives them, per-thread overrides, validation through the registry,
// and interning into tags.
#include "client/jobid.h"
#include "core/params/registry.h"

#include <QTest>

#include <thread>

using namespace lutra;
using client::JobIds;

class TestJobId : public QObject {
    Q_OBJECT
private slots:
    void procnameUid()
    {
        JobIds jobs;
        const std::string expected = "test_jobid." + std::to_string(::getuid());
        QCOMPARE(std::string(jobs.current()), expected);
    }

    void environmentVariableThenFallback()
    {
        JobIds jobs;
        QVERIFY(jobs.setJobIdVar("LUTRA_TEST_JOB").ok());
        QVERIFY(jobs.setJobIdName("%e-%%").ok());
        qunsetenv("LUTRA_TEST_JOB");
        QCOMPARE(std::string(jobs.current()), std::string("test_jobid-%"));
        qputenv("LUTRA_TEST_JOB", "4242");
        QVERIFY(jobs.setJobIdVar("LUTRA_TEST_JOB").ok()); // settings change: recomputed
        QCOMPARE(std::string(jobs.current()), std::string("4242"));
        QVERIFY(jobs.setJobIdVar("disable").ok());
        QCOMPARE(std::string(jobs.current()), std::string("disabled"));
    }

    void threadOverride()
    {
        JobIds jobs;
        JobIds::setThreadJobId("slurm.7 with spaces");
        QCOMPARE(std::string(jobs.current()), std::string("slurm.7_with_spaces"));
        std::string other;
        std::thread([&] { other = std::string(jobs.current()); }).join();
        QVERIFY(other != "slurm.7_with_spaces"); // overrides are per thread
        JobIds::setThreadJobId("");
        QVERIFY(std::string(jobs.current()).starts_with("test_jobid."));
    }

    void validationThroughTheRegistry()
    {
        JobIds jobs;
        params::Registry registry;
        params::ParamGroup group(registry);
        QVERIFY(jobs.publish(group).ok());
        const params::Assignment good{"jobid_var", "SLURM_JOB_ID"};
        QVERIFY(registry.set(std::span(&good, 1), "test").status.ok());
        QCOMPARE(jobs.jobIdVar(), std::string("SLURM_JOB_ID"));
        const params::Assignment bad{"jobid_var", "not a name"};
        auto result = registry.set(std::span(&bad, 1), "test");
        QCOMPARE(result.status.code(), Errc::invalid_argument);
        QVERIFY(result.status.message().find("not an environment variable name") !=
                std::string::npos);
        QCOMPARE(jobs.jobIdVar(), std::string("SLURM_JOB_ID")); // unchanged
    }

    void aNewInstanceNeverSeesAnOldOnesCache()
    {
        // Instances at the same address one after the other (as mounts in one process are):
        // the per-thread caches must not carry over.
        for (int i = 0; i < 3; ++i) {
            auto jobs = std::make_unique<JobIds>();
            const std::string var = "LUTRA_TEST_JOB_" + std::to_string(i);
            qputenv(var.c_str(), QByteArray::number(i));
            QVERIFY(jobs->setJobIdVar(var).ok());
            QCOMPARE(std::string(jobs->current()), std::to_string(i));
            const auto tag = jobs->currentTag();
            QCOMPARE(jobs->name(tag), std::to_string(i));
        }
    }

    // The version a caller keeps instead of comparing ids: it stays while the id stays, moves
    // with the thread's override and with every settings change of any instance; currentTag
    // follows it and its instance.
    void versionMovesWhenTheIdMayChange()
    {
        JobIds jobs;
        JobIds other;
        const JobIds::Version first = jobs.version();
        (void)jobs.current();
        QVERIFY(jobs.version() == first);
        QVERIFY(other.version() == first); // process-wide: keyed by instance by who keeps one
        QVERIFY(other.setJobIdName("%e.x").ok()); // any instance's change moves it
        QVERIFY(!(jobs.version() == first));
        QCOMPARE(jobs.name(jobs.currentTag()), std::string(jobs.current())); // own tag, not other's
        const auto plainTag = jobs.currentTag();

        JobIds::setThreadJobId("job.v1");
        const JobIds::Version overridden = jobs.version();
        QVERIFY(!(overridden == first));
        QCOMPARE(jobs.name(jobs.currentTag()), std::string("job.v1"));
        JobIds::setThreadJobId("job.v2");
        QVERIFY(!(jobs.version() == overridden));
        QCOMPARE(jobs.name(jobs.currentTag()), std::string("job.v2"));
        std::string inAnotherThread;
        std::thread([&] {
            const JobIds::Version version = jobs.version();
            inAnotherThread = jobs.current();
            QVERIFY(jobs.version() == version);
        }).join();
        QVERIFY(inAnotherThread != "job.v2"); // another thread's override is not this one's
        JobIds::setThreadJobId("");
        QCOMPARE(jobs.currentTag(), plainTag);

        const JobIds::Version beforeSettings = jobs.version();
        QVERIFY(jobs.setJobIdVar("disable").ok());
        QVERIFY(!(jobs.version() == beforeSettings));
        QCOMPARE(jobs.name(jobs.currentTag()), std::string("disabled"));
        const JobIds::Version disabled = jobs.version();
        QVERIFY(jobs.setJobIdName("%e").ok());
        const JobIds::Version named = jobs.version();
        QVERIFY(!(named == disabled));
        QVERIFY(!jobs.setJobIdName("").ok()); // refused: nothing changed
        QVERIFY(jobs.version() == named);
    }

    // Versions are process-wide: a tag remembered for one instance is not another's.
    void currentTagIsPerInstance()
    {
        JobIds a;
        JobIds b;
        QVERIFY(a.setJobIdVar("disable").ok());
        QVERIFY(a.tag("zzz") != 0); // a's tags differ from b's from here on
        QCOMPARE(a.name(a.currentTag()), std::string("disabled"));
        QVERIFY(b.name(b.currentTag()).starts_with("test_jobid."));
        QCOMPARE(a.name(a.currentTag()), std::string("disabled"));
    }

    void tags()
    {
        JobIds jobs;
        const auto a = jobs.tag("job.a");
        const auto b = jobs.tag("job.b");
        QVERIFY(a != 0 && b != 0 && a != b);
        QCOMPARE(jobs.tag("job.a"), a);
        QCOMPARE(jobs.name(b), std::string("job.b"));
        QCOMPARE(jobs.tag(""), core::JobTag(0));
    }
};

QTEST_GUILESS_MAIN(TestJobId)
#include "test_jobid.moc"
