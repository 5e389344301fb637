#pragma once
// The control-plane modes: what a tunable change and a job flush cost through lutra-ctld.

#include "bench_common.h"

namespace lutra::tools {

struct CtlBenchOptions {
    unsigned calls = 500; // SetParams calls measured (each also through the datapath directly)
};
// SetParams latency (p50/p99) and rate through a local lutra-ctld (plan, journal, apply, record)
// against the same SetParams sent straight to the datapath process's control socket.
Result<Report> runCtlBench(const BenchOptions &options, const CtlBenchOptions &ctl);

struct FanoutBenchOptions {
    unsigned nodes = 16;  // lutra-ctld processes on loopback, each with one lutra-target
    unsigned rounds = 10; // lutractl runs per node count
};
// `lutractl -H <nodes> flush --job` and `get_param` end to end (process start included, as in a
// Slurm epilog) for 1, 2, 4 ... nodes: n, p50, max (p90/p99 once there are enough rounds) and how
// they grow with the node count.
Result<Report> runFanoutBench(const BenchOptions &options, const FanoutBenchOptions &fanout);

} // namespace lutra::tools
