// lutra-bench flush: what a lock-by-lock release of a full page cache costs with batching
// (LU-9906: many pages per shard-lock hold) and without (one page per hold), in process.
#include "bench_ior_cluster.h"
#include "bench_modes.h"
#include "core/cache/page_cache.h"

#include <chrono>

namespace lutra::tools {

namespace {

struct ReleaseRun {
    double seconds = 0;
    std::uint64_t dropped = 0;
    std::uint64_t lockHolds = 0;
    std::uint64_t kept = 0; // dirty or busy: should stay 0
};

cache::ObjectKey keyOf(unsigned object)
{
    return {0, std::uint64_t{object} + 1};
}

// Each object's pages carry that object's own lock cookie: "many locks".
Status fill(cache::PageCache &pageCache, unsigned objects, unsigned pagesPerObject)
{
    for (unsigned o = 0; o < objects; ++o) {
        for (unsigned p = 0; p < pagesPerObject; ++p) {
            auto page = pageCache.grab(keyOf(o), p, 1);
            if (!page) {
                return page.status().withContext("filling the page cache");
            }
            page->setLockCookie(std::uint64_t{o} + 1);
            page->markUptodate();
        }
    }
    return {};
}

Result<ReleaseRun> releaseByLock(cache::PageCache &pageCache, const FlushBenchOptions &flush,
                                 cache::Batching batching)
{
    std::vector<ReleaseRun> perThread(flush.threads);
    auto seconds = runPhase(flush.threads, {}, [&](unsigned t) -> Status {
        ReleaseRun &mine = perThread[t];
        for (unsigned o = t; o < flush.objects; o += flush.threads) {
            const auto counts = pageCache.releaseLock(keyOf(o), std::uint64_t{o} + 1, batching);
            mine.dropped += counts.dropped;
            mine.lockHolds += counts.lockHolds;
            mine.kept += counts.dirty + counts.busy;
        }
        return {};
    });
    if (!seconds) {
        return seconds.status();
    }
    ReleaseRun run;
    run.seconds = *seconds;
    for (const auto &mine : perThread) {
        run.dropped += mine.dropped;
        run.lockHolds += mine.lockHolds;
        run.kept += mine.kept;
    }
    return run;
}

} // namespace

Result<Report> runFlushBench(const BenchOptions &options, const FlushBenchOptions &flush)
{
    if (flush.threads == 0 || flush.objects == 0 || flush.pages < flush.objects) {
        return Status(Errc::out_of_range, "--pages must be at least --objects, both and "
                                          "--threads at least 1");
    }
    const unsigned pagesPerObject = flush.pages / flush.objects;
    const std::size_t total = std::size_t{pagesPerObject} * flush.objects;
    cache::PageCache::Options cacheOptions;
    cacheOptions.limitPages = total;
    cache::PageCache pageCache(cacheOptions);

    Report report;
    report.mode = "flush";
    report.params = {{"pages", total},
                     {"objects", flush.objects},
                     {"pages_per_object", pagesPerObject},
                     {"threads", flush.threads},
                     {"release", "releaseLock per object (its own cookie), threads split the "
                                 "objects; batched vs one page per lock hold"},
                     // The baseline is the best unbatched release, not a strawman: each hold
                     // walks the object's ring only up to its page (no rescan of the ring).
                     {"unbatched", "one page per shard-lock hold, no rescan"},
                     {"release_batch", cache::kDefaultBatch},
                     {"duration_s", options.durationSeconds}};
    if (!options.target.empty()) {
        report.notes.push_back("flush runs in process: --target is not used");
    }

    // Rounds of fill + release for each side, alternating which goes first, until --duration
    // has passed: one release takes tens of milliseconds, too short to stand out of a shared
    // machine's noise on its own, and alternating gives both sides the same moments.
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(options.durationSeconds));
    ReleaseRun batched;
    ReleaseRun onePage;
    unsigned rounds = 0;
    do {
        for (int turn = 0; turn < 2; ++turn) {
            const bool batchedTurn = (turn == 0) == (rounds % 2 == 0);
            if (auto status = fill(pageCache, flush.objects, pagesPerObject); !status) {
                return status;
            }
            auto run =
                releaseByLock(pageCache, flush,
                              batchedTurn ? cache::Batching::batched : cache::Batching::onePage);
            if (!run) {
                return run.status();
            }
            if (run->dropped != total || run->kept != 0) {
                return Status(Errc::internal, "a release dropped " + std::to_string(run->dropped) +
                                                  " of " + std::to_string(total) + " pages, kept " +
                                                  std::to_string(run->kept));
            }
            ReleaseRun &sum = batchedTurn ? batched : onePage;
            sum.seconds += run->seconds;
            sum.dropped += run->dropped;
            sum.lockHolds += run->lockHolds;
        }
        ++rounds;
    } while (Clock::now() < until && rounds < 10000);
    const double batchedRate = static_cast<double>(batched.dropped) / batched.seconds;
    const double onePageRate = static_cast<double>(onePage.dropped) / onePage.seconds;
    report.results["batched_pages_per_s"] = rounded(batchedRate);
    report.results["unbatched_pages_per_s"] = rounded(onePageRate);
    report.results["rounds"] = rounds;
    report.results["batched_lock_holds"] = batched.lockHolds / rounds; // per release
    report.results["unbatched_lock_holds"] = onePage.lockHolds / rounds;
    report.results["batched_s"] = rounded(batched.seconds);
    report.results["unbatched_s"] = rounded(onePage.seconds);
    report.ratios["batched_vs_unbatched"] = rounded(batchedRate / onePageRate);
    report.notes.push_back("in-process page cache, no mount: no read_ahead_stats");
    return report;
}

} // namespace lutra::tools
