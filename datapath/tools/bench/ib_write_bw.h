#pragma once
// perftest's ib_write_bw run by lutra-bench itself (server and client on this host's RDMA
// device), so `rpc --transport verbs` compares against the device's own ceiling measured in the
// same run rather than a number typed in.

#include <lutra/status.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

namespace lutra::tools {

struct IbWriteBwOptions {
    std::string binary = "ib_write_bw"; // looked up in PATH unless it has a slash
    std::string device;                 // -d; empty: perftest's first RDMA device
    std::string address = "127.0.0.1";  // the server's address the client connects to
    int gidIndex = 1;                   // -x; RoCE v2 over IPv4 on rxe; negative: perftest's
    std::size_t bytes = std::size_t{1} << 20;
    unsigned iterations = 64; // -n, per queue pair (its duration mode -D counts 0 under TCG)
    unsigned qps = 1;         // -q: queue pairs writing at once (lutra's connections)
    std::chrono::seconds timeout{180};
};

// Runs the server, then the client against it (retried while the server is up and not yet
// listening); returns the client's "BW average[MB/sec]" (perftest's MB is MiB). A run that
// reports 0 MB/s (perftest's cycle clock misread, seen under emulation) is run once more. Errors
// name the step and carry the output of the side that failed.
Result<double> measureIbWriteBw(const IbWriteBwOptions &options);

// The "BW average[MB/sec]" column of the result row for `bytes` in ib_write_bw's output; a row
// with an average of 0 is out_of_range, one that is not a number invalid_argument.
Result<double> parseIbWriteBwAverage(std::string_view output, std::size_t bytes);

} // namespace lutra::tools
