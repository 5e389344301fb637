#include "core/aggregate.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace lutra::console {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// `values` holds no NaN; it is reordered.
Spread spreadOf(std::vector<double> &values)
{
    Spread result;
    result.count = static_cast<int>(values.size());
    if (values.empty()) {
        result.min = kNaN;
        result.median = kNaN;
        result.max = kNaN;
        return result;
    }
    const auto [low, high] = std::minmax_element(values.begin(), values.end());
    result.min = *low;
    result.max = *high;
    const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), middle, values.end());
    result.median = *middle;
    if (values.size() % 2 == 0) {
        // nth_element leaves the lower half before `middle`: its largest is the other middle.
        result.median = (*std::max_element(values.begin(), middle) + *middle) / 2;
    }
    return result;
}

QList<int> orderedIndices(const QList<double> &values, int n, bool highest)
{
    if (n <= 0) {
        return {};
    }
    QList<int> indices;
    indices.reserve(values.size());
    for (qsizetype i = 0; i < values.size(); ++i) {
        if (!std::isnan(values[i])) {
            indices.append(static_cast<int>(i));
        }
    }
    std::stable_sort(indices.begin(), indices.end(), [&](int a, int b) {
        return highest ? values[a] > values[b] : values[a] < values[b];
    });
    if (indices.size() > n) {
        indices.resize(n);
    }
    return indices;
}

} // namespace

Spread spread(const QList<double> &values)
{
    std::vector<double> kept;
    kept.reserve(static_cast<std::size_t>(values.size()));
    for (const double value : values) {
        if (!std::isnan(value)) {
            kept.push_back(value);
        }
    }
    return spreadOf(kept);
}

QList<int> lowestN(const QList<double> &values, int n)
{
    return orderedIndices(values, n, false);
}

QList<int> highestN(const QList<double> &values, int n)
{
    return orderedIndices(values, n, true);
}

QList<double> bucketMeans(const QList<QPointF> &points, double xMin, double xMax, int buckets)
{
    if (buckets <= 0) {
        return {};
    }
    QList<double> sums(buckets, 0.0);
    std::vector<int> counts(static_cast<std::size_t>(buckets), 0);
    const double width = (xMax - xMin) / buckets;
    if (width > 0) {
        auto it = std::lower_bound(points.cbegin(), points.cend(), xMin,
                                   [](const QPointF &p, double x) { return p.x() < x; });
        for (; it != points.cend() && it->x() < xMax; ++it) {
            if (std::isnan(it->y())) {
                continue;
            }
            // Rounding can put a point just below xMax one past the last bucket.
            const int b = std::min(static_cast<int>((it->x() - xMin) / width), buckets - 1);
            sums[b] += it->y();
            ++counts[static_cast<std::size_t>(b)];
        }
    }
    for (int b = 0; b < buckets; ++b) {
        const int count = counts[static_cast<std::size_t>(b)];
        sums[b] = count > 0 ? sums[b] / count : kNaN;
    }
    return sums;
}

QList<BandPoint> spreadOverTime(const QList<QList<QPointF>> &nodes, double xMin, double xMax,
                                int buckets)
{
    if (buckets <= 0) {
        return {};
    }
    QList<QList<double>> means;
    means.reserve(nodes.size());
    for (const auto &node : nodes) {
        means.append(bucketMeans(node, xMin, xMax, buckets));
    }
    return spreadOfBuckets(means, xMin, xMax, buckets);
}

QList<BandPoint> spreadOfBuckets(const QList<QList<double>> &means, double xMin, double xMax,
                                 int buckets)
{
    if (buckets <= 0) {
        return {};
    }
    const double width = (xMax - xMin) / buckets;
    QList<BandPoint> result;
    result.reserve(buckets);
    std::vector<double> values;
    values.reserve(means.size());
    for (int b = 0; b < buckets; ++b) {
        values.clear();
        for (const auto &node : means) {
            if (b < node.size() && !std::isnan(node[b])) {
                values.push_back(node[b]);
            }
        }
        result.append(BandPoint{xMin + (b + 0.5) * width, spreadOf(values)});
    }
    return result;
}

} // namespace lutra::console
