#pragma once
// lutra-bench soak: cycles of real processes under faults (kill -9, SIGSTOP), each cycle checked
// against what the soak itself wrote or was told — never against lutra's own bookkeeping alone.

#include "bench_common.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::tools {

struct SoakOptions {
    unsigned cycles = 100;          // per kind
    std::uint64_t seed = 0;         // 0: from the clock (printed, so a run can be replayed)
    std::vector<std::string> kinds; // empty: every kind
};

// One kind's tally: cycles run, violations found (each with what was seen), and how the cycles
// came out (e.g. a crash before or after the change committed), so a run that never hit the
// interesting window shows it.
struct SoakTally {
    unsigned cycles = 0; // cycles started
    unsigned violations = 0;
    std::vector<std::string> firstViolations; // at most kMaxReported
    nlohmann::json outcomes = nlohmann::json::object();

    static constexpr std::size_t kMaxReported = 5;
    void violation(unsigned cycle, const std::string &what);
    void outcome(const std::string &name, std::uint64_t add = 1);
};

// Every kind receives the run's seed and its own cycle count; a setup failure (a process that
// does not start) is an error of the run, not a violation.
using SoakRunner = Status (*)(std::uint64_t seed, unsigned cycles, SoakTally &tally);
struct SoakKind {
    std::string name;
    SoakRunner run;
};

// The datapath's kinds (lutra-bench soak); lutra-ctl-bench (ctld/tools) has the control plane's.
Status soakTargetKill(std::uint64_t seed, unsigned cycles, SoakTally &tally);
Status soakJobFlush(std::uint64_t seed, unsigned cycles, SoakTally &tally);

// The soak subcommand (--cycles, --seed, --kinds naming `kinds`).
CLI::App *addSoakMode(CLI::App &app, SoakOptions &soak, std::span<const SoakKind> kinds);

// Runs `soak.kinds` (default: every one of `kinds`, in order); `program` starts the seed line
// ("lutra-bench soak: seed N"). {"mode": "soak", "results": {kind: {cycles, violations,
// outcomes, first_violations}}}.
Result<Report> runSoakBench(std::string_view program, const SoakOptions &soak,
                            std::span<const SoakKind> kinds);

} // namespace lutra::tools
