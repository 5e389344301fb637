// The client's RPC session against a real object target in the same process, over the
// in-process loopback transport: no socket, no second process. The loopback plugin is
// registered through the loader's seam. Every wait is bounded; nothing measures speed.
#include "client/rpc_session.h"
#include "core/params/registry.h"
#include "object_rpc.h"
#include "target/target_server.h"
#include "transport/loader.h"
#include "transport/loopback/loopback.h"

#include <QTemporaryDir>
#include <QTest>

#include <atomic>
#include <thread>

using namespace lutra;
using namespace std::chrono_literals;
using client::RpcSession;

namespace {

constexpr auto kWait = 5s; // upper bound for anything that should happen "soon"

transport::Deadline soon()
{
    return transport::deadlineIn(kWait);
}

std::vector<std::byte> pattern(std::size_t size, unsigned seed)
{
    std::vector<std::byte> out(size);
    for (std::size_t i = 0; i < size; ++i) {
        out[i] = static_cast<std::byte>((i * 131 + seed * 7 + (i >> 12)) & 0xff);
    }
    return out;
}

} // namespace

class TestLoopbackTarget : public QObject {
    Q_OBJECT

    QTemporaryDir m_root;
    std::unique_ptr<transport::PluginLoader> m_loader;
    std::unique_ptr<transport::Transport> m_serverTransport;
    std::unique_ptr<transport::Transport> m_clientTransport;
    params::Registry m_registry;
    std::unique_ptr<target::TargetServer> m_target;

    std::unique_ptr<RpcSession> connect()
    {
        RpcSession::Options options;
        options.clientId = "loopback-test";
        auto session = RpcSession::connect(*m_clientTransport, m_target->listenUri(), options);
        if (!session) {
            qWarning("%s", session.status().toString().c_str());
            return nullptr;
        }
        return std::move(session).value();
    }

    std::uint64_t create(RpcSession &session, std::string_view path)
    {
        return testing::createObject(session, path, "loopback", soon());
    }

    Result<std::uint32_t> write(RpcSession &session, std::uint64_t handle, std::uint64_t offset,
                                std::span<const std::byte> data)
    {
        return testing::writeObject(session, handle, offset, data, "loopback", soon());
    }

    Result<std::vector<std::byte>> read(RpcSession &session, std::uint64_t handle,
                                        std::uint64_t offset, std::size_t size, bool checksums)
    {
        return testing::readObject(session, handle, offset, size, checksums, "loopback", soon());
    }

    std::string param(const std::string &name)
    {
        auto readings = m_registry.get(name);
        return readings.ok() && readings->size() == 1 ? readings->front().value : "?";
    }

private slots:
    void init()
    {
        QVERIFY(m_root.isValid());
        m_loader = std::make_unique<transport::PluginLoader>();
        QVERIFY(m_loader->registerPlugin(transport::loopback::plugin()).ok());
        QCOMPARE(m_loader->origin("loopback"), std::string("(in-process)"));
        auto server = m_loader->create("loopback", {});
        auto client = m_loader->create("loopback", {});
        QVERIFY2(server.ok() && client.ok(), server.status().toString().c_str());
        m_serverTransport = std::move(*server);
        m_clientTransport = std::move(*client);
        target::TargetOptions options;
        options.root = m_root.path().toStdString();
        options.listen = "loopback://127.0.0.1:0";
        options.serviceThreads = 4;
        auto started = target::TargetServer::start(options, *m_serverTransport, m_registry);
        QVERIFY2(started.ok(), started.status().toString().c_str());
        m_target = std::move(started).value();
        QVERIFY(m_target->listenUri().starts_with("loopback://127.0.0.1:"));
    }

    void cleanup()
    {
        m_target.reset();
        m_clientTransport.reset();
        m_serverTransport.reset();
        m_loader.reset();
    }

    void connectNegotiatesAndPings()
    {
        auto session = connect();
        QVERIFY(session);
        QCOMPARE(session->negotiated().targetName, std::string("ost0"));
        // The transport's negotiated bulk size (4 MiB by default) bounds the session's.
        QVERIFY(session->negotiated().maxBulkBytes <= 4u << 20);
        QVERIFY(session->negotiated().maxBulkBytes > 0);
        QVERIFY(session->ping("loopback", soon()).ok());
    }

    // Writes land in the target's backing file and read back the same, with checksums and
    // without: a read without them takes the target's zero-copy path, which loopback declines
    // (bulkPutFile unimplemented), so the target reads into its buffer and puts from there.
    void writeThenReadBack()
    {
        auto session = connect();
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "file");
        QVERIFY(handle != 0);
        const auto data = pattern(2 * 4096 + 100, 1);
        auto written = write(*session, handle, 0, data);
        QVERIFY2(written.ok(), written.status().toString().c_str());
        QCOMPARE(*written, std::uint32_t(data.size()));
        for (const bool checksums : {true, false}) {
            auto back = read(*session, handle, 0, 3 * 4096, checksums);
            QVERIFY2(back.ok(), back.status().toString().c_str());
            QCOMPARE(back->size(), data.size()); // short read at the end of the object
            QVERIFY(*back == data);
        }
        QCOMPARE(param("obdfilter.ost0.zero_copy_reads"), std::string("0"));

        // The largest bulk the session negotiated, in one RPC each way.
        const auto big = pattern(session->negotiated().maxBulkBytes, 2);
        QVERIFY(write(*session, handle, 1 << 20, big).ok());
        auto bigBack = read(*session, handle, 1 << 20, big.size(), false);
        QVERIFY2(bigBack.ok(), bigBack.status().toString().c_str());
        QVERIFY(*bigBack == big);
    }

    void concurrentCallsFromThreads()
    {
        auto session = connect();
        QVERIFY(session);
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (int i = 0; i < 100; ++i) {
                    if (!session->ping("loopback", soon()).ok()) {
                        ++failures;
                    }
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        QCOMPARE(failures.load(), 0);
    }

    void targetShutdownDisconnectsTheSession()
    {
        auto session = connect();
        QVERIFY(session);
        QVERIFY(session->ping("loopback", soon()).ok());
        m_target->shutdown();
        QTRY_VERIFY_WITH_TIMEOUT(!session->connected(), 5000);
        QCOMPARE(session->ping("loopback", soon()).code(), Errc::unavailable);
    }

    void connectWithoutListenerIsRefused()
    {
        auto refused = RpcSession::connect(*m_clientTransport, "loopback://127.0.0.1:1",
                                           RpcSession::Options{});
        QCOMPARE(refused.status().code(), Errc::unavailable);
        QVERIFY2(refused.status().message().find("loopback://127.0.0.1:1") != std::string::npos,
                 refused.status().message().c_str());
    }
};

QTEST_GUILESS_MAIN(TestLoopbackTarget)
#include "test_loopback_target.moc"
