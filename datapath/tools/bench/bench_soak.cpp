#include "bench_soak.h"

#include <chrono>
#include <cstdio>
#include <map>

namespace lutra::tools {

void SoakTally::violation(unsigned cycle, const std::string &what)
{
    ++violations;
    if (firstViolations.size() < kMaxReported) {
        firstViolations.push_back("cycle " + std::to_string(cycle) + ": " + what);
    }
}

void SoakTally::outcome(const std::string &name, std::uint64_t add)
{
    outcomes[name] = outcomes.value(name, std::uint64_t{0}) + add;
}

const std::vector<std::string> &soakKinds()
{
    static const std::vector<std::string> kinds = {"target-kill", "ctld-kill", "job-flush",
                                                   "datapath-restart", "node-stop"};
    return kinds;
}

Result<Report> runSoakBench(const BenchOptions & /*options*/, const SoakOptions &soak)
{
    using Runner = Status (*)(std::uint64_t, unsigned, SoakTally &);
    const std::map<std::string, Runner> runners = {{"target-kill", soakTargetKill},
                                                   {"ctld-kill", soakCtldKill},
                                                   {"job-flush", soakJobFlush},
                                                   {"datapath-restart", soakDatapathRestart},
                                                   {"node-stop", soakNodeStop}};
    const auto kinds = soak.kinds.empty() ? soakKinds() : soak.kinds;
    for (const auto &kind : kinds) {
        if (runners.count(kind) == 0) {
            return Status(Errc::invalid_argument, "unknown soak kind '" + kind + "'");
        }
    }
    const std::uint64_t seed =
        soak.seed != 0 ? soak.seed
                       : static_cast<std::uint64_t>(
                             std::chrono::steady_clock::now().time_since_epoch().count()) |
                             1;
    // Printed first, so that a run that dies can still be replayed with --seed.
    std::fprintf(stderr, "lutra-bench soak: seed %llu\n", static_cast<unsigned long long>(seed));

    Report report;
    report.mode = "soak";
    report.params = {{"cycles", soak.cycles}, {"seed", seed}, {"kinds", kinds}};
    std::uint64_t total = 0;
    for (const auto &kind : kinds) {
        SoakTally tally;
        const auto began = std::chrono::steady_clock::now();
        // A setup failure (a process that would not start) ends the kind, not the run.
        const Status ran = runners.at(kind)(seed, soak.cycles, tally);
        nlohmann::json result = {
            {"cycles", tally.cycles},
            {"violations", tally.violations},
            {"outcomes", tally.outcomes},
            {"first_violations", tally.firstViolations},
            {"seconds",
             std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count()}};
        if (!ran.ok()) {
            result["error"] = ran.message();
            ++total;
        }
        total += tally.violations;
        report.results[kind] = std::move(result);
    }
    report.results["violations"] = total;
    report.notes.push_back("every check reads what the soak wrote or was acknowledged, from the "
                           "processes themselves; a kind whose setup failed counts as a violation");
    return report;
}

} // namespace lutra::tools
