// NodeConnection against real processes: lutra-bench --loop as the workload, lutra-ctld with an
// admin and a viewer token, reached over TCP like a remote node.
#include "ctld_fixture.h"
#include "net/node_connection.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QSignalSpy>

#include <signal.h>
#include <sys/stat.h>

using namespace lutra::test;
using namespace lutra::console;

namespace {

constexpr int kWaitMs = 60000;

// Runs one call of a connection and waits for its reply.
template <typename T, typename Issue> Reply<T> await(Issue issue, int timeoutMs = 30000)
{
    std::optional<Reply<T>> result;
    issue([&result](Reply<T> reply) { result = std::move(reply); });
    if (!QTest::qWaitFor([&result] { return result.has_value(); }, timeoutMs)) {
        Reply<T> timedOut;
        timedOut.error = "the test timed out waiting for the reply";
        return timedOut;
    }
    return *result;
}

bool hasConnected(const NodeConnection &connection, const QString &id)
{
    for (const auto &instance : connection.instances()) {
        if (instance.id == id && instance.connected && instance.pid > 0) {
            return true;
        }
    }
    return false;
}

const InstanceCounters *countersOf(const CounterUpdate &update, const QString &instance)
{
    for (const auto &one : update.instances) {
        if (one.instance == instance) {
            return &one;
        }
    }
    return nullptr;
}

const CounterBlock *readAheadBlock(const InstanceCounters &counters)
{
    static const QRegularExpression name(R"(^llite\.[^.]+\.read_ahead_stats$)");
    for (const auto &block : counters.blocks) {
        if (name.match(block.name).hasMatch()) {
            return &block;
        }
    }
    return nullptr;
}

// An update whose bench instance carries its read_ahead_stats block.
bool hasBenchCounters(const std::optional<CounterUpdate> &update)
{
    if (!update) {
        return false;
    }
    const auto *counters = countersOf(*update, "bench-a");
    return counters != nullptr && readAheadBlock(*counters) != nullptr;
}

// Takes the slot until an update with the bench's counters came (QTRY evaluates its condition
// once more after success, so the condition must stay true once it is).
bool takeBenchCounters(NodeConnection &connection, std::optional<CounterUpdate> &update)
{
    if (!hasBenchCounters(update)) {
        update = connection.takeLatestCounters();
    }
    return hasBenchCounters(update);
}

// Every thread of the process is in the stopped state (after SIGSTOP).
bool allThreadsStopped(pid_t pid)
{
    for (const auto &task :
         std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
        std::ifstream stat(task.path() / "stat");
        std::string line;
        std::getline(stat, line);
        const auto state = line.find(") ");
        if (state == std::string::npos || line.compare(state + 2, 1, "T") != 0) {
            return false;
        }
    }
    return true;
}

const ProfileSummary *findProfile(const ProfileList &list, const QString &name)
{
    for (const auto &profile : list.profiles) {
        if (profile.name == name) {
            return &profile;
        }
    }
    return nullptr;
}

QStringList profileNames(const ProfileList &list)
{
    QStringList names;
    for (const auto &profile : list.profiles) {
        names.append(profile.name);
    }
    return names;
}

QString fileText(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        return {};
    }
    return QString::fromUtf8(file.readAll());
}

// For QVERIFY2, which formats its message whether or not the check fails.
QString firstError(const QList<ProfileError> &errors)
{
    return errors.isEmpty() ? QString() : profileErrorText(errors.first());
}

QJsonObject jsonObject(const QByteArray &json)
{
    QJsonParseError error{};
    const auto document = QJsonDocument::fromJson(json, &error);
    return error.error == QJsonParseError::NoError ? document.object() : QJsonObject();
}

} // namespace

class TestConsoleNet : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_runDir;
    QString m_adminToken;
    QString m_viewerToken;
    QString m_address; // the ctld's host:port; a restarted ctld listens on the same port
    std::unique_ptr<BenchProcess> m_bench;
    std::unique_ptr<CtldProcess> m_ctld;
    std::unique_ptr<NodeConnection> m_admin;
    quint64 m_applyId = 0; // the apply of "compute" in appliesVerifiesAndRollsBack
    quint64 m_flushId = 0;
    Reply<QList<JobStat>> m_jobs;

    QString config(const QString &listen) const
    {
        return QString("node: testnode\n"
                       "labels: {rack: r7}\n"
                       "listen: %3\n"
                       "run_dir: %1/run\n"
                       "db: %1/ctld.db\n"
                       "profiles_dir: %2\n"
                       "sample_interval: 1s\n"
                       "poll_interval: 200ms\n"
                       "auth:\n"
                       "  tokens:\n"
                       "    - {name: ada, token_file: %4, role: admin}\n"
                       "    - {name: vera, token_file: %5, role: viewer}\n")
            .arg(m_dir.path(), QStringLiteral(LUTRA_PROFILES_DIR), listen, m_adminToken,
                 m_viewerToken);
    }

    bool startCtld(const QString &listen)
    {
        m_ctld = std::make_unique<CtldProcess>(m_runDir, config(listen));
        if (!m_ctld->waitReady()) {
            qWarning("%s", qPrintable(m_ctld->log()));
            return false;
        }
        return true;
    }

    Endpoint endpoint(const QString &tokenFile) const
    {
        Endpoint endpoint;
        endpoint.address = m_address;
        endpoint.tokenFile = tokenFile;
        return endpoint;
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_runDir = m_dir.path() + "/run";
        std::filesystem::create_directories(m_runDir.toStdString());
        m_adminToken = m_dir.path() + "/admin.token";
        m_viewerToken = m_dir.path() + "/viewer.token";
        std::ofstream(m_adminToken.toStdString()) << "admin-secret-0123456789ab\n";
        std::ofstream(m_viewerToken.toStdString()) << "viewer-secret-0123456789\n";
        ::chmod(m_adminToken.toLocal8Bit().constData(), 0600);
        ::chmod(m_viewerToken.toLocal8Bit().constData(), 0600);
        m_bench = std::make_unique<BenchProcess>(m_runDir, "a", "jobA");
        QVERIFY(m_bench->waitReady());
        QVERIFY(startCtld("127.0.0.1:0"));
        m_address = m_ctld->grpcAddress();
        QVERIFY(m_address.startsWith("127.0.0.1:"));
    }

    void cleanupTestCase()
    {
        m_admin.reset();
        if (m_ctld) {
            ::kill(static_cast<pid_t>(m_ctld->pid()), SIGCONT);
        }
        m_ctld.reset();
        m_bench.reset();
    }

    // (1) ready, node info with the caller's role, the bench among the instances.
    void connectsAndDescribesTheNode()
    {
        m_admin = std::make_unique<NodeConnection>(endpoint(m_adminToken));
        QSignalSpy states(m_admin.get(), &NodeConnection::stateChanged);
        QSignalSpy infos(m_admin.get(), &NodeConnection::infoChanged);
        QSignalSpy instances(m_admin.get(), &NodeConnection::instancesChanged);
        m_admin->start();
        QCOMPARE(m_admin->state(), ConnectionState::connecting);
        QTRY_COMPARE_WITH_TIMEOUT(m_admin->state(), ConnectionState::ready, kWaitMs);
        QCOMPARE(states.last().at(0).value<ConnectionState>(), ConnectionState::ready);
        QVERIFY(infos.count() >= 1);
        const auto info = infos.first().at(0).value<NodeInfo>();
        QCOMPARE(info.node, QString("testnode"));
        QCOMPARE(info.labels.value("rack"), QString("r7"));
        QCOMPARE(info.role, Role::admin);
        QCOMPARE(info.principal, QString("ada"));
        QCOMPARE(m_admin->info().node, QString("testnode"));
        // ctld finds the bench on its own poll; the stream's first sight of it or the periodic
        // refresh brings it into the list.
        QTRY_VERIFY_WITH_TIMEOUT(hasConnected(*m_admin, "bench-a"), kWaitMs);
        QVERIFY(instances.count() >= 1);
        const auto listed = instances.last().at(0).value<QList<InstanceInfo>>();
        QVERIFY(std::any_of(listed.begin(), listed.end(), [this](const InstanceInfo &instance) {
            return instance.id == "bench-a" && instance.kind == "bench" &&
                   instance.pid == m_bench->pid();
        }));
        // Nothing changes while nothing happens: no further instancesChanged on refreshes.
        const int changes = instances.count();
        const auto again = await<QList<InstanceInfo>>(
            [this](auto done) { m_admin->listInstances(std::move(done)); });
        QVERIFY2(again.ok, qPrintable(again.error));
        QCOMPARE(again.value.size(), m_admin->instances().size());
        QCOMPARE(instances.count(), changes);
    }

    // (2) the latest-only slot: read_ahead_stats with its 18 counters, and the gauges.
    void streamsCounters()
    {
        QVERIFY(m_admin);
        QSignalSpy available(m_admin.get(), &NodeConnection::countersAvailable);
        m_admin->takeLatestCounters(); // empty: the next update is announced
        QTRY_VERIFY_WITH_TIMEOUT(available.count() >= 1, kWaitMs);
        std::optional<CounterUpdate> update;
        QTRY_VERIFY_WITH_TIMEOUT(takeBenchCounters(*m_admin, update), kWaitMs);
        const auto *counters = countersOf(*update, "bench-a");
        const auto *block = readAheadBlock(*counters);
        QCOMPARE(block->counters.size(), 18);
        QVERIFY(block->startTimeNs > 0);
        QVERIFY(std::any_of(block->counters.begin(), block->counters.end(),
                            [](const Counter &counter) { return counter.name == "hits"; }));
        QVERIFY(std::any_of(counters->gauges.begin(), counters->gauges.end(),
                            [](const InstanceValue &gauge) {
                                return gauge.name.endsWith(".lock_count") && !gauge.value.isEmpty();
                            }));
        QVERIFY(update->timeNs > 0);
        // Taking empties the slot; the next update fills it and is announced again.
        available.clear();
        QVERIFY(available.wait(kWaitMs));
        QVERIFY(m_admin->takeLatestCounters().has_value());
    }

    // (3) the schema and a read.
    void listsAndReadsParameters()
    {
        QVERIFY(m_admin);
        const auto specs = await<QList<InstanceSpecs>>(
            [this](auto done) { m_admin->listParams("osc.*.max_pages_per_rpc", std::move(done)); });
        QVERIFY2(specs.ok, qPrintable(specs.error));
        const auto bench =
            std::find_if(specs.value.begin(), specs.value.end(),
                         [](const InstanceSpecs &one) { return one.instance == "bench-a"; });
        QVERIFY(bench != specs.value.end());
        QVERIFY(!bench->specs.isEmpty());
        for (const auto &spec : bench->specs) {
            QVERIFY2(spec.name.startsWith("osc.") && spec.name.endsWith(".max_pages_per_rpc"),
                     qPrintable(spec.name));
            QCOMPARE(spec.type, ParamType::size);
            QCOMPARE(spec.unit, QString("pages"));
            // The range comes from the process (it depends on the transport's bulk size).
            QCOMPARE(spec.min, 1);
            QVERIFY(spec.max >= 512);
            QVERIFY(spec.writable);
        }
        const auto values = await<QList<InstanceValue>>([this](auto done) {
            m_admin->getParams({"osc.*.max_pages_per_rpc"}, "bench-a", std::move(done));
        });
        QVERIFY2(values.ok, qPrintable(values.error));
        QCOMPARE(values.value.size(), bench->specs.size());
        for (const auto &value : values.value) {
            QCOMPARE(value.instance, QString("bench-a"));
            QVERIFY(value.value.toLongLong() >= 1);
        }
    }

    // (4) a bad value fails validation (ctld answers INVALID_ARGUMENT, dry run or not) naming the
    // parameter and changes nothing; a good dry run changes nothing; a good set applies.
    void setsParameters()
    {
        QVERIFY(m_admin);
        const auto read = [this] {
            return await<QList<InstanceValue>>([this](auto done) {
                m_admin->getParams({"osc.*.max_pages_per_rpc"}, "bench-a", std::move(done));
            });
        };
        const auto before = read();
        QVERIFY2(before.ok && !before.value.isEmpty(), qPrintable(before.error));

        const auto bad = await<SetOutcome>([this](auto done) {
            m_admin->setParams({{"osc.*.max_pages_per_rpc", "99999"}}, "bench-a", true,
                               std::move(done));
        });
        QVERIFY(!bad.ok);
        QVERIFY2(bad.error.startsWith("INVALID_ARGUMENT: ") &&
                     bad.error.contains(".max_pages_per_rpc=99999: out of range"),
                 qPrintable(bad.error));
        const QString wanted = before.value[0].value == "512" ? "256" : "512";
        const auto dryRun = await<SetOutcome>([this, wanted](auto done) {
            m_admin->setParams({{"osc.*.max_pages_per_rpc", wanted}}, "bench-a", true,
                               std::move(done));
        });
        QVERIFY2(dryRun.ok, qPrintable(dryRun.error));
        QVERIFY(dryRun.value.dryRun);
        QVERIFY(!dryRun.value.applied);
        QCOMPARE(dryRun.value.historyId, 0u);
        const auto unchanged = read();
        QVERIFY(unchanged.ok);
        QCOMPARE(unchanged.value.size(), before.value.size());
        for (int i = 0; i < before.value.size(); ++i) {
            QCOMPARE(unchanged.value[i].value, before.value[i].value);
        }

        const auto set = await<SetOutcome>([this, wanted](auto done) {
            m_admin->setParams({{"osc.*.max_pages_per_rpc", wanted}}, "bench-a", false,
                               std::move(done));
        });
        QVERIFY2(set.ok, qPrintable(set.error));
        QVERIFY(set.value.applied);
        QVERIFY(set.value.historyId > 0);
        QCOMPARE(set.value.instances.size(), 1);
        QCOMPARE(set.value.instances[0].entries.size(), before.value.size());
        for (const auto &entry : set.value.instances[0].entries) {
            QVERIFY2(entry.error.isEmpty(), qPrintable(entry.error));
            QCOMPARE(entry.readBack, wanted);
        }
        const auto after = read();
        QVERIFY(after.ok);
        for (const auto &value : after.value) {
            QCOMPARE(value.value, wanted);
        }
    }

    // (5) a viewer reads and may dry-run, but cannot set.
    void viewerCannotSet()
    {
        NodeConnection viewer(endpoint(m_viewerToken));
        viewer.start();
        QTRY_COMPARE_WITH_TIMEOUT(viewer.state(), ConnectionState::ready, kWaitMs);
        QCOMPARE(viewer.info().role, Role::viewer);
        QCOMPARE(viewer.info().principal, QString("vera"));
        const auto set = await<SetOutcome>([&viewer](auto done) {
            viewer.setParams({{"osc.*.max_pages_per_rpc", "128"}}, "bench-a", false,
                             std::move(done));
        });
        QVERIFY(!set.ok);
        QVERIFY2(set.error.startsWith("PERMISSION_DENIED: ") && set.error.contains("vera"),
                 qPrintable(set.error));
        const auto dryRun = await<SetOutcome>([&viewer](auto done) {
            viewer.setParams({{"osc.*.max_pages_per_rpc", "128"}}, "bench-a", true,
                             std::move(done));
        });
        QVERIFY2(dryRun.ok, qPrintable(dryRun.error));
        const auto values = await<QList<InstanceValue>>([&viewer](auto done) {
            viewer.getParams({"osc.*.max_pages_per_rpc"}, {}, std::move(done));
        });
        QVERIFY2(values.ok, qPrintable(values.error));
    }

    // A call cancelled by the caller ends with CANCELLED, exactly once.
    void cancelsACall()
    {
        QVERIFY(m_admin);
        int calls = 0;
        Reply<QList<HistorySeries>> result;
        const auto id =
            m_admin->getCounterHistory("*", "*", 0, [&](Reply<QList<HistorySeries>> reply) {
                ++calls;
                result = std::move(reply);
            });
        m_admin->cancel(id);
        m_admin->cancel(id); // once is enough
        QTRY_COMPARE_WITH_TIMEOUT(calls, 1, kWaitMs);
        QVERIFY(!result.ok);
        QVERIFY2(result.error.startsWith("CANCELLED: "), qPrintable(result.error));
        // The connection carries on.
        const auto info =
            await<NodeInfo>([this](auto done) { m_admin->getNodeInfo(std::move(done)); });
        QVERIFY2(info.ok, qPrintable(info.error));
        QCOMPARE(calls, 1);
    }

    // (9) history of the bench with each bucket's min and max.
    void counterHistoryHasMinMax()
    {
        QVERIFY(m_admin);
        // Samples are written once per sample_interval (1 s here).
        const auto gaugeHistory = [this] {
            return await<QList<HistorySeries>>([this](auto done) {
                m_admin->getCounterHistory("bench-a", "ldlm.namespaces.*.lock_count", 0,
                                           std::move(done));
            });
        };
        QTRY_VERIFY_WITH_TIMEOUT(!gaugeHistory().value.isEmpty(), kWaitMs);
        const auto history = await<QList<HistorySeries>>([this](auto done) {
            m_admin->getCounterHistory("bench-a", "llite.*.read_ahead_stats.*", 0, std::move(done));
        });
        QVERIFY2(history.ok, qPrintable(history.error));
        QVERIFY(!history.value.isEmpty());
        const auto gauges = gaugeHistory();
        QVERIFY2(gauges.ok, qPrintable(gauges.error));
        for (const auto &series : history.value + gauges.value) {
            QCOMPARE(series.instance, QString("bench-a"));
            QVERIFY(!series.value.isEmpty());
            QCOMPARE(series.timeNs.size(), series.value.size());
            QCOMPARE(series.min.size(), series.value.size());
            QCOMPARE(series.max.size(), series.value.size());
            for (int i = 0; i < series.value.size(); ++i) {
                QVERIFY2(series.min[i] <= series.value[i] && series.value[i] <= series.max[i],
                         qPrintable(series.counter));
            }
        }
    }

    // (7) shutdown with a call in flight to a stopped ctld: cancelled at once, nothing after
    // destruction. A hang here would run into the call deadline, beyond the test's timeout.
    void shutdownWithAHungPeer()
    {
        auto hungEndpoint = endpoint(m_adminToken);
        hungEndpoint.callTimeoutMs = 600000;
        auto explicitShutdown = std::make_unique<NodeConnection>(hungEndpoint);
        auto destroyed = std::make_unique<NodeConnection>(hungEndpoint);
        explicitShutdown->start();
        destroyed->start();
        QTRY_COMPARE_WITH_TIMEOUT(explicitShutdown->state(), ConnectionState::ready, kWaitMs);
        QTRY_COMPARE_WITH_TIMEOUT(destroyed->state(), ConnectionState::ready, kWaitMs);

        const auto pid = static_cast<pid_t>(m_ctld->pid());
        QCOMPARE(::kill(pid, SIGSTOP), 0);
        // The stop is taken by one of ctld's threads, which then stops the others: until all
        // are stopped, a running thread may still answer.
        QTRY_VERIFY_WITH_TIMEOUT(allThreadsStopped(pid), kWaitMs);
        struct Resume {
            pid_t pid;
            ~Resume() { ::kill(pid, SIGCONT); }
        } resume{pid};

        int explicitCalls = 0;
        Reply<QList<InstanceSpecs>> explicitReply;
        explicitShutdown->listParams("*", [&](Reply<QList<InstanceSpecs>> reply) {
            ++explicitCalls;
            explicitReply = std::move(reply);
        });
        auto calledAfterDestruction = std::make_shared<int>(0);
        destroyed->listParams("*", [calledAfterDestruction](Reply<QList<InstanceSpecs>>) {
            ++*calledAfterDestruction;
        });
        destroyed->getNodeInfo(
            [calledAfterDestruction](Reply<NodeInfo>) { ++*calledAfterDestruction; });
        // Let the requests reach the (stopped) peer's socket.
        QTest::qWait(200);

        QCOMPARE(explicitCalls, 0);
        explicitShutdown->shutdown();
        explicitShutdown->shutdown(); // idempotent
        QCOMPARE(explicitShutdown->state(), ConnectionState::unreachable);
        QTRY_COMPARE_WITH_TIMEOUT(explicitCalls, 1, kWaitMs);
        QVERIFY(!explicitReply.ok);
        QVERIFY2(explicitReply.error.startsWith("CANCELLED: "), qPrintable(explicitReply.error));
        // After shutdown a call fails at once, still on the event loop.
        int lateCalls = 0;
        explicitShutdown->getNodeInfo([&lateCalls](Reply<NodeInfo> reply) {
            QVERIFY(!reply.ok);
            ++lateCalls;
        });
        QCOMPARE(lateCalls, 0);
        QTRY_COMPARE_WITH_TIMEOUT(lateCalls, 1, kWaitMs);

        destroyed.reset();
        QTest::qWait(300); // give a stray callback the chance to show up
        QCOMPARE(*calledAfterDestruction, 0);
        explicitShutdown.reset();
        ::kill(pid, SIGCONT);

        // The ctld carries on; the main connection still works (it may have reconnected).
        QVERIFY(m_admin);
        QTRY_COMPARE_WITH_TIMEOUT(m_admin->state(), ConnectionState::ready, kWaitMs);
        const auto info =
            await<NodeInfo>([this](auto done) { m_admin->getNodeInfo(std::move(done)); });
        QVERIFY2(info.ok, qPrintable(info.error));
    }

    // (6) ctld dies: unreachable with the reason; a new ctld on the same port: ready, counters.
    void reconnectsAfterCtldDies()
    {
        QVERIFY(m_admin);
        m_admin->setBackoffForTests(100, 500);
        QSignalSpy states(m_admin.get(), &NodeConnection::stateChanged);
        QSignalSpy infos(m_admin.get(), &NodeConnection::infoChanged);
        const qint64 startedBefore = m_admin->info().startTimeNs;

        m_ctld->process().kill();
        m_ctld->process().waitForFinished();
        QTRY_COMPARE_WITH_TIMEOUT(m_admin->state(), ConnectionState::unreachable, kWaitMs);
        QVERIFY(!states.isEmpty());
        QCOMPARE(states.first().at(0).value<ConnectionState>(), ConnectionState::unreachable);
        QVERIFY2(states.first().at(1).toString().startsWith("UNAVAILABLE: "),
                 qPrintable(states.first().at(1).toString()));
        QCOMPARE(m_admin->lastError(), states.last().at(1).toString());
        // Calls while unreachable fail at once with the reason.
        const auto meanwhile =
            await<NodeInfo>([this](auto done) { m_admin->getNodeInfo(std::move(done)); });
        QVERIFY(!meanwhile.ok);
        QVERIFY(!meanwhile.error.isEmpty());

        m_admin->takeLatestCounters();
        QVERIFY(startCtld(m_address));
        QTRY_COMPARE_WITH_TIMEOUT(m_admin->state(), ConnectionState::ready, kWaitMs);
        QVERIFY(!infos.isEmpty());
        QVERIFY(m_admin->info().startTimeNs != startedBefore);
        QVERIFY(m_admin->lastError().isEmpty());
        std::optional<CounterUpdate> update;
        QTRY_VERIFY_WITH_TIMEOUT(takeBenchCounters(*m_admin, update), kWaitMs);
        QTRY_VERIFY_WITH_TIMEOUT(hasConnected(*m_admin, "bench-a"), kWaitMs);
    }

    // (8) nothing listens: unreachable with a readable error, and it keeps trying.
    void unreachableAddress()
    {
        Endpoint nowhere;
        nowhere.address = "127.0.0.1:1";
        NodeConnection connection(nowhere);
        connection.setBackoffForTests(100, 200);
        QSignalSpy states(&connection, &NodeConnection::stateChanged);
        connection.start();
        QTRY_COMPARE_WITH_TIMEOUT(connection.state(), ConnectionState::unreachable, kWaitMs);
        QVERIFY2(connection.lastError().startsWith("UNAVAILABLE: ") &&
                     connection.lastError().size() > QString("UNAVAILABLE: ").size(),
                 qPrintable(connection.lastError()));
        QCOMPARE(states.first().at(0).value<ConnectionState>(), ConnectionState::unreachable);
        QCOMPARE(states.first().at(1).toString(), connection.lastError());
        const auto reply =
            await<NodeInfo>([&connection](auto done) { connection.getNodeInfo(std::move(done)); });
        QVERIFY(!reply.ok);
        QVERIFY(reply.error.startsWith("UNAVAILABLE: "));
        // A token file that is missing is a reason too.
        Endpoint noToken;
        noToken.address = m_address;
        noToken.tokenFile = m_dir.path() + "/missing.token";
        NodeConnection unauthenticated(noToken);
        unauthenticated.start();
        QTRY_COMPARE_WITH_TIMEOUT(unauthenticated.state(), ConnectionState::unreachable, kWaitMs);
        QVERIFY2(unauthenticated.lastError().contains("missing.token"),
                 qPrintable(unauthenticated.lastError()));
    }

    // The local socket, as on the node itself: the local role (admin by default).
    void localSocket()
    {
        Endpoint local;
        local.address = "unix:" + m_runDir + "/ctld.sock";
        NodeConnection connection(local);
        connection.start();
        QTRY_COMPARE_WITH_TIMEOUT(connection.state(), ConnectionState::ready, kWaitMs);
        QVERIFY2(connection.info().principal.startsWith("local:"),
                 qPrintable(connection.info().principal));
    }

    // --- part 2: profiles, rollback, jobs, history (on the ctld restarted above) ---

    // The shipped profiles with their files and whether their match: selects this node.
    void listsShippedProfiles()
    {
        QVERIFY(m_admin);
        QTRY_COMPARE_WITH_TIMEOUT(m_admin->state(), ConnectionState::ready, kWaitMs);
        const auto list =
            await<ProfileList>([this](auto done) { m_admin->listProfiles(std::move(done)); });
        QVERIFY2(list.ok, qPrintable(list.error));
        QVERIFY2(list.value.errors.isEmpty(), qPrintable(firstError(list.value.errors)));
        const QString dir = QStringLiteral(LUTRA_PROFILES_DIR);
        const auto *base = findProfile(list.value, "base");
        const auto *compute = findProfile(list.value, "compute");
        const auto *ior = findProfile(list.value, "lu9906-ior");
        QVERIFY(base && compute && ior);
        QCOMPARE(base->source, dir + "/base.yaml");
        QVERIFY(base->matchesNode); // no match: section
        QVERIFY(base->extends.isEmpty());
        QCOMPARE(compute->source, dir + "/compute.yaml");
        QVERIFY(!compute->matchesNode); // node[001-128] / role: compute, not testnode
        QCOMPARE(compute->extends, QStringList({"base"}));
        QVERIFY(compute->description.startsWith("Compute nodes"));
        QCOMPARE(compute->updatedNs, 0);
        QVERIFY(!ior->matchesNode);
        // The JSON is lutractl's: proto field names, defaults included.
        const auto json = jsonObject(list.json);
        QVERIFY(json["profiles"].isArray());
        QVERIFY(json["errors"].isArray());
        const auto first = json["profiles"].toArray().first().toObject();
        for (const char *key : {"name", "description", "extends", "matches_node", "source"}) {
            QVERIFY2(first.contains(key), key);
        }
    }

    // A shipped profile's file as it is; a stored one as it was put; unknown: NOT_FOUND.
    void getsAndPutsProfiles()
    {
        QVERIFY(m_admin);
        const QString path = QStringLiteral(LUTRA_PROFILES_DIR) + "/compute.yaml";
        const auto shipped = await<ProfileText>(
            [this](auto done) { m_admin->getProfile("compute", std::move(done)); });
        QVERIFY2(shipped.ok, qPrintable(shipped.error));
        QCOMPARE(shipped.value.name, QString("compute"));
        QCOMPARE(shipped.value.yaml, fileText(path));
        QCOMPARE(shipped.value.source, path);

        const QString yaml = "# the console's own\n"
                             "name: console-stored\n"
                             "extends: base\n"
                             "params:\n"
                             "  llite.*.max_read_ahead_mb: 96\n";
        const auto put = await<QList<ProfileError>>(
            [this, yaml](auto done) { m_admin->putProfile(yaml, std::move(done)); });
        QVERIFY2(put.ok, qPrintable(put.error));
        QVERIFY(put.value.isEmpty());
        QCOMPARE(jsonObject(put.json)["name"].toString(), QString("console-stored"));
        const auto stored = await<ProfileText>(
            [this](auto done) { m_admin->getProfile("console-stored", std::move(done)); });
        QVERIFY2(stored.ok, qPrintable(stored.error));
        QCOMPARE(stored.value.yaml, yaml);
        QCOMPARE(stored.value.source, QString("stored"));

        const auto unknown = await<ProfileText>(
            [this](auto done) { m_admin->getProfile("no-such-profile", std::move(done)); });
        QVERIFY(!unknown.ok);
        QVERIFY2(unknown.error.startsWith("NOT_FOUND: ") &&
                     unknown.error.contains("'no-such-profile'"),
                 qPrintable(unknown.error));
        QVERIFY(unknown.json.isEmpty());
    }

    // A document with a bad value: its errors at line:col, and nothing stored.
    void putProfileWithABadValueStoresNothing()
    {
        QVERIFY(m_admin);
        const auto list = [this] {
            return await<ProfileList>(
                [this](auto done) { m_admin->listProfiles(std::move(done)); });
        };
        const auto before = list();
        QVERIFY2(before.ok, qPrintable(before.error));
        const QString yaml = "name: console-bad\n"
                             "params:\n"
                             "  osc.*.max_rpcs_in_flight: [16, 32]\n";
        const auto put = await<QList<ProfileError>>(
            [this, yaml](auto done) { m_admin->putProfile(yaml, std::move(done)); });
        QVERIFY2(put.ok, qPrintable(put.error)); // problems of the document are not a failed call
        QCOMPARE(put.value.size(), 1);
        const auto &error = put.value[0];
        QCOMPARE(error.line, 3);
        QCOMPARE(error.column, 29); // the value, after "  osc.*.max_rpcs_in_flight: "
        QVERIFY2(error.message.contains("must be a scalar"), qPrintable(error.message));
        const auto errors = jsonObject(put.json)["errors"].toArray();
        QCOMPARE(errors.size(), 1);
        QCOMPARE(errors[0].toObject()["line"].toInt(), 3);
        const auto after = list();
        QVERIFY2(after.ok, qPrintable(after.error));
        QCOMPARE(profileNames(after.value), profileNames(before.value));
        QVERIFY(!findProfile(after.value, "console-bad"));
    }

    // Diff of an inline document: live and desired values with the document's line.
    void diffsAnInlineProfile()
    {
        QVERIFY(m_admin);
        const QString yaml = "name: console-inline\n"
                             "params:\n"
                             "  llite.*.max_read_ahead_mb: 48\n";
        const auto plan = await<ProfilePlan>([this, yaml](auto done) {
            m_admin->profile(ProfileMode::diff, {}, yaml, false, std::move(done));
        });
        QVERIFY2(plan.ok, qPrintable(plan.error));
        QCOMPARE(plan.value.profile, QString("console-inline"));
        QVERIFY(plan.value.matchesNode);
        QVERIFY(plan.value.errors.isEmpty());
        QVERIFY(!plan.value.applied);
        QCOMPARE(plan.value.historyId, 0u);
        QVERIFY(!plan.value.entries.isEmpty());
        for (const auto &entry : plan.value.entries) {
            QCOMPARE(entry.instance, QString("bench-a"));
            QVERIFY2(entry.name.startsWith("llite.") && entry.name.endsWith(".max_read_ahead_mb"),
                     qPrintable(entry.name));
            QVERIFY(!entry.live.isEmpty());
            QCOMPARE(entry.desired, QString("48"));
            QCOMPARE(entry.changed, entry.live != "48");
            QVERIFY2(entry.source.startsWith("inline:3:"), qPrintable(entry.source));
        }
        // An inline document is for diffs only.
        const auto inlineApply = await<ProfilePlan>([this, yaml](auto done) {
            m_admin->profile(ProfileMode::apply, {}, yaml, false, std::move(done));
        });
        QVERIFY(!inlineApply.ok);
        QVERIFY2(inlineApply.error.startsWith("INVALID_ARGUMENT: "), qPrintable(inlineApply.error));
    }

    // Apply by name (force: compute's match: excludes testnode), verify, then a dry-run rollback
    // to the apply after a later change.
    void appliesVerifiesAndRollsBack()
    {
        QVERIFY(m_admin);
        const auto refused = await<ProfilePlan>([this](auto done) {
            m_admin->profile(ProfileMode::apply, "compute", {}, false, std::move(done));
        });
        QVERIFY(!refused.ok);
        QVERIFY2(refused.error.startsWith("FAILED_PRECONDITION: "), qPrintable(refused.error));

        const auto apply = await<ProfilePlan>([this](auto done) {
            m_admin->profile(ProfileMode::apply, "compute", {}, true, std::move(done));
        });
        QVERIFY2(apply.ok, qPrintable(apply.error));
        QVERIFY2(apply.value.errors.isEmpty(), qPrintable(firstError(apply.value.errors)));
        QVERIFY(apply.value.applied);
        QVERIFY(apply.value.historyId > 0);
        QVERIFY(!apply.value.matchesNode);
        QVERIFY(!apply.value.results.isEmpty());
        for (const auto &result : apply.value.results) {
            QVERIFY2(result.applied, qPrintable(result.errors.join("; ")));
        }
        m_applyId = apply.value.historyId;
        // Reply.json: lutractl's shape, proto field names; uint64 as a string as in proto3 JSON.
        const auto json = jsonObject(apply.json);
        QCOMPARE(json["history_id"].toString(), QString::number(m_applyId));
        QCOMPARE(json["applied"].toBool(), true);
        QCOMPARE(json["matches_node"].toBool(), false);
        QVERIFY(json.contains("drift"));
        const auto entries = json["entries"].toArray();
        QCOMPARE(entries.size(), apply.value.entries.size());
        const auto entry = entries.first().toObject();
        for (const char *key : {"instance", "name", "live", "desired", "changed", "source"}) {
            QVERIFY2(entry.contains(key), key);
        }
        QVERIFY(json["results"].toArray().first().toObject().contains("result"));

        const auto verify = await<ProfilePlan>([this](auto done) {
            m_admin->profile(ProfileMode::verify, "compute", {}, false, std::move(done));
        });
        QVERIFY2(verify.ok, qPrintable(verify.error));
        QCOMPARE(verify.value.drift, 0);
        QVERIFY(!verify.value.applied);
        QCOMPARE(verify.value.entries.size(), apply.value.entries.size());

        // Something changes after the apply; rolling back to the apply would undo it.
        const auto set = await<SetOutcome>([this](auto done) {
            m_admin->setParams({{"llite.*.max_read_ahead_mb", "32"}}, "bench-a", false,
                               std::move(done));
        });
        QVERIFY2(set.ok && set.value.applied, qPrintable(set.error));
        const auto rollback = await<RollbackOutcome>(
            [this](auto done) { m_admin->rollback(m_applyId, true, std::move(done)); });
        QVERIFY2(rollback.ok, qPrintable(rollback.error));
        QVERIFY(!rollback.value.applied);
        QCOMPARE(rollback.value.historyId, 0u); // a dry run records nothing
        QVERIFY(rollback.value.errors.isEmpty());
        QVERIFY(!rollback.value.entries.isEmpty());
        for (const auto &back : rollback.value.entries) {
            QCOMPARE(back.instance, QString("bench-a"));
            QVERIFY2(back.name.endsWith(".max_read_ahead_mb"), qPrintable(back.name));
            QCOMPARE(back.live, QString("32"));
            QCOMPARE(back.desired, QString("256"));
            QVERIFY(back.changed);
        }
        const auto still = await<QList<InstanceValue>>([this](auto done) {
            m_admin->getParams({"llite.*.max_read_ahead_mb"}, "bench-a", std::move(done));
        });
        QVERIFY2(still.ok && !still.value.isEmpty(), qPrintable(still.error));
        QCOMPARE(still.value[0].value, QString("32"));
    }

    // The bench's job: flushed with a report per instance; its stats with read_bytes.
    void flushesAndReadsTheBenchJob()
    {
        QVERIFY(m_admin);
        const auto flush = await<FlushOutcome>(
            [this](auto done) { m_admin->flushJob("jobA", false, 20000, std::move(done)); },
            kWaitMs);
        QVERIFY2(flush.ok, qPrintable(flush.error));
        QCOMPARE(flush.value.jobId, QString("jobA"));
        QVERIFY(flush.value.ok);
        QVERIFY(flush.value.historyId > 0);
        QCOMPARE(flush.value.instances.size(), 1);
        QCOMPARE(flush.value.instances[0].instance, QString("bench-a"));
        QVERIFY2(flush.value.instances[0].error.isEmpty(),
                 qPrintable(flush.value.instances[0].error));
        QCOMPARE(jsonObject(flush.json)["job_id"].toString(), QString("jobA"));
        m_flushId = flush.value.historyId;

        // The workload reads all the time: read_bytes shows up with samples.
        const auto readBytes = [this]() -> const Counter * {
            m_jobs = await<QList<JobStat>>(
                [this](auto done) { m_admin->getJobStats("job*", std::move(done)); });
            for (const auto &job : m_jobs.value) {
                for (const auto &counter : job.counters) {
                    if (job.jobId == "jobA" && counter.name == "read_bytes" &&
                        counter.samples > 0) {
                        return &counter;
                    }
                }
            }
            return nullptr;
        };
        QTRY_VERIFY_WITH_TIMEOUT(readBytes() != nullptr, kWaitMs);
        QVERIFY2(m_jobs.ok, qPrintable(m_jobs.error));
        for (const auto &job : m_jobs.value) {
            QCOMPARE(job.instance, QString("bench-a"));
            QCOMPARE(job.jobId, QString("jobA"));
            QVERIFY2(job.block.endsWith(".job_stats"), qPrintable(job.block));
            QVERIFY(job.snapshotTimeS > 0);
        }
        QVERIFY(jsonObject(m_jobs.json)["jobs"].isArray());
    }

    // Paging with nextBeforeId walks consecutive points, newest first: the flush, the set, the
    // apply.
    void pagesThroughHistory()
    {
        QVERIFY(m_admin);
        QVERIFY(m_applyId > 0 && m_flushId > 0);
        HistoryQuery all;
        all.limit = 3;
        const auto three = await<HistoryPage>(
            [this, all](auto done) { m_admin->listHistory(all, std::move(done)); });
        QVERIFY2(three.ok, qPrintable(three.error));
        QCOMPARE(three.value.points.size(), 3);

        HistoryQuery query;
        query.limit = 1;
        QList<HistoryPoint> walked;
        for (int page = 0; page < 3; ++page) {
            const auto one = await<HistoryPage>(
                [this, query](auto done) { m_admin->listHistory(query, std::move(done)); });
            QVERIFY2(one.ok, qPrintable(one.error));
            QCOMPARE(one.value.points.size(), 1);
            QVERIFY(one.value.nextBeforeId != 0); // older points exist (the puts, the first set)
            walked.append(one.value.points[0]);
            query.beforeId = one.value.nextBeforeId;
            if (page == 0) {
                QCOMPARE(jsonObject(one.json)["next_before_id"].toString(),
                         QString::number(one.value.nextBeforeId));
            }
        }
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(walked[i].id, three.value.points[i].id);
        }
        QVERIFY(walked[0].id > walked[1].id && walked[1].id > walked[2].id);
        QCOMPARE(walked[0].id, m_flushId);
        QCOMPARE(walked[0].action, QString("flush"));
        QCOMPARE(walked[1].action, QString("set"));
        QCOMPARE(walked[1].principal, QString("ada"));
        QCOMPARE(walked[1].changes.size(), 1);
        QCOMPARE(walked[1].changes[0].requested, QString("32"));
        QVERIFY(walked[1].changes[0].ok);
        QCOMPARE(walked[2].id, m_applyId);
        QCOMPARE(walked[2].action, QString("apply"));
        QCOMPARE(walked[2].profile, QString("compute"));
        QCOMPARE(walked[2].outcome, QString("ok")); // ctld's Outcome names, not types.h's comment
    }
};

QTEST_GUILESS_MAIN(TestConsoleNet)
#include "test_console_net.moc"
