#pragma once
// CPU masks for tests of placement rules: the CPUs this thread may run on, and the first of
// them alone (a host of one CPU, as a pinned process sees it), and a guard that pins to one.

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

// Pins the calling thread to `mask` for its lifetime and back to `allowed` after, so threads
// started meanwhile inherit `mask` (as a host of those CPUs would start them) and a failed check
// cannot leave the test thread pinned.
class PinnedTo {
public:
    PinnedTo(const cpu_set_t &mask, const cpu_set_t &allowed)
        : m_allowed(allowed), m_ok(sched_setaffinity(0, sizeof mask, &mask) == 0)
    {
    }
    ~PinnedTo() { sched_setaffinity(0, sizeof m_allowed, &m_allowed); }
    PinnedTo(const PinnedTo &) = delete;
    PinnedTo &operator=(const PinnedTo &) = delete;
    bool ok() const { return m_ok; }

private:
    const cpu_set_t &m_allowed;
    const bool m_ok;
};

} // namespace lutra::testing
