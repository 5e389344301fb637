#pragma once
// ior-easy's plain-TCP baselines: the same per-thread files streamed from the targets' raw
// baseline endpoints (target/raw_baseline.h) without lutra, three ways.

#include "bench_ior_cluster.h"
#include "bench_modes.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lutra::tools {

// The path of thread t's ior-easy file (and of its stripe objects on the targets).
std::string easyPath(unsigned thread);

// One connection per thread sending from a memory buffer: the network alone, no file data.
Result<double> rawMemoryStream(const std::vector<std::string> &rawUris,
                               const IorEasyBenchOptions &ior, const LoopOptions &loop);

// The best a plain TCP file server does with the same data: thread t opens a connection to every
// target, each sends its object of t's file from the target's page cache with sendfile, and the
// thread receives the file's bytes in file order (stripe by stripe, as the layout places them)
// into its transfer buffer, as lutra's reader gets them.
Result<double> rawObjectStream(const std::vector<std::string> &rawUris,
                               const IorEasyBenchOptions &ior, std::uint64_t stripeSize,
                               const LoopOptions &loop);

// The least work any caching client does for the same reads: the object stream above, received
// into cache memory (one page per file page, distinct memory as a page cache is) a readahead
// window ahead of the reader, each page's crc32c computed as it lands (while it is still in the
// CPU's cache) when checksums are on, then copied out into the reader's transfer buffer. No RPCs,
// no locks, no index, no eviction: what lutra adds beyond this is its own cost; what this adds
// beyond rawObjectStream is the cost of caching (a second copy, and data that left the CPU's
// cache between arrival and read).
class CachingClientFloor {
public:
    // Memory for `threads` files of `fileBytes`, touched once here so no round pays page faults.
    CachingClientFloor(unsigned threads, std::uint64_t fileBytes);

    Result<double> run(const std::vector<std::string> &rawUris, const IorEasyBenchOptions &ior,
                       std::uint64_t stripeSize, std::uint64_t readaheadBytes, bool checksums,
                       const LoopOptions &loop);

private:
    std::vector<std::unique_ptr<std::byte[]>> m_cache; // one file's pages per thread
    std::uint64_t m_fileBytes = 0;
};

} // namespace lutra::tools
