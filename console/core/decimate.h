#pragma once
// Min/max decimation: at most two points per pixel column keep every peak and dip visible.

#include <QList>
#include <QPointF>

namespace lutra::console {

// Points sorted by x. Those outside [xMin, xMax] are dropped. When more than 2 × buckets remain,
// each bucket is reduced to its min and max point, in x order. A NaN y (a gap: node unreachable)
// is kept as one NaN point where it falls (a run of NaN as one), so the line breaks there; a gap
// inside a bucket splits it, each side keeping its own min and max. At most 2 × buckets points
// plus 3 per gap come back. O(n); buckets < 1 counts as 1.
QList<QPointF> decimateMinMax(const QList<QPointF> &points, double xMin, double xMax, int buckets);

} // namespace lutra::console
