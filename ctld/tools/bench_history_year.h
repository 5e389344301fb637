#pragma once
// history-year: what a year of audit history costs lutra-ctld (database size, SetParams
// latency) and what history retention gives back.

#include "bench_common.h"

#include <CLI/CLI.hpp>

namespace lutra::tools {

struct HistoryYearOptions {
    unsigned days = 365;
    unsigned jobsPerDay = 200; // job-end flushes (Slurm epilog): one point, two reports each
    unsigned setsPerDay = 4;   // set_param points, two changes each
    unsigned keepDays = 90;    // the retention (max_age) applied after the load
    unsigned calls = 300;      // SetParams calls measured per phase
};

CLI::App *addHistoryYearMode(CLI::App &app, HistoryYearOptions &options);

// SetParams p50/p99 through a real lutra-ctld on an empty database (the baseline), on one
// holding the simulated year, and after pruning it to keepDays; database sizes and prune time.
Result<Report> runHistoryYearBench(const BenchOptions &options, const HistoryYearOptions &year);

} // namespace lutra::tools
