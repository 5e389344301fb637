#pragma once
// The Prometheus text format 0.0.4 itself: escaping, names, numbers, and families written
// together whatever order their samples arrive in.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lutra::ctld::metrics {

enum class MetricType { counter, gauge, histogram, summary };

using Labels = std::vector<std::pair<std::string, std::string>>;

// Label values: backslash, double quote and newline escaped; invalid UTF-8 becomes U+FFFD
// (Prometheus refuses a scrape with invalid UTF-8 in it).
std::string escapeLabelValue(std::string_view text);
// # HELP text: backslash and newline escaped, invalid UTF-8 replaced.
std::string escapeHelp(std::string_view text);
// A piece of a metric name from outside text: anything but [A-Za-z0-9_] becomes '_'.
std::string namePart(std::string_view text);

std::string formatNumber(double value); // shortest exact text; whole numbers without exponent
std::string formatNumber(std::uint64_t value);
std::string formatNumber(std::int64_t value);

// Families by name; each family keeps its samples in the order they were added, and a series
// (suffix + labels) appears once: a repeated one is dropped.
class FamilySet {
public:
    // Adds one sample. The family is created by its first sample, with that type and help; a
    // sample that names an existing family with another type is dropped (false).
    bool add(std::string_view family, MetricType type, std::string_view help,
             std::string_view suffix, const Labels &labels, std::string_view value);

    std::string render() const;

private:
    struct Family {
        MetricType type;
        std::string help;
        std::vector<std::string> lines;
        std::set<std::string, std::less<>> series;
    };
    std::map<std::string, Family, std::less<>> m_families;
};

} // namespace lutra::ctld::metrics
