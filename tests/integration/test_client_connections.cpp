// How many connections a mount opens to each target: one per transport I/O thread (a second
// connection on the same I/O thread only adds a socket's wake-ups), published as
// osc.<t>.conns_per_target's value and its default, against real targets.
#include <lutra/client.h>

#include "client/rpc_session.h"
#include "core/params/registry.h"
#include "target_process.h"
#include "transport/loader.h"

#include <QTest>

using namespace lutra;
using namespace lutra::client;
using tools::TargetProcess;
using tools::TempDir;

class TestClientConnections : public QObject {
    Q_OBJECT

    std::optional<TempDir> m_dir;
    std::vector<std::unique_ptr<TargetProcess>> m_targets;

    Result<std::unique_ptr<Mount>> mountWith(params::Registry &registry, std::uint32_t ioThreads)
    {
        MountOptions options;
        for (const auto &target : m_targets) {
            options.targets.push_back(target->uri());
        }
        options.registry = &registry;
        options.transportIoThreads = ioThreads;
        return Mount::mount(options);
    }

    // Every target's conns_per_target value and published default, as "value/default".
    static std::vector<std::string> connections(const params::Registry &registry)
    {
        std::vector<std::string> out;
        auto specs = registry.list("osc.*.conns_per_target");
        auto readings = registry.get("osc.*.conns_per_target");
        if (!specs || !readings || specs->size() != readings->size()) {
            out.push_back("not published");
            return out;
        }
        for (std::size_t i = 0; i < specs->size(); ++i) {
            out.push_back((*readings)[i].value + "/" +
                          std::to_string(std::get<std::int64_t>((*specs)[i].defaultValue)));
        }
        return out;
    }

private slots:
    void init()
    {
        auto dir = TempDir::create("lutra-client-connections");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        TargetProcess::Options spawn;
        spawn.binary = LUTRA_TARGET_BIN;
        auto targets = tools::spawnTargets(m_dir->path(), 2, spawn);
        QVERIFY2(targets.ok(), targets.status().toString().c_str());
        m_targets = std::move(targets).value();
    }

    void cleanup()
    {
        m_targets.clear();
        m_dir.reset();
    }

    void oneConnectionPerTransportIoThread_data()
    {
        QTest::addColumn<std::uint32_t>("ioThreads");
        QTest::addColumn<QString>("expected");
        QTest::newRow("one I/O thread") << 1u << "1/1";
        QTest::newRow("two I/O threads") << 2u << "2/2";
        QTest::newRow("three I/O threads") << 3u << "3/3";
    }

    void oneConnectionPerTransportIoThread()
    {
        QFETCH(std::uint32_t, ioThreads);
        QFETCH(QString, expected);
        params::Registry registry;
        auto mount = mountWith(registry, ioThreads);
        QVERIFY2(mount.ok(), mount.status().toString().c_str());
        const std::vector<std::string> both(2, expected.toStdString());
        QCOMPARE(connections(registry), both);
    }

    // 0: the transport's automatic count (one I/O thread per two CPUs this thread may run on).
    void automaticFollowsTheCpus()
    {
        params::Registry registry;
        auto mount = mountWith(registry, 0);
        QVERIFY2(mount.ok(), mount.status().toString().c_str());
        const auto count =
            std::to_string(RpcSession::defaultConnections(transport::automaticIoThreads()));
        QCOMPARE(connections(registry), std::vector<std::string>(2, count + "/" + count));
    }

    // Set away from the default and back: the default stays what the mount opened.
    void aSetValueKeepsTheDefault()
    {
        params::Registry registry;
        auto mount = mountWith(registry, 2);
        QVERIFY2(mount.ok(), mount.status().toString().c_str());
        const params::Assignment one{"osc.*.conns_per_target", "1"};
        QVERIFY(registry.set({&one, 1}, "test").status.ok());
        QCOMPARE(connections(registry), std::vector<std::string>(2, "1/2"));
    }

    void outOfRangeIoThreadsRefuseTheMount()
    {
        params::Registry registry;
        auto mount = mountWith(registry, 65);
        QVERIFY(!mount.ok());
        QVERIFY2(mount.status().message().find("ioThreads must be 1") != std::string::npos,
                 mount.status().toString().c_str());
        QVERIFY(!registry.get("osc.*.conns_per_target").ok());
    }
};

QTEST_GUILESS_MAIN(TestClientConnections)
#include "test_client_connections.moc"
