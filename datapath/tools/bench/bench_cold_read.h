#pragma once
// lutra-bench cold-read: what reads of data the targets no longer cache cost another client's
// reads of cached data on the same targets (tcp's I/O threads are shared by both).

#include "bench_common.h"

namespace lutra::tools {

struct ColdReadBenchOptions {
    unsigned threads = 2;  // cold readers, a file each
    unsigned fileMb = 256; // each cold reader's file
    unsigned hotMb = 16;   // the other client's file, read again and again, cached on the targets
    unsigned rounds = 3;   // each: the hot reads alone and beside the cold reads, order alternating
    // Also the same on targets started with --no-cold-read-fill (the transport reads what is not
    // cached: tcp on its I/O thread), the two sides taking turns each round.
    bool compareNoFill = true;
};
// Two spawned targets; one client writes --threads files, another a --hot-mb file. Each round
// drops the cold files from the targets' page cache (POSIX_FADV_DONTNEED on the backing files),
// then measures the hot client's reads (its own cache dropped before every pass) for the cold
// readers' whole phase and, in turn, alone for as long. Ratio hot_with_cold_vs_alone (median);
// with compareNoFill also hot_with_cold_vs_alone_no_fill, fill_vs_no_fill (their quotient) and
// cold_read_fill_vs_no_fill (the cold readers' MB/s).
Result<Report> runColdReadBench(const BenchOptions &options, const ColdReadBenchOptions &cold);

} // namespace lutra::tools
