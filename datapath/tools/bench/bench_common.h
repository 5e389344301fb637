#pragma once
// What every lutra-bench mode shares: the report, the transport, timed multi-threaded loops.

#include <lutra/status.h>
#include <lutra/transport.h>

#include "transport/loader.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::tools {

struct BenchOptions {
    bool json = false;
    std::string target;       // a running target's URI; empty: spawn one
    std::string rawBaseline;  // with --target: its raw baseline URI, if it serves one
    std::string targetBinary; // empty: lutra-target next to lutra-bench
    double durationSeconds = 2.0;
    // --set NAME=VALUE, applied to the mounted client's tunables in order before the workload (a
    // mode's own settings, such as ior-easy's conns_per_target, still apply over them).
    std::vector<std::string> settings;
    // The client's transport I/O threads (MountOptions::transportIoThreads); 0: automatic, one
    // per CPU this process may use, 1 to 2.
    std::uint32_t transportIoThreads = 0;
};

// {"mode", "params", "results", "ratios"}; printed as JSON or as a table.
struct Report {
    std::string mode;
    nlohmann::json params = nlohmann::json::object();
    nlohmann::json results = nlohmann::json::object();
    nlohmann::json ratios = nlohmann::json::object();
    std::vector<std::string> notes;

    void print(bool json) const;
};

// What a bench program's main returns for a mode's outcome: 1 with the error on stderr, else the
// report printed and 0 — or 1 for a soak that found a violation, so scripts and CI can rely on it.
int finishBench(std::string_view program, const Result<Report> &report, bool json);

// The plugin for `uri`'s scheme, loaded by name, with a transport instance.
struct TransportHandle {
    std::unique_ptr<transport::PluginLoader> loader;
    std::unique_ptr<transport::Transport> transport;
    std::string name;
};
Result<TransportHandle> openTransport(const std::string &uri, std::uint64_t maxBulkBytes,
                                      std::uint32_t ioThreads = 0);

struct Measurement {
    std::uint64_t operations = 0;
    std::uint64_t bytes = 0;
    double seconds = 0;
    Status firstError;

    double perSecond() const { return seconds > 0 ? static_cast<double>(operations) / seconds : 0; }
    double megabytesPerSecond() const
    {
        return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e6 : 0;
    }
};

// Runs `operation(thread)` in a loop on `threads` threads for `seconds`. An operation returns the
// bytes it moved, or an error that stops its thread (the first error is kept).
Measurement measure(unsigned threads, double seconds,
                    const std::function<Result<std::uint64_t>(unsigned)> &operation);

// Rounds for reports: 3 significant decimals.
double rounded(double value);
// The middle value (the mean of the two middle ones for an even count); 0 when empty.
double median(std::vector<double> values);

} // namespace lutra::tools
