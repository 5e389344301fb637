#pragma once
// Reads the job_stats text of a datapath process (Lustre's format) back into counters.

#include <lutra/status.h>

#include "lutra/ctl/v1/ctl.pb.h"

#include <string_view>
#include <vector>

namespace lutra::ctld {

// "job_stats:\n- job_id: x\n  snapshot_time: 1.0 secs.nsecs\n  read_bytes: { samples: ... }".
// Parsed line by line rather than as YAML: job ids are written unquoted and may hold characters
// YAML gives meaning to. Errors name the line.
Result<std::vector<ctl::v1::JobStat>> parseJobStats(std::string_view text);

} // namespace lutra::ctld
