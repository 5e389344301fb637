#pragma once
// lutra-console --bench: the GUI thread's cost per frame with N synthetic nodes, each with an hour
// of stored history and one live update per frame, through the real controller, models and views
// (offscreen). Prints JSON; `frame_<max>_vs_<min>` is the ratio the design promises stays small
// (aggregation and decimation make the cost independent of the node count).

#include "net/endpoint.h"

#include <QString>

namespace lutra::console {

int runConsoleBench(const QString &nodeCounts, int frames);

// lutra-console --bench-streams N: what N consoles' counter streams cost one lutra-ctld (its
// CPU time from /proc/<pid>/stat over `seconds` with no console stream, then with N). ctld serves
// every stream from its own cache, so the cost per stream must stay a serialisation, not a call to
// the datapath processes. Prints JSON.
int runStreamsBench(const Endpoint &node, qint64 ctldPid, int streams, int seconds);

} // namespace lutra::console
