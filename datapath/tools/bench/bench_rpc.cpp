// lutra-bench rpc: what the transport costs over raw TCP between the same two processes.
#include "bench_modes.h"
#include "client/rpc_session.h"
#include "cpu_split.h"
#include "ib_write_bw.h"
#include "raw_client.h"
#include "target/raw_baseline.h"
#include "target_process.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace lutra::tools {

namespace {

constexpr std::size_t kEchoBytes = 64;
constexpr auto kCallTimeout = std::chrono::seconds(30);

transport::Deadline callDeadline()
{
    return transport::deadlineIn(kCallTimeout);
}

// Bulk reads kept in flight by their own completions, with no thread per RPC: `depth` RPCs, each
// one's completion (on a transport I/O thread) submitting the next into the same buffer.
class AsyncReads {
public:
    AsyncReads(client::RpcSession &session, std::uint64_t handle, std::uint32_t chunk,
               std::uint64_t chunks, std::vector<transport::Segment> segments)
        : m_session(session), m_handle(handle), m_chunk(chunk), m_chunks(chunks),
          m_segments(std::move(segments))
    {
    }

    // Once per round: each run starts from no reads in flight (the last one waited for them all).
    Measurement run(double seconds)
    {
        m_stop = false;
        m_bytes = 0;
        m_reads = 0;
        const auto start = std::chrono::steady_clock::now();
        {
            std::lock_guard lock(m_mutex);
            m_inFlight = m_segments.size();
        }
        for (std::size_t i = 0; i < m_segments.size(); ++i) {
            if (!submit(i)) {
                finishOne();
            }
        }
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        m_stop = true;
        std::unique_lock lock(m_mutex);
        m_done.wait(lock, [&] { return m_inFlight == 0; });
        Measurement result;
        result.seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        result.bytes = m_bytes.load();
        result.operations = m_reads.load();
        result.firstError = m_error;
        return result;
    }

private:
    static void done(void *context, std::uint64_t tag, const Status &status,
                     std::uint32_t bytes) noexcept
    {
        auto &self = *static_cast<AsyncReads *>(context);
        if (status.ok()) {
            self.m_bytes += bytes;
            ++self.m_reads;
            if (!self.m_stop && self.submit(tag)) {
                return;
            }
        } else {
            self.fail(status);
        }
        self.finishOne();
    }
    bool submit(std::size_t i)
    {
        const std::uint64_t k = m_next++ % m_chunks;
        const Status submitted = m_session.submitRead(
            m_handle, k * m_chunk, m_chunk / protocol::kPageSize, protocol::kPageSize,
            {&m_segments[i], 1}, false, "bench.rpc", callDeadline(), {&AsyncReads::done, this, i});
        if (!submitted) {
            fail(submitted);
        }
        return submitted.ok();
    }
    void fail(const Status &status)
    {
        std::lock_guard lock(m_mutex);
        if (m_error.ok()) {
            m_error = status;
        }
    }
    void finishOne()
    {
        std::lock_guard lock(m_mutex);
        if (--m_inFlight == 0) {
            m_done.notify_all();
        }
    }

    client::RpcSession &m_session;
    const std::uint64_t m_handle;
    const std::uint32_t m_chunk;
    const std::uint64_t m_chunks;
    const std::vector<transport::Segment> m_segments;
    std::atomic<std::uint64_t> m_next{0};
    std::atomic<std::uint64_t> m_bytes{0};
    std::atomic<std::uint64_t> m_reads{0};
    std::atomic<bool> m_stop{false};
    std::mutex m_mutex;
    std::condition_variable m_done;
    std::size_t m_inFlight = 0;
    Status m_error;
};

} // namespace

Result<Report> runRpcBench(const BenchOptions &options, const RpcBenchOptions &rpc)
{
    if (rpc.threads == 0 || rpc.threads > 256) {
        return Status(Errc::out_of_range, "--threads must be 1..256");
    }
    if (rpc.conns == 0 || rpc.conns > client::RpcSession::kMaxConnections || rpc.rounds == 0) {
        return Status(Errc::out_of_range, "--conns must be 1.." +
                                              std::to_string(client::RpcSession::kMaxConnections) +
                                              " and --rounds positive");
    }
    std::optional<TempDir> root;
    std::unique_ptr<TargetProcess> process;
    std::string uri = options.target;
    std::string rawUri = options.rawBaseline;
    if (uri.empty()) {
        auto dir = TempDir::create("lutra-bench-rpc");
        if (!dir) {
            return dir.status();
        }
        root.emplace(std::move(dir).value());
        TargetProcess::Options spawn;
        spawn.binary = options.targetBinary;
        spawn.root = root->path();
        spawn.listen = rpc.transport + "://" + rpc.address + ":0";
        spawn.startTimeout = std::chrono::seconds(60); // sanitizers under emulation start slowly
        spawn.rawBaseline = true;
        auto started = TargetProcess::spawn(spawn);
        if (!started) {
            return started.status();
        }
        process = std::move(started).value();
        uri = process->uri();
        rawUri = process->rawBaselineUri();
    }

    // The client's I/O threads, as a mount has them.
    auto transport =
        openTransport(uri, std::uint64_t{16} << 20,
                      options.transportIoThreads != 0 ? options.transportIoThreads
                                                      : transport::automaticClientIoThreads());
    if (!transport) {
        return transport.status();
    }
    client::RpcSession::Options sessionOptions;
    sessionOptions.clientId = "lutra-bench";
    sessionOptions.connections = rpc.conns;
    auto session = client::RpcSession::connect(*transport->transport, uri, sessionOptions);
    if (!session) {
        return session.status();
    }
    client::RpcSession &rpcSession = **session;
    // The same reads from a second client of the same target over one connection, or over two
    // when the measured count is one: what the other choice of osc.*.conns_per_target gives.
    const OtherConns otherCount = otherConnsThan(rpc.conns);
    sessionOptions.clientId = "lutra-bench-" + otherCount.name;
    sessionOptions.connections = otherCount.count;
    auto otherSession = client::RpcSession::connect(*transport->transport, uri, sessionOptions);
    if (!otherSession) {
        return otherSession.status().withContext("the " + otherCount.name + " session");
    }
    std::unique_ptr<client::RpcSession> other = std::move(otherSession).value();
    const std::uint32_t chunk = rpcSession.negotiated().maxBulkBytes;
    const std::uint32_t pages = chunk / protocol::kPageSize;
    const std::uint64_t objectBytes =
        std::max<std::uint64_t>(std::uint64_t{rpc.objectMb} << 20, chunk);
    const std::uint64_t chunks = objectBytes / chunk;

    Report report;
    report.mode = "rpc";
    report.params = {{"transport", transport->name},
                     {"target", uri},
                     {"spawned_target", process != nullptr},
                     {"threads", rpc.threads},
                     {"conns", rpcSession.connections()},
                     {"rounds", rpc.rounds},
                     {"duration_s", options.durationSeconds},
                     {"bulk_bytes", chunk},
                     {"object_mb", objectBytes >> 20},
                     {"rounds_are",
                      "bulk reads over conns connections (a thread per RPC, and as many "
                      "in flight with no thread each), over one (two when conns is one), and "
                      "raw TCP with as many streams as threads, of the same object "
                      "(sendfile from the target's page cache) and from memory "
                      "(verbs: and ib_write_bw), alternating their order; "
                      "MBps and ratios are medians"},
                     {"small_message", "ping (24-byte header + job id) vs 64-byte raw echo"}};
    if (process) {
        // Where the spawned target runs (lutra-bench --split-cpus), as the kernel has it.
        if (auto cpus = allowedCpusOf(process->pid()); cpus) {
            report.params["target_cpus"] = *cpus;
        }
    }
    if (rpcSession.connections() != rpc.conns) {
        report.notes.push_back("the target took " + std::to_string(rpcSession.connections()) +
                               " of " + std::to_string(rpc.conns) + " connections");
    }

    // Small RPCs: every thread pings over the one shared session.
    const auto pings =
        measure(rpc.threads, options.durationSeconds, [&](unsigned) -> Result<std::uint64_t> {
            if (auto status = rpcSession.ping("bench.rpc", callDeadline()); !status) {
                return status;
            }
            return std::uint64_t{0};
        });
    if (!pings.firstError.ok()) {
        return pings.firstError.withContext("ping");
    }
    report.results["small_rpc_per_s"] = rounded(pings.perSecond());

    // Bulk: an object of objectMb, read in max-size bulk RPCs into registered memory.
    protocol::CreateRequest create;
    create.path = "lutra-bench-rpc.dat";
    auto created = rpcSession.call(create, "bench.rpc", callDeadline());
    if (!created) {
        return created.status().withContext("create");
    }
    const std::uint64_t handle = created->handle;
    created = Status(Errc::cancelled, "released"); // gives its slot back
    auto otherOpened = other->call(protocol::OpenRequest{create.path, protocol::kOpenRead},
                                   "bench.rpc", callDeadline());
    if (!otherOpened) {
        return otherOpened.status().withContext("open (the " + otherCount.name + " session)");
    }
    const std::uint64_t otherHandle = otherOpened->handle;
    otherOpened = Status(Errc::cancelled, "released");
    const std::size_t bufferBytes = std::size_t{chunk} * rpc.threads;
    std::unique_ptr<std::byte[]> buffers(new std::byte[bufferBytes]);
    for (std::size_t i = 0; i < bufferBytes; ++i) {
        buffers[i] = static_cast<std::byte>(i * 131);
    }
    auto region = transport->transport->registerMemory(buffers.get(), bufferBytes);
    if (!region) {
        return region.status();
    }
    const auto segmentOf = [&](unsigned thread) {
        return transport::Segment{buffers.get() + std::size_t{chunk} * thread, chunk, region->id};
    };
    for (std::uint64_t k = 0; k < chunks; ++k) {
        const auto segment = segmentOf(0);
        auto written = rpcSession.write(handle, k * chunk, pages, protocol::kPageSize,
                                        {&segment, 1}, false, "bench.rpc", callDeadline());
        if (!written) {
            return written.status().withContext("filling the bulk object");
        }
    }
    std::vector<std::uint64_t> next(rpc.threads);
    const auto readWith = [&](client::RpcSession &reader, std::uint64_t object, bool checksums) {
        return measure(rpc.threads, options.durationSeconds,
                       [&, object, checksums](unsigned t) -> Result<std::uint64_t> {
                           const std::uint64_t k = (t + next[t]++ * rpc.threads) % chunks;
                           const auto segment = segmentOf(t);
                           auto got =
                               reader.read(object, k * chunk, pages, protocol::kPageSize,
                                           {&segment, 1}, checksums, "bench.rpc", callDeadline());
                           if (!got) {
                               return got.status();
                           }
                           return std::uint64_t{*got};
                       });
    };
    // Raw TCP between the same two processes, one stream per thread into the same buffers: of
    // the object lutra reads, sent with sendfile from the target's page cache (what a plain file
    // server does best with the same data; each thread streams the whole object again and again),
    // or from a memory buffer (the network alone).
    const auto rawStreams = [&](bool fromObject) -> Result<Measurement> {
        std::vector<std::optional<RawConnection>> streams(rpc.threads);
        std::vector<std::uint64_t> left(rpc.threads, 0);
        const auto openStream = [&](unsigned t) -> Status {
            auto connection = RawConnection::open(rawUri);
            if (!connection) {
                return connection.status();
            }
            if (!fromObject) {
                left[t] = std::uint64_t{1} << 50;
                auto status = connection->request(target::RawBaseline::source, left[t]);
                streams[t].emplace(std::move(connection).value());
                return status;
            }
            auto length = connection->requestObject(std::string(create.path), objectBytes);
            if (!length) {
                return length.status();
            }
            if (*length != objectBytes) {
                return Status(Errc::failed_precondition,
                              "raw baseline: " + std::string(create.path) + " has " +
                                  std::to_string(*length) + " bytes, not " +
                                  std::to_string(objectBytes));
            }
            left[t] = objectBytes;
            streams[t].emplace(std::move(connection).value());
            return {};
        };
        for (unsigned t = 0; t < rpc.threads; ++t) {
            if (auto status = openStream(t); !status) {
                return status;
            }
        }
        return measure(
            rpc.threads, options.durationSeconds, [&](unsigned t) -> Result<std::uint64_t> {
                if (left[t] == 0) {
                    if (auto status = openStream(t); !status) {
                        return status;
                    }
                }
                if (auto status =
                        streams[t]->receiveAll(buffers.get() + std::size_t{chunk} * t, chunk);
                    !status) {
                    return status;
                }
                left[t] -= chunk;
                return std::uint64_t{chunk};
            });
    };

    // verbs: the device's own ceiling on the same work (bulk size, one queue pair per
    // connection, ~64 MiB a run), measured by perftest on the same device as a side of each
    // round, so that both see the same machine.
    const bool ibBaseline = rpc.transport == "verbs" && options.target.empty();
    IbWriteBwOptions perftest;
    perftest.device = rpc.ibDevice;
    perftest.address = rpc.address;
    perftest.gidIndex = rpc.ibGidIndex;
    perftest.bytes = chunk;
    perftest.qps = static_cast<unsigned>(rpcSession.connections());
    perftest.iterations = std::max(4u, static_cast<unsigned>((64u << 20) / chunk / perftest.qps));

    // The same reads with no thread per RPC: as many in flight as there are threads, kept going
    // by their completions (the client engine's way).
    std::vector<transport::Segment> asyncSegments;
    for (unsigned t = 0; t < rpc.threads; ++t) {
        asyncSegments.push_back(segmentOf(t));
    }
    AsyncReads asyncReads(rpcSession, handle, chunk, chunks, std::move(asyncSegments));

    enum Side { lutraSide, asyncSide, otherSide, rawSide, rawMemorySide, ibSide };
    std::vector<Side> sides{lutraSide, asyncSide, otherSide};
    if (!rawUri.empty()) {
        sides.push_back(rawSide);
        sides.push_back(rawMemorySide);
    }
    if (ibBaseline) {
        sides.push_back(ibSide);
    }
    std::vector<double> lutraMBps, asyncMBps, vsThreads, otherMBps, rawMBps, vsRaw, rawMemoryMBps,
        vsRawMemory, vsOther, asyncVsRaw, otherVsRaw, ibMBps, vsIb;
    nlohmann::json rounds = nlohmann::json::array();
    for (unsigned round = 0; round < rpc.rounds; ++round) {
        double mbps[6] = {0, 0, 0, 0, 0, 0};
        for (std::size_t i = 0; i < sides.size(); ++i) {
            const Side side = sides[(i + round) % sides.size()]; // each side leads in turn
            Measurement measured;
            if (side == ibSide) {
                auto miBps = measureIbWriteBw(perftest);
                if (!miBps) {
                    return miBps.status().withContext("ib_write_bw, the verbs baseline");
                }
                mbps[ibSide] = *miBps * 1.048576; // perftest's MB is MiB
                continue;
            }
            const bool raw = side == rawSide || side == rawMemorySide;
            if (raw) {
                auto streamed = rawStreams(side == rawSide);
                if (!streamed) {
                    return streamed.status().withContext(side == rawSide ? "raw object stream"
                                                                         : "raw memory stream");
                }
                measured = *streamed;
            } else if (side == asyncSide) {
                measured = asyncReads.run(options.durationSeconds);
            } else {
                measured = side == lutraSide ? readWith(rpcSession, handle, false)
                                             : readWith(*other, otherHandle, false);
            }
            if (!measured.firstError.ok()) {
                return measured.firstError.withContext(side == rawSide         ? "raw object stream"
                                                       : side == rawMemorySide ? "raw memory stream"
                                                       : side == asyncSide
                                                           ? "asynchronous bulk read"
                                                           : "bulk read");
            }
            mbps[side] = measured.megabytesPerSecond();
        }
        nlohmann::json entry{{"bulk_read_MBps", rounded(mbps[lutraSide])},
                             {"bulk_read_async_MBps", rounded(mbps[asyncSide])}};
        lutraMBps.push_back(mbps[lutraSide]);
        asyncMBps.push_back(mbps[asyncSide]);
        vsThreads.push_back(mbps[asyncSide] / mbps[lutraSide]);
        otherMBps.push_back(mbps[otherSide]);
        vsOther.push_back(mbps[lutraSide] / mbps[otherSide]);
        entry["bulk_read_" + otherCount.name + "_MBps"] = rounded(mbps[otherSide]);
        entry[otherCount.ratio] = rounded(vsOther.back());
        if (!rawUri.empty()) {
            rawMBps.push_back(mbps[rawSide]);
            vsRaw.push_back(mbps[lutraSide] / mbps[rawSide]);
            entry["raw_tcp_MBps"] = rounded(mbps[rawSide]);
            entry["vs_raw_tcp"] = rounded(vsRaw.back());
            rawMemoryMBps.push_back(mbps[rawMemorySide]);
            vsRawMemory.push_back(mbps[lutraSide] / mbps[rawMemorySide]);
            entry["raw_tcp_memory_MBps"] = rounded(mbps[rawMemorySide]);
            entry["vs_raw_tcp_memory"] = rounded(vsRawMemory.back());
            asyncVsRaw.push_back(mbps[asyncSide] / mbps[rawSide]);
            entry["async_vs_raw_tcp"] = rounded(asyncVsRaw.back());
            otherVsRaw.push_back(mbps[otherSide] / mbps[rawSide]);
            entry[otherCount.name + "_vs_raw_tcp"] = rounded(otherVsRaw.back());
        }
        if (ibBaseline) {
            ibMBps.push_back(mbps[ibSide]);
            vsIb.push_back(mbps[lutraSide] / mbps[ibSide]);
            entry["ib_write_bw_MBps"] = rounded(mbps[ibSide]);
            entry["vs_ib_write_bw"] = rounded(vsIb.back());
        }
        rounds.push_back(entry);
    }
    const double bulkMBps = median(lutraMBps);
    const auto checkedReads = readWith(rpcSession, handle, true);
    if (!checkedReads.firstError.ok()) {
        return checkedReads.firstError.withContext("bulk read with checksums");
    }
    report.results["bulk_read_MBps"] = rounded(bulkMBps);
    report.results["bulk_read_async_MBps"] = rounded(median(asyncMBps));
    report.results["bulk_read_checksums_MBps"] = rounded(checkedReads.megabytesPerSecond());
    report.results["rounds"] = rounds;
    report.ratios["async_vs_threads"] = rounded(median(vsThreads));
    report.ratios["checksums_vs_off"] = rounded(checkedReads.megabytesPerSecond() / bulkMBps);
    report.results["bulk_read_" + otherCount.name + "_MBps"] = rounded(median(otherMBps));
    report.ratios[otherCount.ratio] = rounded(median(vsOther));
    transport->transport->deregisterMemory(*region);
    if (ibBaseline) {
        report.params["ib_write_bw"] =
            "-s " + std::to_string(perftest.bytes) + " -n " + std::to_string(perftest.iterations) +
            " -q " + std::to_string(perftest.qps) + " on " +
            (rpc.ibDevice.empty() ? "the first device" : rpc.ibDevice) + ", a side of each round";
        report.results["ib_write_bw_MBps"] = rounded(median(ibMBps));
        report.ratios["vs_ib_write_bw"] = rounded(median(vsIb));
    } else if (rpc.transport == "verbs") {
        report.notes.push_back("a running target's device is not this host's: "
                               "vs_ib_write_bw needs the spawned target");
    }

    if (rawUri.empty()) {
        report.notes.push_back("no raw baseline endpoint (--raw-baseline): ratios vs raw TCP "
                               "not measured");
        return report;
    }
    // Raw TCP echo between the same two processes: one connection per thread.
    std::vector<RawConnection> echo;
    for (unsigned t = 0; t < rpc.threads; ++t) {
        auto connection = RawConnection::open(rawUri);
        if (!connection) {
            return connection.status();
        }
        if (auto status = connection->request(target::RawBaseline::echo, kEchoBytes); !status) {
            return status;
        }
        echo.push_back(std::move(connection).value());
    }
    const auto echoes =
        measure(rpc.threads, options.durationSeconds, [&](unsigned t) -> Result<std::uint64_t> {
            std::byte message[kEchoBytes] = {};
            if (auto status = echo[t].sendAll(message, kEchoBytes); !status) {
                return status;
            }
            if (auto status = echo[t].receiveAll(message, kEchoBytes); !status) {
                return status;
            }
            return std::uint64_t{0};
        });
    echo.clear();
    if (!echoes.firstError.ok()) {
        return echoes.firstError.withContext("raw echo");
    }
    const double rawTcp = median(rawMBps);
    report.results["raw_echo_per_s"] = rounded(echoes.perSecond());
    report.results["raw_tcp_MBps"] = rounded(rawTcp);
    report.ratios["vs_raw_tcp"] = rounded(median(vsRaw));
    report.results["raw_tcp_memory_MBps"] = rounded(median(rawMemoryMBps));
    report.ratios["vs_raw_tcp_memory"] = rounded(median(vsRawMemory));
    report.ratios["async_vs_raw_tcp"] = rounded(median(asyncVsRaw));
    if (!otherVsRaw.empty()) {
        // On one host the target's and the client's I/O threads share its cores: what the
        // same reads do over the other connection count.
        report.ratios[otherCount.name + "_vs_raw_tcp"] = rounded(median(otherVsRaw));
    }
    report.ratios["small_rpc_vs_raw_echo"] = rounded(pings.perSecond() / echoes.perSecond());
    return report;
}

} // namespace lutra::tools
