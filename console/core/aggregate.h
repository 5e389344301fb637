#pragma once
// Cross-node aggregation: what the cluster views draw instead of one series per node.

#include <QList>
#include <QPointF>

namespace lutra::console {

struct Spread {
    double min = 0;
    double median = 0;
    double max = 0;
    int count = 0; // values that were not NaN; min/median/max are NaN when 0
};

// NaN values (unreachable nodes, no reads) are left out. The median of an even count is the mean
// of the middle two.
Spread spread(const QList<double> &values);

// Indices of the n lowest non-NaN values, lowest first (highestN: highest first, a top-N list);
// ties keep index order.
QList<int> lowestN(const QList<double> &values, int n);
QList<int> highestN(const QList<double> &values, int n);

// The mean of each of `buckets` equal time buckets over [xMin, xMax); NaN where a bucket holds
// no point (or only NaN). Points sorted by x.
QList<double> bucketMeans(const QList<QPointF> &points, double xMin, double xMax, int buckets);

struct BandPoint {
    double x = 0; // the bucket's centre
    Spread spread;
};

// Per time bucket, the spread of the nodes' bucket means: a min/median/max band whose cost does
// not grow with the time resolution of the input.
QList<BandPoint> spreadOverTime(const QList<QList<QPointF>> &nodes, double xMin, double xMax,
                                int buckets);
// The same from bucket means already computed per node (bucketMeans over [xMin, xMax)): a view
// that also draws them (the heat map) buckets each node once.
QList<BandPoint> spreadOfBuckets(const QList<QList<double>> &means, double xMin, double xMax,
                                 int buckets);

} // namespace lutra::console
