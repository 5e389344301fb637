// Store: counter history. Samples are downsampled into buckets in memory (CounterBuffer) and
// written, with retention pruning, in one transaction per flushSamples().
#include "core/params/glob.h"
#include "store/counter_buffer.h"
#include "store/sqlite.h"
#include "store/store.h"
#include "store/store_internal.h"

#include <map>
#include <optional>
#include <tuple>
#include <utility>

namespace lutra::ctld {

Status Store::recordSamples(std::string_view instance, TimePoint time,
                            std::span<const CounterValue> values)
{
    constexpr std::string_view kOperation = "record counter samples";
    if (m_closed.load(std::memory_order_relaxed)) {
        return closedError(kOperation);
    }
    if (Status status = detail::checkField("instance", instance, true); !status.ok()) {
        return failure(kOperation, status);
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (Status status = detail::checkField("counter name", values[i].name, true);
            !status.ok()) {
            return failure(kOperation, status.withContext(std::string(instance) + " sample " +
                                                          std::to_string(i + 1)));
        }
    }
    m_counters->record(instance, time, values);
    return {};
}

Result<std::uint64_t> Store::writeBuckets(const std::vector<BucketRow> &rows, std::int64_t cutoffNs)
{
    auto insertSeries = m_write->prepare(
        "INSERT INTO counter_series (instance, counter) VALUES (?1, ?2) ON CONFLICT DO NOTHING");
    auto selectSeries =
        m_write->prepare("SELECT id FROM counter_series WHERE instance = ?1 AND counter = ?2");
    // The same merge as mergeBucket(): a bucket written by an earlier flush gets the rest of
    // its samples. SET expressions all see the row as it was.
    auto upsert = m_write->prepare(
        "INSERT INTO counter_buckets (series_id, bucket_ns, last_ns, last_value, min_value, "
        "max_value) VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (series_id, bucket_ns) DO UPDATE "
        "SET last_value = CASE WHEN excluded.last_ns >= last_ns THEN excluded.last_value "
        "ELSE last_value END, last_ns = max(last_ns, excluded.last_ns), "
        "min_value = min(min_value, excluded.min_value), "
        "max_value = max(max_value, excluded.max_value)");
    for (const auto *statement : {&insertSeries, &selectSeries, &upsert}) {
        if (!statement->ok()) {
            return statement->status();
        }
    }
    // Rows come grouped by series: look the id up once per series.
    const BucketRow *previous = nullptr;
    std::int64_t seriesId = 0;
    for (const BucketRow &row : rows) {
        if (!previous || previous->instance != row.instance || previous->counter != row.counter) {
            insertSeries->reset();
            insertSeries->bind(1, row.instance).bind(2, row.counter);
            if (Status status = insertSeries->run(); !status.ok()) {
                return status;
            }
            selectSeries->reset();
            selectSeries->bind(1, row.instance).bind(2, row.counter);
            auto found = selectSeries->step();
            if (!found.ok()) {
                return found.status();
            }
            if (!*found) {
                return Status(Errc::internal, "counter series vanished inside its transaction");
            }
            seriesId = selectSeries->columnInt(0);
            selectSeries->reset();
            previous = &row;
        }
        upsert->reset();
        upsert->bind(1, seriesId)
            .bind(2, row.bucketNs)
            .bind(3, row.values.lastNs)
            .bind(4, row.values.last)
            .bind(5, row.values.min)
            .bind(6, row.values.max);
        if (Status status = upsert->run(); !status.ok()) {
            return status;
        }
    }
    if (Status status = m_write->run("DELETE FROM counter_buckets WHERE bucket_ns < ?1", cutoffNs);
        !status.ok()) {
        return status;
    }
    const auto pruned = static_cast<std::uint64_t>(m_write->changes());
    if (pruned > 0) {
        // Series of instances long gone. Per series a primary-key probe: cheap.
        const Status status =
            m_write->exec("DELETE FROM counter_series WHERE NOT EXISTS (SELECT 1 FROM "
                          "counter_buckets b WHERE b.series_id = counter_series.id)");
        if (!status.ok()) {
            return status;
        }
    }
    return pruned;
}

Status Store::flushSamples(TimePoint now)
{
    constexpr std::string_view kOperation = "write counter history";
    std::lock_guard flushLock(m_flushMutex);
    const auto retentionNs =
        std::chrono::duration_cast<std::chrono::nanoseconds>(m_options.retention).count();
    const std::int64_t cutoffNs = m_counters->bucketStart(detail::toNs(now) - retentionNs);
    const std::vector<BucketRow> &rows = m_counters->beginFlush(cutoffNs);

    const Result<std::uint64_t> pruned =
        write(kOperation, [&](sqlite::Connection &) { return writeBuckets(rows, cutoffNs); });
    const std::size_t written = rows.size(); // rows stays valid until endFlush()
    m_counters->endFlush(pruned.ok());
    if (!pruned.ok()) {
        m_sampleFlushFailures.fetch_add(1, std::memory_order_relaxed);
        return pruned.status();
    }
    m_sampleFlushes.fetch_add(1, std::memory_order_relaxed);
    m_bucketsWritten.fetch_add(written, std::memory_order_relaxed);
    m_bucketsPruned.fetch_add(*pruned, std::memory_order_relaxed);
    return {};
}

Result<std::vector<CounterSeries>> Store::counterHistory(const CounterQuery &query) const
{
    constexpr std::string_view kOperation = "read counter history";
    std::optional<params::Glob> instanceGlob;
    std::optional<params::Glob> counterGlob;
    for (auto [what, pattern, glob] :
         {std::tuple{"instance glob", &query.instanceGlob, &instanceGlob},
          std::tuple{"counter glob", &query.counterGlob, &counterGlob}}) {
        if (pattern->empty()) {
            continue;
        }
        auto compiled = params::Glob::compile(*pattern);
        if (!compiled.ok()) {
            return failure(kOperation, compiled.status().withContext(std::string(what) + " '" +
                                                                     *pattern + "'"));
        }
        glob->emplace(std::move(*compiled));
    }
    const std::size_t maxPoints =
        query.maxPoints == 0 ? CounterQuery::kDefaultMaxPoints : query.maxPoints;
    const std::int64_t sinceNs = m_counters->bucketStart(detail::toNs(query.since));
    const std::int64_t untilNs = detail::toNs(query.until);

    // The buffer first, the database second: a bucket being flushed meanwhile is then seen in
    // one or both, and merging it twice changes nothing.
    const std::vector<BucketRow> buffered =
        m_counters->snapshot(instanceGlob ? &*instanceGlob : nullptr,
                             counterGlob ? &*counterGlob : nullptr, sinceNs, untilNs);

    using SeriesKey = std::pair<std::string, std::string>;
    std::map<SeriesKey, std::map<std::int64_t, BucketValues>> series;
    std::size_t points = 0;
    auto optionalPattern = [](const std::string &pattern) {
        return pattern.empty() ? std::nullopt : std::optional<std::string>(pattern);
    };
    const Status tooMany(Errc::resource_exhausted,
                         "more than " + std::to_string(maxPoints) +
                             " points match; narrow the globs or the time range");
    const Status stored = read(kOperation, [&](sqlite::Connection &db) {
        auto selectSeries =
            db.prepare("SELECT id, instance, counter FROM counter_series "
                       "WHERE (?1 IS NULL OR lutra_glob(?1, instance)) "
                       "AND (?2 IS NULL OR lutra_glob(?2, counter))",
                       optionalPattern(query.instanceGlob), optionalPattern(query.counterGlob));
        auto selectBuckets = db.prepare(
            "SELECT bucket_ns, last_ns, last_value, min_value, max_value FROM counter_buckets "
            "WHERE series_id = ?1 AND bucket_ns >= ?2 AND bucket_ns < ?3");
        for (const auto *statement : {&selectSeries, &selectBuckets}) {
            if (!statement->ok()) {
                return statement->status();
            }
        }
        return selectSeries->forEachRow([&](const sqlite::Statement &seriesRow) {
            auto &buckets = series[{seriesRow.columnText(1), seriesRow.columnText(2)}];
            selectBuckets->reset();
            selectBuckets->bind(1, seriesRow.columnInt(0)).bind(2, sinceNs).bind(3, untilNs);
            return selectBuckets->forEachRow([&](const sqlite::Statement &bucket) {
                if (++points > maxPoints) {
                    return tooMany;
                }
                buckets.emplace(bucket.columnInt(0),
                                BucketValues{bucket.columnInt(1), bucket.columnInt(2),
                                             bucket.columnInt(3), bucket.columnInt(4)});
                return Status();
            });
        });
    });
    if (!stored.ok()) {
        return stored;
    }
    for (const BucketRow &row : buffered) {
        auto &buckets = series[{row.instance, row.counter}];
        auto [position, inserted] = buckets.try_emplace(row.bucketNs, row.values);
        if (!inserted) {
            mergeBucket(position->second, row.values);
        } else if (++points > maxPoints) {
            return failure(kOperation, tooMany);
        }
    }

    std::vector<CounterSeries> result;
    result.reserve(series.size());
    for (auto &[key, buckets] : series) {
        if (buckets.empty()) {
            continue;
        }
        CounterSeries out{key.first, key.second, {}};
        out.points.reserve(buckets.size());
        for (const auto &[bucketNs, values] : buckets) {
            out.points.push_back({detail::fromNs(bucketNs), detail::fromNs(values.lastNs),
                                  values.last, values.min, values.max});
        }
        result.push_back(std::move(out));
    }
    return result;
}

} // namespace lutra::ctld
