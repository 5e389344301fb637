// Runs inside the VM (tests/vm/vm-run.sh, soft-RoCE rxe0): a real lutra-target process listening
// on verbs://<rxe0's address>, reached over the verbs plugin by the RPC session (checksummed
// bulk writes and reads, in unregistered and in registered memory) and by a mounted client (the
// page cache's registered pool, checksums on). Everything read back is compared byte by byte.
#include <lutra/client.h>

#include "client/rpc_session.h"
#include "core/params/registry.h"
#include "target_process.h"
#include "transport/loader.h"

#include <QTest>

#include <cstdlib>
#include <filesystem>

using namespace lutra;
using namespace std::chrono_literals;
using client::RpcSession;
using tools::TargetProcess;
using tools::TempDir;

namespace {

transport::Deadline soon()
{
    return transport::deadlineIn(30s);
}

std::vector<std::byte> pattern(std::size_t size, unsigned seed)
{
    std::vector<std::byte> bytes(size);
    std::uint32_t x = seed * 2654435761u + 1;
    for (auto &b : bytes) {
        x = x * 1664525u + 1013904223u;
        b = static_cast<std::byte>(x >> 24);
    }
    return bytes;
}

struct Shape {
    std::uint32_t pages = 0;
    std::uint16_t lastPageBytes = 0;
};
Shape shapeOf(std::size_t size)
{
    const auto pages = static_cast<std::uint32_t>((size + 4095) / 4096);
    return {pages, static_cast<std::uint16_t>(size - (std::size_t{pages} - 1) * 4096)};
}

} // namespace

class TestVmVerbsClientTarget : public QObject {
    Q_OBJECT

    std::string m_address;
    std::optional<TempDir> m_dir;
    std::unique_ptr<TargetProcess> m_target;

private slots:
    void initTestCase()
    {
        const char *address = std::getenv("LUTRA_VM_ADDRESS");
        QVERIFY2(address != nullptr && *address != '\0',
                 "LUTRA_VM_ADDRESS is not set: this test runs inside the VM "
                 "(tests/vm/vm-run.sh, see tests/vm/README.md)");
        m_address = address;
    }

    void init()
    {
        auto dir = TempDir::create("lutra-vm-verbs");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        std::filesystem::create_directories(m_dir->path() + "/ost0");
        TargetProcess::Options spawn;
        spawn.binary = LUTRA_TARGET_BIN;
        spawn.root = m_dir->path() + "/ost0";
        spawn.listen = "verbs://" + m_address + ":0";
        spawn.startTimeout = 60s; // ASan under TCG starts slowly
        auto target = TargetProcess::spawn(spawn);
        QVERIFY2(target.ok(), target.status().toString().c_str());
        m_target = std::move(target).value();
        QVERIFY2(m_target->uri().starts_with("verbs://" + m_address + ":"),
                 m_target->uri().c_str());
    }

    void cleanup()
    {
        m_target.reset();
        m_dir.reset();
    }

    void sessionWritesAndReadsBackWithChecksums()
    {
        transport::PluginLoader loader;
        auto created = loader.create("verbs", {});
        QVERIFY2(created.ok(), created.status().toString().c_str());
        auto &transport = **created;
        RpcSession::Options options;
        options.clientId = "vm-verbs";
        auto session = RpcSession::connect(transport, m_target->uri(), options);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        QVERIFY(((*session)->negotiated().features & protocol::kFeatureChecksums) != 0);
        const std::size_t maxBulk = (*session)->negotiated().maxBulkBytes;
        std::uint64_t handle = 0;
        {
            // A reply holds a session slot: it must be gone before the session.
            protocol::CreateRequest create;
            create.path = "data";
            auto file = (*session)->call(create, "vm", soon());
            QVERIFY2(file.ok(), file.status().toString().c_str());
            handle = file->handle;
        }

        // Registered once, like a page pool; unregistered memory goes through region 0.
        std::vector<std::byte> pool(2 * maxBulk);
        auto region = transport.registerMemory(pool.data(), pool.size());
        QVERIFY2(region.ok(), region.status().toString().c_str());

        std::uint64_t offset = 0;
        unsigned seed = 1;
        for (const std::size_t size :
             {std::size_t{4096}, std::size_t{3 * 4096 + 100}, std::size_t{1} << 20, maxBulk}) {
            for (const bool registered : {false, true}) {
                const auto data = pattern(size, seed++);
                const Shape shape = shapeOf(size);
                transport::Segment source{const_cast<std::byte *>(data.data()), size, 0};
                if (registered) {
                    std::copy(data.begin(), data.end(), pool.begin());
                    source = {pool.data(), size, region->id};
                }
                auto wrote = (*session)->write(handle, offset, shape.pages, shape.lastPageBytes,
                                               {&source, 1}, true, "vm", soon());
                QVERIFY2(wrote.ok(), wrote.status().toString().c_str());
                QCOMPARE(std::size_t(*wrote), size);

                std::vector<std::byte> back(size);
                transport::Segment destination{back.data(), size, 0};
                if (registered) {
                    destination = {pool.data() + maxBulk, size, region->id};
                }
                auto got = (*session)->read(handle, offset, shape.pages, shape.lastPageBytes,
                                            {&destination, 1}, true, "vm", soon());
                QVERIFY2(got.ok(), got.status().toString().c_str());
                QCOMPARE(std::size_t(*got), size);
                const std::byte *landed = registered ? pool.data() + maxBulk : back.data();
                QVERIFY2(std::equal(data.begin(), data.end(), landed),
                         ("read back differs: " + std::to_string(size) + " bytes").c_str());
                offset += (size + 4095) / 4096 * 4096;
            }
        }
        QCOMPARE((*session)->counters().checksumErrors, std::uint64_t(0));
        session->reset();
        transport.deregisterMemory(*region);
    }

    void mountedClientWritesAndReadsBack()
    {
        client::MountOptions options;
        options.targets = {m_target->uri()};
        options.stripeSize = 1 << 20;
        params::Registry registry;
        options.registry = &registry;
        const auto data = pattern((3 << 20) + 123, 7);
        {
            auto mounted = client::Mount::mount(options);
            QVERIFY2(mounted.ok(), mounted.status().toString().c_str());
            auto checksums = registry.get("osc.*.checksums");
            QVERIFY2(checksums.ok(), checksums.status().toString().c_str());
            QCOMPARE(checksums->size(), std::size_t(1));
            QCOMPARE(checksums->front().value, std::string("1"));
            auto file = (*mounted)->open("file", client::kOpenRead | client::kOpenWrite |
                                                     client::kOpenCreate);
            QVERIFY2(file.ok(), file.status().toString().c_str());
            for (std::size_t off = 0; off < data.size(); off += 47008) {
                const std::size_t n = std::min<std::size_t>(47008, data.size() - off);
                auto wrote = (*file)->pwrite(std::span(data).subspan(off, n), off);
                QVERIFY2(wrote.ok(), wrote.status().toString().c_str());
            }
            QVERIFY((*file)->fsync().ok());
            QVERIFY((*file)->close().ok());
        }
        // A fresh client reads the target's bytes over verbs.
        options.registry = nullptr;
        auto fresh = client::Mount::mount(options);
        QVERIFY2(fresh.ok(), fresh.status().toString().c_str());
        auto file = (*fresh)->open("file", client::kOpenRead);
        QVERIFY2(file.ok(), file.status().toString().c_str());
        std::vector<std::byte> back(data.size() + 4096);
        auto got = (*file)->pread(back, 0);
        QVERIFY2(got.ok(), got.status().toString().c_str());
        QCOMPARE(*got, data.size());
        QVERIFY(std::equal(data.begin(), data.end(), back.begin()));
    }
};

QTEST_GUILESS_MAIN(TestVmVerbsClientTarget)
#include "test_vm_verbs_client_target.moc"
