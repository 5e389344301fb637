#pragma once
// lutra-console --bench: the GUI thread's cost per frame with N synthetic nodes, each with an hour
// of stored history and one live update per frame, through the real controller, models and views
// (offscreen). Prints JSON; `frame_<max>_vs_<min>` is the ratio the design promises stays small
// (aggregation and decimation make the cost independent of the node count).

#include <QString>

namespace lutra::console {

int runConsoleBench(const QString &nodeCounts, int frames);

} // namespace lutra::console
