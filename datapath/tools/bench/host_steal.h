#pragma once
// The share of this machine's CPU time its host took for others while a bench ran (the `steal`
// column of /proc/stat): a virtual machine's runs with steal are slowed by its neighbours, not by
// what they measure, so their ratios mean little.

#include <cstdint>
#include <optional>

namespace lutra::tools {

struct CpuTimes {
    std::uint64_t total = 0; // every column, steal included (clock ticks)
    std::uint64_t steal = 0;
};

// The whole machine's CPU times so far; nullopt when /proc/stat cannot be read.
std::optional<CpuTimes> readCpuTimes();

// Steal between two readings, in percent of all CPU time between them (0 when none passed).
double stealPercent(const CpuTimes &before, const CpuTimes &after);

// A run with more steal than this gets a note that its numbers are disturbed.
inline constexpr double kDisturbingStealPercent = 5.0;

} // namespace lutra::tools
