// File data through the client engine against two real lutra-target processes: striped,
// unaligned writes read back byte-exact, durable for a fresh client, holes as zeros, two
// clients kept coherent by locks, readahead counted in read_ahead_stats, dirty limits enforced.
#include <lutra/client.h>

#include "core/params/registry.h"
#include "core/types.h"
#include "frozen_process.h"
#include "paused_page.h"
#include "target_process.h"

#include <QTest>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

using namespace lutra;
using namespace lutra::client;
using tools::TargetProcess;
using tools::TempDir;

namespace {

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

std::string value(params::Registry &registry, const std::string &name)
{
    auto readings = registry.get(name);
    return readings ? readings->front().value : readings.status().toString();
}

std::uint64_t counter(params::Registry &registry, const std::string &block, const std::string &name)
{
    auto blocks = registry.counters(block);
    if (!blocks) {
        return 0;
    }
    for (const auto &c : blocks->front().second.counters) {
        if (c.name == name) {
            return c.samples;
        }
    }
    return 0;
}

// The per-thread fast read (client/fast_read.h) keeps the file's size and stripe mapping between
// reads; the fastRead* tests check that each event that may change them leaves no stale byte and
// no stale size. A read is "fast" when failed_to_fast_read does not move.
std::uint64_t failedFastReads(params::Registry &registry)
{
    return counter(registry, "llite.lutra.read_ahead_stats", "failed_to_fast_read");
}

// read_bytes samples of `job` in llite.lutra.job_stats (0 when the job has none).
std::uint64_t jobReads(params::Registry &registry, const std::string &job)
{
    const std::string text = value(registry, "llite.lutra.job_stats");
    const auto entry = text.find("job_id:          " + job + "\n");
    if (entry == std::string::npos) {
        return 0;
    }
    const auto reads = text.find("read_bytes:", entry);
    if (reads == std::string::npos || reads > text.find("- job_id:", entry)) {
        return 0;
    }
    return std::stoull(text.substr(text.find("samples:", reads) + 8));
}

std::byte readByte(File &file, std::uint64_t offset, std::size_t *got = nullptr)
{
    std::byte one{0x5a};
    auto read = file.pread(std::span(&one, 1), offset);
    if (got != nullptr) {
        *got = read.ok() ? *read : 0;
    }
    return one;
}

// Two readers of one 4 MiB file (past max_read_ahead_whole_mb: not read whole) written by
// another client, on a client with `cacheMb` of cache and trailing_reader_wait_ms at
// `waitMs`; the trailing one has read page 0.
struct TwoReaders {
    std::vector<std::byte> bytes;
    params::Registry registry;
    std::unique_ptr<Mount> client;
    std::unique_ptr<File> trailing;
    std::unique_ptr<File> leading;

    std::string waits() { return value(registry, "llite.lutra.trailing_reader_waits"); }
    std::string timeouts() { return value(registry, "llite.lutra.trailing_reader_wait_timeouts"); }
    // The leading reader's page at `offset` read back exactly.
    bool leaderReadsPage(std::uint64_t offset)
    {
        std::vector<std::byte> page(core::kPageSize);
        auto got = leading->pread(page, offset);
        return got.ok() && *got == page.size() &&
               std::equal(page.begin(), page.end(), bytes.begin() + offset);
    }
};

} // namespace

class TestClientIo : public QObject {
    Q_OBJECT

    std::optional<TempDir> m_dir;
    std::vector<std::unique_ptr<TargetProcess>> m_targets;
    MountOptions m_options;

    // Two lutra-target processes under `dir` (with `extraArgs`), which m_options mounts;
    // "" when they run, else why not.
    std::string startTargets(const std::string &dir, std::vector<std::string> extraArgs)
    {
        TargetProcess::Options spawn;
        spawn.binary = LUTRA_TARGET_BIN;
        spawn.extraArgs = std::move(extraArgs);
        auto targets = tools::spawnTargets(dir, 2, spawn);
        if (!targets) {
            return targets.status().toString();
        }
        m_targets = std::move(targets).value();
        m_options.targets.clear();
        for (const auto &target : m_targets) {
            m_options.targets.push_back(target->uri());
        }
        return {};
    }

    std::unique_ptr<Mount> mount(params::Registry *registry = nullptr)
    {
        return mountWith(m_options, registry);
    }

    std::unique_ptr<Mount> mountWith(MountOptions options, params::Registry *registry)
    {
        options.registry = registry;
        auto mounted = Mount::mount(options);
        if (!mounted) {
            qWarning("%s", mounted.status().toString().c_str());
            return nullptr;
        }
        return std::move(mounted).value();
    }

    // What a fresh client reads of `path`: "" when it is exactly `expected`, else what differs.
    std::string freshClientReadsBack(const std::string &path,
                                     const std::vector<std::byte> &expected)
    {
        auto client = mount();
        if (!client) {
            return "no fresh client";
        }
        auto file = client->open(path, kOpenRead);
        if (!file) {
            return file.status().toString();
        }
        std::vector<std::byte> back(expected.size() + 1); // one more: the size must match too
        auto got = (*file)->pread(back, 0);
        if (!got) {
            return got.status().toString();
        }
        if (*got != expected.size()) {
            return "read " + std::to_string(*got) + " bytes of " + std::to_string(expected.size());
        }
        const auto differs = std::mismatch(expected.begin(), expected.end(), back.begin());
        return differs.first == expected.end()
                   ? std::string()
                   : "first wrong byte at " + std::to_string(differs.first - expected.begin());
    }

    // "" when set up, else what failed.
    std::string twoReaders(TwoReaders &readers, const std::string &path, unsigned seed,
                           const std::string &cacheMb, const std::string &waitMs)
    {
        readers.bytes = pattern(4 << 20, seed);
        {
            auto writer = mount();
            auto file = writer ? writer->open(path, kOpenWrite | kOpenCreate)
                               : Result<std::unique_ptr<File>>(Status(Errc::internal, "mount"));
            if (!file || !(*file)->pwrite(readers.bytes, 0).ok() || !(*file)->close().ok()) {
                return "writing " + path;
            }
        }
        readers.client = mount(&readers.registry);
        if (!readers.client) {
            return "mount";
        }
        const params::Assignment settings[]{{"llite.*.max_cached_mb", cacheMb},
                                            {"llite.*.trailing_reader_wait_ms", waitMs}};
        if (auto set = readers.registry.set(settings, "test"); !set.status.ok()) {
            return set.status.toString();
        }
        auto trailing = readers.client->open(path, kOpenRead);
        auto leading = readers.client->open(path, kOpenRead);
        if (!trailing || !leading) {
            return "open " + path;
        }
        readers.trailing = std::move(trailing).value();
        readers.leading = std::move(leading).value();
        std::vector<std::byte> page(core::kPageSize);
        auto got = readers.trailing->pread(page, 0);
        return got.ok() && *got == page.size() ? "" : "the trailing reader's first read";
    }

private slots:
    void init()
    {
        auto dir = TempDir::create("lutra-io");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        m_options = {};
        m_options.stripeSize = 64 * 1024;
        const std::string started = startTargets(m_dir->path(), {});
        QVERIFY2(started.empty(), started.c_str());
    }

    void cleanup()
    {
        m_targets.clear();
        m_dir.reset();
    }

    // A cluster mid-upgrade: targets that speak protocol version 1 only, whose lock grants carry
    // no object size. The client cannot know what the target holds past its own writes, so a
    // write in part of a page reads the page first: another client's bytes are kept.
    void writesInPartOfAPageKeepAnotherClientsBytesOnVersionOneTargets()
    {
        m_targets.clear();
        const std::string started =
            startTargets(m_dir->path() + "/v1", {"--max-protocol-version", "1"});
        QVERIFY2(started.empty(), started.c_str());
        params::Registry registry;
        auto a = mount(&registry);
        QVERIFY(a);
        QCOMPARE(value(registry, "osc.ost0.protocol_version"), std::string("1"));
        writesInPartOfAPageKeepAnotherClientsBytes();
    }

    // The other half of an upgrade: clients that speak version 1 only, against new targets.
    // The targets frame their replies and blocking callbacks as version 1 (the two clients'
    // write locks conflict), and the clients read first what they write in part.
    void versionOneClientsWorkWithNewTargets()
    {
        MountOptions old = m_options;
        old.maxProtocolVersion = 3;
        auto refused = Mount::mount(old);
        QVERIFY(!refused.ok());
        QCOMPARE(refused.status().code(), Errc::invalid_argument);
        QVERIFY2(refused.status().message().find("protocol version 3") != std::string::npos,
                 refused.status().toString().c_str());
        m_options.maxProtocolVersion = 1;
        params::Registry registry;
        auto a = mount(&registry);
        QVERIFY(a);
        QCOMPARE(value(registry, "osc.ost1.protocol_version"), std::string("1"));
        writesInPartOfAPageKeepAnotherClientsBytes();
        threeClientsWriteOneFileWhileEachReads();
    }

    void unalignedStripedWritesReadBack()
    {
        auto client = mount();
        QVERIFY(client);
        auto file = client->open("data", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto data = pattern(1024 * 1024 + 123, 1);
        for (std::size_t off = 0; off < data.size(); off += 47008) { // IOR-hard's transfer size
            const std::size_t n = std::min<std::size_t>(47008, data.size() - off);
            auto wrote = (*file)->pwrite(std::span(data).subspan(off, n), off);
            QVERIFY2(wrote.ok(), wrote.status().toString().c_str());
            QCOMPARE(*wrote, n);
        }
        QCOMPARE((*file)->stat()->size, std::uint64_t(0)); // nothing written back yet
        QVERIFY((*file)->fsync().ok());
        QCOMPARE((*file)->stat()->size, std::uint64_t(data.size()));

        std::vector<std::byte> back(data.size() + 5000);
        auto got = (*file)->pread(back, 0);
        QVERIFY2(got.ok(), got.status().toString().c_str());
        QCOMPARE(*got, data.size()); // short at the end
        QVERIFY(std::equal(data.begin(), data.end(), back.begin()));
        std::vector<std::byte> middle(100000);
        QCOMPARE(*(*file)->pread(middle, 12345), middle.size());
        QVERIFY(std::equal(middle.begin(), middle.end(), data.begin() + 12345));
        QCOMPARE(*(*file)->pread(middle, data.size() + 1), std::size_t(0));
        QVERIFY((*file)->close().ok());

        // A fresh client sees the same bytes, from the targets.
        auto other = mount();
        QVERIFY(other);
        auto again = other->open("data", kOpenRead);
        QVERIFY(again.ok());
        std::vector<std::byte> fresh(data.size());
        QCOMPARE(*(*again)->pread(fresh, 0), data.size());
        QVERIFY(fresh == data);
    }

    void sequentialReadsUseReadahead()
    {
        {
            auto writer = mount();
            auto file = writer->open("stream", kOpenWrite | kOpenCreate);
            const auto data = pattern(4 << 20, 2);
            QVERIFY((*file)->pwrite(data, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto reader = mount(&registry);
        auto file = reader->open("stream", kOpenRead);
        QVERIFY(file.ok());
        std::vector<std::byte> buffer(64 * 1024);
        std::uint64_t total = 0;
        for (;;) {
            auto got = (*file)->read(buffer);
            QVERIFY(got.ok());
            if (*got == 0) {
                break;
            }
            total += *got;
        }
        QCOMPARE(total, std::uint64_t(4 << 20));
        const auto hits = counter(registry, "llite.lutra.read_ahead_stats", "hits");
        const auto misses = counter(registry, "llite.lutra.read_ahead_stats", "misses");
        const auto readahead = counter(registry, "llite.lutra.read_ahead_stats", "readahead_pages");
        QVERIFY2(readahead > 0, value(registry, "llite.lutra.read_ahead_stats").c_str());
        QVERIFY2(hits > misses, value(registry, "llite.lutra.read_ahead_stats").c_str());
    }

    // Readahead never waits on another client's lock: client B holds a PW lock on the file's
    // second stripe object (its write); client A reads the first stripe sequentially and its
    // readahead reaches into B's object, which it skips (failed_lock_match) — B hears no blocking
    // callback — while A's own read of that stripe afterwards waits for the lock and gets B's
    // bytes. A readahead enqueue that waited at the target while the reader held its own locks
    // closed cycles between clients: three writing one file while each read it stalled 30 s at a
    // time until the RPC timeout broke them (threeClientsWriteOneFileWhileEachReads, once in CI).
    void readaheadDoesNotWaitForAnotherClientsLock()
    {
        constexpr std::size_t kStripe = 64 * 1024; // init(): two targets, 64 KiB stripes
        {
            auto writer = mount();
            QVERIFY(writer);
            auto file = writer->open("ra-locks", kOpenWrite | kOpenCreate);
            QVERIFY(file.ok());
            QVERIFY((*file)->pwrite(pattern(4 * kStripe, 41), 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registryB;
        auto clientB = mount(&registryB);
        QVERIFY(clientB);
        auto fileB = clientB->open("ra-locks", kOpenRead | kOpenWrite);
        QVERIFY(fileB.ok());
        const auto mine = pattern(kStripe, 42);
        QVERIFY((*fileB)->pwrite(mine, kStripe).ok()); // stripe 1: ost1's object, PW held by B

        params::Registry registryA;
        auto clientA = mount(&registryA);
        QVERIFY(clientA);
        auto fileA = clientA->open("ra-locks", kOpenRead);
        QVERIFY(fileA.ok());
        std::vector<std::byte> chunk(4096);
        for (std::uint64_t offset = 0; offset < kStripe; offset += chunk.size()) {
            QVERIFY((*fileA)->pread(chunk, offset).ok());
        }
        QVERIFY2(counter(registryA, "llite.lutra.read_ahead_stats", "failed_lock_match") > 0,
                 value(registryA, "llite.lutra.read_ahead_stats").c_str());
        QCOMPARE(counter(registryB, "ldlm.namespaces.ost1.lock_stats", "blocking_callbacks"),
                 std::uint64_t(0));

        std::vector<std::byte> back(kStripe);
        QVERIFY((*fileA)->pread(back, kStripe).ok()); // a demand read waits: B writes back
        QVERIFY(back == mine);
        QCOMPARE(counter(registryB, "ldlm.namespaces.ost1.lock_stats", "blocking_callbacks"),
                 std::uint64_t(1));
    }

    void holesReadAsZeros()
    {
        auto client = mount();
        auto file = client->open("sparse", kOpenRead | kOpenWrite | kOpenCreate);
        const auto tail = pattern(1000, 3);
        QVERIFY((*file)->pwrite(tail, 3 << 20).ok());
        QVERIFY((*file)->fsync().ok());
        std::vector<std::byte> back((3 << 20) + 1000, std::byte{0x55});
        QCOMPARE(*(*file)->pread(back, 0), back.size());
        QVERIFY(std::all_of(back.begin(), back.begin() + (3 << 20),
                            [](std::byte b) { return b == std::byte{0}; }));
        QVERIFY(std::equal(tail.begin(), tail.end(), back.begin() + (3 << 20)));
    }

    void twoClientsStayCoherent()
    {
        auto a = mount();
        auto b = mount();
        QVERIFY(a && b);
        auto fa = a->open("shared", kOpenRead | kOpenWrite | kOpenCreate);
        auto fb = b->open("shared", kOpenRead | kOpenWrite);
        QVERIFY(fa.ok() && fb.ok());
        const auto first = pattern(200000, 4);
        QVERIFY((*fa)->pwrite(first, 0).ok()); // cached dirty in A under PW locks
        std::vector<std::byte> seen(first.size());
        // B's read conflicts with A's PW locks: A writes back and drops, B reads A's data.
        QCOMPARE(*(*fb)->pread(seen, 0), first.size());
        QVERIFY(seen == first);
        const auto second = pattern(5000, 5);
        QVERIFY((*fb)->pwrite(second, 70000).ok());
        std::vector<std::byte> again(first.size());
        QCOMPARE(*(*fa)->pread(again, 0), first.size());
        auto expected = first;
        std::copy(second.begin(), second.end(), expected.begin() + 70000);
        QVERIFY2(again == expected, "A must see B's write, not its own stale cache");
    }

    void dirtyLimitMakesWritersWriteBack()
    {
        params::Registry registry;
        auto client = mount(&registry);
        const params::Assignment limit{"osc.*.max_dirty_mb", "1"};
        QVERIFY(registry.set(std::span(&limit, 1), "test").status.ok());
        auto file = client->open("big", kOpenWrite | kOpenCreate);
        const auto chunk = pattern(256 * 1024, 6);
        std::int64_t most = 0;
        for (int i = 0; i < 32; ++i) { // 8 MiB
            QVERIFY((*file)->pwrite(chunk, std::uint64_t(i) * chunk.size()).ok());
            most = std::max<std::int64_t>(most,
                                          std::stoll(value(registry, "llite.lutra.dirty_pages")));
        }
        // Per target at most 1 MiB plus one write: never anywhere near 8 MiB of dirty pages.
        QVERIFY2(most <= 2 * (256 + 64), std::to_string(most).c_str());
        QVERIFY((*file)->close().ok());
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("0"));
    }

    void flushJobWritesBackAndDrops()
    {
        params::Registry registry;
        auto client = mount(&registry);
        Mount::setThreadJobId("job.x");
        auto file = client->open("jobfile", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY2(file.ok(), file.status().toString().c_str());
        const auto data = pattern(1 << 20, 7);
        QVERIFY((*file)->pwrite(data, 0).ok());
        QVERIFY(std::stoll(value(registry, "llite.lutra.dirty_pages")) >= 256);
        QVERIFY2(value(registry, "llite.lutra.job_stats").find("job_id:          job.x") !=
                     std::string::npos,
                 value(registry, "llite.lutra.job_stats").c_str());

        auto report = client->flushJob("job.x");
        QVERIFY2(report.ok(), report.status().toString().c_str());
        QCOMPARE(report->jobId, std::string("job.x"));
        QCOMPARE(report->bytesWrittenBack, std::uint64_t(1 << 20));
        QVERIFY(report->locksCancelled >= 2); // one PW lock per stripe object
        QVERIFY(report->pagesDropped >= 256);
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("0"));
        QCOMPARE(value(registry, "llite.lutra.cached_pages"), std::string("0"));
        // The data is on the targets: a fresh client reads it. Failures say what failed (a
        // failed Result dereferenced only showed "Caught unhandled exception").
        auto other = mount();
        QVERIFY(other);
        auto again = other->open("jobfile", kOpenRead);
        QVERIFY2(again.ok(), again.status().toString().c_str());
        std::vector<std::byte> back(data.size());
        auto got = (*again)->pread(back, 0);
        QVERIFY2(got.ok(), got.status().toString().c_str());
        QCOMPARE(*got, data.size());
        QVERIFY(back == data);
        Mount::setThreadJobId("");
    }

    void flushStopsAtItsDeadlineAndKeepsTheData()
    {
        // A flush's timeout bounds every wait in it: with a frozen target the flush returns at
        // its deadline instead of at the RPCs' own timeout, names what it left, and loses
        // nothing: the next flush writes it all back.
        MountOptions options = m_options;
        options.rpcTimeout = std::chrono::seconds(120);
        params::Registry registry;
        auto client = mountWith(options, &registry);
        QVERIFY(client);
        Mount::setThreadJobId("job.d");
        auto file = client->open("deadlinefile", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY2(file.ok(), file.status().toString().c_str());
        const auto data = pattern(1 << 20, 12); // 16 stripes: both targets hold half
        QVERIFY((*file)->pwrite(data, 0).ok());
        Mount::setThreadJobId("");
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("256"));
        {
            testing::Frozen stopped(m_targets[0]->pid());
            QVERIFY(stopped.frozen());
            auto report = client->flushJob("job.d", std::chrono::milliseconds(300));
            QVERIFY2(report.ok(), report.status().toString().c_str());
            // Not a speed check: what ended the wait must be the flush's deadline, not the
            // RPCs' 120 s timeout.
            QVERIFY(report->duration < std::chrono::seconds(60));
            QCOMPARE(report->bytesWrittenBack, std::uint64_t(0));
            std::string errors;
            for (const auto &error : report->errors) {
                errors += error + "\n";
            }
            QVERIFY2(errors.find("deadline reached: 1 objects not written back") !=
                         std::string::npos,
                     errors.c_str());
            QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("256"));
            QCOMPARE(value(registry, "ldlm.namespaces.ost0.lock_count"), std::string("1"));
            QCOMPARE(value(registry, "ldlm.namespaces.ost1.lock_count"), std::string("1"));
        }
        auto report = client->flushJob("job.d");
        QVERIFY2(report.ok(), report.status().toString().c_str());
        QVERIFY2(report->errors.empty(),
                 report->errors.empty() ? "" : report->errors.front().c_str());
        QCOMPARE(report->bytesWrittenBack, std::uint64_t(1 << 20));
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("0"));
        auto other = mount();
        QVERIFY(other);
        auto again = other->open("deadlinefile", kOpenRead);
        QVERIFY2(again.ok(), again.status().toString().c_str());
        std::vector<std::byte> back(data.size());
        auto got = (*again)->pread(back, 0);
        QVERIFY2(got.ok(), got.status().toString().c_str());
        QCOMPARE(*got, data.size());
        QVERIFY(back == data);
    }

    void flushOfOneJobLeavesAnotherJobsDirtyData()
    {
        // A job's flush writes back what that job dirtied, not every open object's data: its
        // cost tracks its own work. The other job's data stays cached and dirty (and is
        // written back by its own flush).
        params::Registry registry;
        auto client = mount(&registry);
        const auto data = pattern(1 << 20, 8);
        Mount::setThreadJobId("job.keep");
        auto kept = client->open("keepfile", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(kept.ok());
        QVERIFY((*kept)->pwrite(data, 0).ok());
        Mount::setThreadJobId("job.gone");
        auto gone = client->open("gonefile", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(gone.ok());
        QVERIFY((*gone)->pwrite(data, 0).ok());
        Mount::setThreadJobId("");
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("512"));

        auto report = client->flushJob("job.gone");
        QVERIFY2(report.ok(), report.status().toString().c_str());
        QCOMPARE(report->bytesWrittenBack, std::uint64_t(1 << 20));
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("256"));

        auto rest = client->flushJob("job.keep");
        QVERIFY2(rest.ok(), rest.status().toString().c_str());
        QCOMPARE(rest->bytesWrittenBack, std::uint64_t(1 << 20));
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("0"));
        // Both files' data is on the targets.
        auto other = mount();
        for (const char *path : {"keepfile", "gonefile"}) {
            auto again = other->open(path, kOpenRead);
            QVERIFY(again.ok());
            std::vector<std::byte> back(data.size());
            QCOMPARE(*(*again)->pread(back, 0), data.size());
            QVERIFY(back == data);
        }
    }

    void flushWithWritersRunningLosesNothing()
    {
        auto client = mount();
        auto file = client->open("busy", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        constexpr unsigned kWriters = 2;
        constexpr std::size_t kBlock = 20000; // not page aligned on purpose
        std::vector<std::vector<std::uint64_t>> acked(kWriters);
        std::atomic<bool> stop{false};
        std::vector<std::thread> writers;
        for (unsigned w = 0; w < kWriters; ++w) {
            writers.emplace_back([&, w] {
                Mount::setThreadJobId("job.w" + std::to_string(w));
                for (std::uint64_t k = 0; !stop && k < 400; ++k) {
                    const std::uint64_t block = k * kWriters + w;
                    if (!(*file)->pwrite(pattern(kBlock, unsigned(block)), block * kBlock).ok()) {
                        return;
                    }
                    acked[w].push_back(block);
                }
            });
        }
        for (int i = 0; i < 10; ++i) {
            auto one = client->flushJob("job.w0");
            QVERIFY2(one.ok(), one.status().toString().c_str());
            auto all = client->flushJob("");
            QVERIFY2(all.ok(), all.status().toString().c_str());
        }
        stop = true;
        for (auto &writer : writers) {
            writer.join();
        }
        QVERIFY((*file)->close().ok());
        auto reader = mount();
        auto check = reader->open("busy", kOpenRead);
        QVERIFY(check.ok());
        std::size_t blocks = 0;
        for (const auto &list : acked) {
            for (const std::uint64_t block : list) {
                std::vector<std::byte> back(kBlock);
                QCOMPARE(*(*check)->pread(back, block * kBlock), kBlock);
                QVERIFY2(back == pattern(kBlock, unsigned(block)), "a write was lost to a flush");
                ++blocks;
            }
        }
        QVERIFY(blocks > 0);
    }

    // A write-back that runs while a write is half done finds the page holding the object's
    // old end dirty with the writer's bytes past that end. Sent cut at the old end and called
    // clean, those bytes never reached the target (flushWithWritersRunningLosesNothing saw it
    // rarely). Here the writer itself writes back half-way: the cache is full of dirty pages
    // when it takes the page after the old end's, so it writes back what is open to make room.
    void aWriteBackDuringAWriteKeepsTheBytesPastTheOldEnd()
    {
        params::Registry registry;
        auto client = mount(&registry);
        const params::Assignment oneMiB{"llite.*.max_cached_mb", "1"};
        QVERIFY(registry.set(std::span(&oneMiB, 1), "test").status.ok());
        const std::size_t cachePages =
            std::stoull(value(registry, "llite.lutra.max_cached_mb")) * (1 << 20) / core::kPageSize;
        auto file = client->open("grows", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto head = pattern(1000, 21); // the old end inside page 0
        QVERIFY((*file)->pwrite(head, 0).ok());
        QVERIFY((*file)->fsync().ok());
        auto filler = client->open("filler", kOpenWrite | kOpenCreate);
        QVERIFY(filler.ok());
        QVERIFY((*filler)->pwrite(pattern((cachePages - 1) * core::kPageSize, 22), 0).ok());
        QCOMPARE(std::stoull(value(registry, "llite.lutra.dirty_pages")), cachePages - 1);

        const auto tail = pattern(8000, 23); // page 0 (dirtied first), then pages 1 and 2
        QVERIFY((*file)->pwrite(tail, head.size()).ok());
        QVERIFY((*file)->close().ok());
        QVERIFY((*filler)->close().ok());
        auto reader = mount();
        auto check = reader->open("grows", kOpenRead);
        QVERIFY(check.ok());
        std::vector<std::byte> back(head.size() + tail.size());
        QCOMPARE(*(*check)->pread(back, 0), back.size());
        auto expected = head;
        expected.insert(expected.end(), tail.begin(), tail.end());
        const auto differ = std::mismatch(back.begin(), back.end(), expected.begin());
        QVERIFY2(differ.first == back.end(),
                 ("the bytes written past the old end were lost from byte " +
                  std::to_string(differ.first - back.begin()))
                     .c_str());
    }

    // A truncate from another thread while a write is between its pages (paused copying its
    // second page from the caller's buffer): the write must land wholly before the truncate,
    // not half (the first page written back and dropped by the truncate, the second after it).
    // The target's truncate revokes the client's lock, whose cancel waits for the writer to let
    // it go; the file's resize guard (ObjectState::resizeGuard) also keeps writes out of the
    // moment between the truncate's reply and its size update, which this test cannot reach.
    void aTruncateWaitsForAWriteHalfDone()
    {
        auto client = mount();
        auto file = client->open("torn", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto data = pattern(2 * core::kPageSize, 24);
        tools::PausedPage source{std::span(data).first(core::kPageSize), 2};
        QVERIFY2(source.error().empty(), source.error().c_str());
        QCOMPARE(source.pageSize(), core::kPageSize);
        auto write = std::async(std::launch::async,
                                [&] { return (*file)->pwrite(source.bytes(), 0).status(); });
        // Every path below supplies the page, so the writer always finishes (no hang on a failure).
        const bool paused = source.waitForReader(10000);
        std::future<Status> truncate;
        bool truncatedMidWrite = false;
        if (paused) {
            truncate = std::async(std::launch::async, [&] { return (*file)->truncate(0); });
            // A truncate that does not wait is done within this (a few local RPCs).
            truncatedMidWrite =
                truncate.wait_for(std::chrono::seconds(1)) == std::future_status::ready;
        }
        QVERIFY(source.supply(std::span(data).subspan(core::kPageSize)));
        QVERIFY2(paused, "the write never reached its second page");
        const Status wrote = write.get();
        const Status truncated = truncate.get();
        QVERIFY2(wrote.ok(), wrote.toString().c_str());
        QVERIFY2(truncated.ok(), truncated.toString().c_str());
        QVERIFY2(!truncatedMidWrite, "the truncate ran while the write was half done");
        // The write came first, so the truncate left nothing: here and for another client.
        std::vector<std::byte> back(data.size());
        QCOMPARE(*(*file)->pread(back, 0), std::size_t{0});
        QVERIFY((*file)->close().ok());
        auto reader = mount();
        auto check = reader->open("torn", kOpenRead);
        QVERIFY(check.ok());
        QCOMPARE(*(*check)->pread(back, 0), std::size_t{0});
    }

    void aSharedObjectOutlivesItsFirstOpener()
    {
        auto client = mount();
        auto first = client->open("twice", kOpenRead | kOpenWrite | kOpenCreate);
        auto second = client->open("twice", kOpenRead | kOpenWrite);
        QVERIFY(first.ok() && second.ok());
        QVERIFY((*first)->close().ok()); // the handle the engine first used goes away
        const auto data = pattern(300000, 9);
        auto wrote = (*second)->pwrite(data, 0);
        QVERIFY2(wrote.ok(), wrote.status().toString().c_str());
        QVERIFY((*second)->fsync().ok());
        std::vector<std::byte> back(data.size());
        QCOMPARE(*(*second)->pread(back, 0), data.size());
        QVERIFY(back == data);
    }

    // A write to a file opened read-only must fail at once, naming the file: accepted into the
    // page cache it would only fail at write-back, and the acknowledged data would be lost.
    void writesToAReadOnlyFileFailAndChangeNothing()
    {
        const auto original = pattern(200000, 10);
        {
            auto writer = mount();
            QVERIFY(writer);
            auto file = writer->open("ro", kOpenWrite | kOpenCreate);
            QVERIFY(file.ok());
            QVERIFY((*file)->pwrite(original, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto client = mount(&registry);
        QVERIFY(client);
        auto file = client->open("ro", kOpenRead);
        QVERIFY(file.ok());
        const auto other = pattern(5000, 11);
        const auto checkRefused = [](const Status &status, const char *operation) {
            QCOMPARE(status.code(), Errc::permission_denied);
            QVERIFY2(status.message().find(std::string(operation) + " ro") != std::string::npos,
                     status.message().c_str());
            QVERIFY2(status.message().find("read-only") != std::string::npos,
                     status.message().c_str());
        };
        auto wrote = (*file)->pwrite(other, 1000);
        QVERIFY(!wrote.ok());
        checkRefused(wrote.status(), "write");
        auto appended = (*file)->write(other);
        QVERIFY(!appended.ok());
        checkRefused(appended.status(), "write");
        checkRefused((*file)->truncate(10), "truncate");
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("0"));
        // The file position did not move: a read at it starts at the beginning.
        std::vector<std::byte> head(100);
        QCOMPARE(*(*file)->read(head), head.size());
        QVERIFY(std::equal(head.begin(), head.end(), original.begin()));
        QVERIFY((*file)->close().ok());

        auto fresh = mount();
        auto again = fresh->open("ro", kOpenRead);
        QVERIFY(again.ok());
        QCOMPARE((*again)->stat()->size, std::uint64_t(original.size()));
        std::vector<std::byte> back(original.size());
        QCOMPARE(*(*again)->pread(back, 0), original.size());
        QVERIFY(back == original);
    }

    // As O_WRONLY: a file opened only for writing refuses reads, cached or not, naming the file,
    // and its position does not move.
    void readsFromAWriteOnlyFileFail()
    {
        auto client = mount();
        QVERIFY(client);
        auto file = client->open("wo", kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto data = pattern(3 * 4096, 12);
        QVERIFY((*file)->pwrite(data, 0).ok()); // cached: the fast read would find it
        std::vector<std::byte> back(100);
        for (int attempt = 0; attempt < 2; ++attempt) { // the second would be a per-thread hit
            auto got = (*file)->pread(back, 0);
            QVERIFY(!got.ok());
            QCOMPARE(got.status().code(), Errc::permission_denied);
            QVERIFY2(got.status().message().find("read wo") != std::string::npos &&
                         got.status().message().find("write-only") != std::string::npos,
                     got.status().message().c_str());
        }
        QVERIFY(!(*file)->read(back).ok());
        // The position stayed at 0: a write at it lands at the beginning.
        const auto head = pattern(10, 13);
        QCOMPARE(*(*file)->write(head), head.size());
        QVERIFY((*file)->close().ok());
        auto again = client->open("wo", kOpenRead);
        QVERIFY(again.ok());
        std::vector<std::byte> first(10);
        QCOMPARE(*(*again)->pread(first, 0), first.size());
        QVERIFY(first == head);
    }

    // The engine writes a shared object back through one of its opens' handles: when a
    // read-only open came first, a writer's data must not go through that read-only handle.
    void aWriterAfterAReadOnlyOpenerWritesBack()
    {
        auto client = mount();
        QVERIFY(client);
        {
            auto create = client->open("mixed", kOpenWrite | kOpenCreate);
            QVERIFY(create.ok());
            QVERIFY((*create)->close().ok());
        }
        auto reader = client->open("mixed", kOpenRead);
        auto writer = client->open("mixed", kOpenRead | kOpenWrite);
        QVERIFY(reader.ok() && writer.ok());
        const auto data = pattern(300000, 12);
        QVERIFY((*writer)->pwrite(data, 0).ok());
        auto synced = (*writer)->fsync();
        QVERIFY2(synced.ok(), synced.toString().c_str());
        QVERIFY((*writer)->close().ok());
        // The writer gone, the reader's read-only handle is all that is left: nothing dirty.
        QVERIFY((*reader)->close().ok());

        auto fresh = mount();
        auto again = fresh->open("mixed", kOpenRead);
        QVERIFY(again.ok());
        std::vector<std::byte> back(data.size());
        QCOMPARE(*(*again)->pread(back, 0), data.size());
        QVERIFY(back == data);
    }

    // The next window is read ahead behind the reader's back: with the target stopped, a read
    // of cached data that starts the window returns at once (it would wait for the window's RPC
    // otherwise); a read that reaches a page still in flight waits for that page, which then
    // arrives once, from the window's RPC.
    void asyncReadaheadRunsBehindTheReader()
    {
        MountOptions one = m_options;
        one.targets = {m_targets[0]->uri()};
        one.rpcTimeout = std::chrono::seconds(20);
        const auto data = pattern(8 << 20, 10); // above max_read_ahead_whole_mb
        {
            auto writer = mountWith(one, nullptr);
            QVERIFY(writer);
            auto file = writer->open("ahead", kOpenWrite | kOpenCreate);
            QVERIFY(file.ok());
            QVERIFY((*file)->pwrite(data, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto reader = mountWith(one, &registry);
        QVERIFY(reader);
        auto file = reader->open("ahead", kOpenRead);
        QVERIFY(file.ok());
        const auto stat = [&](const char *name) {
            return counter(registry, "llite.lutra.read_ahead_stats", name);
        };
        std::vector<std::byte> page(4096);
        // Page 0: a miss; pages 1-4 read ahead with it (synchronous window), marker at page 1.
        QCOMPARE(*(*file)->pread(page, 0), page.size());
        QCOMPARE(stat("misses"), std::uint64_t(1));
        QCOMPARE(stat("readahead_pages"), std::uint64_t(4));
        QCOMPARE(stat("async_readahead"), std::uint64_t(0));

        testing::Frozen stopped(m_targets[0]->pid());
        QVERIFY(stopped.frozen());
        // Page 1 is the marker: the next window (pages 5-20) goes out, and the read, of a
        // cached page, does not wait for it.
        auto got = (*file)->pread(page, 4096);
        QVERIFY2(got.ok(), got.status().toString().c_str());
        QVERIFY(std::equal(page.begin(), page.end(), data.begin() + 4096));
        QCOMPARE(stat("async_readahead"), std::uint64_t(1));
        QCOMPARE(stat("readahead_pages"), std::uint64_t(20));

        // Page 5 is in flight: its reader waits for it (the target is stopped)...
        auto later = std::async(std::launch::async, [&] {
            std::vector<std::byte> back(4096);
            auto read = (*file)->pread(back, 5 * 4096);
            return read.ok() && *read == back.size() &&
                   std::equal(back.begin(), back.end(), data.begin() + 5 * 4096);
        });
        QVERIFY(later.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
        stopped.resume();
        // ...and gets it from the window's RPC: a hit, not a second fetch.
        QVERIFY(later.get());
        QCOMPARE(stat("misses"), std::uint64_t(1));
        std::vector<std::byte> rest(15 * 4096);
        QCOMPARE(*(*file)->pread(rest, 6 * 4096), rest.size());
        QVERIFY(std::equal(rest.begin(), rest.end(), data.begin() + 6 * 4096));
        QCOMPARE(stat("misses"), std::uint64_t(1));
        QVERIFY((*file)->close().ok());
    }

    // Readahead follows the file, not each stripe object: a reader taking every fourth
    // 47008-byte transfer (IOR-hard's) has a fixed stride in the file but none within an object
    // of 64 KiB stripes. Once the stride is trusted, every read finds its pages read ahead.
    void stridedReadsAcrossStripesAreReadAhead()
    {
        constexpr std::size_t kTransfer = 47008;
        constexpr std::size_t kStride = 4 * kTransfer;
        const auto data = pattern(8 << 20, 14);
        {
            auto writer = mount();
            auto file = writer->open("strided", kOpenWrite | kOpenCreate);
            QVERIFY((*file)->pwrite(data, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto reader = mount(&registry);
        auto file = reader->open("strided", kOpenRead);
        QVERIFY(file.ok());
        const auto stat = [&](const char *name) {
            return counter(registry, "llite.lutra.read_ahead_stats", name);
        };
        std::vector<std::byte> buffer(kTransfer);
        std::uint64_t missesWhenTrusted = 0;
        std::size_t reads = 0;
        for (std::uint64_t offset = kStride; offset + kTransfer <= data.size(); offset += kStride) {
            QCOMPARE(*(*file)->pread(buffer, offset), kTransfer);
            QVERIFY(std::equal(buffer.begin(), buffer.end(), data.begin() + offset));
            if (++reads == 4) {
                missesWhenTrusted = stat("misses"); // the 4th read trusts the stride
            }
        }
        QVERIFY(reads > 40);
        QVERIFY2(stat("misses") == missesWhenTrusted,
                 value(registry, "llite.lutra.read_ahead_stats").c_str());
        QCOMPARE(stat("read_but_discarded"), std::uint64_t(0));
        QVERIFY(stat("hits") > 40 * 11);
    }

    // Two ranks reading one file in turns (47008-byte transfers, rank r's k-th at
    // (2k + r) * 47008) on one client: a rank's windows read the other rank's chunks with its
    // own (one span, one RPC), but not those the other rank has read past — it will not read
    // them again. Under `pressure` those pages had been evicted after being read, and the
    // trailing rank's windows fetched them again (2 x 47008 B: ~19 RPCs a round, most of the
    // read_but_discarded).
    void aRanksWindowSkipsChunksTheOtherRankReadPast()
    {
        constexpr std::size_t kTransfer = 47008;
        constexpr std::size_t kChunks = 60; // rank 0's, 5.6 of the 8 MiB
        const auto data = pattern(8 << 20, 43);
        {
            auto writer = mount();
            auto file = writer->open("ranks", kOpenWrite | kOpenCreate);
            QVERIFY((*file)->pwrite(data, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto client = mount(&registry);
        auto rank1 = client->open("ranks", kOpenRead);
        QVERIFY(rank1.ok());
        const auto fetched = [&] {
            return counter(registry, "llite.lutra.read_ahead_stats", "readahead_pages") +
                   counter(registry, "llite.lutra.read_ahead_stats", "misses");
        };
        std::vector<std::byte> buffer(kTransfer);
        // Rank 0 reads its chunks: pages fetched for it (misses and readahead).
        const auto rank0Reads = [&]() -> std::uint64_t {
            auto rank0 = client->open("ranks", kOpenRead);
            if (!rank0.ok()) {
                return 0;
            }
            const std::uint64_t before = fetched();
            for (std::size_t k = 0; k < kChunks; ++k) {
                const std::uint64_t offset = 2 * k * kTransfer;
                auto got = (*rank0)->pread(buffer, offset);
                if (!got.ok() || *got != kTransfer ||
                    !std::equal(buffer.begin(), buffer.end(), data.begin() + offset)) {
                    return 0;
                }
            }
            const std::uint64_t pages = fetched() - before;
            return (*rank0)->close().ok() && client->flushJob("").ok() ? pages : 0;
        };
        // Rank 1 open but not read yet: rank 0's windows read its chunks too.
        const std::uint64_t withRank1Behind = rank0Reads();
        QVERIFY(withRank1Behind > 2 * kChunks * kTransfer / core::kPageSize);
        // Rank 1 reads all its chunks, then the cache is dropped; rank 0 reads again: rank 1's
        // chunks are not fetched, only rank 0's (12-13 pages of every 23) and pages they share.
        for (std::uint64_t offset = kTransfer; offset + kTransfer <= data.size();
             offset += 2 * kTransfer) {
            QCOMPARE(*(*rank1)->pread(buffer, offset), kTransfer);
        }
        QVERIFY(client->flushJob("").ok());
        const std::uint64_t withRank1Past = rank0Reads();
        QVERIFY(withRank1Past >= kChunks * kTransfer / core::kPageSize);
        QVERIFY2(
            withRank1Past * 10 < withRank1Behind * 6,
            (std::to_string(withRank1Past) + " pages against " + std::to_string(withRank1Behind))
                .c_str());
        QVERIFY((*rank1)->close().ok());
    }

    // Pages read ahead and dropped unread count as read_but_discarded.
    void unreadReadaheadDroppedIsDiscarded()
    {
        MountOptions one = m_options;
        one.targets = {m_targets[0]->uri()};
        const auto data = pattern(8 << 20, 15);
        {
            auto writer = mountWith(one, nullptr);
            auto file = writer->open("dropped", kOpenWrite | kOpenCreate);
            QVERIFY((*file)->pwrite(data, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        params::Registry registry;
        auto reader = mountWith(one, &registry);
        auto file = reader->open("dropped", kOpenRead);
        std::vector<std::byte> page(4096);
        QCOMPARE(*(*file)->pread(page, 0), page.size());        // pages 1-4 read ahead
        QCOMPARE(*(*file)->pread(page, 2 * 4096), page.size()); // one of them used
        QVERIFY(reader->flushJob("").ok());
        QCOMPARE(counter(registry, "llite.lutra.read_ahead_stats", "readahead_pages"),
                 std::uint64_t(4));
        QCOMPARE(counter(registry, "llite.lutra.read_ahead_stats", "read_but_discarded"),
                 std::uint64_t(3));
        QVERIFY((*file)->close().ok());
    }

    // A flush whose write-back fails (the target is stopped, the RPCs time out) keeps the data
    // and the lock and says so in the report; once the target is back the client writes the
    // data by itself (the aging tick retries kept locks).
    void failedWriteBackKeepsDataAndLock()
    {
        MountOptions one = m_options;
        one.targets = {m_targets[0]->uri()};
        one.rpcTimeout = std::chrono::milliseconds(500);
        params::Registry registry;
        auto client = mountWith(one, &registry);
        QVERIFY(client);
        auto file = client->open("kept", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto data = pattern(256 * 1024, 11);
        QVERIFY((*file)->pwrite(data, 0).ok());
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("64"));
        {
            testing::Frozen stopped(m_targets[0]->pid());
            QVERIFY(stopped.frozen());
            auto report = client->flushJob("");
            QVERIFY2(report.ok(), report.status().toString().c_str());
            QVERIFY(!report->errors.empty());
            QCOMPARE(report->bytesWrittenBack, std::uint64_t(0));
            QCOMPARE(report->locksCancelled, std::uint64_t(0));
            QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("64"));
            QCOMPARE(value(registry, "ldlm.namespaces.ost0.lock_count"), std::string("1"));
        }
        // No flush needed: the kept lock is tried again within a few aging ticks.
        QTRY_COMPARE_WITH_TIMEOUT(value(registry, "ldlm.namespaces.ost0.lock_count"),
                                  std::string("0"), 30000);
        QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("0"));
        auto report = client->flushJob("");
        QVERIFY2(report.ok(), report.status().toString().c_str());
        QVERIFY2(report->errors.empty(),
                 report->errors.empty() ? "" : report->errors.front().c_str());
        auto other = mountWith(one, nullptr);
        auto again = other->open("kept", kOpenRead);
        std::vector<std::byte> back(data.size());
        QCOMPARE(*(*again)->pread(back, 0), data.size());
        QVERIFY(back == data);
    }

    // A lock cancel that cannot write back must not let the lock go: another client would write
    // the object, and this client's stale dirty pages would later overwrite what it wrote.
    void failedCancelDoesNotLoseAnotherClientsWrite()
    {
        MountOptions one = m_options;
        one.targets = {m_targets[0]->uri()};
        one.rpcTimeout = std::chrono::milliseconds(500);
        params::Registry registry;
        auto a = mountWith(one, &registry);
        auto b = mountWith(one, nullptr);
        QVERIFY(a && b);
        auto fa = a->open("contended", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(fa.ok());
        const auto older = pattern(64 * 1024, 12);
        QVERIFY((*fa)->pwrite(older, 0).ok()); // dirty in A, under A's PW lock
        {
            testing::Frozen stopped(m_targets[0]->pid());
            QVERIFY(stopped.frozen());
            const params::Assignment clear{"ldlm.namespaces.ost0.lru_size", "clear"};
            (void)registry.set(std::span(&clear, 1), "test");
            QCOMPARE(value(registry, "llite.lutra.dirty_pages"), std::string("16"));
        }
        auto fb = b->open("contended", kOpenRead | kOpenWrite);
        QVERIFY(fb.ok());
        const auto newer = pattern(64 * 1024, 13);
        QVERIFY((*fb)->pwrite(newer, 0).ok()); // conflicts with A's lock, if A still has it
        QVERIFY((*fb)->fsync().ok());
        QVERIFY((*fa)->close().ok());
        QVERIFY((*fb)->close().ok());
        auto c = mountWith(one, nullptr);
        auto fc = c->open("contended", kOpenRead);
        std::vector<std::byte> back(newer.size());
        QCOMPARE(*(*fc)->pread(back, 0), back.size());
        QVERIFY2(back == newer, "B's acknowledged write was overwritten by A's stale pages");
    }

    void fastReadCanBeTurnedOff()
    {
        params::Registry registry;
        auto client = mount(&registry);
        auto file = client->open("fast", kOpenRead | kOpenWrite | kOpenCreate);
        const auto data = pattern(64 * 1024, 8);
        QVERIFY((*file)->pwrite(data, 0).ok());
        const params::Assignment off{"llite.lutra.fast_read", "off"};
        QVERIFY(registry.set(std::span(&off, 1), "test").status.ok());
        const auto before =
            counter(registry, "llite.lutra.read_ahead_stats", "failed_to_fast_read");
        std::vector<std::byte> back(data.size());
        QCOMPARE(*(*file)->pread(back, 0), data.size());
        QVERIFY(back == data);
        QVERIFY(counter(registry, "llite.lutra.read_ahead_stats", "failed_to_fast_read") > before);
    }

    // llite.<fs>.slow_reads counts the reads that missed a page, reached the readahead marker or
    // were an open's first, slow_read_us the time readers spent in them: a cold read moves them,
    // a cached read neither, nor a hit with fast_read off (timing those cost them ~20 %).
    void slowReadsAreCountedWithTheirTime()
    {
        params::Registry registry;
        auto client = mount(&registry);
        auto file = client->open("slow", kOpenRead | kOpenWrite | kOpenCreate);
        const auto data = pattern(64 * 1024, 9);
        QVERIFY((*file)->pwrite(data, 0).ok());
        QVERIFY((*file)->close().ok());
        const auto reads = [&] { return std::stoull(value(registry, "llite.lutra.slow_reads")); };
        const auto micros = [&] {
            return std::stoull(value(registry, "llite.lutra.slow_read_us"));
        };
        // Another client reads it cold: one slow read, timed (a cold 64 KiB read takes ≥ 1 µs).
        params::Registry otherRegistry;
        auto other = mount(&otherRegistry);
        auto cold = other->open("slow", kOpenRead);
        std::vector<std::byte> back(data.size());
        QCOMPARE(*(*cold)->pread(back, 0), data.size());
        QVERIFY(back == data);
        QCOMPARE(value(otherRegistry, "llite.lutra.slow_reads"), std::string("1"));
        QVERIFY(std::stoull(value(otherRegistry, "llite.lutra.slow_read_us")) >= 1);
        // Here the pages are cached: past an open's first three reads, hits are not counted,
        // with fast_read on or off.
        auto cached = client->open("slow", kOpenRead);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(*(*cached)->pread(back, 0), data.size());
        }
        const std::uint64_t before = reads();
        const std::uint64_t microsBefore = micros();
        for (int i = 0; i < 4; ++i) {
            QCOMPARE(*(*cached)->pread(back, 0), data.size());
        }
        const params::Assignment off{"llite.lutra.fast_read", "off"};
        QVERIFY(registry.set(std::span(&off, 1), "test").status.ok());
        QCOMPARE(*(*cached)->pread(back, 0), data.size());
        QVERIFY(back == data);
        QCOMPARE(reads(), before);
        QCOMPARE(micros(), microsBefore);
    }

    // The fast read keeps the thread's job and checks only its version: a job switch on the
    // thread (an override) or a jobid_var change counts the next fast read in the new job.
    void fastReadCountsTheJobOfTheMoment()
    {
        params::Registry registry;
        auto client = mount(&registry);
        QVERIFY(client);
        auto file = client->open("fast-jobs", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto data = pattern(64 * 1024, 31);
        QVERIFY((*file)->pwrite(data, 0).ok());
        Mount::setThreadJobId("job.fa");
        QCOMPARE(readByte(**file, 65000), data[65000]); // warms the context
        const auto failed = failedFastReads(registry);
        const auto before = jobReads(registry, "job.fa");
        QCOMPARE(readByte(**file, 100), data[100]);
        Mount::setThreadJobId("job.fb");
        QCOMPARE(readByte(**file, 200), data[200]);
        QCOMPARE(readByte(**file, 201), data[201]);
        Mount::setThreadJobId("job.fa");
        QCOMPARE(readByte(**file, 300), data[300]);
        Mount::setThreadJobId("");
        const params::Assignment disable{"jobid_var", "disable"};
        QVERIFY(registry.set(std::span(&disable, 1), "test").status.ok());
        QCOMPARE(readByte(**file, 400), data[400]);
        QCOMPARE(failedFastReads(registry), failed); // every read above was a fast one
        QCOMPARE(jobReads(registry, "job.fa"), before + 2);
        QCOMPARE(jobReads(registry, "job.fb"), std::uint64_t(2));
        QCOMPARE(jobReads(registry, "disabled"), std::uint64_t(1));
    }

    void fastReadSeesAnotherClientsWrite()
    {
        params::Registry registry;
        auto a = mount(&registry);
        auto b = mount();
        QVERIFY(a && b);
        auto fa = a->open("fast-cancel", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(fa.ok());
        const auto first = pattern(64 * 1024, 21);
        QVERIFY((*fa)->pwrite(first, 0).ok());
        QVERIFY((*fa)->fsync().ok());
        QCOMPARE(readByte(**fa, 65000), first[65000]); // warms the context
        const auto failed = failedFastReads(registry);
        QCOMPARE(readByte(**fa, 100), first[100]);
        QCOMPARE(failedFastReads(registry), failed); // served by the fast path
        // B's write takes a PW lock: A's lock is cancelled and its pages dropped.
        auto fb = b->open("fast-cancel", kOpenRead | kOpenWrite);
        QVERIFY(fb.ok());
        const std::byte changed = ~first[100];
        QVERIFY((*fb)->pwrite(std::span(&changed, 1), 100).ok());
        QVERIFY((*fb)->fsync().ok());
        QCOMPARE(readByte(**fa, 100), changed);
        const auto refilled = failedFastReads(registry);
        QCOMPARE(readByte(**fa, 101), first[101]);
        QCOMPARE(failedFastReads(registry), refilled); // fast again once the page is back
    }

    void fastReadAfterTruncate()
    {
        params::Registry registry;
        auto client = mount(&registry);
        auto file = client->open("fast-truncate", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(file.ok());
        const auto data = pattern(64 * 1024, 22);
        QVERIFY((*file)->pwrite(data, 0).ok());
        QCOMPARE(readByte(**file, 50000), data[50000]);
        const auto failed = failedFastReads(registry);
        QCOMPARE(readByte(**file, 50001), data[50001]);
        QCOMPARE(failedFastReads(registry), failed);
        QVERIFY((*file)->truncate(10000).ok());
        std::size_t got = 1;
        readByte(**file, 50000, &got);
        QCOMPARE(got, std::size_t(0)); // past the new end: no stale byte, no stale size
        // The page of the new end is cached again; the byte after the end is in it, but past
        // the size (a context still holding the old size would serve it).
        QCOMPARE(readByte(**file, 9999), data[9999]);
        readByte(**file, 10000, &got);
        QCOMPARE(got, std::size_t(0));
        // Grown again: the new bytes, and zeros where nothing was written since.
        const auto tail = pattern(1000, 23);
        QVERIFY((*file)->pwrite(tail, 60000).ok());
        QCOMPARE(readByte(**file, 60001), tail[1]);
        QCOMPARE(readByte(**file, 50000), std::byte{0});
    }

    void anotherClientsTruncateIsSeen()
    {
        // The target revokes every client's lock on a truncated object (Lustre's punch), and a
        // client whose lock was cancelled takes the targets' size at its next read: no zeros
        // past the new end, no stale size, and its own later writes still count.
        params::Registry registry;
        auto a = mount(&registry);
        auto b = mount();
        QVERIFY(a && b);
        auto fa = a->open("shrunk", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(fa.ok());
        const auto data = pattern(256 * 1024, 24); // 4 stripes on each target
        QVERIFY((*fa)->pwrite(data, 0).ok());      // dirty in A's cache, under A's locks
        QCOMPARE(readByte(**fa, 200000), data[200000]);
        auto fb = b->open("shrunk", kOpenRead | kOpenWrite);
        QVERIFY(fb.ok());
        QVERIFY((*fb)->truncate(100000).ok()); // A writes back first: its data is not lost
        std::size_t got = 1;
        readByte(**fa, 200000, &got);
        QCOMPARE(got, std::size_t(0)); // past the new end
        std::vector<std::byte> tail(100);
        auto read = (*fa)->pread(tail, 99950);
        QVERIFY2(read.ok(), read.status().toString().c_str());
        QCOMPARE(*read, std::size_t(50));
        QVERIFY(std::equal(tail.begin(), tail.begin() + 50, data.begin() + 99950));
        // A writes past the end again: its size is its own write's end, with a hole before.
        const auto more = pattern(10, 25);
        QVERIFY((*fa)->pwrite(more, 150000).ok());
        QCOMPARE(readByte(**fa, 120000), std::byte{0});
        QCOMPARE(readByte(**fa, 150005), more[5]);
        readByte(**fa, 150010, &got);
        QCOMPARE(got, std::size_t(0));
        // And B, whose lock the write revoked, sees A's new end.
        readByte(**fb, 150009, &got);
        QCOMPARE(got, std::size_t(1));
        readByte(**fb, 150010, &got);
        QCOMPARE(got, std::size_t(0));
    }

    // Two clients write the two ends of a page (IOR-hard's ranks on two nodes: a transfer that
    // is not a multiple of the page size shares its last page with the next rank's). The second
    // writer has not seen the first's size; its write in part of the page must keep the first
    // writer's bytes (read from the target), not zeros.
    void writesInPartOfAPageKeepAnotherClientsBytes()
    {
        auto a = mount();
        auto b = mount();
        QVERIFY(a && b);
        auto fa = a->open("shared-page", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(fa.ok());
        auto fb = b->open("shared-page", kOpenRead | kOpenWrite);
        QVERIFY(fb.ok());
        const auto first = pattern(5000, 26); // pages 0 and the start of 1
        QVERIFY((*fa)->pwrite(first, 0).ok());
        const auto second = pattern(5000, 27); // the rest of page 1 and page 2
        QVERIFY((*fb)->pwrite(second, 5000).ok());
        QVERIFY((*fb)->fsync().ok());
        // And A writes in part of a page B wrote whole, past the size A knows.
        const auto third = pattern(10, 28);
        QVERIFY((*fa)->pwrite(third, 9000).ok());
        QVERIFY((*fa)->fsync().ok());

        std::vector<std::byte> expected(first);
        expected.insert(expected.end(), second.begin(), second.end());
        std::copy(third.begin(), third.end(), expected.begin() + 9000);
        const std::string differs = freshClientReadsBack("shared-page", expected);
        QVERIFY2(differs.empty(), differs.c_str());
    }

    // IOR-hard across nodes: three clients, two ranks each, write one file in the interleaved
    // layout at once, in transfers that share pages (most page boundaries between two ranks'
    // transfers lie between two clients'), while the write locks move between the clients and a
    // reader on each client reads what it finds. Each byte is written once with a value of its
    // offset (never zero), so a read may see zero (not yet written) or that value, nothing else;
    // at the end a fresh client sees every value.
    void threeClientsWriteOneFileWhileEachReads()
    {
        constexpr unsigned kClients = 3;
        constexpr unsigned kWriters = kClients * 2;
        constexpr std::uint64_t kSegments = 16;
        constexpr std::size_t kTransfer = 5003;
        constexpr std::uint64_t kFileBytes = kSegments * kWriters * kTransfer;
        const auto valueAt = [](std::uint64_t offset) {
            return static_cast<std::byte>(((offset * 2654435761u) >> 13) | 1);
        };
        std::vector<std::unique_ptr<Mount>> clients;
        for (unsigned c = 0; c < kClients; ++c) {
            clients.push_back(mount());
            QVERIFY(clients.back());
        }
        {
            auto created = clients[0]->open("coherent", kOpenWrite | kOpenCreate);
            QVERIFY(created.ok());
            QVERIFY((*created)->close().ok());
        }
        std::atomic<unsigned> writing{kWriters};
        std::vector<std::future<std::string>> work;
        for (unsigned w = 0; w < kWriters; ++w) {
            work.push_back(std::async(std::launch::async, [&, w]() -> std::string {
                // Counted down however this writer ends: a failed one must not leave the
                // readers reading forever.
                struct Done {
                    std::atomic<unsigned> &writing;
                    ~Done() { writing.fetch_sub(1); }
                } done{writing};
                auto file = clients[w % kClients]->open("coherent", kOpenRead | kOpenWrite);
                if (!file) {
                    return file.status().toString();
                }
                std::vector<std::byte> bytes(kTransfer);
                for (std::uint64_t k = 0; k < kSegments; ++k) {
                    const std::uint64_t offset = (k * kWriters + w) * kTransfer;
                    for (std::size_t i = 0; i < kTransfer; ++i) {
                        bytes[i] = valueAt(offset + i);
                    }
                    if (auto wrote = (*file)->pwrite(bytes, offset); !wrote) {
                        return wrote.status().toString();
                    }
                }
                auto closed = (*file)->close();
                return closed.ok() ? std::string() : closed.toString();
            }));
        }
        for (unsigned c = 0; c < kClients; ++c) {
            work.push_back(std::async(std::launch::async, [&, c]() -> std::string {
                auto file = clients[c]->open("coherent", kOpenRead);
                if (!file) {
                    return file.status().toString();
                }
                std::vector<std::byte> back(3 * kTransfer);
                std::uint64_t x = 7 + c;
                while (writing.load() != 0) {
                    x = x * 6364136223846793005u + 1442695040888963407u;
                    const std::uint64_t offset = (x >> 20) % kFileBytes;
                    auto got = (*file)->pread(back, offset);
                    if (!got) {
                        return got.status().toString();
                    }
                    for (std::size_t i = 0; i < *got; ++i) {
                        if (back[i] != std::byte{0} && back[i] != valueAt(offset + i)) {
                            return "client " + std::to_string(c) + " read a wrong byte at " +
                                   std::to_string(offset + i);
                        }
                    }
                }
                auto closed = (*file)->close();
                return closed.ok() ? std::string() : closed.toString();
            }));
        }
        for (auto &done : work) {
            const std::string error = done.get();
            QVERIFY2(error.empty(), error.c_str());
        }

        std::vector<std::byte> expected(kFileBytes);
        for (std::uint64_t offset = 0; offset < kFileBytes; ++offset) {
            expected[offset] = valueAt(offset);
        }
        const std::string differs = freshClientReadsBack("coherent", expected);
        QVERIFY2(differs.empty(), differs.c_str());
    }

    // A client's own bytes, written back and dropped from its cache, under a write lock it
    // still caches after the file was closed: reopened and written in part, the page is read
    // back, not zero-filled (the new open's state starts from the open's size, not from a grant).
    void aWriteInPartOfAPageDroppedFromTheCacheKeepsItsBytes()
    {
        params::Registry registry;
        auto client = mount(&registry);
        QVERIFY(client);
        const params::Assignment oneMiB{"llite.*.max_cached_mb", "1"};
        QVERIFY(registry.set(std::span(&oneMiB, 1), "test").status.ok());
        const auto before = pattern(8192, 29);
        {
            auto file = client->open("dropped", kOpenRead | kOpenWrite | kOpenCreate);
            QVERIFY(file.ok());
            QVERIFY((*file)->pwrite(before, 0).ok());
            QVERIFY((*file)->close().ok());
        }
        // Another file's pages push the written-back ones out of the 1 MiB cache.
        {
            auto filler = client->open("dropped-filler", kOpenRead | kOpenWrite | kOpenCreate);
            QVERIFY(filler.ok());
            const auto bytes = pattern(2 << 20, 30);
            QVERIFY((*filler)->pwrite(bytes, 0).ok());
            QVERIFY((*filler)->close().ok());
        }
        // Both files' write locks stay cached: the reopened file writes under its old one.
        QCOMPARE(value(registry, "ldlm.namespaces.ost0.lock_count"), std::string("2"));
        auto file = client->open("dropped", kOpenRead | kOpenWrite);
        QVERIFY(file.ok());
        const auto patch = pattern(10, 31);
        QVERIFY((*file)->pwrite(patch, 100).ok());
        QVERIFY((*file)->close().ok());

        std::vector<std::byte> expected(before);
        std::copy(patch.begin(), patch.end(), expected.begin() + 100);
        const std::string differs = freshClientReadsBack("dropped", expected);
        QVERIFY2(differs.empty(), differs.c_str());
    }

    // Ranks of one file on one client that the scheduler runs apart by more than the cache
    // holds evict the pages between them before the trailing ones read them, which then fetch
    // them again. A read a third of the cache ahead of the file's slowest reader waits for it.
    void aReaderFarAheadWaitsForTheFilesTrailingReader()
    {
        // A 1 MiB cache: a reader more than 85 pages (and a page per open) ahead waits.
        TwoReaders readers;
        const std::string failed = twoReaders(readers, "trailing", 40, "1", "60000");
        QVERIFY2(failed.empty(), failed.c_str());
        const std::uint64_t far = 3 << 20;
        auto leader = std::async(std::launch::async, [&] { return readers.leaderReadsPage(far); });
        QTRY_COMPARE_WITH_TIMEOUT(readers.waits(), std::string("1"), 20000);
        // It waits for the trailing reader, which has not moved.
        QCOMPARE(leader.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
        // The trailing reader comes within reach: the leader goes on.
        std::vector<std::byte> page(core::kPageSize);
        QCOMPARE(*readers.trailing->pread(page, far - 200 * 1024), page.size());
        QCOMPARE(leader.wait_for(std::chrono::seconds(20)), std::future_status::ready);
        QVERIFY(leader.get());
        QCOMPARE(readers.waits(), std::string("1"));
        QCOMPARE(readers.timeouts(), std::string("0"));
    }

    // A trailing reader that does not come (idle, or another stream of the file at its own pace)
    // is waited for until trailing_reader_wait_ms runs out; after four such waits in a row the
    // open waits for nobody again.
    void aTrailingReaderThatDoesNotComeIsWaitedForFourTimes()
    {
        TwoReaders readers;
        const std::string failed = twoReaders(readers, "idle-trailing", 41, "1", "50");
        QVERIFY2(failed.empty(), failed.c_str());
        // Uneven steps, no stride: nothing is read ahead, so each read misses.
        std::uint64_t k = 0;
        for (const std::uint64_t pageIndex : {576u, 666u, 717u, 845u, 896u}) {
            ++k;
            QVERIFY(readers.leaderReadsPage(pageIndex * core::kPageSize));
            const std::string waited = std::to_string(std::min<std::uint64_t>(k, 4));
            QCOMPARE(readers.waits(), waited);
            QCOMPARE(readers.timeouts(), waited);
        }
        // Switched off, a new open waits for nobody.
        const params::Assignment off{"llite.*.trailing_reader_wait_ms", "0"};
        QVERIFY(readers.registry.set(std::span(&off, 1), "test").status.ok());
        auto another = readers.client->open("idle-trailing", kOpenRead);
        QVERIFY(another.ok());
        readers.leading = std::move(another).value();
        QVERIFY(readers.leaderReadsPage(2u << 20));
        QCOMPARE(readers.waits(), std::string("4"));
    }

    // With room in the cache for what lies between them, readers of a file do not wait.
    void readersOfAFileWithRoomInTheCacheDoNotWait()
    {
        // 64 MiB: the 3 MiB between the readers is far less than a third.
        TwoReaders readers;
        const std::string failed = twoReaders(readers, "roomy", 42, "64", "60000");
        QVERIFY2(failed.empty(), failed.c_str());
        QVERIFY(readers.leaderReadsPage(3 << 20));
        QCOMPARE(readers.waits(), std::string("0"));

        // Nor do reads of 16 pages or more, with a cache that does not hold the distance: their
        // chunks share few pages with other ranks' (the trailing reader loses little).
        const params::Assignment small{"llite.*.max_cached_mb", "1"};
        QVERIFY(readers.registry.set(std::span(&small, 1), "test").status.ok());
        std::vector<std::byte> chunk(16 * core::kPageSize);
        QCOMPARE(*readers.leading->pread(chunk, 2 << 20), chunk.size());
        QVERIFY(std::equal(chunk.begin(), chunk.end(), readers.bytes.begin() + (2 << 20)));
        QCOMPARE(readers.waits(), std::string("0"));
    }

    void fastReadSeesAnotherClientsAppend()
    {
        params::Registry registry;
        auto a = mount(&registry);
        auto b = mount();
        QVERIFY(a && b);
        auto fa = a->open("fast-append", kOpenRead | kOpenWrite | kOpenCreate);
        QVERIFY(fa.ok());
        const auto first = pattern(8192, 24);
        QVERIFY((*fa)->pwrite(first, 0).ok());
        QVERIFY((*fa)->fsync().ok());
        QCOMPARE(readByte(**fa, 8191), first[8191]);
        std::size_t got = 1;
        readByte(**fa, 8192, &got);
        QCOMPARE(got, std::size_t(0)); // the end, as A knows it
        auto fb = b->open("fast-append", kOpenRead | kOpenWrite);
        QVERIFY(fb.ok());
        const auto more = pattern(4096, 25);
        QVERIFY((*fb)->pwrite(more, 8192).ok());
        QVERIFY((*fb)->fsync().ok());
        QCOMPARE(readByte(**fa, 9000, &got), more[9000 - 8192]);
        QCOMPARE(got, std::size_t(1));
        const auto failed = failedFastReads(registry);
        QCOMPARE(readByte(**fa, 9001), more[9001 - 8192]);
        QCOMPARE(failedFastReads(registry), failed); // the new size is the context's now
        QCOMPARE(readByte(**fa, 100), first[100]);
    }
};

QTEST_GUILESS_MAIN(TestClientIo)
#include "test_client_io.moc"
