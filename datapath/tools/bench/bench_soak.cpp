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

CLI::App *addSoakMode(CLI::App &app, SoakOptions &soak, std::span<const SoakKind> kinds)
{
    std::string names;
    for (const auto &kind : kinds) {
        names += (names.empty() ? "" : ", ") + kind.name;
    }
    auto *mode = app.add_subcommand(
        "soak", "fault soak: kill -9 / SIGSTOP real processes mid-operation and verify that "
                "nothing acknowledged is lost and no node is half-changed");
    mode->add_option("--cycles", soak.cycles, "cycles of each kind")
        ->capture_default_str()
        ->check(CLI::Range(1u, 100000u));
    mode->add_option("--seed", soak.seed, "random seed (default: from the clock, printed)");
    mode->add_option("--kinds", soak.kinds, "kinds to run: " + names + " (default: all)")
        ->delimiter(',');
    return mode;
}

Result<Report> runSoakBench(std::string_view program, const SoakOptions &soak,
                            std::span<const SoakKind> kinds)
{
    std::map<std::string, SoakRunner> runners;
    std::vector<std::string> names;
    for (const auto &kind : kinds) {
        runners.emplace(kind.name, kind.run);
        names.push_back(kind.name);
    }
    const std::vector<std::string> chosen = soak.kinds.empty() ? names : soak.kinds;
    for (const auto &kind : chosen) {
        if (runners.count(kind) == 0) {
            std::string known;
            for (const auto &name : names) {
                known += (known.empty() ? "" : ", ") + name;
            }
            return Status(Errc::invalid_argument,
                          "unknown soak kind '" + kind + "' (this program runs: " + known + ")");
        }
    }
    const std::uint64_t seed =
        soak.seed != 0 ? soak.seed
                       : static_cast<std::uint64_t>(
                             std::chrono::steady_clock::now().time_since_epoch().count()) |
                             1;
    // Printed first, so that a run that dies can still be replayed with --seed.
    std::fprintf(stderr, "%.*s soak: seed %llu\n", static_cast<int>(program.size()), program.data(),
                 static_cast<unsigned long long>(seed));

    Report report;
    report.mode = "soak";
    report.params = {{"cycles", soak.cycles}, {"seed", seed}, {"kinds", chosen}};
    std::uint64_t total = 0;
    for (const auto &kind : chosen) {
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
