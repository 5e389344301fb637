#pragma once

#include "bench_common.h"
#include "core/params/catalog.h"

namespace lutra::tools {

// osc.<t>.conns_per_target's default: what a mount opens to each target.
inline unsigned defaultConnsPerTarget()
{
    return static_cast<unsigned>(
        params::catalog::defaultOf(params::catalog::kOsc, "conns_per_target"));
}

// The connection count a bench reads beside `conns` (one, or two when `conns` is one), as its
// report names it: results `<name>` in MB/s keys, the ratio `conns_vs_<one|two>`.
struct OtherConns {
    unsigned count;
    std::string name;  // one_conn / two_conns
    std::string ratio; // conns_vs_one / conns_vs_two
};
inline OtherConns otherConnsThan(unsigned conns)
{
    return conns > 1 ? OtherConns{1, "one_conn", "conns_vs_one"}
                     : OtherConns{2, "two_conns", "conns_vs_two"};
}

struct RpcBenchOptions {
    unsigned threads = 4;
    unsigned objectMb = 64; // object read by the bulk measurement
    // Bulk reads over this many connections (and over one, or two when this is one: conns_vs_one
    // or conns_vs_two) and raw TCP, in
    // rounds alternating their order: one sample on a shared machine means little.
    unsigned conns = defaultConnsPerTarget();
    unsigned rounds = 3;
    std::string transport = "tcp";     // plugin of the spawned target
    std::string address = "127.0.0.1"; // where the spawned target listens (verbs: an RDMA address)
    std::string ibDevice;              // verbs: ib_write_bw's -d (empty: its first device)
    int ibGidIndex = 1;                // verbs: ib_write_bw's -x (RoCE v2 over IPv4 on rxe)
};
// Small-RPC rate and bulk read bandwidth over the transport plugin, against raw TCP echo and
// raw TCP streaming between the same two processes.
Result<Report> runRpcBench(const BenchOptions &options, const RpcBenchOptions &rpc);

struct CommitBenchOptions {
    unsigned writers = 16;
    unsigned writeBytes = 4096;
};
// Concurrent durable writes with group commit against one fdatasync per write.
Result<Report> runCommitBench(const BenchOptions &options, const CommitBenchOptions &commit);

// --loop: repeat the mode's workload under one job id until SIGTERM/SIGINT, serving the control
// socket bench-<name>.sock (FlushJob runs Mount::flushJob).
struct LoopOptions {
    bool enabled = false;
    std::string jobId; // every worker thread's job id (also without --loop)
    std::string name = "lutra-bench";
};

struct FlushBenchOptions {
    unsigned pages = 262144;
    unsigned objects = 1024; // each its own lock cookie
    unsigned threads = 2;
};
// Releasing a full page cache lock by lock: batched (31 pages per shard-lock hold) against one
// page per hold (LU-9906), in process.
Result<Report> runFlushBench(const BenchOptions &options, const FlushBenchOptions &flush);

struct SmallReadBenchOptions {
    unsigned fileKb = 1024;
};
// 1-byte, 1 KiB and 4 KiB reads of cached data against pread() from the kernel page cache
// (LU-9749).
Result<Report> runSmallReadBench(const BenchOptions &options, const LoopOptions &loop,
                                 const SmallReadBenchOptions &smallRead);

struct CachedReadBenchOptions {
    unsigned fileMb = 64;
    unsigned transferKb = 1024;
};
// Reads of cached data against memcpy of the same size.
Result<Report> runCachedReadBench(const BenchOptions &options, const LoopOptions &loop,
                                  const CachedReadBenchOptions &cachedRead);

struct IorEasyBenchOptions {
    unsigned threads = 2;
    unsigned fileMb = 64; // per thread
    unsigned transferKb = 1024;
    // osc.*.conns_per_target of the cold reads (also read with one, for conns_vs_one), and the
    // rounds of cold reads and raw TCP streams, alternating their order.
    unsigned conns = defaultConnsPerTarget();
    unsigned rounds = 3;
    bool checksums = true; // osc.*.checksums (the raw baseline has none)
};
// IOR-easy: file per thread, large sequential transfers, write then cold read, against raw TCP
// streaming between the same processes.
Result<Report> runIorEasyBench(const BenchOptions &options, const LoopOptions &loop,
                               const IorEasyBenchOptions &ior);

struct IorHardBenchOptions {
    unsigned ranks = 4; // threads sharing one Mount, each with its own open file
    unsigned segments = 360;
    unsigned transferBytes = 47008;
    // Cold read rounds, the two sides alternating which goes first: one side of one round is
    // well under a second, too short for one sample to mean much on a shared machine.
    unsigned rounds = 5;
    // ...and more rounds until this many seconds of them passed (0: exactly `rounds`): with 5-7
    // rounds the median ratio still spread +-0.15 between runs under others' builds.
    double durationSeconds = 10;
    // pressure: the pressured side's max_cached_mb as a percentage of the file (LU-13312's
    // case is a quarter); a sweep shows how much cache an access pattern needs.
    unsigned cachePercent = 25;
};
// IOR-hard: 47008-byte transfers interleaved by rank in one shared file, write then cold read,
// against the same bytes read sequentially in 1 MiB transfers.
Result<Report> runIorHardBench(const BenchOptions &options, const LoopOptions &loop,
                               const IorHardBenchOptions &ior);
// The IOR-hard read with max_cached_mb at a quarter of the file (--cache-percent) against enough
// cache (LU-13312).
Result<Report> runPressureBench(const BenchOptions &options, const LoopOptions &loop,
                                const IorHardBenchOptions &ior);

struct MdtestBenchOptions {
    unsigned threads = 2;
    unsigned items = 200; // per thread, in its own directory
};
// mdtest: file and directory create / stat / remove rates against the kernel on a local
// directory (LU-9972).
Result<Report> runMdtestBench(const BenchOptions &options, const LoopOptions &loop,
                              const MdtestBenchOptions &mdtest);

} // namespace lutra::tools
