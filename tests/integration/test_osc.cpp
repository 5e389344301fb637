// The osc bulk RPC engine against lutra-target as a real process, over the real tcp plugin:
// 64 MiB written and read back through many asynchronous, checksummed submissions, the
// max_rpcs_in_flight and max_pages_per_rpc tunables changed through the registry and seen in
// rpc_stats, an error reply reaching its completion, and the target killed mid-stream.
#include "client/osc.h"
#include "client/rpc_session.h"
#include "core/params/registry.h"
#include "frozen_process.h"
#include "protocol/codec.h"
#include "target_process.h"
#include "transport/loader.h"

#include <QTest>

#include <array>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

using namespace lutra;
using namespace std::chrono_literals;
using client::Osc;
using client::OscRpcStats;
using client::PageRun;
using client::RpcSession;
using tools::TargetProcess;
using tools::TempDir;

namespace {

constexpr std::size_t kPage = 4096;

transport::Deadline soon()
{
    return transport::deadlineIn(30s);
}

std::vector<std::byte> pattern(std::size_t size, unsigned seed)
{
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) {
        bytes[i] = static_cast<std::byte>(((i >> 12) * 31 + i * 7 + seed * 13) & 0xff);
    }
    return bytes;
}

template <typename Predicate> bool eventually(Predicate predicate, std::chrono::milliseconds limit)
{
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (predicate()) {
            return true;
        }
        std::this_thread::sleep_for(5ms);
    }
    return predicate();
}

// Counts completions and remembers the first failure; what the tests wait on.
struct Tally {
    std::atomic<std::uint32_t> done{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint32_t> failed{0};
    std::atomic<std::uint32_t> unavailable{0};
    std::mutex mutex;
    Status firstError;

    client::OscCompletion completion()
    {
        return [this](const Status &status, std::uint32_t moved) {
            if (!status.ok()) {
                failed.fetch_add(1);
                if (status.code() == Errc::unavailable) {
                    unavailable.fetch_add(1);
                }
                std::lock_guard lock(mutex);
                if (firstError.ok()) {
                    firstError = status;
                }
            }
            bytes.fetch_add(moved);
            done.fetch_add(1);
        };
    }
    bool waitFor(std::uint32_t count) const
    {
        return eventually([&] { return done.load() >= count; }, 60s);
    }
};

// One raw connection to the target: sends a message, waits for the one reply.
class RawPeer final : public transport::Handler {
public:
    // The Connect exchange; the error reply's Errc and message as a Status.
    Status connect(transport::Connection &connection, const protocol::ConnectRequest &request)
    {
        std::array<std::byte, 1024> buffer{};
        // Connect is framed as version 1.
        auto size = protocol::encode(
            protocol::Message{++m_xid, "osc-test", request, protocol::kMinVersion}, buffer);
        if (!size) {
            return size.status();
        }
        {
            std::lock_guard lock(m_mutex);
            m_reply.clear();
        }
        if (Status sent = connection.send(std::span(buffer).first(*size), soon()); !sent) {
            return sent;
        }
        std::unique_lock lock(m_mutex);
        if (!m_changed.wait_for(lock, 30s, [&] { return !m_reply.empty() || m_gone; })) {
            return {Errc::timeout, "no Connect reply"};
        }
        auto reply = protocol::decode(m_reply);
        if (!reply) {
            return reply.status();
        }
        if (const auto *error = std::get_if<protocol::ErrorReply>(&reply->body)) {
            return {error->code, std::string(error->message)};
        }
        return {};
    }
    bool waitGone()
    {
        std::unique_lock lock(m_mutex);
        return m_changed.wait_for(lock, 30s, [&] { return m_gone; });
    }

private:
    void onMessage(transport::Connection &, std::span<const std::byte> message) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_reply.assign(message.begin(), message.end());
        m_changed.notify_all();
    }
    void onDisconnected(transport::Connection &, const Status &) noexcept override
    {
        std::lock_guard lock(m_mutex);
        m_gone = true;
        m_changed.notify_all();
    }

    std::mutex m_mutex;
    std::condition_variable m_changed;
    std::vector<std::byte> m_reply;
    bool m_gone = false;
    std::uint64_t m_xid = 0;
};

} // namespace

class TestOsc : public QObject {
    Q_OBJECT

    std::optional<TempDir> m_dir;
    std::unique_ptr<TargetProcess> m_target;
    std::unique_ptr<transport::PluginLoader> m_loader;
    std::unique_ptr<transport::Transport> m_transport;
    std::unique_ptr<RpcSession> m_session;
    std::unique_ptr<params::Registry> m_registry;
    std::unique_ptr<params::ParamGroup> m_group;
    std::unique_ptr<Osc> m_osc;

    std::uint64_t create(std::string_view path)
    {
        protocol::CreateRequest request;
        request.path = path;
        auto reply = m_session->call(request, "osc-test", soon());
        if (!reply) {
            qWarning("create: %s", reply.status().toString().c_str());
            return 0;
        }
        return reply->handle;
    }

    Status set(std::string_view name, std::string_view value)
    {
        const std::array batch{params::Assignment{std::string(name), std::string(value)}};
        return m_registry->set(batch, "test").status;
    }

    std::string get(std::string_view name)
    {
        auto readings = m_registry->get(name);
        return readings.ok() && !readings->empty() ? readings->front().value : std::string();
    }

    // Submits `run` from/into `buffer` (which starts at the run's first page) in pieces of at
    // most `pieces` pages; returns how many submissions were accepted.
    std::uint32_t submitRun(bool write, std::uint64_t handle, const PageRun &run,
                            std::uint32_t pieces, std::span<std::byte> buffer,
                            std::vector<transport::Segment> &segments, Tally &tally)
    {
        segments.clear();
        segments.reserve(run.pageCount / pieces + 1); // stable: the Osc keeps pointers to them
        std::uint32_t accepted = 0;
        client::forEachRpc(run, pieces, [&](const PageRun &piece, std::uint64_t offset) {
            const std::size_t bytes = (piece.pageCount - 1) * kPage + piece.lastPageBytes;
            segments.push_back({buffer.data() + offset, bytes, 0});
            const std::span<const transport::Segment> one(&segments.back(), 1);
            const Status status =
                write ? m_osc->submitWrite(handle, piece.firstPage, piece.pageCount,
                                           piece.lastPageBytes, one, "osc-test", tally.completion())
                      : m_osc->submitRead(handle, piece.firstPage, piece.pageCount,
                                          piece.lastPageBytes, one, "osc-test", tally.completion());
            if (status.ok()) {
                ++accepted;
            } else {
                qWarning("submit: %s", status.toString().c_str());
            }
        });
        return accepted;
    }

private slots:
    void init()
    {
        auto dir = TempDir::create("lutra-osc");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        const std::string root = m_dir->path() + "/objects";
        std::filesystem::create_directories(root);
        m_loader = std::make_unique<transport::PluginLoader>();
        auto created = m_loader->create("tcp", {});
        QVERIFY2(created.ok(), created.status().toString().c_str());
        m_transport = std::move(created).value();

        TargetProcess::Options options;
        options.binary = LUTRA_TARGET_BIN;
        options.root = root;
        auto process = TargetProcess::spawn(options);
        QVERIFY2(process.ok(), process.status().toString().c_str());
        m_target = std::move(process).value();

        RpcSession::Options sessionOptions;
        sessionOptions.clientId = "osc-test";
        auto session = RpcSession::connect(*m_transport, m_target->uri(), sessionOptions);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        m_session = std::move(session).value();

        m_registry = std::make_unique<params::Registry>();
        m_group = std::make_unique<params::ParamGroup>(*m_registry);
        auto osc = Osc::create(*m_session, *m_group, {});
        QVERIFY2(osc.ok(), osc.status().toString().c_str());
        m_osc = std::move(osc).value();
    }

    void cleanup()
    {
        m_group.reset(); // its bindings point into the Osc
        m_osc.reset();
        m_registry.reset();
        m_session.reset();
        m_target.reset();
        m_transport.reset();
        m_loader.reset();
        m_dir.reset();
    }

    void publishesTunables()
    {
        QCOMPARE(m_osc->target(), std::string("ost0"));
        QCOMPARE(get("osc.ost0.max_rpcs_in_flight"), std::string("8"));
        QCOMPARE(get("osc.ost0.checksums"), std::string("1"));
        QCOMPARE(get("osc.ost0.checksum_type"), std::string("crc32c"));
        QCOMPARE(get("osc.ost0.max_dirty_mb"), std::string("512"));
        const auto limit = m_session->negotiated().maxBulkBytes / kPage;
        QCOMPARE(get("osc.ost0.max_pages_per_rpc"),
                 std::to_string(std::min<std::size_t>(1024, limit)));
        // The negotiated bulk size is the ceiling.
        QCOMPARE(set("osc.ost0.max_pages_per_rpc", std::to_string(limit + 1)).code(),
                 Errc::out_of_range);
        QVERIFY(set("osc.ost0.max_dirty_mb", "1024").ok());
        QCOMPARE(m_osc->maxDirtyMb().load(), std::uint64_t(1024));
        QVERIFY(m_osc->checksumsEffective());
        QVERIFY(get("osc.ost0.rpc_stats").starts_with("snapshot_time:"));
    }

    void writeThenReadBack64MiB()
    {
        constexpr std::size_t kBytes = 64u << 20;
        const std::uint64_t handle = create("big");
        QVERIFY(handle != 0);
        auto source = pattern(kBytes, 1);
        const PageRun run{0, kBytes / kPage, kPage};

        Tally written;
        std::vector<transport::Segment> writeSegments;
        const std::uint32_t writes =
            submitRun(true, handle, run, 128, source, writeSegments, written);
        QCOMPARE(writes, std::uint32_t(kBytes / kPage / 128));
        QVERIFY(written.waitFor(writes));
        QVERIFY2(written.failed.load() == 0, written.firstError.toString().c_str());
        QCOMPARE(written.bytes.load(), std::uint64_t(kBytes));

        std::vector<std::byte> back(kBytes);
        Tally read;
        std::vector<transport::Segment> readSegments;
        // Reads in pieces that do not divide the run: 163 of 100 pages and one of 84.
        const PageRun readRun{0, kBytes / kPage, kPage};
        const std::uint32_t reads =
            submitRun(false, handle, readRun, 100, back, readSegments, read);
        QVERIFY(read.waitFor(reads));
        QVERIFY2(read.failed.load() == 0, read.firstError.toString().c_str());
        QCOMPARE(read.bytes.load(), std::uint64_t(kBytes));
        QVERIFY(back == source);
        QVERIFY(m_osc->waitIdle(soon()));

        const auto histograms = m_osc->rpcStats().histograms();
        QCOMPARE(histograms.pagesPerRpc[OscRpcStats::write][7], std::uint64_t(writes));
        // 100 and 84 pages both fall in Lustre's 128 bucket.
        QCOMPARE(histograms.pagesPerRpc[OscRpcStats::read][7], std::uint64_t(reads));
        QCOMPARE(m_osc->rpcStats().inFlight(OscRpcStats::read), std::int64_t(0));
        QCOMPARE(m_osc->rpcStats().pendingPages(OscRpcStats::write), std::int64_t(0));

        // A short last page at the end of the object.
        std::array<std::byte, kPage> tail{};
        const transport::Segment tailSegment{tail.data(), tail.size(), 0};
        Tally shortRead;
        QVERIFY(m_osc
                    ->submitRead(handle, kBytes / kPage - 1, 1, 100, {&tailSegment, 1}, "osc-test",
                                 shortRead.completion())
                    .ok());
        QVERIFY(shortRead.waitFor(1));
        QCOMPARE(shortRead.bytes.load(), std::uint64_t(100));
        QVERIFY(std::equal(tail.begin(), tail.begin() + 100, source.end() - kPage));
    }

    void maxRpcsInFlightHonoured()
    {
        QVERIFY(set("osc.ost0.max_rpcs_in_flight", "2").ok());
        QCOMPARE(m_osc->maxRpcsInFlight(), std::uint32_t(2));
        QVERIFY(set("osc.ost0.rpc_stats", "clear").ok());
        QVERIFY(set("osc.ost0.stats", "clear").ok());
        const std::uint64_t handle = create("limit");
        QVERIFY(handle != 0);
        auto buffer = pattern(16u << 20, 2);
        Tally written;
        std::vector<transport::Segment> segments;
        const PageRun run{0, static_cast<std::uint32_t>(buffer.size() / kPage), kPage};
        const std::uint32_t writes = submitRun(true, handle, run, 16, buffer, segments, written);
        QCOMPARE(writes, std::uint32_t(256));
        Tally read;
        std::vector<std::byte> back(buffer.size());
        std::vector<transport::Segment> readSegments;
        QVERIFY(written.waitFor(writes));
        const std::uint32_t reads = submitRun(false, handle, run, 16, back, readSegments, read);
        QVERIFY(read.waitFor(reads));
        QCOMPARE(written.failed.load() + read.failed.load(), std::uint32_t(0));
        QVERIFY(back == buffer);

        const auto histograms = m_osc->rpcStats().histograms();
        std::uint64_t total = 0;
        for (std::size_t d = 0; d < 2; ++d) {
            for (std::size_t i = 0; i < OscRpcStats::kBuckets; ++i) {
                if (i > 2) {
                    QCOMPARE(histograms.rpcsInFlight[d][i], std::uint64_t(0));
                }
                total += histograms.rpcsInFlight[d][i];
            }
        }
        QCOMPARE(total, std::uint64_t(writes + reads));
        // With 256 queued at once, the second slot was used.
        QVERIFY(histograms.rpcsInFlight[OscRpcStats::write][2] > 0);
        // The text table stops at the 2 row.
        const std::string text = get("osc.ost0.rpc_stats");
        QVERIFY(text.find("\n2:\t\t") != std::string::npos);
        const auto inFlightTable = text.find("rpcs in flight");
        QVERIFY(inFlightTable != std::string::npos);
        QVERIFY(text.find("\n3:\t\t", inFlightTable) == std::string::npos);

        // osc.ost0.stats: every RPC's time from send to reply, by opcode, as Lustre's osc stats.
        const auto times = m_osc->rpcTimes().snapshot();
        QCOMPARE(times.counters.size(), std::size_t(3));
        const auto &all = times.counters[Osc::req_waittime];
        const auto &reading = times.counters[Osc::ost_read];
        const auto &writing = times.counters[Osc::ost_write];
        QCOMPARE(reading.samples, std::uint64_t(reads));
        QCOMPARE(writing.samples, std::uint64_t(writes));
        QCOMPARE(all.samples, std::uint64_t(reads + writes));
        QCOMPARE(all.sum, reading.sum + writing.sum);
        QVERIFY(reading.min >= 0 && reading.max >= reading.min && reading.sum >= reading.max);
        QVERIFY(all.max == std::max(reading.max, writing.max));
        const std::string timesText = get("osc.ost0.stats");
        QVERIFY2(timesText.find("ost_read") != std::string::npos &&
                     timesText.find(std::to_string(reads) + " samples [usec]") != std::string::npos,
                 timesText.c_str());
    }

    void maxPagesPerRpcChangedLive()
    {
        const std::uint64_t handle = create("sizes");
        QVERIFY(handle != 0);
        auto buffer = pattern(4u << 20, 3);
        const PageRun run{0, static_cast<std::uint32_t>(buffer.size() / kPage), kPage};
        for (const std::uint32_t pages : {64u, 16u, 256u}) {
            QVERIFY(set("osc.ost0.max_pages_per_rpc", std::to_string(pages)).ok());
            QVERIFY(set("osc.ost0.rpc_stats", "clear").ok());
            QCOMPARE(m_osc->maxPagesPerRpc(), pages);
            Tally written;
            std::vector<transport::Segment> segments;
            const std::uint32_t writes =
                submitRun(true, handle, run, m_osc->maxPagesPerRpc(), buffer, segments, written);
            QCOMPARE(writes, run.pageCount / pages);
            QVERIFY(written.waitFor(writes));
            QCOMPARE(written.failed.load(), std::uint32_t(0));
            // Every write RPC landed in the bucket of `pages`, shown as in Lustre.
            const std::string text = get("osc.ost0.rpc_stats");
            char row[96];
            std::snprintf(row, sizeof(row), "\n%u:\t\t         0   0   0   | %10u 100 100\n", pages,
                          writes);
            QVERIFY2(text.find(row) != std::string::npos, text.c_str());
        }
        // Larger than the limit is the caller's bug, reported at once; the completion never runs.
        QVERIFY(set("osc.ost0.max_pages_per_rpc", "16").ok());
        bool ran = false;
        const transport::Segment segment{buffer.data(), buffer.size(), 0};
        const Status tooBig =
            m_osc->submitWrite(handle, 0, 17, kPage, {&segment, 1}, "osc-test",
                               [&ran](const Status &, std::uint32_t) { ran = true; });
        QCOMPARE(tooBig.code(), Errc::out_of_range);
        QVERIFY(tooBig.message().find("max_pages_per_rpc=16") != std::string::npos);
        QVERIFY(m_osc->waitIdle(soon()));
        QVERIFY(!ran);
    }

    void errorReplyReachesCompletion()
    {
        std::vector<std::byte> buffer(16 * kPage);
        const transport::Segment segment{buffer.data(), buffer.size(), 0};
        Tally read;
        QVERIFY(
            m_osc->submitRead(987654321, 0, 16, kPage, {&segment, 1}, "osc-test", read.completion())
                .ok());
        QVERIFY(read.waitFor(1));
        QCOMPARE(read.failed.load(), std::uint32_t(1));
        std::lock_guard lock(read.mutex);
        QCOMPARE(read.firstError.code(), Errc::not_found);
        QVERIFY2(read.firstError.message().find("987654321") != std::string::npos,
                 read.firstError.message().c_str());
        QCOMPARE(read.bytes.load(), std::uint64_t(0));
        // The session is still good: the next RPC succeeds.
        const std::uint64_t handle = create("after-error");
        Tally written;
        QVERIFY(
            m_osc
                ->submitWrite(handle, 0, 16, kPage, {&segment, 1}, "osc-test", written.completion())
                .ok());
        QVERIFY(written.waitFor(1));
        QCOMPARE(written.failed.load(), std::uint32_t(0));
    }

    void targetKilledFailsOutstanding()
    {
        // One RPC at a time, and the target frozen (SIGSTOP) before anything is sent: the
        // first write stays in flight unanswered, everything behind it stays queued, and the
        // kill fails them all. No thread waits for the RPC in flight meanwhile. Deterministic.
        QVERIFY(set("osc.ost0.max_rpcs_in_flight", "1").ok());
        const std::uint64_t handle = create("killed");
        QVERIFY(handle != 0);
        auto buffer = pattern(4u << 20, 4);
        Tally tally;
        const transport::Segment segment{buffer.data(), 64 * kPage, 0};
        QVERIFY(testing::freeze(m_target->pid()));
        constexpr std::uint32_t kQueued = 101;
        for (std::uint32_t i = 0; i < kQueued; ++i) {
            QVERIFY(m_osc
                        ->submitWrite(handle, i % 16 * 64, 64, kPage, {&segment, 1}, "osc-test",
                                      tally.completion())
                        .ok());
        }
        QCOMPARE(m_osc->rpcStats().inFlight(OscRpcStats::write), std::int64_t(1));
        QCOMPARE(m_osc->rpcStats().pendingPages(OscRpcStats::write),
                 std::int64_t{(kQueued - 1) * 64});
        QCOMPARE(tally.done.load(), std::uint32_t(0));
        auto killed = m_target->stop(SIGKILL);
        QVERIFY(killed.ok());
        QVERIFY(eventually([&] { return !m_session->connected(); }, 30s));

        QVERIFY(tally.waitFor(kQueued));
        QVERIFY(m_osc->waitIdle(soon()));
        QCOMPARE(tally.done.load(), kQueued);
        QCOMPARE(tally.unavailable.load(), kQueued);
        QCOMPARE(m_osc->rpcStats().pendingPages(OscRpcStats::write), std::int64_t(0));
        // Later submissions are refused at once.
        const Status after = m_osc->submitRead(handle, 0, 1, kPage, {&segment, 1}, "osc-test",
                                               [](const Status &, std::uint32_t) {});
        QCOMPARE(after.code(), Errc::unavailable);
    }

    // Send::afterInFlight (readahead nobody waits for yet): sent at once when nothing is in
    // flight to the target; behind an RPC in flight it stays queued (max_rpcs_in_flight has
    // room) until that RPC's completion sends it, and then it completes too. Deterministic:
    // the target is frozen while the first RPC is out.
    void readaheadWaitsForTheCompletionInFlight()
    {
        const std::uint64_t handle = create("later");
        QVERIFY(handle != 0);
        auto data = pattern(64 * kPage, 9);
        const transport::Segment source{data.data(), data.size(), 0};
        Tally written;
        QVERIFY(
            m_osc->submitWrite(handle, 0, 64, kPage, {&source, 1}, "osc-test", written.completion())
                .ok());
        QVERIFY(written.waitFor(1));
        QVERIFY(written.firstError.ok());

        std::vector<std::byte> back(64 * kPage);
        const transport::Segment into{back.data(), back.size(), 0};
        Tally alone;
        QVERIFY(m_osc
                    ->submitRead(handle, 0, 64, kPage, {&into, 1}, "osc-test", alone.completion(),
                                 transport::Deadline::max(), transport::Deadline::max(),
                                 Osc::Send::afterInFlight)
                    .ok());
        QVERIFY2(alone.waitFor(1), "nothing in flight: sent at once");
        QVERIFY(back == data);

        QVERIFY(testing::freeze(m_target->pid()));
        Tally first;
        Tally behind;
        QVERIFY(m_osc->submitRead(handle, 0, 32, kPage, {&into, 1}, "osc-test", first.completion())
                    .ok());
        const transport::Segment upper{back.data() + 32 * kPage, 32 * kPage, 0};
        QVERIFY(m_osc
                    ->submitRead(handle, 32, 32, kPage, {&upper, 1}, "osc-test",
                                 behind.completion(), transport::Deadline::max(),
                                 transport::Deadline::max(), Osc::Send::afterInFlight)
                    .ok());
        QCOMPARE(m_osc->rpcStats().inFlight(OscRpcStats::read), std::int64_t(1));
        QCOMPARE(m_osc->rpcStats().pendingPages(OscRpcStats::read), std::int64_t(32));
        QCOMPARE(::kill(m_target->pid(), SIGCONT), 0);
        QVERIFY(first.waitFor(1));
        QVERIFY2(behind.waitFor(1), "the completion in flight sent the one behind it");
        QVERIFY(first.firstError.ok() && behind.firstError.ok());
        QVERIFY(back == data);
        QVERIFY(m_osc->waitIdle(soon()));
        QCOMPARE(m_osc->rpcStats().pendingPages(OscRpcStats::read), std::int64_t(0));
    }

    void callerDeadlineEndsQueuedAndSentRpcs()
    {
        // A caller with a deadline (a job's flush) must not wait for rpc_timeout (60 s here):
        // with the target frozen, the RPC in flight times out at the caller's deadline and the
        // ones queued behind it fail unsent.
        QVERIFY(set("osc.ost0.max_rpcs_in_flight", "1").ok());
        const std::uint64_t handle = create("deadline");
        QVERIFY(handle != 0);
        auto buffer = pattern(64 * kPage, 6);
        const transport::Segment segment{buffer.data(), buffer.size(), 0};
        std::atomic<std::uint32_t> timedOut{0};
        std::atomic<std::uint32_t> unsent{0};
        std::atomic<std::uint32_t> done{0};
        const auto completion = [&](const Status &status, std::uint32_t) {
            if (status.code() == Errc::timeout) {
                timedOut.fetch_add(1);
                if (status.message().find("deadline passed while the RPC was queued") !=
                    std::string::npos) {
                    unsent.fetch_add(1);
                }
            }
            done.fetch_add(1);
        };
        QVERIFY(testing::freeze(m_target->pid()));
        const transport::Deadline deadline = transport::deadlineIn(300ms);
        constexpr std::uint32_t kRpcs = 5;
        for (std::uint32_t i = 0; i < kRpcs; ++i) {
            QVERIFY(m_osc
                        ->submitWrite(handle, 0, 64, kPage, {&segment, 1}, "osc-test", completion,
                                      transport::Deadline::max(), deadline)
                        .ok());
        }
        const bool allDone = eventually([&] { return done.load() == kRpcs; }, 30s);
        QCOMPARE(::kill(m_target->pid(), SIGCONT), 0);
        QVERIFY2(allDone, "the RPCs waited past their caller's deadline");
        QCOMPARE(timedOut.load(), kRpcs);
        QCOMPARE(unsent.load(), kRpcs - 1);
        QVERIFY(m_osc->waitIdle(soon()));
        QCOMPARE(m_osc->rpcStats().inFlight(OscRpcStats::write), std::int64_t(0));
        QCOMPARE(m_osc->rpcStats().pendingPages(OscRpcStats::write), std::int64_t(0));
    }

    void destructionCancelsQueued()
    {
        QVERIFY(set("osc.ost0.max_rpcs_in_flight", "1").ok());
        const std::uint64_t handle = create("cancel");
        auto buffer = pattern(64 * kPage, 5);
        const transport::Segment segment{buffer.data(), buffer.size(), 0};
        std::mutex gateMutex;
        std::condition_variable gateChanged;
        bool open = false;
        std::atomic<bool> started{false};
        auto gated = [&](const Status &, std::uint32_t) {
            started = true;
            std::unique_lock lock(gateMutex);
            gateChanged.wait_for(lock, 30s, [&] { return open; });
        };
        QVERIFY(m_osc->submitWrite(handle, 0, 64, kPage, {&segment, 1}, "osc-test", gated).ok());
        Tally tally;
        for (int i = 0; i < 10; ++i) {
            QVERIFY(m_osc
                        ->submitWrite(handle, 0, 64, kPage, {&segment, 1}, "osc-test",
                                      tally.completion())
                        .ok());
        }
        QVERIFY(eventually([&] { return started.load(); }, 30s));
        std::thread opener([&] {
            // Opens the gate once the destructor has failed the queue.
            eventually([&] { return tally.done.load() == 10; }, 30s);
            std::lock_guard lock(gateMutex);
            open = true;
            gateChanged.notify_all();
        });
        m_group.reset();
        m_osc.reset();
        opener.join();
        QCOMPARE(tally.done.load(), std::uint32_t(10));
        std::lock_guard lock(tally.mutex);
        QCOMPARE(tally.firstError.code(), Errc::cancelled);
    }

    // osc.<t>.conns_per_target against a real target: the further connections join this
    // client's export, so the handle opened on the first serves bulk RPCs on all of them;
    // lowering closes the joined connections and the export (the handle) stays; a value out of
    // range changes nothing.
    void severalConnectionsShareTheExport()
    {
        QCOMPARE(get("osc.ost0.conns_per_target"), std::string("1")); // this session opened one
        QCOMPARE(set("osc.ost0.conns_per_target", "9").code(), Errc::out_of_range);
        QCOMPARE(set("osc.ost0.conns_per_target", "0").code(), Errc::out_of_range);
        QCOMPARE(m_session->liveConnections(), 1u);
        QVERIFY(set("osc.ost0.conns_per_target", "3").ok());
        QCOMPARE(get("osc.ost0.conns_per_target"), std::string("3"));
        QCOMPARE(m_session->liveConnections(), 3u);

        constexpr std::size_t kBytes = 16u << 20;
        const std::uint64_t handle = create("spread");
        QVERIFY(handle != 0);
        auto source = pattern(kBytes, 5);
        const PageRun run{0, kBytes / kPage, kPage};
        Tally written;
        std::vector<transport::Segment> writeSegments;
        const std::uint32_t writes =
            submitRun(true, handle, run, 64, source, writeSegments, written);
        QVERIFY(written.waitFor(writes));
        QVERIFY2(written.failed.load() == 0, written.firstError.toString().c_str());

        const auto readBack = [&](unsigned round) {
            std::vector<std::byte> back(kBytes);
            Tally read;
            std::vector<transport::Segment> readSegments;
            const std::uint32_t reads =
                submitRun(false, handle, run, 100, back, readSegments, read);
            if (!read.waitFor(reads) || read.failed.load() != 0) {
                qWarning("round %u: %s", round, read.firstError.toString().c_str());
                return false;
            }
            return back == source;
        };
        QVERIFY(readBack(1));
        // Down to one: the joined connections close, the export and its handle stay.
        QVERIFY(set("osc.ost0.conns_per_target", "1").ok());
        QCOMPARE(m_session->liveConnections(), 1u);
        QVERIFY(readBack(2));
        QVERIFY(set("osc.ost0.conns_per_target", "2").ok());
        QCOMPARE(m_session->liveConnections(), 2u);
        QVERIFY(readBack(3));
        QVERIFY(m_osc->waitIdle(soon()));
    }

    // Locks belong to the export: a conflicting enqueue by another client sends the blocking
    // callback to this client's first connection while bulk RPCs use all three.
    void blockingCallbacksReachAClientWithSeveralConnections()
    {
        QVERIFY(set("osc.ost0.conns_per_target", "3").ok());
        const std::uint64_t handle = create("locked");
        QVERIFY(handle != 0);
        std::atomic<std::uint64_t> calledBack{0};
        m_session->setBlockingCallbackHandler(
            [&](std::uint64_t lock, protocol::LockMode) { calledBack = lock; });
        auto held = m_session->call(protocol::LockEnqueueRequest{handle, protocol::LockMode::pw, 0},
                                    "osc-test", soon());
        QVERIFY2(held.ok(), held.status().toString().c_str());
        const std::uint64_t lock = held->lockHandle;

        auto source = pattern(4u << 20, 6);
        Tally written;
        std::vector<transport::Segment> segments;
        const std::uint32_t writes = submitRun(true, handle, PageRun{0, (4u << 20) / kPage, kPage},
                                               64, source, segments, written);
        QVERIFY(written.waitFor(writes));
        QVERIFY2(written.failed.load() == 0, written.firstError.toString().c_str());

        RpcSession::Options otherOptions;
        otherOptions.clientId = "osc-test-other";
        otherOptions.connections = 2;
        auto other = RpcSession::connect(*m_transport, m_target->uri(), otherOptions);
        QVERIFY2(other.ok(), other.status().toString().c_str());
        QCOMPARE((*other)->liveConnections(), 2u);
        auto opened = (*other)->call(
            protocol::OpenRequest{"locked", protocol::kOpenRead | protocol::kOpenWrite}, "osc-test",
            soon());
        QVERIFY2(opened.ok(), opened.status().toString().c_str());
        const std::uint64_t otherHandle = opened->handle;
        opened = decltype(opened)(Status(Errc::cancelled, "released")); // return its slot
        std::optional<Status> granted;
        std::thread contender([&] {
            auto reply =
                (*other)->call(protocol::LockEnqueueRequest{otherHandle, protocol::LockMode::pw, 0},
                               "osc-test", soon());
            granted = reply.ok() ? Status{} : reply.status();
        });
        const bool calledBackInTime = eventually([&] { return calledBack.load() == lock; }, 30s);
        auto cancelled = m_session->call(protocol::LockCancelRequest{lock}, "osc-test", soon());
        contender.join();
        m_session->setBlockingCallbackHandler({});
        QVERIFY(calledBackInTime);
        QVERIFY2(cancelled.ok(), cancelled.status().toString().c_str());
        QVERIFY(granted.has_value());
        QVERIFY2(granted->ok(), granted->toString().c_str());
    }

    // The target killed under a client with three connections: every RPC in flight or queued
    // fails once with unavailable, the session is lost as a whole; a new session to the
    // restarted target (a new export, new cookie) joins three connections again and reads back
    // everything acknowledged before the kill.
    void targetRestartedUnderSeveralConnections()
    {
        QVERIFY(set("osc.ost0.conns_per_target", "3").ok());
        constexpr std::size_t kBytes = 8u << 20;
        const std::uint64_t handle = create("durable");
        QVERIFY(handle != 0);
        auto source = pattern(kBytes, 7);
        Tally acknowledged;
        std::vector<transport::Segment> segments;
        const std::uint32_t writes = submitRun(true, handle, PageRun{0, kBytes / kPage, kPage}, 64,
                                               source, segments, acknowledged);
        QVERIFY(acknowledged.waitFor(writes));
        QVERIFY2(acknowledged.failed.load() == 0, acknowledged.firstError.toString().c_str());

        auto more = pattern(kBytes, 8);
        QVERIFY(testing::freeze(m_target->pid()));
        Tally lost;
        std::vector<transport::Segment> lostSegments;
        const std::uint32_t pending =
            submitRun(true, handle, PageRun{kBytes / kPage, kBytes / kPage, kPage}, 64, more,
                      lostSegments, lost);
        QVERIFY(m_target->stop(SIGKILL).ok());
        QVERIFY(lost.waitFor(pending));
        QVERIFY(m_osc->waitIdle(soon()));
        QCOMPARE(lost.done.load(), pending);
        QCOMPARE(lost.unavailable.load(), pending);
        QVERIFY(eventually([&] { return m_session->liveConnections() == 0; }, 30s));
        QVERIFY(!m_session->connected());

        TargetProcess::Options options;
        options.binary = LUTRA_TARGET_BIN;
        options.root = m_dir->path() + "/objects";
        auto restarted = TargetProcess::spawn(options);
        QVERIFY2(restarted.ok(), restarted.status().toString().c_str());
        RpcSession::Options sessionOptions;
        sessionOptions.clientId = "osc-test";
        sessionOptions.connections = 3;
        auto session = RpcSession::connect(*m_transport, (*restarted)->uri(), sessionOptions);
        QVERIFY2(session.ok(), session.status().toString().c_str());
        QCOMPARE((*session)->liveConnections(), 3u);
        auto opened = (*session)->call(protocol::OpenRequest{"durable", protocol::kOpenRead},
                                       "osc-test", soon());
        QVERIFY2(opened.ok(), opened.status().toString().c_str());
        const std::uint64_t reopened = opened->handle;
        opened = decltype(opened)(Status(Errc::cancelled, "released")); // return its slot
        std::vector<std::byte> back(kBytes);
        for (std::size_t offset = 0; offset < kBytes; offset += 1u << 20) {
            const transport::Segment segment{back.data() + offset, 1u << 20, 0};
            auto read = (*session)->read(reopened, offset, (1u << 20) / kPage, kPage, {&segment, 1},
                                         true, "osc-test", soon());
            QVERIFY2(read.ok(), read.status().toString().c_str());
            QCOMPARE(*read, 1u << 20);
        }
        QVERIFY(back == source);
        session->reset();
        QVERIFY((*restarted)->stop(SIGTERM).ok());
    }

    // The target's side of a join, through a raw connection: an unknown cookie, another client's
    // id and a second Connect on a joined connection are refused, each saying why, and change
    // nothing; a joined connection that goes leaves the export (and the session) as it was.
    void joiningNeedsALiveExportOfTheSameClient()
    {
        QVERIFY(set("osc.ost0.conns_per_target", "2").ok());
        const std::uint64_t cookie = m_session->negotiated().exportCookie;
        QVERIFY(cookie != 0);
        RawPeer peer;
        auto connection = m_transport->connect(m_target->uri(), peer);
        QVERIFY2(connection.ok(), connection.status().toString().c_str());
        protocol::ConnectRequest join;
        join.features = protocol::kFeatureMultiConnection;
        join.clientId = "osc-test";
        join.exportCookie = cookie ^ 1;
        const Status unknown = peer.connect(**connection, join);
        QCOMPARE(unknown.code(), Errc::not_found);
        QVERIFY2(unknown.message().find("no export") != std::string::npos,
                 unknown.toString().c_str());
        join.clientId = "someone-else";
        join.exportCookie = cookie;
        const Status foreign = peer.connect(**connection, join);
        QCOMPARE(foreign.code(), Errc::permission_denied);
        QVERIFY2(foreign.message().find("osc-test") != std::string::npos,
                 foreign.toString().c_str());
        join.clientId = "osc-test";
        QVERIFY(peer.connect(**connection, join).ok());
        QCOMPARE(peer.connect(**connection, join).code(), Errc::failed_precondition);
        (*connection)->close();
        QVERIFY(peer.waitGone());

        // The export and its handles stay: the session's bulk and control calls go on.
        const std::uint64_t handle = create("after-join");
        QVERIFY(handle != 0);
        auto source = pattern(1u << 20, 9);
        Tally written;
        std::vector<transport::Segment> segments;
        const std::uint32_t writes = submitRun(true, handle, PageRun{0, (1u << 20) / kPage, kPage},
                                               32, source, segments, written);
        QVERIFY(written.waitFor(writes));
        QVERIFY2(written.failed.load() == 0, written.firstError.toString().c_str());
        QCOMPARE(m_session->liveConnections(), 2u);
    }
};

QTEST_GUILESS_MAIN(TestOsc)
#include "test_osc.moc"
