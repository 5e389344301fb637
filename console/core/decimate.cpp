#include "core/decimate.h"

#include <algorithm>
#include <cmath>

namespace lutra::console {

QList<QPointF> decimateMinMax(const QList<QPointF> &points, double xMin, double xMax, int buckets)
{
    if (!(xMin <= xMax)) {
        return {};
    }
    const auto first = std::lower_bound(points.cbegin(), points.cend(), xMin,
                                        [](const QPointF &p, double x) { return p.x() < x; });
    const auto last = std::upper_bound(first, points.cend(), xMax,
                                       [](double x, const QPointF &p) { return x < p.x(); });
    const qsizetype count = last - first;
    buckets = std::max(buckets, 1);
    if (count <= 2 * qsizetype(buckets)) {
        if (count == points.size()) {
            return points; // shared, not copied
        }
        return QList<QPointF>(first, last);
    }

    qsizetype gaps = 0;
    bool inGap = false;
    for (auto it = first; it != last; ++it) {
        const bool nan = std::isnan(it->y());
        if (nan && !inGap) {
            ++gaps;
        }
        inGap = nan;
    }
    QList<QPointF> result;
    result.reserve(std::min(count, 2 * qsizetype(buckets) + 3 * gaps));

    const double width = (xMax - xMin) / buckets;
    auto bucketOf = [&](double x) {
        if (!(width > 0)) {
            return 0;
        }
        return std::min(static_cast<int>((x - xMin) / width), buckets - 1);
    };

    // The min and max of the current stretch: the points of one bucket between gaps.
    const QPointF *low = nullptr;
    const QPointF *high = nullptr;
    auto flush = [&] {
        if (low == nullptr) {
            return;
        }
        if (low == high) {
            result.append(*low);
        } else if (low < high) {
            result.append(*low);
            result.append(*high);
        } else {
            result.append(*high);
            result.append(*low);
        }
        low = nullptr;
        high = nullptr;
    };

    int bucket = -1;
    inGap = false;
    for (auto it = first; it != last; ++it) {
        const QPointF *point = &*it;
        const int b = bucketOf(point->x());
        if (b != bucket) {
            flush();
            bucket = b;
        }
        if (std::isnan(point->y())) {
            flush();
            if (!inGap) {
                result.append(*point);
            }
            inGap = true;
            continue;
        }
        inGap = false;
        if (low == nullptr) {
            low = point;
            high = point;
            continue;
        }
        if (point->y() < low->y()) {
            low = point;
        }
        if (point->y() > high->y()) {
            high = point;
        }
    }
    flush();
    return result;
}

} // namespace lutra::console
