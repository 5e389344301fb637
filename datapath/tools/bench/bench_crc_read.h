#pragma once
// lutra-bench crc-read: the target's checksum pass of a zero-copy read, summed four ways.

#include "bench_common.h"

namespace lutra::tools {

struct CrcReadBenchOptions {
    unsigned fileMb = 256; // a cached file
    unsigned rpcKb = 1024; // one read's range
    unsigned threads = 2;  // summing at once, as service threads do
    unsigned rounds = 5;   // a pass over the file per way, the order rotating
};
// Page CRCs of every RPC-sized range of a cached file as the target's zero-copy read computes
// them: pread in 256 KiB chunks into a buffer (the baseline), an mmap of the range per read
// (populated at once, or faulted in), and the object's one mapping (ObjectMapping, faulted in,
// made and unmapped within each pass); CPU per MB of the process, same run.
Result<Report> runCrcReadBench(const BenchOptions &options, const CrcReadBenchOptions &crcRead);

} // namespace lutra::tools
