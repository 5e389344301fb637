#pragma once
// Reads the job_stats text of a datapath process (Lustre's format) back into counters.

#include <lutra/status.h>

#include "core/params/counters.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld {

// "job_stats:\n- job_id: x\n  snapshot_time: 1.0 secs.nsecs\n  read_bytes: { samples: ... }".
// Parsed line by line rather than as YAML: job ids are written unquoted and may hold characters
// YAML gives meaning to. Errors name the line.
// One job's counters in one datapath process's job_stats block.
struct JobStat {
    std::string instance;
    std::string block; // "llite.lutra.job_stats"
    std::string jobId;
    std::int64_t snapshotTimeS = 0;
    std::vector<params::CounterReading> counters;
};

Result<std::vector<JobStat>> parseJobStats(std::string_view text);

} // namespace lutra::ctld
