// The host half of the verbs tests (the rest runs in the VM, see README.md): on a machine with
// no RDMA device the verbs plugin still loads for real with dlopen, explains what it looked for,
// and the host carries on with its other transports. Also the verbs URI forms.
#include "transport/loader.h"
#include "verbs/verbs_uri.h"

#include <QTest>

#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>

using namespace lutra;
using namespace lutra::transport;
using namespace std::chrono_literals;

namespace {

class Echo final : public Handler {
public:
    void onMessage(Connection &connection, std::span<const std::byte> message) noexcept override
    {
        if (m_echo) {
            (void)connection.send(message, noWait());
            return;
        }
        std::lock_guard lock(m_mutex);
        m_got.assign(reinterpret_cast<const char *>(message.data()), message.size());
        m_changed.notify_all();
    }
    void onDisconnected(Connection &, const Status &) noexcept override {}

    explicit Echo(bool echo) : m_echo(echo) {}
    std::string waitForMessage()
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait_for(lock, 5s, [&] { return !m_got.empty(); });
        return m_got;
    }

private:
    const bool m_echo;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::string m_got;
};

} // namespace

class TestVerbsNoDevice : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        int count = 0;
        ibv_device **devices = ibv_get_device_list(&count);
        if (devices != nullptr) {
            ibv_free_device_list(devices);
        }
        if (count > 0) {
            QSKIP("this machine has RDMA devices: the no-device error cannot be shown here");
        }
    }

    void reportsNoDeviceAndHostKeepsTcp()
    {
        PluginLoader loader;
        QVERIFY(loader.loadAll().empty()); // both plugins load: the device is looked for later
        const std::string origin = loader.origin("verbs");
        QCOMPARE(std::filesystem::path(origin).filename().string(),
                 std::string("liblutra-transport-verbs.so"));

        auto verbs = loader.create("verbs", {});
        QVERIFY(!verbs.ok());
        QCOMPARE(verbs.status().code(), Errc::unavailable);
        const std::string message = verbs.status().message();
        QVERIFY2(message.find("no RDMA device") != std::string::npos, message.c_str());
        QVERIFY2(message.find("ibv_get_device_list()") != std::string::npos, message.c_str());
        QVERIFY2(message.find("/sys/class/infiniband") != std::string::npos, message.c_str());
        QVERIFY2(message.find("rdma_rxe") != std::string::npos, message.c_str());

        // The same host goes on over tcp (handlers first: they outlive the transport).
        Echo server(true);
        Echo client(false);
        auto tcp = loader.create("tcp", {});
        QVERIFY2(tcp.ok(), tcp.status().toString().c_str());
        auto listener = (*tcp)->listen("tcp://127.0.0.1:0", server);
        QVERIFY(listener.ok());
        auto connection = (*tcp)->connect((*listener)->uri(), client);
        QVERIFY2(connection.ok(), connection.status().toString().c_str());
        const std::string hello = "still here";
        QVERIFY((*connection)->send(std::as_bytes(std::span(hello)), deadlineIn(5s)).ok());
        QCOMPARE(client.waitForMessage(), hello);
    }

    void badOptionsAreRefusedBeforeAnyDevice()
    {
        PluginLoader loader;
        TransportOptions options;
        options.proposed.queueDepth = 0;
        auto verbs = loader.create("verbs", options);
        QCOMPARE(verbs.status().code(), Errc::out_of_range);
        QVERIFY2(verbs.status().message().find("depth 0") != std::string::npos,
                 verbs.status().message().c_str());
    }

    void uriForms()
    {
        using transport::verbs::parseUri;
        auto plain = parseUri("verbs://10.0.2.15:7000");
        QVERIFY(plain.ok());
        QCOMPARE(ntohs(plain->address.sin_port), std::uint16_t(7000));
        QCOMPARE(plain->address.sin_addr.s_addr, inet_addr("10.0.2.15"));
        QVERIFY(plain->device.empty());
        QCOMPARE(transport::verbs::uriOf(plain->address), std::string("verbs://10.0.2.15:7000"));

        auto named = parseUri("verbs://rxe0/10.0.2.15:0");
        QVERIFY(named.ok());
        QCOMPARE(named->device, std::string("rxe0"));
        QCOMPARE(ntohs(named->address.sin_port), std::uint16_t(0));

        for (const char *bad :
             {"tcp://10.0.2.15:1", "verbs://10.0.2.15", "verbs://:1", "verbs://10.0.2.15:65536",
              "verbs://10.0.2.15:x", "verbs:///10.0.2.15:1", "nonsense"}) {
            auto parsed = parseUri(bad);
            QVERIFY2(!parsed.ok(), bad);
            QCOMPARE(parsed.status().code(), Errc::invalid_argument);
            QVERIFY2(parsed.status().message().find(bad) != std::string::npos,
                     parsed.status().message().c_str());
        }
    }
};

QTEST_GUILESS_MAIN(TestVerbsNoDevice)
#include "test_verbs_no_device.moc"
