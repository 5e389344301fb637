// LockManager: PR shares, PW excludes, conflicts send blocking callbacks, cancels let waiters in,
// and a holder that ignores its callback is evicted with all its locks.
#include "core/params/registry.h"
#include "target/lock_manager.h"

#include <QTest>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::target;

namespace {

// The server side as the lock manager sees it: records callbacks and evictions, and can answer
// a callback by cancelling at once, as a responsive client would.
class FakeServer final : public LockCallbacks {
public:
    struct Callback {
        ClientId client;
        LockHandle lock;
        std::string resource;
    };

    void sendBlockingCallback(ClientId client, LockHandle lock, std::string_view resource) override
    {
        {
            std::lock_guard guard(m_mutex);
            m_callbacks.push_back({client, lock, std::string(resource)});
        }
        if (m_manager != nullptr && m_autoCancel) {
            m_manager->cancel(lock).ok();
        }
    }

    void clientEvicted(ClientId client) override
    {
        std::lock_guard guard(m_mutex);
        m_evicted.push_back(client);
    }

    std::vector<Callback> callbacks() const
    {
        std::lock_guard guard(m_mutex);
        return m_callbacks;
    }

    std::vector<ClientId> evicted() const
    {
        std::lock_guard guard(m_mutex);
        return m_evicted;
    }

    void cancelFromCallback(LockManager *manager)
    {
        m_manager = manager;
        m_autoCancel = true;
    }

private:
    mutable std::mutex m_mutex;
    std::vector<Callback> m_callbacks;
    std::vector<ClientId> m_evicted;
    LockManager *m_manager = nullptr;
    bool m_autoCancel = false;
};

// An enqueue on its own thread, so the test can watch it wait.
class Enqueuer {
public:
    Enqueuer(LockManager &manager, std::string resource, LockMode mode, ClientId client)
        : m_thread([this, &manager, resource = std::move(resource), mode, client] {
              auto result = manager.enqueue(resource, mode, client);
              std::lock_guard guard(m_mutex);
              m_result.emplace(std::move(result));
              m_done = true;
          })
    {
    }
    ~Enqueuer() { join(); }

    void join()
    {
        if (m_thread.joinable()) {
            m_thread.join();
        }
    }
    bool done() const
    {
        std::lock_guard guard(m_mutex);
        return m_done;
    }
    Result<LockHandle> result()
    {
        join();
        return *m_result;
    }

private:
    mutable std::mutex m_mutex;
    bool m_done = false;
    std::optional<Result<LockHandle>> m_result;
    std::thread m_thread;
};

std::uint64_t samples(const LockManager &manager, LockManager::Counter counter)
{
    return manager.stats().snapshot().counters[counter].samples;
}

} // namespace

class TestLockManager : public QObject {
    Q_OBJECT

    std::unique_ptr<FakeServer> m_server;
    std::unique_ptr<LockManager> m_manager;
    std::vector<std::string> m_log;
    std::mutex m_logMutex;

private slots:
    void init()
    {
        m_log.clear();
        m_server = std::make_unique<FakeServer>();
        m_manager = std::make_unique<LockManager>("ost0", *m_server, [this](std::string_view line) {
            std::lock_guard guard(m_logMutex);
            m_log.emplace_back(line);
        });
    }

    void cleanup()
    {
        m_manager.reset();
        m_server.reset();
    }

    void protectedReadsShare()
    {
        auto first = m_manager->enqueue("obj", LockMode::PR, 1);
        QVERIFY(first.ok());
        Enqueuer second(*m_manager, "obj", LockMode::PR, 2);
        Enqueuer third(*m_manager, "obj", LockMode::PR, 3);
        QVERIFY(second.result().ok());
        QVERIFY(third.result().ok());
        QCOMPARE(m_manager->lockCount(), std::size_t(3));
        QVERIFY(m_server->callbacks().empty());
        QCOMPARE(samples(*m_manager, LockManager::granted), std::uint64_t(3));
    }

    // A non-blocking enqueue (kLockNonBlocking, a client's readahead) is granted when nothing
    // conflicts and refused at once otherwise — a conflicting holder or an earlier conflicting
    // waiter — with no blocking callback sent and nothing queued.
    void nonBlockingEnqueueIsRefusedInsteadOfWaiting()
    {
        constexpr auto refuse = LockManager::OnConflict::refuse;
        auto reader = m_manager->enqueue("obj", LockMode::PR, 1, refuse);
        QVERIFY(reader.ok());                                             // nothing conflicts
        QVERIFY(m_manager->enqueue("obj", LockMode::PR, 2, refuse).ok()); // PR shares
        auto writer = m_manager->enqueue("obj", LockMode::PW, 3, refuse);
        QCOMPARE(writer.status().code(), Errc::failed_precondition);
        QVERIFY2(writer.status().message().find("'obj'") != std::string::npos,
                 writer.status().toString().c_str());
        QVERIFY(m_server->callbacks().empty());
        QCOMPARE(m_manager->lockCount(), std::size_t(2));

        // Behind a waiting PW, a PR that may not wait is refused too (no overtaking).
        Enqueuer waitingWriter(*m_manager, "obj", LockMode::PW, 3);
        QTRY_COMPARE(m_server->callbacks().size(), std::size_t(2)); // to both readers
        QCOMPARE(m_manager->enqueue("obj", LockMode::PR, 4, refuse).status().code(),
                 Errc::failed_precondition);
        QCOMPARE(m_server->callbacks().size(), std::size_t(2));
        QVERIFY(m_manager->cancel(*reader).ok());
        QVERIFY(m_manager->cancel(m_manager->locksOf(2).front().handle).ok());
        QVERIFY(waitingWriter.result().ok());
        QCOMPARE(m_manager->lockCount(), std::size_t(1));
    }

    void protectedWriteBlocksReadUntilCancel()
    {
        auto writer = m_manager->enqueue("obj", LockMode::PW, 1);
        QVERIFY(writer.ok());
        Enqueuer reader(*m_manager, "obj", LockMode::PR, 2);
        QTRY_COMPARE(m_server->callbacks().size(), std::size_t(1));
        const auto callback = m_server->callbacks().front();
        QCOMPARE(callback.client, ClientId(1));
        QCOMPARE(callback.lock, *writer);
        QCOMPARE(callback.resource, std::string("obj"));
        QVERIFY(!reader.done()); // it cannot be granted while the PW is held

        QVERIFY(m_manager->cancel(*writer).ok());
        auto granted = reader.result();
        QVERIFY(granted.ok());
        QCOMPARE(m_manager->locksOf(2).size(), std::size_t(1));
        QCOMPARE(m_manager->locksOf(2).front().mode, LockMode::PR);
        QVERIFY(m_manager->locksOf(1).empty());
        QCOMPARE(samples(*m_manager, LockManager::cancelled), std::uint64_t(1));
        QCOMPARE(samples(*m_manager, LockManager::blocking_callbacks), std::uint64_t(1));
        QCOMPARE(samples(*m_manager, LockManager::evictions), std::uint64_t(0));
    }

    void writeWaitsForEveryReader()
    {
        auto a = m_manager->enqueue("obj", LockMode::PR, 1);
        auto b = m_manager->enqueue("obj", LockMode::PR, 2);
        auto other = m_manager->enqueue("other", LockMode::PW, 3); // another resource: no conflict
        QVERIFY(a.ok() && b.ok() && other.ok());
        Enqueuer writer(*m_manager, "obj", LockMode::PW, 4);
        QTRY_COMPARE(m_server->callbacks().size(), std::size_t(2));
        QVERIFY(m_manager->cancel(*a).ok());
        QVERIFY(!writer.done()); // still one reader in the way
        QVERIFY(m_manager->cancel(*b).ok());
        QVERIFY(writer.result().ok());
        QCOMPARE(m_server->callbacks().size(), std::size_t(2)); // one callback per holder
    }

    void cancelFromInsideTheCallback()
    {
        m_server->cancelFromCallback(m_manager.get());
        auto writer = m_manager->enqueue("obj", LockMode::PW, 1);
        QVERIFY(writer.ok());
        auto second = m_manager->enqueue("obj", LockMode::PW, 2); // same thread: must not deadlock
        QVERIFY(second.ok());
        QCOMPARE(m_manager->lockCount(), std::size_t(1));
        QCOMPARE(m_manager->locksOf(2).size(), std::size_t(1));
    }

    void unresponsiveHolderIsEvicted()
    {
        m_manager->setBlockingTimeout(std::chrono::milliseconds(50));
        QVERIFY(m_manager->enqueue("a", LockMode::PR, 1).ok());
        auto held = m_manager->enqueue("b", LockMode::PW, 1);
        QVERIFY(held.ok());
        QVERIFY(m_manager->enqueue("c", LockMode::PR, 1).ok());
        QVERIFY(m_manager->enqueue("c", LockMode::PR, 3).ok());

        auto granted = m_manager->enqueue("b", LockMode::PW, 2); // client 1 never cancels
        QVERIFY2(granted.ok(), granted.status().toString().c_str());
        QVERIFY(m_manager->locksOf(1).empty());
        QCOMPARE(m_manager->locksOf(3).size(), std::size_t(1));
        QCOMPARE(m_manager->lockCount(), std::size_t(2));
        QCOMPARE(m_server->evicted(), std::vector<ClientId>{1});
        QCOMPARE(samples(*m_manager, LockManager::evictions), std::uint64_t(1));
        QCOMPARE(m_log.size(), std::size_t(1));
        const std::string expected = "ldlm.namespaces.ost0: evicting client 1: lock " +
                                     std::to_string(*held) +
                                     " on 'b' not cancelled within 50 ms of its blocking "
                                     "callback; 3 locks dropped";
        QCOMPARE(m_log.front(), expected);
        QCOMPARE(m_manager->cancel(*held).code(), Errc::not_found);
    }

    void cancelOfUnknownHandleIsAnError()
    {
        const auto status = m_manager->cancel(12345);
        QCOMPARE(status.code(), Errc::not_found);
        QCOMPARE(status.message(),
                 std::string("lock 12345 is not granted in namespace ost0 (unknown, already "
                             "cancelled, or its client evicted)"));
        auto lock = m_manager->enqueue("obj", LockMode::PW, 1);
        QVERIFY(m_manager->cancel(*lock).ok());
        QCOMPARE(m_manager->cancel(*lock).code(), Errc::not_found);
    }

    void shutdownWakesWaiters()
    {
        QVERIFY(m_manager->enqueue("obj", LockMode::PW, 1).ok());
        Enqueuer waiter(*m_manager, "obj", LockMode::PW, 2);
        QTRY_COMPARE(m_server->callbacks().size(), std::size_t(1));
        m_manager->shutdown();
        QCOMPARE(waiter.result().status().code(), Errc::unavailable);
        QCOMPARE(m_manager->enqueue("x", LockMode::PR, 3).status().code(), Errc::unavailable);
    }

    void publishedParameters()
    {
        params::Registry registry;
        params::ParamGroup group(registry);
        QVERIFY(m_manager->publish(group).ok());
        const params::Assignment set{"ldlm.namespaces.ost0.blocking_timeout", "250ms"};
        QVERIFY(registry.set(std::span(&set, 1), "test").status.ok());
        QCOMPARE(m_manager->blockingTimeout(), std::chrono::milliseconds(250));
        QVERIFY(m_manager->enqueue("obj", LockMode::PR, 1).ok());
        QCOMPARE(registry.get("ldlm.namespaces.ost0.lock_count")->front().value, std::string("1"));
        auto stats = registry.get("ldlm.namespaces.ost0.lock_stats");
        QVERIFY(stats.ok());
        QVERIFY(stats->front().value.find("granted                   1 samples [locks]") !=
                std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestLockManager)
#include "test_lock_manager.moc"
