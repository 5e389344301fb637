// lutra-ctld's Daemon started in-process (what lutra-ctld's main runs over signals): it serves
// the gRPC API on TCP and the local socket, refuses configs it cannot serve and leaves nothing
// behind, and stops cleanly, closing its database.
#include "daemon/daemon.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"

#include <QTemporaryDir>
#include <QTest>

#include <grpcpp/grpcpp.h>

#include <filesystem>

using namespace lutra;
using namespace lutra::ctld;

namespace {

Config configIn(const QString &dir, const std::string &listen = "127.0.0.1:0")
{
    const std::string root = dir.toStdString();
    auto config = parseConfig("node: n1\nlisten: [" + listen + "]\nmetrics_listen: 127.0.0.1:0\n" +
                                  "run_dir: " + root + "/run\ndb: " + root + "/ctld.db\n",
                              "test.yaml");
    if (!config) {
        qFatal("%s", config.status().message().c_str());
    }
    return *config;
}

std::unique_ptr<ctl::v1::Ctl::Stub> stubFor(const std::string &target)
{
    return ctl::v1::Ctl::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
}

grpc::Status nodeInfo(ctl::v1::Ctl::Stub &stub, ctl::v1::NodeInfo *info)
{
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub.GetNodeInfo(&context, {}, info);
}

} // namespace

class TestCtldDaemon : public QObject {
    Q_OBJECT

private slots:
    void servesTcpAndLocalSocketThenStops()
    {
        QTemporaryDir dir;
        auto daemon = Daemon::start(configIn(dir.path()));
        QVERIFY2(daemon.ok(), daemon.status().message().c_str());
        const int port = (*daemon)->grpcPorts().at(0);
        QVERIFY(port > 0);
        QVERIFY((*daemon)->metricsPort() > 0);
        const std::string ready = (*daemon)->readyLine();
        QVERIFY2(ready.starts_with("ready node=n1 grpc=127.0.0.1:" + std::to_string(port) + " "),
                 ready.c_str());

        // The local socket: the configured local role (admin) without a token.
        const auto socket = (*daemon)->config().localSocket;
        auto local = stubFor("unix:" + socket.native());
        ctl::v1::NodeInfo info;
        const auto status = nodeInfo(*local, &info);
        QVERIFY2(status.ok(), status.error_message().c_str());
        QCOMPARE(info.node(), std::string("n1"));
        QCOMPARE(info.role(), ctl::v1::ROLE_ADMIN);
        QCOMPARE(info.instance_count(), 0u);

        // A change with no datapath process on the node changes nothing and says why.
        {
            grpc::ClientContext context;
            ctl::v1::SetParamsRequest request;
            auto *assignment = request.add_assignments();
            assignment->set_pattern("osc.*.max_rpcs_in_flight");
            assignment->set_value("16");
            ctl::v1::SetParamsReply reply;
            const auto set = local->SetParams(&context, request, &reply);
            QCOMPARE(set.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
            QVERIFY2(set.error_message().find("no datapath process is running on n1") !=
                         std::string::npos,
                     set.error_message().c_str());
        }

        // TCP without a token: ctld.yaml has none, so the caller is unauthenticated.
        auto tcp = stubFor("127.0.0.1:" + std::to_string(port));
        QCOMPARE(nodeInfo(*tcp, &info).error_code(), grpc::StatusCode::UNAUTHENTICATED);

        (*daemon)->tick(); // the periodic work runs on an idle node without complaint
        const Status stopped = (*daemon)->stop();
        QVERIFY2(stopped.ok(), stopped.message().c_str());
        QVERIFY(!std::filesystem::exists(socket));
        QVERIFY((*daemon)->stop().ok()); // twice is fine
    }

    void addressInUseIsRefusedAndReleasesEverything()
    {
        QTemporaryDir first;
        auto running = Daemon::start(configIn(first.path()));
        QVERIFY2(running.ok(), running.status().message().c_str());
        const std::string taken = "127.0.0.1:" + std::to_string((*running)->grpcPorts().at(0));

        QTemporaryDir second;
        auto refused = Daemon::start(configIn(second.path(), taken));
        QVERIFY(!refused.ok());
        QVERIFY2(refused.status().message().find("cannot listen on " + taken) != std::string::npos,
                 refused.status().message().c_str());
        // The refused daemon closed its database: a new one opens it and serves.
        auto again = Daemon::start(configIn(second.path()));
        QVERIFY2(again.ok(), again.status().message().c_str());
        ctl::v1::NodeInfo info;
        QVERIFY(nodeInfo(*stubFor("unix:" + (*again)->config().localSocket.native()), &info).ok());
        QVERIFY((*again)->stop().ok());
        QVERIFY((*running)->stop().ok());
    }

    void nonLoopbackWithoutTlsIsRefused()
    {
        QTemporaryDir dir;
        auto refused = Daemon::start(configIn(dir.path(), "0.0.0.0:0"));
        QVERIFY(!refused.ok());
        QVERIFY2(refused.status().message().find("0.0.0.0:0") != std::string::npos,
                 refused.status().message().c_str());
        QVERIFY(!std::filesystem::exists(dir.path().toStdString() + "/ctld.db"));
    }
};

QTEST_GUILESS_MAIN(TestCtldDaemon)
#include "test_ctld_daemon.moc"
