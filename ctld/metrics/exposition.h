#pragma once
// What ctld exposes on /metrics, as plain data: the datapath processes of the node with their
// counter blocks and selected numeric parameters, and ctld's own flush-duration histogram.
// The structs mirror lutra.params.v1 (CounterBlock, Counter) field by field, so ctld fills them
// straight from the gRPC messages it already receives.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld::metrics {

// lutra.params.v1.Counter: one Lustre stats line ("hits 42 samples [pages]").
struct Counter {
    std::string name; // "hits"
    std::string unit; // "pages", "reqs", "bytes", "usecs", ...
    std::uint64_t samples = 0;
    bool withMinMaxSum = false;
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::int64_t sum = 0;
};

// lutra.params.v1.CounterBlock: one counter block of one datapath process.
struct CounterBlock {
    std::string name; // "llite.lutra.read_ahead_stats"
    std::string help; // the block's ParamSpec.help, for # HELP ("" for a default)
    std::int64_t snapshotTimeNs = 0;
    std::int64_t startTimeNs = 0;  // creation or last clear
    std::vector<Counter> counters; // every counter, zero or not
};

// A numeric parameter worth watching (lock_count, lru_size, max_cached_mb, cached_pages, ...):
// its value in the parameter's base unit, as the registry keeps it.
struct NumericParam {
    std::string name; // "ldlm.namespaces.ost0.lock_count"
    std::int64_t value = 0;
    std::string unit; // ParamSpec.unit: "pages", "MiB", "bytes", "s", "ms" or ""
    std::string help; // ParamSpec.help ("" for a default)
};

// One datapath process on the node (what its control socket's describe call returns).
struct DatapathInstance {
    std::string node;            // the node's name, as ctld.yaml gives it
    std::string kind;            // "target", "bench", "client"
    std::string name;            // "ost0"
    std::string version;         // "" when unknown
    double startTimeSeconds = 0; // since the epoch; 0 when unknown
    std::vector<CounterBlock> blocks;
    std::vector<NumericParam> params;
};

// ctld's own histogram of job flush durations (one observation per flush request).
struct DurationHistogram {
    std::vector<double> upperBounds;   // seconds, strictly increasing
    std::vector<std::uint64_t> counts; // per bucket, not cumulative; one more than upperBounds:
                                       // the last holds observations above every bound
    double sumSeconds = 0;

    // 1 ms … 2 min: a flush releases pages and locks of one job on one node.
    static DurationHistogram withDefaultBounds();
    void observe(double seconds);
    std::uint64_t count() const noexcept;
};

struct Exposition {
    std::string node; // ctld's node, for ctld's own metrics
    std::vector<DatapathInstance> instances;
    DurationHistogram flushDuration = DurationHistogram::withDefaultBounds();
};

// The HTTP Content-Type of renderPrometheus's output.
inline constexpr std::string_view kContentType = "text/plain; version=0.0.4; charset=utf-8";

// Prometheus text exposition format 0.0.4: every family once, with # HELP and # TYPE, families
// sorted by name, label values escaped, invalid UTF-8 replaced. Metric names: README.md.
std::string renderPrometheus(const Exposition &exposition);

} // namespace lutra::ctld::metrics
