// The client library's namespace over two real lutra-target processes: every target holds the
// namespace, target 0 decides, failures name the target and leave nothing half-done.
#include <lutra/client.h>

#include "target_process.h"

#include <QTest>

#include <filesystem>

using namespace lutra;
using namespace lutra::client;
using tools::TargetProcess;
using tools::TempDir;

class TestClientNamespace : public QObject {
    Q_OBJECT

    std::optional<TempDir> m_dir;
    std::vector<std::string> m_roots;
    std::vector<std::unique_ptr<TargetProcess>> m_targets;
    std::unique_ptr<Mount> m_mount;

private slots:
    void init()
    {
        auto dir = TempDir::create("lutra-ns");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        m_roots.clear();
        MountOptions options;
        options.stripeSize = 64 * 1024;
        TargetProcess::Options spawn;
        spawn.binary = LUTRA_TARGET_BIN;
        auto targets = tools::spawnTargets(m_dir->path(), 2, spawn);
        QVERIFY2(targets.ok(), targets.status().toString().c_str());
        m_targets = std::move(targets).value();
        for (std::size_t i = 0; i < m_targets.size(); ++i) {
            options.targets.push_back(m_targets[i]->uri());
            m_roots.push_back(m_dir->path() + "/ost" + std::to_string(i));
        }
        auto mounted = Mount::mount(options);
        QVERIFY2(mounted.ok(), mounted.status().toString().c_str());
        m_mount = std::move(mounted).value();
    }

    void cleanup()
    {
        m_mount.reset();
        m_targets.clear();
        m_dir.reset();
    }

    void directoriesAndFilesOnEveryTarget()
    {
        QCOMPARE(m_mount->targetCount(), std::size_t(2));
        QVERIFY(m_mount->mkdir("d").ok());
        auto file = m_mount->open("d/f", kOpenRead | kOpenWrite | kOpenCreate | kOpenExclusive);
        QVERIFY2(file.ok(), file.status().toString().c_str());
        for (const auto &root : m_roots) {
            QVERIFY(std::filesystem::is_directory(root + "/d"));
            QVERIFY(std::filesystem::is_regular_file(root + "/d/f"));
        }
        auto again = m_mount->open("d/f", kOpenWrite | kOpenCreate | kOpenExclusive);
        QCOMPARE(again.status().code(), Errc::already_exists);

        // 200 KiB over 64 KiB stripes: ost0 holds stripes 0 and 2 (128 KiB), ost1 stripe 1 and
        // the first 8 KiB of stripe 3 (72 KiB).
        QVERIFY((*file)->truncate(200 * 1024).ok());
        QCOMPARE(std::filesystem::file_size(m_roots[0] + "/d/f"), std::uintmax_t(128 * 1024));
        QCOMPARE(std::filesystem::file_size(m_roots[1] + "/d/f"), std::uintmax_t(72 * 1024));
        auto attr = m_mount->stat("d/f");
        QVERIFY(attr.ok());
        QCOMPARE(attr->size, std::uint64_t(200 * 1024));
        QCOMPARE(attr->kind, FileKind::file);
        QCOMPARE((*file)->stat()->size, std::uint64_t(200 * 1024));
        QVERIFY((*file)->close().ok());

        auto listing = m_mount->readdir("d");
        QVERIFY(listing.ok());
        QCOMPARE(listing->size(), std::size_t(1));
        QCOMPARE(listing->front().name, std::string("f"));
        QCOMPARE(m_mount->stat("d")->kind, FileKind::directory);

        auto notEmpty = m_mount->rmdir("d");
        QVERIFY(!notEmpty.ok());
        QVERIFY2(notEmpty.message().find("on target ost0") != std::string::npos,
                 notEmpty.message().c_str());
        QVERIFY(m_mount->unlink("d/f").ok());
        QVERIFY(m_mount->rmdir("d").ok());
        for (const auto &root : m_roots) {
            QVERIFY(!std::filesystem::exists(root + "/d"));
        }
        QCOMPARE(m_mount->stat("d").status().code(), Errc::not_found);
        QCOMPARE(m_mount->open("missing", kOpenRead).status().code(), Errc::not_found);
    }

    void failedMkdirIsUndone()
    {
        std::filesystem::create_directories(m_roots[1] + "/clash"); // only on the second target
        auto made = m_mount->mkdir("clash");
        QCOMPARE(made.code(), Errc::already_exists);
        QVERIFY2(made.message().find("on target ost1") != std::string::npos,
                 made.message().c_str());
        QVERIFY(!std::filesystem::exists(m_roots[0] + "/clash")); // rolled back on ost0
    }

    void badMounts()
    {
        QCOMPARE(Mount::mount({}).status().code(), Errc::invalid_argument);
        MountOptions badStripe;
        badStripe.targets = {"tcp://127.0.0.1:1"};
        badStripe.stripeSize = 1000;
        QCOMPARE(Mount::mount(badStripe).status().code(), Errc::invalid_argument);
        MountOptions unreachable;
        unreachable.targets = {"tcp://127.0.0.1:1"};
        auto failed = Mount::mount(unreachable);
        QVERIFY(!failed.ok());
        QVERIFY2(failed.status().message().find("tcp://127.0.0.1:1") != std::string::npos,
                 failed.status().message().c_str());
        MountOptions noScheme;
        noScheme.targets = {"localhost:7380"};
        QCOMPARE(Mount::mount(noScheme).status().code(), Errc::invalid_argument);
    }

    void openNeedsAMode()
    {
        QCOMPARE(m_mount->open("x", 0).status().code(), Errc::invalid_argument);
        QVERIFY(m_mount->mkdir("dir").ok());
        auto dir = m_mount->open("dir", kOpenRead);
        QVERIFY(!dir.ok());
    }
};

QTEST_GUILESS_MAIN(TestClientNamespace)
#include "test_client_namespace.moc"
