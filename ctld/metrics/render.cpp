// From ctld's view of the node to Prometheus families. The naming rules live here and in
// README.md; text_format.cpp knows only the format.
#include "ctld/metrics/exposition.h"
#include "ctld/metrics/text_format.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

namespace lutra::ctld::metrics {

namespace {

constexpr double kMiB = 1048576.0;

// "llite.lutra.read_ahead_stats" -> subsystem llite, object lutra, leaf read_ahead_stats;
// "ldlm.namespaces.ost0.lock_stats" -> ldlm, ost0, lock_stats.
struct NameParts {
    std::string subsystem;
    std::string object;
    std::string leaf;
    std::string pattern; // the name with the object replaced by '*', for help texts
};

NameParts split(std::string_view dotted)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = dotted.find('.', start);
        parts.push_back(dotted.substr(start, dot - start));
        if (dot == std::string_view::npos) {
            break;
        }
        start = dot + 1;
    }
    NameParts out;
    out.leaf = parts.back();
    if (parts.size() >= 2) {
        out.subsystem = parts.front();
    }
    if (parts.size() >= 3) {
        out.object = parts[parts.size() - 2];
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) {
            out.pattern += '.';
        }
        out.pattern += parts.size() >= 3 && i == parts.size() - 2 ? "*" : std::string(parts[i]);
    }
    return out;
}

std::string_view objectLabel(std::string_view subsystem)
{
    if (subsystem == "osc" || subsystem == "obdfilter") {
        return "target";
    }
    if (subsystem == "llite") {
        return "fs";
    }
    if (subsystem == "ldlm") {
        return "namespace";
    }
    return "object";
}

Labels withObject(Labels labels, const NameParts &parts)
{
    if (!parts.object.empty()) {
        labels.emplace_back(objectLabel(parts.subsystem), parts.object);
    }
    return labels;
}

Labels with(Labels labels, std::string name, std::string value)
{
    labels.emplace_back(std::move(name), std::move(value));
    return labels;
}

std::string familyPrefix(const NameParts &parts)
{
    return parts.subsystem.empty() ? "lutra_" : "lutra_" + namePart(parts.subsystem) + "_";
}

bool endsWith(std::string_view text, std::string_view suffix)
{
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

std::string withSuffix(std::string base, std::string_view suffix)
{
    if (!endsWith(base, suffix)) {
        base += suffix;
    }
    return base;
}

// Registry help texts end with how to reset the block; that is not what a metric means.
std::string helpOf(const std::string &help, const std::string &fallback)
{
    std::string text = help.empty() ? fallback : help;
    if (const auto cut = text.find(" (write 'clear'"); cut != std::string::npos) {
        text.erase(cut);
    }
    return text;
}

// Units of Lustre stats counters: durations become seconds (Prometheus' base unit).
struct UnitInfo {
    std::string_view suffix;
    double scale = 1;
};

UnitInfo counterUnit(std::string_view unit)
{
    if (unit == "usecs" || unit == "usec" || unit == "us") {
        return {"_seconds", 1e-6};
    }
    if (unit == "nsecs" || unit == "nsec" || unit == "ns") {
        return {"_seconds", 1e-9};
    }
    if (unit == "msecs" || unit == "msec" || unit == "ms") {
        return {"_seconds", 1e-3};
    }
    if (unit == "secs" || unit == "sec" || unit == "s") {
        return {"_seconds", 1};
    }
    if (unit == "bytes") {
        return {"_bytes", 1};
    }
    if (unit == "pages") {
        return {"_pages", 1};
    }
    return {"", 1};
}

// Buckets as (upper bound, observations in this bucket only), any order.
void histogram(FamilySet &families, const std::string &family, const std::string &help,
               const Labels &labels, std::vector<std::pair<double, std::uint64_t>> buckets,
               std::optional<double> sum)
{
    std::sort(buckets.begin(), buckets.end());
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        cumulative += buckets[i].second;
        const bool lastOfBound =
            i + 1 == buckets.size() || buckets[i + 1].first != buckets[i].first;
        if (lastOfBound && !std::isinf(buckets[i].first)) {
            families.add(family, MetricType::histogram, help, "_bucket",
                         with(labels, "le", formatNumber(buckets[i].first)),
                         formatNumber(cumulative));
        }
    }
    families.add(family, MetricType::histogram, help, "_bucket", with(labels, "le", "+Inf"),
                 formatNumber(cumulative));
    if (sum) {
        families.add(family, MetricType::histogram, help, "_sum", labels, formatNumber(*sum));
    }
    families.add(family, MetricType::histogram, help, "_count", labels, formatNumber(cumulative));
}

std::optional<std::int64_t> parseInt(std::string_view text)
{
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
        return std::nullopt;
    }
    return value;
}

// osc.<target>.rpc_stats: the in-flight and pending gauges and Lustre's two histograms
// (pages per RPC in log2 buckets, RPCs in flight when each was sent). Lustre keeps no sums for
// them, so the histograms have buckets and counts only. Returns the counters it did not know.
std::vector<const Counter *> renderRpcStats(FamilySet &families, const Labels &labels,
                                            const std::string &prefix, const CounterBlock &block)
{
    struct Direction {
        std::string_view name;
        std::vector<std::pair<double, std::uint64_t>> pages;
        std::vector<std::pair<double, std::uint64_t>> inFlight;
    };
    std::array<Direction, 2> directions{Direction{"read", {}, {}}, Direction{"write", {}, {}}};
    std::vector<const Counter *> unknown;
    for (const auto &counter : block.counters) {
        bool known = false;
        for (auto &d : directions) {
            const std::string dir(d.name);
            const std::string &n = counter.name;
            const Labels dirLabels = with(labels, "direction", dir);
            if (n == dir + "_rpcs_in_flight") {
                families.add(prefix + "rpcs_in_flight", MetricType::gauge,
                             "bulk RPCs in flight now", "", dirLabels,
                             formatNumber(counter.samples));
                known = true;
            } else if (n == "pending_" + dir + "_pages") {
                families.add(prefix + "pending_pages", MetricType::gauge,
                             "pages queued for a bulk RPC", "", dirLabels,
                             formatNumber(counter.samples));
                known = true;
            } else if (n.starts_with(dir + "_pages_per_rpc_")) {
                if (auto label = parseInt(std::string_view(n).substr(dir.size() + 15))) {
                    // Lustre prints the last log2 row (1 << 31) through an int: negative.
                    const double bound = *label < 0 ? 2147483648.0 : static_cast<double>(*label);
                    d.pages.emplace_back(bound, counter.samples);
                    known = true;
                }
            } else if (n.starts_with(dir + "_rpcs_in_flight_")) {
                if (auto label = parseInt(std::string_view(n).substr(dir.size() + 16))) {
                    d.inFlight.emplace_back(static_cast<double>(*label), counter.samples);
                    known = true;
                }
            }
        }
        if (!known) {
            unknown.push_back(&counter);
        }
    }
    for (auto &d : directions) {
        const Labels dirLabels = with(labels, "direction", std::string(d.name));
        histogram(families, prefix + "pages_per_rpc",
                  "pages in each bulk RPC (Lustre's log2 rows of rpc_stats)", dirLabels,
                  std::move(d.pages), std::nullopt);
        histogram(families, prefix + "rpcs_in_flight_at_send",
                  "bulk RPCs in flight when each RPC was sent, counting itself (rpc_stats)",
                  dirLabels, std::move(d.inFlight), std::nullopt);
    }
    return unknown;
}

void renderBlock(FamilySet &families, const Labels &base, const CounterBlock &block)
{
    const NameParts parts = split(block.name);
    const Labels labels = withObject(base, parts);
    const std::string prefix = familyPrefix(parts);
    std::string stem = parts.leaf;
    if (endsWith(stem, "_stats") && stem.size() > 6) {
        stem.resize(stem.size() - 6);
    }
    stem = namePart(stem);

    std::vector<const Counter *> counters;
    if (parts.leaf == "rpc_stats") {
        counters = renderRpcStats(families, labels, prefix, block);
    } else {
        for (const auto &counter : block.counters) {
            counters.push_back(&counter);
        }
    }
    const std::string blockHelp = helpOf(block.help, "counters");
    for (const Counter *counter : counters) {
        if (!counter->withMinMaxSum) {
            families.add(prefix + stem + "_total", MetricType::counter,
                         blockHelp + " (" + parts.pattern + ": samples per event)", "",
                         with(labels, "event", counter->name), formatNumber(counter->samples));
            continue;
        }
        // A counter that keeps a sum (batch sizes, latencies): the sum and count of its
        // samples, so rate(sum) / rate(count) is the mean.
        const UnitInfo unit = counterUnit(counter->unit);
        const std::string family =
            withSuffix(prefix + stem + "_" + namePart(counter->name), unit.suffix);
        const std::string help = counter->name + " samples of " + parts.pattern +
                                 (counter->unit.empty() ? "" : " (in " + counter->unit + ")");
        families.add(family, MetricType::summary, help, "_sum", labels,
                     formatNumber(static_cast<double>(counter->sum) * unit.scale));
        families.add(family, MetricType::summary, help, "_count", labels,
                     formatNumber(counter->samples));
    }
}

void renderParam(FamilySet &families, const Labels &base, const NumericParam &param)
{
    const NameParts parts = split(param.name);
    const Labels labels = withObject(base, parts);
    std::string leaf = namePart(parts.leaf);
    double value = static_cast<double>(param.value);
    // Prometheus reserves _count for histograms and summaries: the two lock counts get names
    // of their own.
    if (parts.subsystem == "ldlm" && leaf == "lock_count") {
        leaf = "locks";
    } else if (parts.subsystem == "ldlm" && leaf == "lock_unused_count") {
        leaf = "unused_locks";
    } else if (param.unit == "MiB") {
        if (endsWith(leaf, "_mb")) {
            leaf.resize(leaf.size() - 3);
        }
        leaf += "_bytes";
        value *= kMiB;
    } else if (param.unit == "bytes") {
        leaf = withSuffix(leaf, "_bytes");
    } else if (param.unit == "s") {
        leaf = withSuffix(leaf, "_seconds");
    } else if (param.unit == "ms") {
        if (endsWith(leaf, "_ms")) {
            leaf.resize(leaf.size() - 3);
        }
        leaf = withSuffix(leaf, "_seconds");
        value /= 1000;
    }
    for (const std::string_view reserved : {"_total", "_count", "_sum", "_bucket"}) {
        if (endsWith(leaf, reserved)) {
            leaf += "_value";
        }
    }
    const bool converted = param.unit == "MiB" || param.unit == "ms";
    const std::string conversion = converted ? "converted from " + param.unit : "";
    std::string help;
    if (param.help.empty()) {
        help = "value of " + parts.pattern + (converted ? " (" + conversion + ")" : "");
    } else {
        help = helpOf(param.help, "") + " (" + parts.pattern +
               (converted ? ", " + conversion + ")" : ")");
    }
    families.add(familyPrefix(parts) + leaf, MetricType::gauge, help, "", labels,
                 formatNumber(value));
}

void renderInstance(FamilySet &families, const DatapathInstance &instance)
{
    const Labels base{{"node", instance.node}, {"kind", instance.kind}, {"process", instance.name}};
    families.add("lutra_datapath_info", MetricType::gauge,
                 "datapath processes ctld manages on this node (always 1)", "",
                 with(base, "version", instance.version), "1");
    if (instance.startTimeSeconds > 0) {
        families.add("lutra_datapath_start_time_seconds", MetricType::gauge,
                     "start time of the datapath process since the epoch", "", base,
                     formatNumber(instance.startTimeSeconds));
    }
    for (const auto &block : instance.blocks) {
        renderBlock(families, base, block);
    }
    for (const auto &param : instance.params) {
        renderParam(families, base, param);
    }
}

} // namespace

DurationHistogram DurationHistogram::withDefaultBounds()
{
    DurationHistogram h;
    h.upperBounds = {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120};
    h.counts.assign(h.upperBounds.size() + 1, 0);
    return h;
}

void DurationHistogram::observe(double seconds)
{
    counts.resize(upperBounds.size() + 1);
    const auto bucket = std::lower_bound(upperBounds.begin(), upperBounds.end(), seconds);
    ++counts[static_cast<std::size_t>(bucket - upperBounds.begin())];
    sumSeconds += seconds;
}

std::uint64_t DurationHistogram::count() const noexcept
{
    std::uint64_t total = 0;
    for (const auto c : counts) {
        total += c;
    }
    return total;
}

std::string renderPrometheus(const Exposition &exposition)
{
    FamilySet families;
    for (const auto &instance : exposition.instances) {
        renderInstance(families, instance);
    }
    const DurationHistogram &flush = exposition.flushDuration;
    std::vector<std::pair<double, std::uint64_t>> buckets;
    for (std::size_t i = 0; i < flush.counts.size(); ++i) {
        const double bound = i < flush.upperBounds.size() ? flush.upperBounds[i]
                                                          : std::numeric_limits<double>::infinity();
        buckets.emplace_back(bound, flush.counts[i]);
    }
    histogram(families, "lutra_ctld_flush_duration_seconds",
              "time ctld took to flush a job (pages and locks) on this node's datapath processes",
              Labels{{"node", exposition.node}}, std::move(buckets), flush.sumSeconds);
    return families.render();
}

} // namespace lutra::ctld::metrics
