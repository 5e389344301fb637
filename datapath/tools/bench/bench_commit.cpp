// lutra-bench commit: durable 4 KiB writes from many writers, group commit against one
// fdatasync per write, each against its own lutra-target process, and group commit against the
// same number of writers calling fdatasync on a local file.
#include "bench_modes.h"
#include "client/rpc_session.h"
#include "lutra/datapath/v1/control.grpc.pb.h"
#include "target_process.h"

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

namespace lutra::tools {

namespace {

constexpr std::uint64_t kSpanBytes = std::uint64_t{64} << 20; // writers cycle over this much

struct CommitRun {
    Measurement writes;
    double writesPerBatch = 0; // from the target's commit_stats, when its control socket is known
    double syncsPerWrite = 0;
};

// Reads obdfilter.*.commit_stats over the target's control socket.
void readCommitStats(const std::string &socket, CommitRun &run)
{
    auto stub = datapath::v1::DatapathControl::NewStub(
        grpc::CreateChannel("unix:" + socket, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    datapath::v1::ReadCountersRequest request;
    request.set_pattern("obdfilter.*.commit_stats");
    datapath::v1::ReadCountersReply reply;
    if (!stub->ReadCounters(&context, request, &reply).ok() || reply.blocks_size() == 0) {
        return;
    }
    std::uint64_t writes = 0;
    std::uint64_t syncs = 0;
    std::uint64_t batches = 0;
    for (const auto &counter : reply.blocks(0).counters()) {
        if (counter.name() == "writes") {
            writes = counter.samples();
        } else if (counter.name() == "syncs") {
            syncs = counter.samples();
        } else if (counter.name() == "batches") {
            batches = counter.samples();
        }
    }
    if (batches > 0 && writes > 0) {
        run.writesPerBatch = static_cast<double>(writes) / static_cast<double>(batches);
        run.syncsPerWrite = static_cast<double>(syncs) / static_cast<double>(writes);
    }
}

Result<CommitRun> measureCommits(const BenchOptions &options, const CommitBenchOptions &commit,
                                 const std::string &uri, const std::string &controlSocket)
{
    auto transport = openTransport(uri, std::uint64_t{1} << 20);
    if (!transport) {
        return transport.status();
    }
    client::RpcSession::Options sessionOptions;
    sessionOptions.clientId = "lutra-bench";
    auto session = client::RpcSession::connect(*transport->transport, uri, sessionOptions);
    if (!session) {
        return session.status();
    }
    protocol::CreateRequest create;
    create.path = "lutra-bench-commit.dat";
    auto created =
        (*session)->call(create, "bench.commit", transport::deadlineIn(std::chrono::seconds(30)));
    if (!created) {
        return created.status().withContext("create");
    }
    const std::uint64_t handle = created->handle;
    const std::size_t bytes = std::size_t{commit.writeBytes} * commit.writers;
    std::unique_ptr<std::byte[]> buffers(new std::byte[bytes]);
    std::fill_n(buffers.get(), bytes, std::byte{0x5a});
    auto region = transport->transport->registerMemory(buffers.get(), bytes);
    if (!region) {
        return region.status();
    }
    std::vector<std::uint64_t> next(commit.writers);
    const std::uint64_t slots = kSpanBytes / commit.writeBytes;
    CommitRun run;
    // Writers interleave 4 KiB blocks of one shared object, as IOR's shared-file mode does.
    run.writes =
        measure(commit.writers, options.durationSeconds, [&](unsigned t) -> Result<std::uint64_t> {
            const std::uint64_t block = (t + next[t]++ * commit.writers) % slots;
            const transport::Segment segment{buffers.get() + std::size_t{commit.writeBytes} * t,
                                             commit.writeBytes, region->id};
            const auto pages = static_cast<std::uint32_t>(
                (commit.writeBytes + protocol::kPageSize - 1) / protocol::kPageSize);
            const auto last =
                static_cast<std::uint16_t>(commit.writeBytes - (pages - 1) * protocol::kPageSize);
            auto written = (*session)->write(handle, block * commit.writeBytes, pages, last,
                                             {&segment, 1}, false, "bench.commit",
                                             transport::deadlineIn(std::chrono::seconds(60)));
            if (!written) {
                return written.status();
            }
            return std::uint64_t{*written};
        });
    transport->transport->deregisterMemory(*region);
    if (!run.writes.firstError.ok()) {
        return run.writes.firstError.withContext("durable write");
    }
    if (!controlSocket.empty()) {
        readCommitStats(controlSocket, run);
    }
    return run;
}

// The device's own price with the same concurrency: `writers` threads, each writing its own
// interleaved blocks of one shared file (as the writers share one object) with a pwrite and an
// fdatasync at a time, on the file system the targets use. Group commit is worth what this costs.
Result<Measurement> measureFdatasync(const std::string &dir, double seconds,
                                     const CommitBenchOptions &commit)
{
    const std::string path = dir + "/fdatasync-baseline.dat";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return Status(Errc::io_error, "cannot create " + path);
    }
    const std::uint64_t slots = std::max<std::uint64_t>(kSpanBytes / commit.writeBytes, 1);
    std::vector<char> block(commit.writeBytes, 'x');
    std::vector<std::uint64_t> next(commit.writers);
    auto result = measure(commit.writers, seconds, [&](unsigned t) -> Result<std::uint64_t> {
        const std::uint64_t slot = (t + next[t]++ * commit.writers) % slots;
        const auto offset = static_cast<off_t>(slot * commit.writeBytes);
        if (::pwrite(fd, block.data(), block.size(), offset) !=
                static_cast<ssize_t>(block.size()) ||
            ::fdatasync(fd) != 0) {
            return Status(Errc::io_error, "pwrite/fdatasync on " + path + " failed");
        }
        return std::uint64_t{commit.writeBytes};
    });
    ::close(fd);
    if (!result.firstError.ok()) {
        return result.firstError;
    }
    return result;
}

Result<CommitRun> spawnAndMeasure(const BenchOptions &options, const CommitBenchOptions &commit,
                                  const std::string &mode)
{
    auto dir = TempDir::create("lutra-bench-commit");
    if (!dir) {
        return dir.status();
    }
    const std::string objects = dir->path() + "/objects";
    const std::string run = dir->path() + "/run";
    std::filesystem::create_directories(objects);
    TargetProcess::Options spawn;
    spawn.binary = options.targetBinary;
    spawn.root = objects;
    spawn.runDir = run;
    spawn.extraArgs = {"--commit-mode", mode};
    auto process = TargetProcess::spawn(spawn);
    if (!process) {
        return process.status();
    }
    return measureCommits(options, commit, (*process)->uri(), (*process)->controlSocket());
}

} // namespace

Result<Report> runCommitBench(const BenchOptions &options, const CommitBenchOptions &commit)
{
    if (commit.writers == 0 || commit.writers > 1024) {
        return Status(Errc::out_of_range, "--writers must be 1..1024");
    }
    if (commit.writeBytes == 0 || commit.writeBytes > (1u << 20)) {
        return Status(Errc::out_of_range, "--write-bytes must be 1..1048576");
    }
    Report report;
    report.mode = "commit";
    report.params = {{"writers", commit.writers},
                     {"write_bytes", commit.writeBytes},
                     {"duration_s", options.durationSeconds},
                     {"object", "one shared object, writers interleave blocks"},
                     {"fdatasync_writers", commit.writers},
                     {"fdatasync_baseline", "the same writers, each a pwrite and an fdatasync "
                                            "at a time, interleaving blocks of one shared file"}};
    if (!options.target.empty()) {
        auto run = measureCommits(options, commit, options.target, {});
        if (!run) {
            return run.status();
        }
        report.params["target"] = options.target;
        report.results["writes_per_s"] = rounded(run->writes.perSecond());
        report.notes.push_back("a running target commits in one mode only: group_vs_per_write "
                               "needs the spawned pair (run without --target)");
        return report;
    }
    auto scratch = TempDir::create("lutra-bench-fdatasync");
    if (!scratch) {
        return scratch.status();
    }
    auto fdatasyncs = measureFdatasync(scratch->path(), options.durationSeconds, commit);
    if (!fdatasyncs) {
        return fdatasyncs.status();
    }
    auto batched = spawnAndMeasure(options, commit, "batched");
    if (!batched) {
        return batched.status().withContext("group commit");
    }
    auto perWrite = spawnAndMeasure(options, commit, "per-write");
    if (!perWrite) {
        return perWrite.status().withContext("per-write commit");
    }
    report.results["group_commit_writes_per_s"] = rounded(batched->writes.perSecond());
    report.results["per_write_sync_writes_per_s"] = rounded(perWrite->writes.perSecond());
    report.results["group_commit_writes_per_batch"] = rounded(batched->writesPerBatch);
    report.results["group_commit_syncs_per_write"] = rounded(batched->syncsPerWrite);
    report.results["per_write_syncs_per_write"] = rounded(perWrite->syncsPerWrite);
    report.results["fdatasync_per_s"] = rounded(fdatasyncs->perSecond());
    report.ratios["group_commit_vs_fdatasync"] =
        rounded(batched->writes.perSecond() / fdatasyncs->perSecond());
    report.ratios["group_vs_per_write"] =
        rounded(batched->writes.perSecond() / perWrite->writes.perSecond());
    return report;
}

} // namespace lutra::tools
