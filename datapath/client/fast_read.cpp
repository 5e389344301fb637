#include "client/fast_read.h"

#include "core/params/catalog.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace lutra::client {

namespace {

using core::kPageSize;

struct FastReadContext {
    const Engine *engine = nullptr;
    const FileData *file = nullptr;
    std::uint64_t epoch = 0;
    std::uint64_t size = 0; // the file's known size when last looked at
    // The stripe of the last read: file bytes [stripeBegin, stripeEnd) are object bytes from
    // objectBegin in object `key`. Empty at first.
    std::uint64_t stripeBegin = 1;
    std::uint64_t stripeEnd = 0;
    std::uint64_t objectBegin = 0;
    core::ObjectKey key{}; // the stripe's object (file.keys[target], kept: one chain fewer)
    // The thread's job, its tag and its job_stats counters: looked up when the job changes,
    // checked only when the job id's version moves.
    JobIds::Version jobVersion;
    char job[JobIds::kMaxJobIdLength] = {};
    std::size_t jobLength = 0;
    core::JobTag tag = 0;
    bool jobStatsBound = false; // jobStats points at `job`
    jobs::JobStats::JobRef jobStats;
    // The page the last read ended in: the next read in it skips the cache's index.
    cache::PageCache::PageHint page;
    // This thread's cells in the readahead stats (`hits`).
    params::CounterBlock::Mine readaheadCounters;
};

[[gnu::tls_model("initial-exec")]] thread_local FastReadContext t_context;

std::uint64_t engineOf(std::uint64_t epoch) noexcept
{
    return epoch >> 32;
}

// Inline, 8 bytes at a time: a job id is a few words, and a library memcmp call costs more.
bool sameJob(std::string_view job, const FastReadContext &context) noexcept
{
    if (job.size() != context.jobLength) {
        return false;
    }
    std::size_t i = 0;
    for (; i + 8 <= job.size(); i += 8) {
        std::uint64_t a = 0;
        std::uint64_t b = 0;
        std::memcpy(&a, job.data() + i, 8);
        std::memcpy(&b, context.job + i, 8);
        if (a != b) {
            return false;
        }
    }
    for (; i < job.size(); ++i) {
        if (job[i] != context.job[i]) {
            return false;
        }
    }
    return true;
}

} // namespace

std::uint64_t Engine::fastEpochStart() noexcept
{
    static std::atomic<std::uint64_t> engines{0};
    return (engines.fetch_add(1, std::memory_order_relaxed) + 1) << 32;
}

std::uint64_t knownFileSize(const FileData &file, const StripeLayout &layout) noexcept
{
    std::uint64_t size = 0;
    for (std::size_t t = 0; t < file.objects.size(); ++t) {
        size = std::max(
            size, layout.fileSizeFrom(static_cast<std::uint32_t>(t), file.objects[t]->size.load()));
    }
    return size;
}

bool fastRead(Engine &engine, FileData &file, std::uint64_t offset, std::span<std::byte> out)
{
    if (out.empty() || !engine.fastRead.load(std::memory_order_relaxed)) {
        return false;
    }
    const StripeLayout &layout = engine.options.layout;
    FastReadContext &context = t_context;
    const std::uint64_t epoch = engine.fastEpoch.load(std::memory_order_acquire);
    if (context.engine != &engine || context.file != &file || context.epoch != epoch) {
        if (context.engine != &engine || engineOf(context.epoch) != engineOf(epoch)) {
            context = FastReadContext{}; // another engine: its job tags are its own
        }
        context.stripeBegin = 1; // no stripe known
        context.stripeEnd = 0;
        context.engine = &engine;
        context.file = &file;
        context.epoch = epoch;
        context.size = knownFileSize(file, layout);
    }
    const std::uint64_t end = offset + out.size();
    if (end > context.size || end < offset) {
        // Written since (by this client), or past the end: look again; the full path refreshes
        // sizes from the targets and answers end of file.
        context.size = knownFileSize(file, layout);
        if (end > context.size || end < offset) {
            return false;
        }
    }
    const core::PageIndex firstPage = offset / kPageSize;
    const std::uint64_t marker = file.marker.load(std::memory_order_relaxed);
    if (marker >= firstPage && marker <= (end - 1) / kPageSize) {
        return false; // the slow path starts the next readahead window
    }
    if (offset < context.stripeBegin || end > context.stripeEnd) {
        const auto piece = layout.pieceAt(offset, out.size());
        if (piece.length != out.size()) {
            return false; // crosses a stripe boundary
        }
        const std::uint64_t within = offset % layout.stripeSize;
        context.stripeBegin = offset - within;
        context.stripeEnd = context.stripeBegin + layout.stripeSize;
        context.objectBegin = piece.objectOffset - within;
        context.key = file.keys[piece.target];
    }
    const std::uint64_t objectOffset = context.objectBegin + (offset - context.stripeBegin);
    // A read that continues in the page the previous one ended in is not a new reference.
    const std::uint64_t prev = file.prevPos.load(std::memory_order_relaxed);
    const bool continues =
        prev != cache::kNoPosition && prev != 0 && (prev - 1) / kPageSize == firstPage;
    if (const JobIds::Version version = engine.jobs.version(); version != context.jobVersion) {
        const std::string_view job = engine.jobs.current();
        if (!sameJob(job, context)) {
            context.jobLength = std::min(job.size(), sizeof context.job);
            std::memcpy(context.job, job.data(), context.jobLength);
            context.tag = engine.jobs.tag(job);
            context.jobStatsBound = false;
        }
        context.jobVersion = version;
    }
    const std::size_t got =
        engine.cache.readCached(context.key, objectOffset, out, context.tag,
                                continues ? objectOffset + 1 : cache::kNoPosition, &context.page);
    if (got != out.size()) {
        return false;
    }
    // Lustre's `hits`: pages a read found in the cache.
    engine.readahead.stats().add(context.readaheadCounters, params::catalog::ra_hits,
                                 (objectOffset + got - 1) / kPageSize - objectOffset / kPageSize +
                                     1);
    file.prevPos.store(end, std::memory_order_relaxed);
    if (context.jobStatsBound) {
        engine.jobStats.sample(context.jobStats, jobs::JobStats::read_bytes,
                               static_cast<std::int64_t>(got));
    } else {
        engine.jobStats.sample(context.jobStats, std::string_view(context.job, context.jobLength),
                               jobs::JobStats::read_bytes, static_cast<std::int64_t>(got));
        context.jobStatsBound = true;
    }
    return true;
}

} // namespace lutra::client
