// How many connections a mount opens to each target and where they are read: one a target,
// whatever the client's transport I/O threads (osc.<t>.conns_per_target's value and default),
// the targets' connections on different I/O threads, so a striped read's receive copies run on
// each of them; against real targets.
#include <lutra/client.h>

#include "core/params/registry.h"
#include "cpu_masks.h"
#include "target_process.h"

#include <QTest>

#include <sched.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

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

    // rchar (bytes read by read/readv) of each tcp transport I/O thread of this process, by id.
    static std::map<std::string, std::uint64_t> ioThreadReads()
    {
        std::map<std::string, std::uint64_t> out;
        for (const auto &task : std::filesystem::directory_iterator("/proc/self/task")) {
            std::ifstream comm(task.path() / "comm");
            std::string name;
            if (!std::getline(comm, name) || name != "tcp-io") {
                continue;
            }
            std::ifstream io(task.path() / "io");
            std::string key;
            std::uint64_t value = 0;
            while (io >> key >> value) {
                if (key == "rchar:") {
                    out[task.path().filename().string()] = value;
                }
            }
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

    void oneConnectionATargetWhateverTheIoThreads_data()
    {
        QTest::addColumn<std::uint32_t>("ioThreads");
        QTest::newRow("automatic") << 0u;
        QTest::newRow("one I/O thread") << 1u;
        QTest::newRow("two I/O threads") << 2u;
        QTest::newRow("three I/O threads") << 3u;
    }

    void oneConnectionATargetWhateverTheIoThreads()
    {
        QFETCH(std::uint32_t, ioThreads);
        params::Registry registry;
        auto mount = mountWith(registry, ioThreads);
        QVERIFY2(mount.ok(), mount.status().toString().c_str());
        QCOMPARE(connections(registry), std::vector<std::string>(2, "1/1"));
    }

    // A mount's automatic I/O threads (transportIoThreads 0): one per CPU it may run on, 1 to 2
    // (one with the mounting thread pinned to one CPU, two on a host of two or more).
    void aMountHasOneIoThreadPerCpu()
    {
        const testing::CpuMasks masks = testing::cpuMasks();
        QVERIFY(masks.ok);
        for (const cpu_set_t *mask : {&masks.one, &masks.allowed}) {
            params::Registry registry;
            // The mount's I/O threads start pinned to `mask`, as on a host of those CPUs.
            auto mount = [&]() -> Result<std::unique_ptr<Mount>> {
                const testing::PinnedTo pinned(*mask, masks.allowed);
                if (!pinned.ok()) {
                    return Status(Errc::failed_precondition, "sched_setaffinity failed");
                }
                return mountWith(registry, 0);
            }();
            QVERIFY2(mount.ok(), mount.status().toString().c_str());
            const auto cpus = CPU_COUNT(mask);
            QCOMPARE(ioThreadReads().size(), std::size_t(std::clamp(cpus, 1, 2)));
        }
    }

    // A file striped over both targets, read cold by a mount with two I/O threads and one
    // connection a target: each thread received at least a third of its bytes (/proc's per-thread
    // rchar counts the readv of the replies), so the targets' receive copies run side by side
    // (client README, "How many connections and I/O threads").
    void aStripedReadIsReceivedOnEveryIoThread()
    {
        constexpr std::size_t kBytes = std::size_t{8} << 20; // 8 stripes of 1 MiB
        std::vector<std::byte> data(kBytes);
        for (std::size_t i = 0; i < kBytes; ++i) {
            data[i] = static_cast<std::byte>(i * 131 + (i >> 12));
        }
        {
            params::Registry registry;
            auto writer = mountWith(registry, 1);
            QVERIFY2(writer.ok(), writer.status().toString().c_str());
            auto file = (*writer)->open("striped", kOpenWrite | kOpenCreate);
            QVERIFY2(file.ok(), file.status().toString().c_str());
            auto written = (*file)->pwrite(data, 0);
            QVERIFY2(written.ok() && *written == kBytes, written.status().toString().c_str());
            QVERIFY((*file)->fsync().ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto reader = mountWith(registry, 2);
        QVERIFY2(reader.ok(), reader.status().toString().c_str());
        const auto before = ioThreadReads();
        QCOMPARE(before.size(), std::size_t{2});
        auto file = (*reader)->open("striped", kOpenRead);
        QVERIFY2(file.ok(), file.status().toString().c_str());
        std::vector<std::byte> back(kBytes);
        auto read = (*file)->pread(back, 0);
        QVERIFY2(read.ok() && *read == kBytes, read.status().toString().c_str());
        QVERIFY(back == data);
        const auto after = ioThreadReads();
        QCOMPARE(after.size(), before.size());
        for (const auto &[tid, bytes] : after) {
            const std::uint64_t received = bytes - before.at(tid);
            QVERIFY2(received >= kBytes / 3,
                     qPrintable(QString("I/O thread %1 received %2 of %3 bytes")
                                    .arg(QString::fromStdString(tid))
                                    .arg(received)
                                    .arg(kBytes)));
        }
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
