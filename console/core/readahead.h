#pragma once
// What the console derives from read_ahead_stats.

#include <QString>

namespace lutra::console {

// hits / (hits + misses); NaN when there were neither (no reads: no ratio, not 0 or 1).
double hitRatio(double hits, double misses);

// "llite.lutra.read_ahead_stats"
bool isReadaheadBlock(const QString &blockName);

} // namespace lutra::console
