// lutra-ctld as a real process managing two real lutra-bench --loop processes (each with its own
// lutra-targets), driven through lutractl and through the gRPC API, with a real SQLite file.
#include "ctld_fixture.h"
#include "ctld_node.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"
#include "lutra/datapath/v1/control.grpc.pb.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>

#include <future>

using namespace lutra::test;

class TestCtld : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_runDir;
    std::unique_ptr<BenchProcess> m_benchA;
    std::unique_ptr<BenchProcess> m_benchB;

    CommandResult lutractl(const QStringList &arguments, int timeoutMs = 60000)
    {
        return runProcess(QStringLiteral(LUTRACTL_BIN),
                          QStringList{"--socket", m_runDir + "/ctld.sock"} + arguments, m_runDir,
                          timeoutMs);
    }

    std::unique_ptr<CtldProcess> startCtld(const QString &extra = {},
                                           const QStringList &environment = {})
    {
        auto ctld = std::make_unique<CtldProcess>(m_runDir, ctldConfig(m_dir.path(), extra),
                                                  "ctld.yaml", environment);
        if (!ctld->waitReady()) {
            qWarning("%s", qPrintable(ctld->log()));
            return nullptr;
        }
        // Both datapath processes are known before a test starts using them.
        QElapsedTimer timer;
        timer.start();
        while (lutractl({"instances"}).out.count("connected") != 2) {
            if (timer.elapsed() > 30000) {
                qWarning("ctld did not connect to both datapath processes");
                return nullptr;
            }
            QTest::qWait(100);
        }
        return ctld;
    }

    void freshDatabase()
    {
        for (const char *suffix : {"", "-wal", "-shm"}) {
            std::filesystem::remove(m_dir.path().toStdString() + "/ctld.db" + suffix);
        }
    }

private slots:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        m_runDir = m_dir.path() + "/run";
        std::filesystem::create_directories(m_runDir.toStdString());
        m_benchA = std::make_unique<BenchProcess>(m_runDir, "a", "jobA");
        m_benchB = std::make_unique<BenchProcess>(m_runDir, "b", "jobB");
        QVERIFY(m_benchA->waitReady());
        QVERIFY(m_benchB->waitReady());
    }

    void init() { freshDatabase(); }

    void cleanupTestCase()
    {
        m_benchA.reset();
        m_benchB.reset();
    }

    void setAndGetRoundTrip()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        auto set = lutractl({"set_param", "llite.*.max_read_ahead_mb=96"});
        QCOMPARE(set.exitCode, 0);
        QCOMPARE(set.out, QString("llite.bench.max_read_ahead_mb=96\n"
                                  "llite.bench.max_read_ahead_mb=96\n"));
        auto get = lutractl({"get_param", "-n", "llite.*.max_read_ahead_mb"});
        QCOMPARE(get.exitCode, 0);
        QCOMPARE(get.out, QString("96\n96\n"));
        QCOMPARE(datapathValue(m_runDir, "bench-a", "llite.bench.max_read_ahead_mb"), "96");

        // Sizes are lctl's: 16M of pages is 4096 pages, printed in the base unit.
        QCOMPARE(lutractl({"set_param", "osc.ost0.max_pages_per_rpc=1M"}).exitCode, 0);
        QCOMPARE(lutractl({"get_param", "-n", "osc.ost0.max_pages_per_rpc"}).out,
                 QString("256\n256\n"));

        // --json: one envelope per node with the reply inside.
        auto json = jsonOf(lutractl({"--json", "get_param", "llite.*.max_read_ahead_mb"}));
        const auto nodes = json["nodes"].toArray();
        QCOMPARE(nodes.size(), 1);
        QCOMPARE(nodes[0].toObject()["ok"].toBool(), true);
        const auto values = nodes[0].toObject()["result"].toObject()["values"].toArray();
        QCOMPARE(values.size(), 2);
        QCOMPARE(values[0].toObject()["instance"].toString(), QString("bench-a"));
        QCOMPARE(values[1].toObject()["instance"].toString(), QString("bench-b"));
        QCOMPARE(json["summary"].toObject()["failed"].toInt(), 0);

        // A batch with one bad value changes nothing anywhere, and says what and where.
        auto bad = lutractl(
            {"set_param", "llite.*.max_read_ahead_mb=32", "osc.ost1.max_pages_per_rpc=99999"});
        QCOMPARE(bad.exitCode, 1);
        QVERIFY2(bad.err.contains("bench-a: osc.ost1.max_pages_per_rpc=99999: out of range"),
                 qPrintable(bad.err));
        QCOMPARE(lutractl({"get_param", "-n", "llite.*.max_read_ahead_mb"}).out,
                 QString("96\n96\n"));
        auto unknown = lutractl({"set_param", "osc.*.max_pages_per_rpcs=16"});
        QCOMPARE(unknown.exitCode, 1);
        QVERIFY2(unknown.err.contains("no parameter matches 'osc.*.max_pages_per_rpcs'"),
                 qPrintable(unknown.err));

        // Every change is in the history, with old, requested and read-back values.
        auto history = lutractl({"history", "--action", "set"});
        QCOMPARE(history.exitCode, 0);
        QVERIFY2(history.out.contains("bench-a llite.bench.max_read_ahead_mb: 64 -> 96") &&
                     history.out.contains("bench-b llite.bench.max_read_ahead_mb: 64 -> 96"),
                 qPrintable(history.out));
        QCOMPARE(history.out.count("local:"),
                 2); // two successful sets; the bad ones changed nothing

        // Restore the defaults for the next tests.
        QCOMPARE(lutractl({"set_param", "llite.*.max_read_ahead_mb=64",
                           "osc.ost0.max_pages_per_rpc=1024"})
                     .exitCode,
                 0);
        QCOMPARE(ctld->stop(), 0);
    }

    void restartedProcessGetsDesiredState()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        QCOMPARE(lutractl({"set_param", "ldlm.namespaces.*.lru_size=77"}).exitCode, 0);
        const auto pidBefore = m_benchB->pid();
        m_benchB->kill();
        m_benchB = std::make_unique<BenchProcess>(m_runDir, "b", "jobB");
        QVERIFY(m_benchB->waitReady());
        QVERIFY(m_benchB->pid() != pidBefore);
        // ctld notices the new incarnation and applies the desired state to it.
        QTRY_COMPARE_WITH_TIMEOUT(
            datapathValue(m_runDir, "bench-b", "ldlm.namespaces.ost0.lru_size"), std::string("77"),
            30000);
        QTRY_VERIFY_WITH_TIMEOUT(
            lutractl({"history", "--action", "reconcile"}).out.contains("bench-b restarted"),
            10000);
        auto instances = lutractl({"instances"});
        QVERIFY2(instances.out.contains("bench-b") && instances.out.contains("restarts 1"),
                 qPrintable(instances.out));
        QCOMPARE(lutractl({"set_param", "ldlm.namespaces.*.lru_size=0"}).exitCode, 0);
        QCOMPARE(ctld->stop(), 0);
    }

    void profileWithOneBadValueChangesNothing()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        const QString file = m_dir.path() + "/bad.yaml";
        std::ofstream(file.toStdString()) << "name: bad\n"
                                             "description: one good line, one bad\n"
                                             "params:\n"
                                             "  llite.*.max_read_ahead_mb: 32\n"
                                             "  osc.*.max_pages_per_rpc: 99999\n";
        auto apply = lutractl({"apply", "--file", file});
        QCOMPARE(apply.exitCode, 1);
        QVERIFY2(apply.out.contains(file + ":5:28:") && apply.out.contains("out of range"),
                 qPrintable(apply.out));
        QCOMPARE(lutractl({"get_param", "-n", "llite.*.max_read_ahead_mb"}).out,
                 QString("64\n64\n"));

        // A history point to come back to.
        QCOMPARE(lutractl({"set_param", "llite.*.max_read_ahead_mb=64"}).exitCode, 0);
        auto before = jsonOf(lutractl({"--json", "history", "--limit", "1"}));
        const auto beforePoint = before["nodes"]
                                     .toArray()[0]
                                     .toObject()["result"]
                                     .toObject()["points"]
                                     .toArray()[0]
                                     .toObject()["id"]
                                     .toString()
                                     .toULongLong();
        QVERIFY(beforePoint > 0);

        // A shipped profile: the dry run lists what would change and changes nothing.
        auto diff = lutractl({"diff", "compute"});
        QVERIFY2(diff.exitCode == 0, qPrintable(diff.out + diff.err));
        QVERIFY2(diff.out.contains("~ bench-a llite.bench.max_read_ahead_mb: 64 -> 256") &&
                     diff.out.contains("(the profile does not match this node)"),
                 qPrintable(diff.out));
        QCOMPARE(lutractl({"get_param", "-n", "llite.*.max_read_ahead_mb"}).out,
                 QString("64\n64\n"));
        // Its match: section excludes this node: applying needs --force.
        auto refused = lutractl({"apply", "compute"});
        QCOMPARE(refused.exitCode, 1);
        QVERIFY2(refused.err.contains("does not match node testnode"), qPrintable(refused.err));
        auto applied = lutractl({"apply", "--force", "compute"});
        QVERIFY2(applied.exitCode == 0, qPrintable(applied.out + applied.err));
        QCOMPARE(lutractl({"get_param", "-n", "llite.*.max_read_ahead_mb"}).out,
                 QString("256\n256\n"));
        auto verify = lutractl({"verify", "compute"});
        QCOMPARE(verify.exitCode, 0);
        QVERIFY2(verify.out.contains("no drift"), qPrintable(verify.out));
        QVERIFY(lutractl({"status"}).out.contains("last profile: compute"));

        // Drift is noticed, and a rollback returns to the state before the apply.
        QCOMPARE(lutractl({"set_param", "llite.*.max_read_ahead_mb=8"}).exitCode, 0);
        auto drifted = lutractl({"verify", "compute"});
        QCOMPARE(drifted.exitCode, 1);
        QVERIFY2(drifted.out.contains("2 parameter(s) drifted"), qPrintable(drifted.out));
        auto rollback = lutractl({"rollback", QString::number(beforePoint)});
        QVERIFY2(rollback.exitCode == 0, qPrintable(rollback.out + rollback.err));

        // LU-9906's 16 MiB RPCs exceed what these targets accept (brw_size 4 MiB): refused at
        // the profile's line, nothing changed.
        auto big = lutractl({"diff", "lu9906-ior"});
        QCOMPARE(big.exitCode, 1);
        QVERIFY2(
            big.out.contains("lu9906-ior.yaml:14:28: osc.ost0.max_pages_per_rpc=16M: out of range"),
            qPrintable(big.out));
        QCOMPARE(lutractl({"get_param", "-n", "llite.*.max_read_ahead_mb"}).out,
                 QString("64\n64\n"));
        QCOMPARE(ctld->stop(), 0);
    }

    void flushReleasesOnlyThatJob()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        // Let both jobs put pages and locks in their caches.
        QTRY_VERIFY_WITH_TIMEOUT(lutractl({"jobs"}).out.contains("jobA"), 30000);
        // The workload drops its own pages between iterations, so a flush may find jobA's cache
        // empty at that instant: flush until one releases pages. Every flush must leave jobB's
        // process untouched.
        bool releasedPages = false;
        for (int attempt = 0; attempt < 20 && !releasedPages; ++attempt) {
            auto flush = lutractl({"--json", "flush", "--job", "jobA"});
            QVERIFY2(flush.exitCode == 0, qPrintable(flush.out + flush.err));
            const auto result = jsonOf(flush)["nodes"].toArray()[0].toObject()["result"].toObject();
            QCOMPARE(result["job_id"].toString(), QString("jobA"));
            const auto instances = result["instances"].toArray();
            QCOMPARE(instances.size(), 2);
            for (const auto &value : instances) {
                const auto report = value.toObject();
                const auto pages = report["pages_dropped"].toString().toULongLong();
                const auto locks = report["locks_cancelled"].toString().toULongLong();
                if (report["instance"].toString() == "bench-a") {
                    releasedPages = pages > 0;
                } else {
                    // bench-b runs jobB only: nothing of it is released.
                    QCOMPARE(pages, 0ULL);
                    QCOMPARE(locks, 0ULL);
                }
            }
            if (!releasedPages) {
                QTest::qWait(200);
            }
        }
        QVERIFY2(releasedPages, "no flush of jobA released pages in 20 attempts");
        QVERIFY(lutractl({"history", "--action", "flush"}).out.contains("flush --job jobA"));
        QCOMPARE(ctld->stop(), 0);
    }

    void rolesAndTokens()
    {
        const QString viewer = m_dir.path() + "/viewer.token";
        const QString admin = m_dir.path() + "/admin.token";
        std::ofstream(viewer.toStdString()) << "viewer-secret-0123456789\n";
        std::ofstream(admin.toStdString()) << "admin-secret-0123456789ab\n";
        ::chmod(viewer.toLocal8Bit().constData(), 0600);
        auto ctld = startCtld(QString("auth:\n"
                                      "  tokens:\n"
                                      "    - {name: vera, token_file: %1, role: viewer}\n"
                                      "    - {name: ada, token_file: %2, role: admin}\n")
                                  .arg(viewer, admin));
        QVERIFY(ctld);
        const auto node = ctld->grpcAddress();
        auto asViewer = lutractl(
            {"--node", node, "--token-file", viewer, "set_param", "llite.*.max_read_ahead_mb=32"});
        QCOMPARE(asViewer.exitCode, 1);
        QVERIFY2(asViewer.err.contains("PERMISSION_DENIED") &&
                     asViewer.err.contains("needs role admin; vera has role viewer"),
                 qPrintable(asViewer.err));
        QCOMPARE(lutractl({"--node", node, "--token-file", viewer, "get_param", "-n",
                           "llite.*.max_read_ahead_mb"})
                     .out,
                 QString("64\n64\n"));
        auto noToken = lutractl({"--node", node, "get_param", "llite.*.max_read_ahead_mb"});
        QCOMPARE(noToken.exitCode, 1);
        QVERIFY2(noToken.err.contains("UNAUTHENTICATED"), qPrintable(noToken.err));
        auto asAdmin = lutractl(
            {"--node", node, "--token-file", admin, "set_param", "llite.*.max_read_ahead_mb=64"});
        QCOMPARE(asAdmin.exitCode, 0);
        QVERIFY(lutractl({"history", "--limit", "1"}).out.contains("ada"));

        // Fan-out: one good node, one that is not there; --fail-soft still reports it.
        const QString hosts = node + ",127.0.0.1:1";
        auto fanout = lutractl({"-H", hosts, "--token-file", viewer, "--timeout", "3s", "get_param",
                                "-n", "llite.*.max_read_ahead_mb"});
        QCOMPARE(fanout.exitCode, 1);
        QVERIFY2(fanout.out.contains(node + ": 64"), qPrintable(fanout.out));
        QVERIFY2(fanout.err.contains("1/2 nodes ok; failed: 127.0.0.1:1"), qPrintable(fanout.err));
        auto soft = lutractl({"-H", hosts, "--token-file", viewer, "--timeout", "3s", "--fail-soft",
                              "get_param", "llite.*.max_read_ahead_mb"});
        QCOMPARE(soft.exitCode, 0);

        // SIGHUP reloads tokens: a token added to the file works without a restart.
        const QString fresh = m_dir.path() + "/fresh.token";
        std::ofstream(fresh.toStdString()) << "fresh-secret-0123456789ab\n";
        QCOMPARE(lutractl({"--node", node, "--token-file", fresh, "status"}).exitCode, 1);
        std::ofstream(m_runDir.toStdString() + "/ctld.yaml", std::ios::app)
            << "    - {name: fresh, token_file: " << fresh.toStdString() << ", role: viewer}\n";
        ::kill(static_cast<pid_t>(ctld->pid()), SIGHUP);
        QTRY_COMPARE_WITH_TIMEOUT(
            lutractl({"--node", node, "--token-file", fresh, "status"}).exitCode, 0, 10000);
        QCOMPARE(ctld->stop(), 0);
    }

    // With TLS a non-loopback address is allowed; client certificates map to roles (mTLS).
    void tlsAndClientCertificates()
    {
        const QString cert = m_dir.path() + "/node.crt";
        const QString key = m_dir.path() + "/node.key";
        auto openssl = runProcess("openssl",
                                  {"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                                   "-out", cert, "-days", "2", "-subj", "/CN=localhost", "-addext",
                                   "subjectAltName=IP:127.0.0.1,DNS:localhost"},
                                  m_runDir);
        QVERIFY2(openssl.exitCode == 0, qPrintable(openssl.err));
        const QString token = m_dir.path() + "/ops.token";
        std::ofstream(token.toStdString()) << "ops-secret-0123456789abcdef\n";
        auto ctld = startCtld(QString("tls: {cert: %1, key: %2, client_ca: %1}\n"
                                      "auth:\n"
                                      "  tokens: [{name: ops, token_file: %3, role: admin}]\n"
                                      "  client_certs: [{subject: localhost, role: viewer}]\n")
                                  .arg(cert, key, token)
                                  .replace("listen: 127.0.0.1:0", "listen: 0.0.0.0:0"));
        QVERIFY(ctld);
        const QString node = "127.0.0.1:" + ctld->grpcAddress().section(':', 1);
        auto withToken = lutractl({"--node", node, "--tls-ca", cert, "--token-file", token,
                                   "get_param", "-n", "llite.*.max_read_ahead_mb"});
        QVERIFY2(withToken.exitCode == 0, qPrintable(withToken.err));
        QCOMPARE(withToken.out, QString("64\n64\n"));
        auto plain = lutractl({"--node", node, "--token-file", token, "--timeout", "3s",
                               "get_param", "llite.*.max_read_ahead_mb"});
        QCOMPARE(plain.exitCode, 1); // a clear-text client cannot talk to a TLS port
        auto byCertificate =
            lutractl({"--node", node, "--tls-ca", cert, "--tls-cert", cert, "--tls-key", key,
                      "set_param", "llite.*.max_read_ahead_mb=32"});
        QCOMPARE(byCertificate.exitCode, 1);
        QVERIFY2(byCertificate.err.contains("cert:localhost has role viewer"),
                 qPrintable(byCertificate.err));
        QCOMPARE(ctld->stop(), 0);
    }

    void refusesNonLoopbackWithoutTls()
    {
        CtldProcess ctld(
            m_runDir, ctldConfig(m_dir.path()).replace("listen: 127.0.0.1:0", "listen: 0.0.0.0:0"),
            "open.yaml");
        QVERIFY(!ctld.waitReady(30000));
        QCOMPARE(ctld.process().exitCode(), 2);
        QVERIFY2(ctld.log().contains("refusing to listen on 0.0.0.0:0 without TLS"),
                 qPrintable(ctld.log()));
    }

    void badConfigSaysWhere()
    {
        const QString file = m_dir.path() + "/broken.yaml";
        std::ofstream(file.toStdString()) << "node: n1\n"
                                             "lisen: 127.0.0.1:7370\n"
                                             "listen: [127.0.0.1:7370, nope]\n"
                                             "sample_interval: 10 parsecs\n";
        auto check = runProcess(QStringLiteral(LUTRA_CTLD_BIN),
                                {"--config", file, "--check-config"}, m_runDir);
        QCOMPARE(check.exitCode, 1);
        QVERIFY2(check.err.contains(file + ":2:1: unknown setting 'lisen'"), qPrintable(check.err));
        QVERIFY2(check.err.contains(file + ":3:9: listen address 'nope' is not host:port"),
                 qPrintable(check.err));
        QVERIFY2(check.err.contains(file + ":4:18: 'sample_interval' is '10 parsecs'"),
                 qPrintable(check.err));
        std::ofstream(file.toStdString()) << "node: [unclosed\n";
        check = runProcess(QStringLiteral(LUTRA_CTLD_BIN), {"--config", file, "--check-config"},
                           m_runDir);
        QCOMPARE(check.exitCode, 1);
        QVERIFY2(check.err.contains(file + ":2:1:"), qPrintable(check.err));
    }

    void grpcApiStreamsAndHistory()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        auto stub = lutra::ctl::v1::Ctl::NewStub(grpc::CreateChannel(
            "unix:" + m_runDir.toStdString() + "/ctld.sock", grpc::InsecureChannelCredentials()));
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            lutra::ctl::v1::NodeInfo info;
            QVERIFY(stub->GetNodeInfo(&context, {}, &info).ok());
            QCOMPARE(info.node(), std::string("testnode"));
            QCOMPARE(info.labels().at("rack"), std::string("r7"));
            QCOMPARE(info.instance_count(), 2u);
            QCOMPARE(info.role(), lutra::ctl::v1::ROLE_ADMIN);
        }
        {
            // The stream gives every instance's read_ahead_stats, then again each interval.
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
            lutra::ctl::v1::StreamCountersRequest request;
            request.set_pattern("llite.*.read_ahead_stats");
            auto reader = stub->StreamCounters(&context, request);
            lutra::ctl::v1::CounterUpdate update;
            int withBoth = 0;
            for (int i = 0; i < 10 && withBoth < 2 && reader->Read(&update); ++i) {
                if (update.instances_size() == 2 && update.instances(0).blocks_size() == 1 &&
                    update.instances(1).blocks_size() == 1) {
                    QCOMPARE(update.instances(0).blocks(0).counters_size(), 18);
                    ++withBoth;
                }
            }
            QCOMPARE(withBoth, 2);
            context.TryCancel();
            reader->Finish();
        }
        // Counter history: samples are written once per sample_interval, in one transaction.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                grpc::ClientContext context;
                context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
                lutra::ctl::v1::GetCounterHistoryRequest request;
                request.set_instance("bench-a");
                request.set_counter("llite.bench.read_ahead_stats.readahead_pages");
                lutra::ctl::v1::GetCounterHistoryReply reply;
                return stub->GetCounterHistory(&context, request, &reply).ok() &&
                       reply.series_size() == 1 && reply.series(0).value_size() >= 1;
            }(),
            20000);
        {
            // Each bucket keeps its min and max around the last value.
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            lutra::ctl::v1::GetCounterHistoryRequest request;
            request.set_instance("bench-a");
            request.set_counter("llite.bench.read_ahead_stats.readahead_pages");
            lutra::ctl::v1::GetCounterHistoryReply reply;
            QVERIFY(stub->GetCounterHistory(&context, request, &reply).ok());
            QCOMPARE(reply.series_size(), 1);
            const auto &series = reply.series(0);
            QCOMPARE(series.min_size(), series.value_size());
            QCOMPARE(series.max_size(), series.value_size());
            for (int i = 0; i < series.value_size(); ++i) {
                QVERIFY(series.min(i) <= series.value(i) && series.value(i) <= series.max(i));
            }
        }
        {
            // The standard health service answers SERVING (grpc.health.v1, called without its
            // generated stub: an empty HealthCheckRequest, a reply of field 1 = 1).
            grpc::GenericStub generic(
                grpc::CreateChannel("unix:" + m_runDir.toStdString() + "/ctld.sock",
                                    grpc::InsecureChannelCredentials()));
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            grpc::Slice empty("");
            grpc::ByteBuffer request(&empty, 1);
            grpc::ByteBuffer response;
            std::promise<grpc::Status> done;
            auto finished = done.get_future();
            generic.UnaryCall(&context, "/grpc.health.v1.Health/Check", {}, &request, &response,
                              [&done](grpc::Status status) { done.set_value(status); });
            QVERIFY(finished.wait_for(std::chrono::seconds(20)) == std::future_status::ready);
            const auto status = finished.get();
            QVERIFY2(status.ok(), status.error_message().c_str());
            std::vector<grpc::Slice> slices;
            QVERIFY(response.Dump(&slices).ok());
            std::string bytes;
            for (const auto &slice : slices) {
                bytes.append(reinterpret_cast<const char *>(slice.begin()), slice.size());
            }
            QCOMPARE(bytes, std::string("\x08\x01", 2));
        }
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            lutra::ctl::v1::SetParamsRequest request; // no assignments
            lutra::ctl::v1::SetParamsReply reply;
            const auto status = stub->SetParams(&context, request, &reply);
            QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
            QVERIFY(status.error_message().find("NAME=VALUE") != std::string::npos);
        }
        QCOMPARE(ctld->stop(), 0);
    }

    // lutra-ctl-bench's modes run their own ctld(s) and report in the usual shape.
    void benchControlPlaneModes()
    {
        auto ctl = runProcess(QStringLiteral(LUTRA_CTL_BENCH_BIN),
                              {"--json", "ctl", "--calls", "20"}, m_dir.path(), 120000);
        QVERIFY2(ctl.exitCode == 0, qPrintable(ctl.err));
        const auto report = QJsonDocument::fromJson(ctl.out.toUtf8()).object();
        QCOMPARE(report["mode"].toString(), QString("ctl"));
        QVERIFY(report["results"].toObject()["ctld_set_p50_us"].toDouble() > 0);
        QVERIFY(report["ratios"].toObject()["ctld_latency_vs_direct_p50"].toDouble() > 0);

        auto fanout =
            runProcess(QStringLiteral(LUTRA_CTL_BENCH_BIN),
                       {"--json", "fanout", "--nodes", "2", "--rounds", "2"}, m_dir.path(), 120000);
        QVERIFY2(fanout.exitCode == 0, qPrintable(fanout.err));
        const auto results =
            QJsonDocument::fromJson(fanout.out.toUtf8()).object()["results"].toObject();
        QVERIFY(results["nodes_1"].toObject()["p50_ms"].toDouble() > 0);
        QVERIFY(results["nodes_2"].toObject()["max_ms"].toDouble() > 0);
        QCOMPARE(results["nodes_2"].toObject()["n"].toInt(), 2);
        // Two rounds make no p99: the report says what it has (n, p50, max), not a percentile.
        QVERIFY(!results["nodes_2"].toObject().contains("p99_ms"));
    }

    void metricsPassPromtool()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        const auto address = ctld->metricsAddress();
        QVERIFY(!address.isEmpty());
        httplib::Client client(address.section(':', 0, 0).toStdString(),
                               address.section(':', 1).toInt());
        std::string body;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                auto response = client.Get("/metrics");
                if (!response || response->status != 200) {
                    return false;
                }
                body = response->body;
                return body.find("process=\"b\"") != std::string::npos &&
                       body.find("lutra_llite_read_ahead_total") != std::string::npos;
            }(),
            20000);
        QVERIFY2(body.find("kind=\"bench\"") != std::string::npos, body.c_str());
        const QString file = m_dir.path() + "/metrics.txt";
        std::ofstream(file.toStdString()) << body;
        QProcess promtool;
        promtool.setStandardInputFile(file);
        promtool.start("promtool", {"check", "metrics"});
        QVERIFY2(promtool.waitForFinished(60000), "promtool did not finish");
        const auto output = promtool.readAllStandardOutput() + promtool.readAllStandardError();
        QVERIFY2(promtool.exitCode() == 0, output.constData());
        QCOMPARE(ctld->stop(), 0);
    }

    // GetProfile: a shipped profile's file byte for byte with its path, a stored one with
    // "stored", an unknown name NOT_FOUND naming it.
    void getProfileReturnsTheDocument()
    {
        auto ctld = startCtld();
        QVERIFY(ctld);
        auto stub = lutra::ctl::v1::Ctl::NewStub(grpc::CreateChannel(
            "unix:" + m_runDir.toStdString() + "/ctld.sock", grpc::InsecureChannelCredentials()));
        const auto get = [&stub](const std::string &name, lutra::ctl::v1::GetProfileReply *reply) {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            lutra::ctl::v1::GetProfileRequest request;
            request.set_name(name);
            return stub->GetProfile(&context, request, reply);
        };

        const std::string path = LUTRA_PROFILES_DIR "/compute.yaml";
        std::ifstream file(path, std::ios::binary);
        const std::string text((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>());
        QVERIFY(!text.empty());
        lutra::ctl::v1::GetProfileReply shipped;
        auto status = get("compute", &shipped);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(shipped.name(), std::string("compute"));
        QCOMPARE(shipped.yaml(), text);
        QCOMPARE(shipped.source(), path);

        const std::string yaml = "# kept as written\n"
                                 "name: getprofile-test\n"
                                 "extends: base\n"
                                 "params:\n"
                                 "  osc.*.max_rpcs_in_flight: 16\n";
        {
            grpc::ClientContext context;
            context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
            lutra::ctl::v1::PutProfileRequest request;
            request.set_yaml(yaml);
            lutra::ctl::v1::PutProfileReply reply;
            status = stub->PutProfile(&context, request, &reply);
            QVERIFY2(status.ok(), status.error_message().c_str());
            QCOMPARE(reply.errors_size(), 0);
        }
        lutra::ctl::v1::GetProfileReply stored;
        status = get("getprofile-test", &stored);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(stored.name(), std::string("getprofile-test"));
        QCOMPARE(stored.yaml(), yaml);
        QCOMPARE(stored.source(), std::string("stored"));

        lutra::ctl::v1::GetProfileReply unknown;
        status = get("computr", &unknown);
        QCOMPARE(status.error_code(), grpc::StatusCode::NOT_FOUND);
        QVERIFY2(status.error_message().find("'computr'") != std::string::npos &&
                     status.error_message().find("did you mean compute?") != std::string::npos,
                 status.error_message().c_str());
        QCOMPARE(ctld->stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TestCtld)
#include "test_ctld.moc"
