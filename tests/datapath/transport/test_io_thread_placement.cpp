// Which I/O thread carries a connection (the tcp plugin, loaded for real): a new connection goes
// to the thread with the fewest connections to the same peer, then the fewest of all, so the
// connections of one session (conns_per_target) spread over the threads however other sessions
// open and close theirs; by default a transport has one I/O thread per two CPUs it may run on,
// 1 to 2. The observable: handlers run on the connection's I/O thread (an accepted connection's
// onAccepted, a client connection's onMessage).
#include "cpu_masks.h"
#include "transport/loader.h"

#include <QTest>

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace lutra;
using namespace lutra::transport;
using namespace std::chrono_literals;

namespace {

constexpr auto kWait = 5s;

// Records the thread each connection's handlers run on, and which connections have gone. A server
// answers every accepted connection with one message, so the client side learns its thread too.
class ThreadRecorder final : public Handler {
public:
    explicit ThreadRecorder(bool greet) : m_greet(greet) {}

    void onAccepted(const ConnectionPtr &connection) noexcept override
    {
        if (m_greet) {
            const std::string hello = "hello";
            (void)connection->send(std::as_bytes(std::span(hello)), Deadline::min());
        }
        std::lock_guard lock(m_mutex);
        m_accepted.push_back(connection);
        m_thread[connection.get()] = std::this_thread::get_id();
        m_changed.notify_all();
    }
    void onMessage(Connection &connection, std::span<const std::byte>) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_thread[&connection] = std::this_thread::get_id();
        m_changed.notify_all();
    }
    void onBulkDone(Connection &, std::uint64_t, const Status &) noexcept override {}
    void onDisconnected(Connection &connection, const Status &) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_gone.insert(&connection);
        m_changed.notify_all();
    }

    // The thread of `connection` once a handler ran for it (default id after kWait).
    std::thread::id threadOf(const Connection *connection)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait_for(lock, kWait, [&] { return m_thread.count(connection) != 0; });
        const auto it = m_thread.find(connection);
        return it == m_thread.end() ? std::thread::id{} : it->second;
    }
    // The accepted connection number `index` (null after kWait).
    ConnectionPtr accepted(std::size_t index)
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait_for(lock, kWait, [&] { return m_accepted.size() > index; });
        return m_accepted.size() > index ? m_accepted[index] : nullptr;
    }
    bool waitGone(const Connection *connection)
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, kWait, [&] { return m_gone.count(connection) != 0; });
    }
    void clear()
    {
        std::lock_guard lock(m_mutex);
        m_accepted.clear();
        m_thread.clear();
        m_gone.clear();
    }

private:
    const bool m_greet;
    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<ConnectionPtr> m_accepted;
    std::map<const Connection *, std::thread::id> m_thread;
    std::set<const Connection *> m_gone;
};

// One connection as both ends see it.
struct Pair {
    ConnectionPtr client;
    ConnectionPtr server;
    std::thread::id clientThread;
    std::thread::id serverThread;
    bool open = true;
};

// How many of the open pairs each thread carries (client or server side), without `except`.
std::map<std::thread::id, int> loadOf(const std::vector<Pair> &pairs, bool clientSide,
                                      std::size_t except)
{
    std::map<std::thread::id, int> load;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const auto thread = clientSide ? pairs[i].clientThread : pairs[i].serverThread;
        load[thread] += 0; // every thread seen counts, even with nothing open now
        if (pairs[i].open && i != except) {
            ++load[thread];
        }
    }
    return load;
}

} // namespace

class TestIoThreadPlacement : public QObject {
    Q_OBJECT

    std::unique_ptr<PluginLoader> m_loader;
    std::unique_ptr<Transport> m_server;
    std::unique_ptr<Transport> m_client;
    std::vector<std::unique_ptr<Listener>> m_listeners;
    ThreadRecorder m_serverHandler{true};
    ThreadRecorder m_clientHandler{false};
    std::size_t m_acceptedSoFar = 0;

    std::unique_ptr<Transport> create(std::uint32_t ioThreads)
    {
        TransportOptions options;
        options.ioThreads = ioThreads;
        options.connectTimeout = 2000ms;
        auto transport = m_loader->create("tcp", options);
        if (!transport.ok()) {
            qWarning("%s", transport.status().toString().c_str());
            return nullptr;
        }
        return std::move(transport).value();
    }
    void start(std::uint32_t ioThreads, std::size_t listeners)
    {
        m_clientHandler.clear();
        m_serverHandler.clear();
        m_acceptedSoFar = 0;
        m_listeners.clear();
        m_client.reset();
        m_server.reset();
        m_server = create(ioThreads);
        m_client = create(ioThreads);
        QVERIFY(m_server && m_client);
        for (std::size_t i = 0; i < listeners; ++i) {
            auto listener = m_server->listen("tcp://127.0.0.1:0", m_serverHandler);
            QVERIFY2(listener.ok(), listener.status().toString().c_str());
            m_listeners.push_back(std::move(listener).value());
        }
    }
    // Connects to listener `to` and waits until both ends know their threads.
    Pair open(std::size_t to)
    {
        auto client = m_client->connect(m_listeners.at(to)->uri(), m_clientHandler);
        if (!client.ok()) {
            qWarning("%s", client.status().toString().c_str());
            return {};
        }
        Pair pair;
        pair.client = *client;
        pair.server = m_serverHandler.accepted(m_acceptedSoFar++);
        pair.clientThread = m_clientHandler.threadOf(pair.client.get());
        pair.serverThread = m_serverHandler.threadOf(pair.server.get());
        return pair;
    }
    // Closes the client end and waits until both ends have let go of it.
    bool close(Pair &pair)
    {
        pair.client->close();
        pair.open = false;
        return m_clientHandler.waitGone(pair.client.get()) &&
               m_serverHandler.waitGone(pair.server.get());
    }
    // The pair just opened (the last) went to a least-loaded thread on both sides.
    static void checkLeastLoaded(const std::vector<Pair> &pairs, std::size_t threads)
    {
        const std::size_t last = pairs.size() - 1;
        for (const bool clientSide : {true, false}) {
            const auto load = loadOf(pairs, clientSide, last);
            const auto thread = clientSide ? pairs[last].clientThread : pairs[last].serverThread;
            QVERIFY(thread != std::thread::id{});
            QCOMPARE(load.size() <= threads, true);
            // A thread not seen yet carries nothing: then the new one must be on a new thread.
            const int fewest =
                load.size() < threads
                    ? 0
                    : std::min_element(load.begin(), load.end(), [](auto &a, auto &b) {
                          return a.second < b.second;
                      })->second;
            const int carried = load.count(thread) != 0 ? load.at(thread) : 0;
            QVERIFY2(carried == fewest,
                     qPrintable(QString("%1 side: connection %2 went to a thread carrying %3 "
                                        "while one carried %4")
                                    .arg(clientSide ? "client" : "server")
                                    .arg(last)
                                    .arg(carried)
                                    .arg(fewest)));
        }
    }

private slots:
    void initTestCase()
    {
        m_loader = std::make_unique<PluginLoader>();
        QVERIFY(m_loader->load("tcp").ok());
    }
    void cleanup()
    {
        m_listeners.clear();
        m_client.reset();
        m_server.reset();
    }

    // Opens and closes in a fixed pattern; every new connection must land on a thread carrying
    // the fewest. Round robin fails at the first open after closes that emptied one thread (2
    // threads: opens 0-5, closes 1 and 3, the next open went back to the fuller thread).
    void newConnectionsGoToTheLeastLoadedThread_data()
    {
        QTest::addColumn<int>("threads");
        QTest::newRow("2 threads") << 2;
        QTest::newRow("3 threads") << 3;
    }
    void newConnectionsGoToTheLeastLoadedThread()
    {
        QFETCH(int, threads);
        start(static_cast<std::uint32_t>(threads), 1);
        std::vector<Pair> pairs;
        const auto openOne = [&] {
            pairs.push_back(open(0));
            QVERIFY(pairs.back().client);
            checkLeastLoaded(pairs, static_cast<std::size_t>(threads));
        };
        for (int i = 0; i < 6; ++i) {
            openOne();
            if (QTest::currentTestFailed()) {
                return;
            }
        }
        // Closes that leave the threads uneven (2 threads: two of one thread's three).
        for (std::size_t i : {std::size_t{0}, std::size_t{3}, std::size_t{1}}) {
            QVERIFY(close(pairs[i]));
        }
        for (int i = 0; i < 4; ++i) {
            openOne();
            if (QTest::currentTestFailed()) {
                return;
            }
        }
        for (std::size_t i : {std::size_t{6}, std::size_t{7}, std::size_t{2}}) {
            QVERIFY(close(pairs[i]));
        }
        for (int i = 0; i < 3; ++i) {
            openOne();
            if (QTest::currentTestFailed()) {
                return;
            }
        }
    }

    // Two sessions to two targets opening their two connections in turn (A, B, A, B): each
    // target's pair must be on two threads. Round robin (and fewest-of-all with round-robin ties)
    // put both of A's on one thread and both of B's on the other.
    void aSessionsConnectionsSpreadWhenSessionsInterleave()
    {
        start(2, 2);
        std::vector<Pair> pairs;
        for (const std::size_t to : {0, 1, 0, 1}) {
            pairs.push_back(open(to));
            QVERIFY(pairs.back().client);
        }
        QVERIFY(pairs[0].clientThread != std::thread::id{});
        QVERIFY2(pairs[0].clientThread != pairs[2].clientThread,
                 "target A's two connections share one client I/O thread");
        QVERIFY2(pairs[1].clientThread != pairs[3].clientThread,
                 "target B's two connections share one client I/O thread");
        // The threads stay balanced overall too.
        const auto load = loadOf(pairs, true, pairs.size());
        QCOMPARE(load.size(), std::size_t{2});
        QCOMPARE(load.begin()->second, 2);
    }

    void theDefaultIsOneIoThreadPerTwoCpus()
    {
        QCOMPARE(ioThreadsForCpus(0), 1u);
        QCOMPARE(ioThreadsForCpus(1), 1u);
        QCOMPARE(ioThreadsForCpus(3), 1u);
        QCOMPARE(ioThreadsForCpus(4), 2u);
        QCOMPARE(ioThreadsForCpus(256), 2u);
        // A client mount's rule: one per CPU, 1 to 2.
        QCOMPARE(clientIoThreadsForCpus(0), 1u);
        QCOMPARE(clientIoThreadsForCpus(1), 1u);
        QCOMPARE(clientIoThreadsForCpus(2), 2u);
        QCOMPARE(clientIoThreadsForCpus(256), 2u);

        // Four connections spread over every thread there is (least loaded first): with the
        // default options, as many distinct threads as the CPUs this thread may use allow —
        // pinned to one CPU, and as it runs.
        const testing::CpuMasks masks = testing::cpuMasks();
        QVERIFY(masks.ok);
        for (const cpu_set_t *mask : {&masks.one, &masks.allowed}) {
            {
                const testing::PinnedTo pinned(*mask, masks.allowed);
                QVERIFY(pinned.ok());
                start(0, 1); // the I/O threads start under `mask`, as a host's would
            }
            std::vector<Pair> pairs;
            for (int i = 0; i < 4; ++i) {
                pairs.push_back(open(0));
                QVERIFY(pairs.back().client);
            }
            const auto expected = ioThreadsForCpus(static_cast<unsigned>(CPU_COUNT(mask)));
            for (const bool clientSide : {true, false}) {
                QCOMPARE(loadOf(pairs, clientSide, pairs.size()).size(), std::size_t{expected});
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestIoThreadPlacement)
#include "test_io_thread_placement.moc"
