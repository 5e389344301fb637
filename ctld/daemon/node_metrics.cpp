#include "daemon/node_metrics.h"

#include "core/params/value.h"

#include <charconv>

namespace lutra::ctld {

namespace {

metrics::CounterBlock toMetrics(const params::v1::CounterBlock &block, const Connection &connection)
{
    metrics::CounterBlock out;
    out.name = block.name();
    for (const auto &spec : connection.specs) {
        if (spec.name == block.name()) {
            out.help = spec.help;
        }
    }
    out.snapshotTimeNs = block.snapshot_time_ns();
    out.startTimeNs = block.start_time_ns();
    for (const auto &counter : block.counters()) {
        out.counters.push_back({counter.name(), counter.unit(), counter.samples(),
                                counter.with_min_max_sum(), counter.min(), counter.max(),
                                counter.sum()});
    }
    return out;
}

} // namespace

std::string renderNodeMetrics(const Config &config, Instances &instances, Telemetry &telemetry,
                              const metrics::DurationHistogram &flushDurations)
{
    metrics::Exposition exposition;
    exposition.node = config.node;
    exposition.flushDuration = flushDurations;
    std::map<std::string, InstanceSnapshot> latest;
    for (auto &snapshot : telemetry.latest()) {
        latest.emplace(snapshot.instance, std::move(snapshot));
    }
    for (const auto &connection : instances.connected()) {
        auto &instance = exposition.instances.emplace_back();
        instance.node = config.node;
        instance.kind = connection->info.kind;
        instance.name = connection->info.name;
        instance.version = connection->info.version;
        instance.startTimeSeconds = static_cast<double>(connection->info.startTimeNs) / 1e9;
        const auto found = latest.find(connection->info.id);
        if (found == latest.end()) {
            continue; // connected, no update yet: only its info line
        }
        for (const auto &block : found->second.counters->blocks()) {
            instance.blocks.push_back(toMetrics(block, *connection));
        }
        for (const auto &gauge : found->second.counters->gauges()) {
            std::int64_t value = 0;
            const auto &text = gauge.value();
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
            if (ec != std::errc() || end != text.data() + text.size()) {
                continue; // not a number ("clear"-only specials, strings)
            }
            metrics::NumericParam param{gauge.name(), value, {}, {}};
            for (const auto &spec : connection->specs) {
                if (spec.name == gauge.name()) {
                    param.unit = std::string(params::unitName(spec.unit));
                    param.help = spec.help;
                }
            }
            instance.params.push_back(std::move(param));
        }
    }
    return metrics::renderPrometheus(exposition);
}

} // namespace lutra::ctld
