#include "bench_history_year.h"

#include "ctld_process.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"
#include "store/store.h"
#include "target_process.h"

#include <grpcpp/grpcpp.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

namespace lutra::tools {

namespace {

using SteadyClock = std::chrono::steady_clock;
constexpr std::int64_t kNsPerDay = 86'400'000'000'000;
const std::string kParam = "obdfilter.ost0.brw_size"; // what every measured SetParams alternates

double percentile(std::vector<double> values, double fraction)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    return values[static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1))];
}

// Raw SQLite for the bulk load: one transaction, prepared statements reused.
class BulkWriter {
public:
    static Result<BulkWriter> open(const std::string &path)
    {
        BulkWriter writer;
        if (sqlite3_open_v2(path.c_str(), &writer.m_db, SQLITE_OPEN_READWRITE, nullptr) !=
            SQLITE_OK) {
            return Status(Errc::io_error, path + ": " + sqlite3_errmsg(writer.m_db));
        }
        return writer;
    }
    BulkWriter(BulkWriter &&other) noexcept : m_db(std::exchange(other.m_db, nullptr)) {}
    BulkWriter &operator=(BulkWriter &&) = delete;
    ~BulkWriter()
    {
        for (auto *statement : m_statements) {
            sqlite3_finalize(statement);
        }
        sqlite3_close(m_db);
    }

    Status exec(const char *sql)
    {
        return sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr) == SQLITE_OK ? Status() : error();
    }
    sqlite3_stmt *prepare(const char *sql)
    {
        sqlite3_stmt *statement = nullptr;
        if (sqlite3_prepare_v3(m_db, sql, -1, SQLITE_PREPARE_PERSISTENT, &statement, nullptr) !=
            SQLITE_OK) {
            return nullptr;
        }
        m_statements.push_back(statement);
        return statement;
    }
    // Binds ints and texts to ?1.. in order, runs the statement and resets it.
    template <typename... Values> Status run(sqlite3_stmt *statement, const Values &...values)
    {
        int index = 0;
        (bind(statement, ++index, values), ...);
        const int step = sqlite3_step(statement);
        sqlite3_reset(statement);
        return step == SQLITE_DONE ? Status() : error();
    }
    std::int64_t lastId() const { return sqlite3_last_insert_rowid(m_db); }
    Status error() const
    {
        return {Errc::io_error, std::string("bulk load: ") + sqlite3_errmsg(m_db)};
    }

private:
    BulkWriter() = default;
    static void bind(sqlite3_stmt *statement, int index, std::int64_t value)
    {
        sqlite3_bind_int64(statement, index, value);
    }
    static void bind(sqlite3_stmt *statement, int index, const std::string &value)
    {
        sqlite3_bind_text(statement, index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT);
    }

    sqlite3 *m_db = nullptr;
    std::vector<sqlite3_stmt *> m_statements;
};

struct LoadResult {
    std::int64_t points = 0;
    double seconds = 0;
};

// A year as a node lives it, oldest first: every job's end-of-job flush (one report per
// instance), a few set_param changes a day, a reconcile a week (a restarted process). The
// desired parameter set on day one is never changed again: retention must keep its point.
Result<LoadResult> loadYear(const std::string &db, const HistoryYearOptions &year,
                            std::int64_t nowNs)
{
    // Create the schema the way ctld does.
    if (auto store = ctld::Store::open(db); !store) {
        return store.status();
    } else if (auto closed = (*store)->close(); !closed) {
        return closed;
    }
    auto writer = BulkWriter::open(db);
    if (!writer) {
        return writer.status();
    }
    const auto started = SteadyClock::now();
    if (auto status = writer->exec("PRAGMA foreign_keys = ON; BEGIN IMMEDIATE"); !status) {
        return status;
    }
    auto *point = writer->prepare(
        "INSERT INTO history_points (time_ns, finished_ns, node, principal, action, description,"
        " profile, outcome, error) VALUES (?1, ?1, 'bench', ?2, ?3, ?4, '', 'ok', '')");
    auto *change = writer->prepare(
        "INSERT INTO history_changes VALUES (?1, ?2, 'target-ost0', ?3, ?4, ?5, ?5, 'ok', '')");
    auto *report =
        writer->prepare("INSERT INTO flush_reports (point_id, time_ns, principal, job_id, instance,"
                        " locks_cancelled, pages_dropped, bytes_written_back, duration_us, error)"
                        " VALUES (?1, ?2, 'local:slurm', ?3, ?4, 12, 4096, 16777216, 850, '')");
    auto *desired = writer->prepare(
        "INSERT INTO desired_params (pattern, value, source, principal, time_ns, point_id)"
        " VALUES (?1, ?2, 'set_param', 'token:admin', ?3, ?4)");
    if (!point || !change || !report || !desired) {
        return writer->error();
    }
    LoadResult result;
    const std::int64_t start = nowNs - static_cast<std::int64_t>(year.days) * kNsPerDay;
    const std::int64_t perDay = year.jobsPerDay + year.setsPerDay;
    std::int64_t job = 100000;
    for (unsigned day = 0; day < year.days; ++day) {
        for (std::int64_t i = 0; i < perDay; ++i) {
            const std::int64_t time = start + day * kNsPerDay + i * (kNsPerDay / (perDay + 1));
            const std::int64_t spacing = perDay / year.setsPerDay;
            const bool isSet = i % spacing == 0 && i / spacing < year.setsPerDay;
            Status status;
            if (isSet) {
                status = writer->run(point, time, std::string("token:admin"), std::string("set"),
                                     std::string("set_param osc.*.max_rpcs_in_flight"));
                const auto id = writer->lastId();
                for (std::int64_t seq = 0; status && seq < 2; ++seq) {
                    status = writer->run(change, id, seq,
                                         std::string(seq == 0 ? "osc.ost0.max_rpcs_in_flight"
                                                              : "osc.ost1.max_rpcs_in_flight"),
                                         std::to_string(8 + (i + day) % 8),
                                         std::to_string(8 + (i + day + 1) % 8));
                }
                if (status && day == 0 && i == 0) {
                    status = writer->run(desired, std::string("osc.*.max_rpcs_in_flight"),
                                         std::string("8"), time, id);
                }
            } else {
                const auto jobId = std::to_string(++job);
                status = writer->run(point, time, std::string("local:slurm"), std::string("flush"),
                                     "flush job " + jobId);
                const auto id = writer->lastId();
                for (const char *instance : {"bench-client", "target-ost0"}) {
                    if (status) {
                        status = writer->run(report, id, time, jobId, std::string(instance));
                    }
                }
            }
            if (!status) {
                return status;
            }
            ++result.points;
        }
        if (day % 7 == 6) {
            const std::int64_t time = start + day * kNsPerDay + kNsPerDay - 1000;
            auto status = writer->run(point, time, std::string("ctld"), std::string("reconcile"),
                                      std::string("target-ost0 restarted"));
            if (status) {
                status = writer->run(change, writer->lastId(), std::int64_t{0},
                                     std::string("ldlm.namespaces.ost0.lru_max_age"),
                                     std::string("3900000"), std::string("3900"));
            }
            if (!status) {
                return status;
            }
            ++result.points;
        }
    }
    if (auto status = writer->exec("COMMIT"); !status) {
        return status;
    }
    result.seconds = std::chrono::duration<double>(SteadyClock::now() - started).count();
    return result;
}

struct DbSize {
    std::int64_t fileBytes = 0;
    std::int64_t usedBytes = 0; // pages in use: the file does not shrink without VACUUM
    std::int64_t points = 0;
};

Result<DbSize> measure(const std::string &db)
{
    sqlite3 *handle = nullptr;
    if (sqlite3_open_v2(db.c_str(), &handle, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        sqlite3_close(handle);
        return Status(Errc::io_error, db + ": cannot open");
    }
    const auto queryInt = [&](const char *sql) {
        sqlite3_stmt *statement = nullptr;
        std::int64_t value = -1;
        if (sqlite3_prepare_v2(handle, sql, -1, &statement, nullptr) == SQLITE_OK &&
            sqlite3_step(statement) == SQLITE_ROW) {
            value = sqlite3_column_int64(statement, 0);
        }
        sqlite3_finalize(statement);
        return value;
    };
    DbSize size;
    const auto pageSize = queryInt("PRAGMA page_size");
    size.usedBytes = (queryInt("PRAGMA page_count") - queryInt("PRAGMA freelist_count")) * pageSize;
    size.points = queryInt("SELECT count(*) FROM history_points");
    sqlite3_close(handle);
    std::error_code ec;
    size.fileBytes = static_cast<std::int64_t>(std::filesystem::file_size(db, ec));
    return size;
}

Status waitForInstance(ctl::v1::Ctl::Stub &stub)
{
    const auto until = SteadyClock::now() + std::chrono::seconds(30);
    while (SteadyClock::now() < until) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
        ctl::v1::ListInstancesReply reply;
        if (stub.ListInstances(&context, {}, &reply).ok() &&
            std::any_of(reply.instances().begin(), reply.instances().end(),
                        [](const auto &instance) { return instance.connected(); })) {
            return {};
        }
        ::usleep(50'000);
    }
    return {Errc::timeout, "lutra-ctld did not find the target in time"};
}

struct Latency {
    double p50Us = 0;
    double p99Us = 0;
};

// A lutra-ctld on `db` with one lutra-target: `calls` SetParams (after 10 warm-up calls), each
// really changing the parameter, so each is planned, journaled, applied and recorded.
Result<Latency> measureSetParams(const std::string &dir, const std::string &db, unsigned calls)
{
    const std::string runDir = dir + "/run";
    std::filesystem::create_directories(runDir);
    TargetProcess::Options targetOptions;
    targetOptions.runDir = runDir;
    auto targets = spawnTargets(dir, 1, targetOptions);
    if (!targets) {
        return targets.status();
    }
    auto ctld = CtldProcess::spawn({"bench", runDir, db, {}});
    if (!ctld) {
        return ctld.status();
    }
    auto stub = ctl::v1::Ctl::NewStub(
        grpc::CreateChannel("unix:" + (*ctld)->socket(), grpc::InsecureChannelCredentials()));
    if (auto ready = waitForInstance(*stub); !ready) {
        return ready;
    }
    std::vector<double> micros;
    micros.reserve(calls);
    for (unsigned i = 0; i < calls + 10; ++i) {
        ctl::v1::SetParamsRequest request;
        auto *assignment = request.add_assignments();
        assignment->set_pattern(kParam);
        assignment->set_value(i % 2 == 0 ? "8" : "4");
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
        ctl::v1::SetParamsReply reply;
        const auto begin = SteadyClock::now();
        const auto status = stub->SetParams(&context, request, &reply);
        const auto took = std::chrono::duration<double, std::micro>(SteadyClock::now() - begin);
        if (!status.ok() || !reply.applied()) {
            return Status(Errc::internal,
                          "SetParams through lutra-ctld failed: " + status.error_message());
        }
        if (i >= 10) {
            micros.push_back(took.count());
        }
    }
    return Latency{percentile(micros, 0.5), percentile(micros, 0.99)};
}

nlohmann::json phaseJson(const Latency &latency, const DbSize &size)
{
    return {{"set_p50_us", rounded(latency.p50Us)},
            {"set_p99_us", rounded(latency.p99Us)},
            {"db_file_bytes", size.fileBytes},
            {"db_used_bytes", size.usedBytes},
            {"history_points", size.points}};
}

} // namespace

CLI::App *addHistoryYearMode(CLI::App &app, HistoryYearOptions &options)
{
    auto *mode = app.add_subcommand(
        "history-year", "SetParams latency and database size of lutra-ctld after a simulated year "
                        "of history, before and after retention, vs an empty database");
    mode->add_option("--days", options.days, "days of history loaded")
        ->capture_default_str()
        ->check(CLI::Range(1u, 3650u));
    mode->add_option("--jobs-per-day", options.jobsPerDay, "job-end flushes per day")
        ->capture_default_str()
        ->check(CLI::Range(0u, 100000u));
    mode->add_option("--sets-per-day", options.setsPerDay, "set_param changes per day")
        ->capture_default_str()
        ->check(CLI::Range(1u, 10000u));
    mode->add_option("--keep-days", options.keepDays, "retention max_age applied after the load")
        ->capture_default_str()
        ->check(CLI::Range(1u, 3650u));
    mode->add_option("--calls", options.calls, "SetParams calls measured per phase")
        ->capture_default_str()
        ->check(CLI::Range(100u, 1u << 20));
    return mode;
}

Result<Report> runHistoryYearBench(const BenchOptions & /*options*/, const HistoryYearOptions &year)
{
    auto dir = TempDir::create("lutra-ctl-bench-history");
    if (!dir) {
        return dir.status();
    }
    // Baseline: a fresh database.
    const std::string emptyDb = dir->path() + "/empty.db";
    auto empty = measureSetParams(dir->path() + "/empty", emptyDb, year.calls);
    if (!empty) {
        return empty.status();
    }
    auto emptySize = measure(emptyDb);
    if (!emptySize) {
        return emptySize.status();
    }

    // A year of history, loaded in bulk, then the same calls.
    const std::string yearDb = dir->path() + "/year.db";
    const auto nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
    auto loaded = loadYear(yearDb, year, nowNs);
    if (!loaded) {
        return loaded.status();
    }
    auto loadedSize = measure(yearDb);
    if (!loadedSize) {
        return loadedSize.status();
    }
    auto full = measureSetParams(dir->path() + "/full", yearDb, year.calls);
    if (!full) {
        return full.status();
    }
    auto fullSize = measure(yearDb);
    if (!fullSize) {
        return fullSize.status();
    }

    // Retention down to keepDays, as ctld's loop runs it (batches of 1000 points).
    auto store = ctld::Store::open(yearDb);
    if (!store) {
        return store.status();
    }
    // What ctld's loop pays every sample_interval with the defaults (100 000 points, 365 days)
    // when there is nothing to delete: the check runs on the read connection.
    ctld::HistoryRetention defaults{100'000, std::chrono::hours(24 * 365), 1000};
    const auto checkStarted = SteadyClock::now();
    auto idle = (*store)->pruneHistory(defaults, ctld::Clock::now() - std::chrono::hours(24));
    const double checkMs =
        std::chrono::duration<double, std::milli>(SteadyClock::now() - checkStarted).count();
    if (!idle) {
        return idle.status();
    }
    ctld::HistoryRetention retention;
    retention.maxAge = std::chrono::hours(24) * year.keepDays;
    const auto pruneStarted = SteadyClock::now();
    auto pruned = (*store)->pruneHistory(retention);
    const double pruneSeconds =
        std::chrono::duration<double>(SteadyClock::now() - pruneStarted).count();
    if (!pruned) {
        return pruned.status();
    }
    if (auto closed = (*store)->close(); !closed) {
        return closed;
    }
    store->reset();
    auto prunedSize = measure(yearDb);
    if (!prunedSize) {
        return prunedSize.status();
    }
    auto after = measureSetParams(dir->path() + "/pruned", yearDb, year.calls);
    if (!after) {
        return after.status();
    }
    auto afterSize = measure(yearDb);
    if (!afterSize) {
        return afterSize.status();
    }

    Report report;
    report.mode = "history-year";
    report.params = {{"days", year.days},
                     {"jobs_per_day", year.jobsPerDay},
                     {"sets_per_day", year.setsPerDay},
                     {"keep_days", year.keepDays},
                     {"calls", year.calls},
                     {"parameter", kParam}};
    report.results = {
        {"empty", phaseJson(*empty, *emptySize)},
        {"year", phaseJson(*full, *fullSize)},
        {"pruned", phaseJson(*after, *afterSize)},
        {"load_points", loaded->points},
        {"load_seconds", rounded(loaded->seconds)},
        {"year_db_bytes_per_point",
         rounded(static_cast<double>(loadedSize->usedBytes) / static_cast<double>(loaded->points))},
        {"prune_points", pruned->pointsDeleted},
        {"prune_batches", pruned->batches},
        {"prune_seconds", rounded(pruneSeconds)},
        {"retention_check_ms", rounded(checkMs)},
        {"retention_check_deleted", idle->pointsDeleted},
        {"prune_used_bytes_before", fullSize->usedBytes},
        {"prune_used_bytes_after", prunedSize->usedBytes}};
    const auto ratio = [](double value, double base) {
        return rounded(base > 0 ? value / base : 0);
    };
    report.ratios = {
        {"year_set_p50_vs_empty", ratio(full->p50Us, empty->p50Us)},
        {"year_set_p99_vs_empty", ratio(full->p99Us, empty->p99Us)},
        {"pruned_set_p50_vs_empty", ratio(after->p50Us, empty->p50Us)},
        {"pruned_set_p99_vs_empty", ratio(after->p99Us, empty->p99Us)},
        {"pruned_used_bytes_vs_year", ratio(static_cast<double>(prunedSize->usedBytes),
                                            static_cast<double>(fullSize->usedBytes))}};
    report.notes.push_back(
        "each phase is a fresh lutra-ctld with one lutra-target; every SetParams changes the "
        "value, so it is planned, journaled and recorded (two synchronous=FULL commits)");
    report.notes.push_back("sizes and point counts of a phase are taken after its calls");
    report.notes.push_back("db_file_bytes does not shrink after pruning: SQLite reuses the freed "
                           "pages (db_used_bytes) for new points instead of returning them");
    return report;
}

} // namespace lutra::tools
