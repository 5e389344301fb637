#pragma once
// lutra-bench --split-cpus: the spawned targets on one part of this process's CPUs, the bench
// (the client) on the rest, as a client and its targets on separate hosts would be. On one host
// with shared cores the scheduler's placement of both processes' threads can decide a ratio
// (datapath/client/README.md, "Session 13").

#include <lutra/status.h>

#include <sys/types.h>

#include <string>
#include <vector>

namespace lutra::tools {

struct CpuSplit {
    std::vector<int> targets; // the first half of the allowed CPUs (at least one)
    std::vector<int> client;  // the rest
};

// The CPUs this thread may run on, split in two; fails with fewer than two.
Result<CpuSplit> splitAllowedCpus();

// Pins the calling thread, and every thread it starts from now on, to `cpus`.
Status pinThisThread(const std::vector<int> &cpus);

// "0,2,3": how a report names a set of CPUs.
std::string cpuList(const std::vector<int> &cpus);

// Where process `pid` may run, as the kernel says (/proc/<pid>/status Cpus_allowed_list, "0-1").
Result<std::string> allowedCpusOf(pid_t pid);

} // namespace lutra::tools
