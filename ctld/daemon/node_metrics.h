#pragma once
// /metrics of a node: the latest counters and gauges of every instance, in Prometheus text.

#include "ctld/metrics/exposition.h"
#include "daemon/config.h"
#include "daemon/instances.h"
#include "daemon/telemetry.h"

#include <string>

namespace lutra::ctld {

std::string renderNodeMetrics(const Config &config, Instances &instances, Telemetry &telemetry,
                              const metrics::DurationHistogram &flushDurations);

} // namespace lutra::ctld
