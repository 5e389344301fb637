#pragma once
// --loop: a lutra-bench mode as a live datapath process. The workload repeats under the job id
// of --job until SIGTERM/SIGINT while the process serves its control socket, so ctld, the demo
// and tests can read its counters and flush its job.

#include "bench_ior_cluster.h"

#include <functional>

namespace lutra::tools {

// True once SIGTERM or SIGINT arrived (after installStopHandlers).
bool stopRequested() noexcept;
void installStopHandlers();

// Without --loop: runs `iteration` once. With it: serves bench-<name>.sock (FlushJob calls
// Mount::flushJob) and runs `iteration` again and again until a stop is requested.
Status repeatWorkload(BenchCluster &cluster, const std::function<Status()> &iteration);

} // namespace lutra::tools
