#pragma once
// lutra-ctl-bench soak's kinds: faults of the control plane (lutra-ctld, lutractl -H) over real
// processes, run by the soak framework the datapath's bench shares (bench_soak.h).

#include "bench_soak.h"

namespace lutra::tools {

// kill -9 of lutra-ctld mid profile apply (and sometimes again while it starts).
Status soakCtldKill(std::uint64_t seed, unsigned cycles, SoakTally &tally);
// kill -9 of a node's datapath process during `lutractl -H ... set_param`.
Status soakDatapathRestart(std::uint64_t seed, unsigned cycles, SoakTally &tally);
// SIGSTOP of one lutra-ctld during `lutractl -H ... flush --job`.
Status soakNodeStop(std::uint64_t seed, unsigned cycles, SoakTally &tally);

} // namespace lutra::tools
