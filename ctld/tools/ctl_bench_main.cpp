// lutra-ctl-bench: what the control plane costs (lutra-ctld, lutractl), measured against a
// baseline in the same run, and its fault soak. The datapath's modes are lutra-bench's.
#include "bench_control_plane.h"
#include "bench_history_year.h"
#include "ctl_soak.h"

#include <CLI/CLI.hpp>
#include <cstdio>

int main(int argc, char **argv)
{
    using namespace lutra::tools;
    CLI::App app{"lutra-ctl-bench: measure lutra-ctld and lutractl against a baseline in the "
                 "same run (ratios: lutra / baseline), and soak them under faults; --json gives "
                 "one object {mode, params, results, ratios}. Datapath modes: lutra-bench."};
    app.require_subcommand(1);
    app.fallthrough(); // `MODE --json` works as typed
    BenchOptions options;
    app.add_flag("--json", options.json, "print one JSON object");

    CtlBenchOptions ctl;
    auto *ctlMode = app.add_subcommand(
        "ctl", "parameter changes through lutra-ctld vs straight to the datapath process");
    ctlMode->add_option("--calls", ctl.calls, "SetParams calls measured")
        ->capture_default_str()
        ->check(CLI::Range(1u, 1u << 20));
    FanoutBenchOptions fanout;
    auto *fanoutMode = app.add_subcommand(
        "fanout", "lutractl -H flush --job over N lutra-ctld nodes on loopback, by node count");
    fanoutMode->add_option("--nodes", fanout.nodes, "lutra-ctld processes")
        ->capture_default_str()
        ->check(CLI::Range(1u, 256u));
    fanoutMode->add_option("--rounds", fanout.rounds, "runs per node count")
        ->capture_default_str()
        ->check(CLI::Range(1u, 10000u));

    HistoryYearOptions historyYear;
    auto *historyYearMode = addHistoryYearMode(app, historyYear);

    SoakOptions soak;
    const std::vector<SoakKind> soakKinds = {{"ctld-kill", soakCtldKill},
                                             {"datapath-restart", soakDatapathRestart},
                                             {"node-stop", soakNodeStop}};
    auto *soakMode = addSoakMode(app, soak, soakKinds);

    CLI11_PARSE(app, argc, argv);
    const auto run = [&]() -> lutra::Result<Report> {
        if (*ctlMode) {
            return runCtlBench(options, ctl);
        }
        if (*fanoutMode) {
            return runFanoutBench(options, fanout);
        }
        if (*historyYearMode) {
            return runHistoryYearBench(options, historyYear);
        }
        (void)soakMode;
        return runSoakBench("lutra-ctl-bench", soak, soakKinds);
    };
    return finishBench("lutra-ctl-bench", run(), options.json);
}
