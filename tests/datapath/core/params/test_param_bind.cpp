// Binding catalog groups through tables (core/params/bind.h): a spec without a row and a row
// without a spec fail, registering nothing, and every real component binds its whole group with
// the catalog's names, help, ranges and defaults. A spec added to the catalog without a row in
// its component fails here (and at that component's startup).
#include "client/engine.h"
#include "client/jobid.h"
#include "client/osc.h"
#include "client/rpc_session.h"
#include "core/cache/page_cache.h"
#include "core/locks/lock_namespace.h"
#include "core/params/bind.h"
#include "core/readahead/readahead.h"
#include "target/group_commit.h"
#include "target/lock_manager.h"
#include "target/object_store.h"
#include "target/target_server.h"
#include "transport/loader.h"
#include "transport/loopback/loopback.h"

#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <atomic>
#include <set>
#include <span>

using namespace lutra;
using namespace lutra::params;

namespace {

Binding cell(std::atomic<std::int64_t> &value)
{
    return {[&value] { return Value(value.load()); },
            [&value](const Value &next) {
                value.store(std::get<std::int64_t>(next));
                return Status{};
            },
            {}};
}

// A table binding every leaf of `group` to its own cell.
std::vector<BindRow> fullTable(const catalog::Group &group,
                               std::span<std::atomic<std::int64_t>> cells)
{
    std::vector<BindRow> rows;
    for (std::size_t i = 0; i < group.definitions.size(); ++i) {
        Binding binding = cell(cells[i]);
        if (!group.definitions[i].specialValues.empty()) {
            binding.action = [](std::string_view) { return Status{}; };
        }
        rows.push_back({group.definitions[i].leaf, std::move(binding), {}});
    }
    return rows;
}

std::vector<BindRow> without(std::vector<BindRow> rows, std::string_view leaf)
{
    std::erase_if(rows, [&](const BindRow &row) { return row.leaf == leaf; });
    return rows;
}

std::size_t registeredUnder(const Registry &registry, std::string_view prefix)
{
    auto listed = registry.list(prefix, true);
    return listed.ok() ? listed->size() : 0;
}

// Every spec of the group's instance is registered exactly as the catalog defines it (max and
// default aside for the leaves in `adjusted`) and reads.
void verifyBound(const Registry &registry, const catalog::Group &group, std::string_view instance,
                 const std::set<std::string_view> &adjusted = {})
{
    for (const Spec &expected : catalog::specs(group, instance)) {
        const QByteArray name = QByteArray::fromStdString(expected.name);
        auto listed = registry.list(expected.name);
        QVERIFY2(listed.ok() && listed->size() == 1, name);
        const Spec &got = listed->front();
        QCOMPARE(got.name, expected.name);
        QCOMPARE(got.type, expected.type);
        QCOMPARE(got.unit, expected.unit);
        QCOMPARE(got.min, expected.min);
        QCOMPARE(got.writable, expected.writable);
        QCOMPARE(got.help, expected.help);
        QCOMPARE(got.enumValues, expected.enumValues);
        QCOMPARE(got.specialValues.size(), expected.specialValues.size());
        if (!adjusted.contains(leafName(expected.name))) {
            QCOMPARE(got.max, expected.max);
            QVERIFY2(got.defaultValue == expected.defaultValue, name);
        }
        QVERIFY2(registry.get(expected.name).ok(), name);
    }
}

struct NoLockRpc final : locks::LockRpc {
    Result<locks::Grant> enqueue(const core::ObjectKey &, locks::LockMode, core::JobTag,
                                 locks::OnConflict) override
    {
        return Status(Errc::unimplemented, "not in this test");
    }
    Status cancel(const core::ObjectKey &, locks::RemoteHandle) override { return {}; }
};

struct NoLockCallbacks final : target::LockCallbacks {
    void sendBlockingCallback(target::ClientId, target::LockHandle, std::string_view) override {}
    void clientEvicted(target::ClientId) override {}
};

// The counter block <prefix>.<instance>.<leaf> is registered with the catalog's help and holds
// exactly the catalog's counters, in its order, with its units: a component that names a
// counter the catalog does not (or leaves one out) fails here.
void verifyStats(const Registry &registry, const catalog::CounterGroup &group,
                 std::string_view prefix, std::string_view instance)
{
    const std::string name =
        std::string(prefix) + "." + std::string(instance) + "." + std::string(group.leaf);
    const QByteArray label = QByteArray::fromStdString(name);
    auto listed = registry.list(name);
    QVERIFY2(listed.ok() && listed->size() == 1, label);
    QCOMPARE(listed->front().help, std::string(group.help));
    auto blocks = registry.counters(name);
    QVERIFY2(blocks.ok() && blocks->size() == 1, label);
    const CounterSnapshot &snapshot = blocks->front().second;
    QCOMPARE(snapshot.counters.size(), group.counters.size());
    for (std::size_t i = 0; i < group.counters.size(); ++i) {
        QCOMPARE(snapshot.counters[i].name, std::string(group.counters[i].name));
        QCOMPARE(snapshot.counters[i].unit, std::string(group.counters[i].unit));
        QCOMPARE(snapshot.counters[i].withMinMaxSum, group.counters[i].withMinMaxSum);
    }
}

} // namespace

class TestParamBind : public QObject {
    Q_OBJECT

    std::array<std::atomic<std::int64_t>, 16> m_cells{};

private slots:
    void aCompleteTableRegistersTheGroupAsTheCatalogDefinesIt()
    {
        Registry registry;
        {
            ParamGroup group(registry);
            auto rows = fullTable(catalog::kOsc, m_cells);
            QVERIFY(bindGroup(group, catalog::kOsc, "ost3", std::move(rows)).ok());
            verifyBound(registry, catalog::kOsc, "ost3");
            QCOMPARE(registeredUnder(registry, "osc.ost3"), catalog::kOsc.definitions.size());
            // The bindings are the table's: a set reaches the row's cell.
            const Assignment set{"osc.ost3.max_dirty_mb", "2G"};
            QVERIFY(registry.set({&set, 1}, "test").status.ok());
            QCOMPARE(m_cells[2].load(), std::int64_t{2048});
        }
        QCOMPARE(registeredUnder(registry, "osc"), std::size_t{0}); // gone with the group
    }

    void aSpecWithoutABindingFailsAndRegistersNothing()
    {
        Registry registry;
        ParamGroup group(registry);
        auto rows = without(fullTable(catalog::kOsc, m_cells), "checksum_type");
        const Status status = bindGroup(group, catalog::kOsc, "ost0", std::move(rows));
        QCOMPARE(status.code(), Errc::internal);
        const QByteArray message = QByteArray::fromStdString(status.message());
        QVERIFY2(message.contains("parameter group 'osc' of ost0"), message);
        QVERIFY2(message.contains("osc.ost0.checksum_type: catalog spec has no binding"), message);
        QCOMPARE(registeredUnder(registry, "osc"), std::size_t{0});
    }

    void aBindingWithoutASpecFailsAndRegistersNothing()
    {
        Registry registry;
        ParamGroup group(registry);
        auto rows = fullTable(catalog::kLockNamespace, m_cells);
        rows.push_back({"lru_colour", cell(m_cells[15]), {}});
        const Status status = bindGroup(group, catalog::kLockNamespace, "ost1", std::move(rows));
        QCOMPARE(status.code(), Errc::internal);
        const QByteArray message = QByteArray::fromStdString(status.message());
        QVERIFY2(message.contains("parameter group 'client ldlm namespace' of ost1"), message);
        QVERIFY2(message.contains("ldlm.namespaces.ost1.lru_colour: binding names no catalog spec"),
                 message);
        QCOMPARE(registeredUnder(registry, "ldlm"), std::size_t{0});
    }

    void aLeafBoundTwiceFails()
    {
        Registry registry;
        ParamGroup group(registry);
        auto rows = fullTable(catalog::kJobIds, m_cells);
        rows.push_back({"jobid_var", cell(m_cells[15]), {}});
        const Status status = bindGroup(group, catalog::kJobIds, {}, std::move(rows));
        QVERIFY(!status.ok());
        const QByteArray message = QByteArray::fromStdString(status.message());
        QVERIFY2(message.contains("parameter group 'job ids' does not match its catalog: "
                                  "jobid_var: bound twice"),
                 message);
        QCOMPARE(registeredUnder(registry, "jobid_var"), std::size_t{0});
    }

    void everyMismatchIsNamedInOneError()
    {
        auto rows = without(fullTable(catalog::kReadahead, m_cells), "max_read_ahead_mb");
        rows = without(std::move(rows), "max_read_ahead_whole_mb");
        rows.push_back({"max_read_behind_mb", cell(m_cells[15]), {}});
        const Status status = checkBindTable(catalog::kReadahead, "lutra", rows);
        const QByteArray message = QByteArray::fromStdString(status.message());
        QVERIFY2(message.contains("llite.lutra.max_read_ahead_mb: catalog spec has no binding; "
                                  "llite.lutra.max_read_ahead_whole_mb: catalog spec has no "
                                  "binding; llite.lutra.max_read_behind_mb: binding names no "
                                  "catalog spec"),
                 message);
    }

    void aRowMayAdjustItsSpecForThisInstance()
    {
        Registry registry;
        ParamGroup group(registry);
        auto rows = fullTable(catalog::kOsc, m_cells);
        rows[0].adjust = [](Spec &spec) {
            spec.max = 256;
            spec.defaultValue = std::int64_t{256};
        };
        QVERIFY(bindGroup(group, catalog::kOsc, "ost0", std::move(rows)).ok());
        verifyBound(registry, catalog::kOsc, "ost0", {"max_pages_per_rpc"});
        auto listed = registry.list("osc.ost0.max_pages_per_rpc");
        QVERIFY(listed.ok());
        QCOMPARE(listed->front().max, std::int64_t{256});
        const Assignment tooMany{"osc.ost0.max_pages_per_rpc", "512"};
        QCOMPARE(registry.set({&tooMany, 1}, "test").status.code(), Errc::out_of_range);
    }

    // Each counter group names a counter once, with a unit, and says what it counts.
    void theCounterGroupsAreWellFormed()
    {
        for (const catalog::CounterGroup *group : catalog::kCounterGroups) {
            QVERIFY(!group->help.empty());
            QVERIFY(group->leaf == "stats" || group->leaf.ends_with("_stats")); // Lustre's names
            std::set<std::string_view> names;
            std::size_t gauges = 0;
            for (const catalog::CounterDefinition &counter : group->counters) {
                QVERIFY2(names.insert(counter.name).second, counter.name.data());
                QVERIFY(!counter.unit.empty());
                gauges += counter.gauge ? 1 : 0;
            }
            QCOMPARE(catalog::counterDefs(*group).size() + gauges, group->counters.size());
        }
    }

    void theClientCoreComponentsBindTheirWholeGroups()
    {
        Registry registry;
        cache::PageCache::Options cacheOptions;
        cacheOptions.limitPages = 256;
        cacheOptions.chunkBytes = std::size_t{1} << 20;
        cache::PageCache pageCache(cacheOptions);
        readahead::ReadaheadMount readahead;
        NoLockRpc rpc;
        locks::LockNamespace ns("ost0", rpc,
                                [](const locks::CancelInfo &) { return locks::CancelOutcome{}; });
        client::JobIds jobIds;
        {
            ParamGroup group(registry);
            QVERIFY(pageCache.publish(group, "lutra").ok());
            QVERIFY(readahead::bindReadaheadParams(readahead, group, "lutra").ok());
            QVERIFY(ns.publish(group).ok());
            QVERIFY(jobIds.publish(group).ok());
            verifyBound(registry, catalog::kPageCache, "lutra");
            verifyBound(registry, catalog::kReadahead, "lutra");
            verifyBound(registry, catalog::kLockNamespace, "ost0");
            verifyBound(registry, catalog::kJobIds, {});
            verifyStats(registry, catalog::kPageCacheStats, "llite", "lutra");
            verifyStats(registry, catalog::kClientLockStats, "ldlm.namespaces", "ost0");
            // The components start at the catalog's defaults.
            QCOMPARE(registry.get("llite.lutra.max_read_ahead_per_file_mb")->front().value,
                     std::string("64"));
            QCOMPARE(registry.get("ldlm.namespaces.ost0.lru_max_age")->front().value,
                     std::string("3900"));
            QCOMPARE(registry.get("jobid_name")->front().value, std::string("%e.%u"));
        }
        ns.shutdown();
    }

    void theTargetStoreComponentsBindTheirWholeGroups()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        auto store = target::ObjectStore::openRoot(root.path().toStdString());
        QVERIFY2(store.ok(), store.status().toString().c_str());
        auto commit = target::GroupCommit::open(*store, "ost5");
        QVERIFY2(commit.ok(), commit.status().toString().c_str());
        NoLockCallbacks callbacks;
        target::LockManager locks("ost5", callbacks);
        Registry registry;
        ParamGroup group(registry);
        QVERIFY((*commit)->publish(group).ok());
        QVERIFY(locks.publish(group).ok());
        verifyBound(registry, catalog::kGroupCommit, "ost5");
        verifyBound(registry, catalog::kLockManager, "ost5");
        verifyStats(registry, catalog::kCommitStats, "obdfilter", "ost5");
        verifyStats(registry, catalog::kTargetLockStats, "ldlm.namespaces", "ost5");
        QCOMPARE(registry.get("ldlm.namespaces.ost5.blocking_timeout")->front().value,
                 std::string("100000"));
    }

    // The target server, an Osc and the client engine over the in-process loopback transport.
    void theTargetServerOscAndEngineBindTheirWholeGroups()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        transport::PluginLoader loader;
        QVERIFY(loader.registerPlugin(transport::loopback::plugin()).ok());
        auto serverTransport = loader.create("loopback", {});
        auto clientTransport = loader.create("loopback", {});
        QVERIFY(serverTransport.ok() && clientTransport.ok());
        Registry targetRegistry;
        target::TargetOptions targetOptions;
        targetOptions.name = "ost7";
        targetOptions.root = root.path().toStdString();
        targetOptions.listen = "loopback://127.0.0.1:0";
        targetOptions.serviceThreads = 2;
        auto server = target::TargetServer::start(targetOptions, **serverTransport, targetRegistry);
        QVERIFY2(server.ok(), server.status().toString().c_str());
        verifyBound(targetRegistry, catalog::kObdfilter, "ost7");
        QCOMPARE(targetRegistry.get("obdfilter.ost7.brw_size")->front().value, std::string("4"));

        client::RpcSession::Options sessionOptions;
        sessionOptions.clientId = "bind-test";
        auto session =
            client::RpcSession::connect(**clientTransport, (*server)->listenUri(), sessionOptions);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        const std::int64_t pagesLimit = (*session)->negotiated().maxBulkBytes / 4096;
        {
            Registry registry;
            client::JobIds jobIds;
            std::unique_ptr<client::Engine> engine;
            {
                ParamGroup group(registry);
                client::Engine::Options engineOptions;
                engineOptions.fsName = "bindfs";
                engineOptions.maxCachedMb = 4;
                auto created = client::Engine::create(engineOptions, {session->get()}, jobIds,
                                                      **clientTransport, group);
                QVERIFY2(created.ok(), created.status().toString().c_str());
                engine = std::move(created).value();
                verifyBound(registry, catalog::kOsc, "ost7", {"max_pages_per_rpc"});
                verifyBound(registry, catalog::kLliteEngine, "bindfs");
                verifyBound(registry, catalog::kPageCache, "bindfs");
                verifyBound(registry, catalog::kReadahead, "bindfs");
                verifyBound(registry, catalog::kLockNamespace, "ost7");
                // Osc's explicit adjustment: the negotiated bulk size caps max_pages_per_rpc.
                auto pages = registry.list("osc.ost7.max_pages_per_rpc");
                QVERIFY(pages.ok());
                QCOMPARE(pages->front().max, std::min<std::int64_t>(4096, pagesLimit));
                QCOMPARE(std::get<std::int64_t>(pages->front().defaultValue),
                         std::min<std::int64_t>(1024, pagesLimit));
            }
            engine.reset();
        }
        session->reset();
        server->reset();
    }
};

QTEST_GUILESS_MAIN(TestParamBind)
#include "test_param_bind.moc"
