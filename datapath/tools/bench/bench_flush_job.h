#pragma once
// lutra-bench flush-job: one job's flush (Mount::flushJob) while other jobs keep running.

#include "bench_common.h"

namespace lutra::tools {

struct FlushJobBenchOptions {
    unsigned others = 2;   // other jobs, one thread each, reading and rewriting their own file
    unsigned otherMb = 32; // each other job's file
    unsigned jobMb = 16;   // the flushed job's data per flush: half read, half written
    unsigned rounds = 5;   // flushes with the others paused, and with them running
};
// Flush latency among running jobs against the same flush with them paused, and the other
// jobs' throughput in windows with a flush against windows without one (same run).
Result<Report> runFlushJobBench(const BenchOptions &options, const FlushJobBenchOptions &flushJob);

} // namespace lutra::tools
