#include "core/readahead.h"

#include <limits>

namespace lutra::console {

double hitRatio(double hits, double misses)
{
    const double total = hits + misses;
    // Also catches NaN inputs: a ratio of unknown rates is unknown.
    if (!(total > 0)) {
        return std::numeric_limits<double>::quiet_NaN();
    }
    return hits / total;
}

bool isReadaheadBlock(const QString &blockName)
{
    return blockName == QLatin1String("read_ahead_stats") ||
           blockName.endsWith(QLatin1String(".read_ahead_stats"));
}

} // namespace lutra::console
