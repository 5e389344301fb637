// The client library's parameter calls (Mount::getParams / setParams), what a program of a
// site's own uses instead of reaching into lutra's registry: through <lutra/client.h> only.
#include <lutra/client.h>

#include "target_process.h"

#include <QTest>

using namespace lutra;
using namespace lutra::client;
using tools::TargetProcess;
using tools::TempDir;

class TestClientParams : public QObject {
    Q_OBJECT

    std::optional<TempDir> m_dir;
    std::vector<std::unique_ptr<TargetProcess>> m_targets;
    std::unique_ptr<Mount> m_mount;

    std::vector<std::string> values(std::string_view pattern)
    {
        std::vector<std::string> out;
        auto got = m_mount->getParams(pattern);
        if (!got) {
            out.push_back(got.status().toString());
            return out;
        }
        for (const auto &param : *got) {
            out.push_back(param.name + "=" + param.value);
        }
        return out;
    }

private slots:
    void init()
    {
        auto dir = TempDir::create("lutra-client-params");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        TargetProcess::Options spawn;
        spawn.binary = LUTRA_TARGET_BIN;
        auto targets = tools::spawnTargets(m_dir->path(), 2, spawn);
        QVERIFY2(targets.ok(), targets.status().toString().c_str());
        m_targets = std::move(targets).value();
        MountOptions options;
        for (const auto &target : m_targets) {
            options.targets.push_back(target->uri());
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

    void setIsAtomicAndReadBack()
    {
        const auto before = values("osc.*.max_pages_per_rpc");
        QCOMPARE(before.size(), std::size_t(2));

        const std::vector<ParamAssignment> good{{"osc.*.max_pages_per_rpc", "1M"},
                                                {"llite.lutra.max_read_ahead_mb", "32"}};
        const Status set = m_mount->setParams(good);
        QVERIFY2(set.ok(), set.toString().c_str());
        const auto after = values("osc.*.max_pages_per_rpc");
        QCOMPARE(after.size(), std::size_t(2));
        for (const auto &line : after) {
            QVERIFY2(line.ends_with("=256"), line.c_str()); // 1M in 4 KiB pages
        }
        QCOMPARE(values("llite.lutra.max_read_ahead_mb"),
                 std::vector<std::string>{"llite.lutra.max_read_ahead_mb=32"});

        // One bad value and one unknown name: nothing changes, both are named.
        const std::vector<ParamAssignment> bad{{"llite.lutra.max_read_ahead_mb", "64"},
                                               {"osc.*.max_pages_per_rpc", "2K"},
                                               {"osc.*.no_such_param", "1"}};
        const Status refused = m_mount->setParams(bad);
        QVERIFY(!refused.ok());
        QVERIFY2(refused.message().find("max_pages_per_rpc=2K") != std::string::npos,
                 refused.message().c_str());
        QVERIFY2(refused.message().find("no parameter matches 'osc.*.no_such_param'") !=
                     std::string::npos,
                 refused.message().c_str());
        QCOMPARE(values("llite.lutra.max_read_ahead_mb"),
                 std::vector<std::string>{"llite.lutra.max_read_ahead_mb=32"});
        QCOMPARE(values("osc.*.max_pages_per_rpc"), after);
    }

    void unknownPatternIsNotFound()
    {
        auto got = m_mount->getParams("osc.*.no_such_param");
        QVERIFY(!got.ok());
        QCOMPARE(got.status().code(), Errc::not_found);
        QVERIFY(got.status().message().find("osc.*.no_such_param") != std::string::npos);
    }
};

QTEST_GUILESS_MAIN(TestClientParams)
#include "test_client_params.moc"
