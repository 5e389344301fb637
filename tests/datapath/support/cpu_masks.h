#pragma once
// CPU masks for tests of placement rules: the CPUs this thread may run on, and the first of
// them alone (a host of one CPU, as a pinned process sees it).

#include <sched.h>

namespace lutra::testing {

struct CpuMasks {
    cpu_set_t allowed; // sched_getaffinity of the calling thread
    cpu_set_t one;     // the first CPU of `allowed`
    bool ok = false;   // sched_getaffinity succeeded
};

inline CpuMasks cpuMasks()
{
    CpuMasks masks{};
    masks.ok = sched_getaffinity(0, sizeof masks.allowed, &masks.allowed) == 0;
    CPU_ZERO(&masks.one);
    for (int cpu = 0; masks.ok && cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &masks.allowed)) {
            CPU_SET(cpu, &masks.one);
            break;
        }
    }
    return masks;
}

} // namespace lutra::testing
