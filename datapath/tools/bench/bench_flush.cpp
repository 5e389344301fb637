// lutra-bench flush: what a lock-by-lock release of a full page cache costs with batching
// (LU-9906: many pages per shard-lock hold) and without (one page per hold), in process.
#include "bench_ior_cluster.h"
#include "bench_modes.h"
#include "core/cache/page_cache.h"

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
                     {"release_batch", cache::kDefaultBatch}};
    if (!options.target.empty()) {
        report.notes.push_back("flush runs in process: --target is not used");
    }

    if (auto status = fill(pageCache, flush.objects, pagesPerObject); !status) {
        return status;
    }
    auto batched = releaseByLock(pageCache, flush, cache::Batching::batched);
    if (!batched) {
        return batched.status();
    }
    if (auto status = fill(pageCache, flush.objects, pagesPerObject); !status) {
        return status;
    }
    auto onePage = releaseByLock(pageCache, flush, cache::Batching::onePage);
    if (!onePage) {
        return onePage.status();
    }
    if (batched->dropped != total || onePage->dropped != total) {
        return Status(Errc::internal, "release dropped " + std::to_string(batched->dropped) +
                                          " / " + std::to_string(onePage->dropped) + " of " +
                                          std::to_string(total) + " pages");
    }
    const double batchedRate = static_cast<double>(batched->dropped) / batched->seconds;
    const double onePageRate = static_cast<double>(onePage->dropped) / onePage->seconds;
    report.results["batched_pages_per_s"] = rounded(batchedRate);
    report.results["unbatched_pages_per_s"] = rounded(onePageRate);
    report.results["batched_lock_holds"] = batched->lockHolds;
    report.results["unbatched_lock_holds"] = onePage->lockHolds;
    report.results["batched_s"] = rounded(batched->seconds);
    report.results["unbatched_s"] = rounded(onePage->seconds);
    report.ratios["batched_vs_unbatched"] = rounded(batchedRate / onePageRate);
    report.notes.push_back("in-process page cache, no mount: no read_ahead_stats");
    return report;
}

} // namespace lutra::tools
