// GroupCommit: every acknowledged write is durable, concurrent writers share batches (lined up
// deterministically with the hold seam, never by timing), one record per batch, a failed sync
// fails exactly its batch, and shutdown finishes what was queued.
#include "core/params/registry.h"
#include "target/group_commit.h"

#include <QTemporaryDir>
#include <QTest>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

using namespace lutra;
using namespace lutra::target;
namespace fs = std::filesystem;

namespace {

std::uint64_t samples(const GroupCommit &commit, GroupCommit::Counter counter)
{
    return commit.stats().snapshot().counters[counter].samples;
}

// Writes `text` at `offset` and waits for it to be durable.
Status durableWrite(GroupCommit &commit, const ObjectHandle &handle, const std::string &text,
                    std::uint64_t offset)
{
    const iovec part{const_cast<char *>(text.data()), text.size()};
    auto written = commit.writeDurable(handle, std::span<const iovec>(&part, 1), offset);
    return written.ok() ? Status{} : written.status();
}

} // namespace

class TestGroupCommit : public QObject {
    Q_OBJECT

    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<ObjectStore> m_store;

    std::vector<CommitRecord> readLog() const
    {
        std::ifstream in(fs::path(m_dir->path().toStdString()) / ".lutra" / "commit.log",
                         std::ios::binary);
        std::vector<CommitRecord> records;
        CommitRecord record;
        while (in.read(reinterpret_cast<char *>(&record), sizeof record)) {
            records.push_back(record);
        }
        return records;
    }

    // Lines `count` writers up behind the hold, then lets them go as one batch.
    std::vector<Status> oneBatch(GroupCommit &commit, const std::vector<ObjectHandle> &handles,
                                 int count)
    {
        std::vector<Status> results(static_cast<std::size_t>(count));
        std::vector<std::thread> threads;
        commit.holdBatches(true);
        for (int i = 0; i < count; ++i) {
            threads.emplace_back([&, i] {
                const auto &handle = handles[static_cast<std::size_t>(i) % handles.size()];
                results[static_cast<std::size_t>(i)] =
                    durableWrite(commit, handle, "x", static_cast<std::uint64_t>(i));
            });
        }
        [&] { QTRY_COMPARE(commit.queuedWrites(), std::size_t(count)); }();
        commit.holdBatches(false);
        for (auto &thread : threads) {
            thread.join();
        }
        return results;
    }

private slots:
    void init()
    {
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        auto store = ObjectStore::openRoot(m_dir->path().toStdString());
        QVERIFY(store.ok());
        m_store = std::make_unique<ObjectStore>(std::move(store).value());
    }

    void cleanup()
    {
        m_store.reset();
        m_dir.reset();
    }

    void allWritesDurableAndAcknowledged()
    {
        auto commit = GroupCommit::open(*m_store, "ost0");
        QVERIFY2(commit.ok(), commit.status().toString().c_str());
        constexpr int kThreads = 8;
        constexpr int kWrites = 40;
        std::vector<ObjectHandle> handles;
        for (int t = 0; t < kThreads; ++t) {
            auto handle = m_store->create("obj" + std::to_string(t));
            QVERIFY(handle.ok());
            handles.push_back(std::move(handle).value());
        }
        std::atomic<int> failures{0};
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < kWrites; ++i) {
                    const std::string block(16, static_cast<char>('a' + t));
                    if (!durableWrite(**commit, handles[static_cast<std::size_t>(t)], block,
                                      static_cast<std::uint64_t>(i) * 16)) {
                        ++failures;
                    }
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        QCOMPARE(failures.load(), 0);
        for (int t = 0; t < kThreads; ++t) {
            QCOMPARE(m_store->stat("obj" + std::to_string(t))->size, std::uint64_t(kWrites * 16));
        }
        const auto batches = samples(**commit, GroupCommit::batches);
        QCOMPARE(samples(**commit, GroupCommit::writes), std::uint64_t(kThreads * kWrites));
        QVERIFY(batches >= 1 && batches <= std::uint64_t(kThreads * kWrites));
        QCOMPARE(samples(**commit, GroupCommit::failed_batches), std::uint64_t(0));

        const auto records = readLog();
        QCOMPARE(records.size(), std::size_t(batches));
        std::uint64_t writes = 0;
        std::uint64_t bytes = 0;
        for (std::size_t i = 0; i < records.size(); ++i) {
            QCOMPARE(records[i].magic, CommitRecord::kMagic);
            QCOMPARE(records[i].sequence, std::uint64_t(i + 1));
            writes += records[i].writes;
            bytes += records[i].bytes;
        }
        QCOMPARE(writes, std::uint64_t(kThreads * kWrites));
        QCOMPARE(bytes, std::uint64_t(kThreads * kWrites * 16));
        QCOMPARE((*commit)->lastSequence(), batches);
    }

    void concurrentWritersShareOneBatch()
    {
        auto commit = GroupCommit::open(*m_store, "ost0");
        QVERIFY(commit.ok());
        std::vector<ObjectHandle> handles;
        for (int f = 0; f < 4; ++f) {
            handles.push_back(m_store->create("f" + std::to_string(f)).value());
        }
        // A second handle on the same file: still one sync for that file.
        handles.push_back(m_store->open("f0").value());
        const auto results = oneBatch(**commit, handles, 16);
        for (const auto &status : results) {
            QVERIFY2(status.ok(), status.toString().c_str());
        }
        QCOMPARE(samples(**commit, GroupCommit::batches), std::uint64_t(1));
        QCOMPARE(samples(**commit, GroupCommit::writes), std::uint64_t(16));
        QCOMPARE(samples(**commit, GroupCommit::syncs), std::uint64_t(4 + 1)); // 4 files + log
        const auto reading = (*commit)->stats().snapshot().counters[GroupCommit::batch_writes];
        QCOMPARE(reading.max, std::int64_t(16));
        const auto records = readLog();
        QCOMPARE(records.size(), std::size_t(1));
        QCOMPARE(records[0].writes, std::uint32_t(16));
        QCOMPARE(records[0].bytes, std::uint64_t(16));
    }

    void injectedSyncFailureFailsExactlyThatBatch()
    {
        auto commit = GroupCommit::open(*m_store, "ost0");
        QVERIFY(commit.ok());
        std::vector<ObjectHandle> handles;
        handles.push_back(m_store->create("a").value());
        handles.push_back(m_store->create("b").value());
        std::atomic<int> calls{0};
        (*commit)->setSyncHook([&calls](int fd) {
            // The first sync fails with EIO, as a dying disk would report it.
            if (calls.fetch_add(1) == 0) {
                return EIO;
            }
            return ::fdatasync(fd) == 0 ? 0 : errno;
        });

        const auto failed = oneBatch(**commit, handles, 6);
        for (const auto &status : failed) {
            QCOMPARE(status.code(), Errc::io_error);
            QVERIFY2(status.message().find("fdatasync") == 0, status.message().c_str());
        }
        const auto succeeded = oneBatch(**commit, handles, 5);
        for (const auto &status : succeeded) {
            QVERIFY2(status.ok(), status.toString().c_str());
        }
        QCOMPARE(samples(**commit, GroupCommit::batches), std::uint64_t(2));
        QCOMPARE(samples(**commit, GroupCommit::failed_batches), std::uint64_t(1));
        const auto records = readLog();
        QCOMPARE(records.size(), std::size_t(1)); // a failed batch leaves no record
        QCOMPARE(records[0].writes, std::uint32_t(5));
        QCOMPARE(records[0].sequence, std::uint64_t(1));
    }

    void failedLogSyncFailsTheBatch()
    {
        auto commit = GroupCommit::open(*m_store, "ost0");
        QVERIFY(commit.ok());
        std::vector<ObjectHandle> handles;
        handles.push_back(m_store->create("a").value());
        std::atomic<int> calls{0};
        (*commit)->setSyncHook([&calls](int) { return calls.fetch_add(1) == 1 ? EIO : 0; });
        for (const auto &status : oneBatch(**commit, handles, 3)) {
            QCOMPARE(status.code(), Errc::io_error);
            QVERIFY(status.message().find("commit.log") != std::string::npos);
        }
        for (const auto &status : oneBatch(**commit, handles, 2)) {
            QVERIFY(status.ok());
        }
        const auto records = readLog();
        QCOMPARE(records.size(), std::size_t(1));
        QCOMPARE(records[0].writes, std::uint32_t(2));
    }

    void shutdownFinishesQueuedWrites()
    {
        auto commit = GroupCommit::open(*m_store, "ost0");
        QVERIFY(commit.ok());
        auto handle = m_store->create("a");
        std::vector<Status> results(4);
        std::vector<std::thread> threads;
        (*commit)->holdBatches(true);
        for (std::size_t i = 0; i < results.size(); ++i) {
            threads.emplace_back([&, i] { results[i] = durableWrite(**commit, *handle, "y", i); });
        }
        QTRY_COMPARE((*commit)->queuedWrites(), std::size_t(4));
        (*commit)->shutdown(); // overrides the hold: what was queued is committed
        for (auto &thread : threads) {
            thread.join();
        }
        for (const auto &status : results) {
            QVERIFY2(status.ok(), status.toString().c_str());
        }
        QCOMPARE(readLog().size(), std::size_t(1));
        const auto late = (*commit)->commit(*handle, 1);
        QCOMPARE(late.code(), Errc::unavailable);
        (*commit)->shutdown(); // idempotent
    }

    void perWriteModeSyncsEveryWrite()
    {
        auto commit = GroupCommit::open(*m_store, "ost0", CommitMode::perWrite);
        QVERIFY(commit.ok());
        auto handle = m_store->create("a");
        std::vector<std::thread> threads;
        std::atomic<int> failures{0};
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&, t] {
                for (int i = 0; i < 10; ++i) {
                    if (!durableWrite(**commit, *handle, "z", std::uint64_t(t * 10 + i))) {
                        ++failures;
                    }
                }
            });
        }
        for (auto &thread : threads) {
            thread.join();
        }
        QCOMPARE(failures.load(), 0);
        QCOMPARE(samples(**commit, GroupCommit::batches), std::uint64_t(40));
        QCOMPARE(samples(**commit, GroupCommit::syncs), std::uint64_t(80));
        QCOMPARE(readLog().size(), std::size_t(40));
    }

    void sequenceContinuesAfterReopen()
    {
        auto handle = m_store->create("a");
        {
            auto commit = GroupCommit::open(*m_store, "ost0");
            QVERIFY((*commit)->commit(*handle, 1).ok());
            QVERIFY((*commit)->commit(*handle, 1).ok());
        }
        auto commit = GroupCommit::open(*m_store, "ost0");
        QCOMPARE((*commit)->lastSequence(), std::uint64_t(2));
        QVERIFY((*commit)->commit(*handle, 1).ok());
        const auto records = readLog();
        QCOMPARE(records.size(), std::size_t(3));
        QCOMPARE(records[2].sequence, std::uint64_t(3));
    }

    void windowIsALiveTunable()
    {
        auto commit = GroupCommit::open(*m_store, "ost0");
        QVERIFY(commit.ok());
        params::Registry registry;
        {
            params::ParamGroup group(registry);
            QVERIFY((*commit)->publish(group).ok());
            const params::Assignment set{"obdfilter.ost0.commit_interval", "5ms"};
            auto result = registry.set(std::span(&set, 1), "test");
            QVERIFY2(result.status.ok(), result.status.toString().c_str());
            QCOMPARE((*commit)->window(), std::chrono::microseconds(5000));
            QCOMPARE(registry.get("obdfilter.ost0.commit_interval")->front().value,
                     std::string("5"));
            const params::Assignment tooLong{"obdfilter.ost0.commit_interval", "2s"};
            QCOMPARE(registry.set(std::span(&tooLong, 1), "test").status.code(),
                     Errc::out_of_range);

            // With a window, a lone writer still gets its acknowledgement.
            auto handle = m_store->create("a");
            QVERIFY((*commit)->commit(*handle, 1).ok());
            auto stats = registry.get("obdfilter.ost0.commit_stats");
            QVERIFY(stats.ok());
            QVERIFY(stats->front().value.find("batches                   1 samples [batches]") !=
                    std::string::npos);
            const params::Assignment clear{"obdfilter.ost0.commit_stats", "clear"};
            QVERIFY(registry.set(std::span(&clear, 1), "test").status.ok());
            QCOMPARE(samples(**commit, GroupCommit::batches), std::uint64_t(0));
        }
        QCOMPARE(registry.get("obdfilter.*").status().code(), Errc::not_found);
    }
};

QTEST_GUILESS_MAIN(TestGroupCommit)
#include "test_group_commit.moc"
