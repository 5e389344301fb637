#pragma once

#include "bench_common.h"

namespace lutra::tools {

struct RpcBenchOptions {
    unsigned threads = 4;
    unsigned objectMb = 64; // object read by the bulk measurement
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

} // namespace lutra::tools
