#include "daemon/node_ops.h"

#include "control/params_wire.h"
#include "core/log.h"
#include "core/params/glob.h"
#include "core/params/plan.h"
#include "daemon/job_stats_text.h"
#include "store/store.h"

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <future>
#include <set>

namespace lutra::ctld {

namespace {

constexpr std::string_view kLog = "ctld";
namespace dv1 = datapath::v1;

std::string joinLines(const std::vector<std::string> &lines)
{
    std::string text;
    for (const auto &line : lines) {
        if (!text.empty()) {
            text += '\n';
        }
        text += line;
    }
    return text;
}

std::chrono::system_clock::time_point deadlineIn(std::chrono::milliseconds timeout)
{
    return std::chrono::system_clock::now() + timeout;
}

bool validJobId(std::string_view job)
{
    if (job.empty() || job.size() > 255) {
        return false;
    }
    for (const char c : job) {
        if (c <= ' ' || c > '~') {
            return false;
        }
    }
    return true;
}

} // namespace

struct NodeOps::InstancePlan {
    struct Item {
        std::string name;
        std::string value;   // as requested
        std::string desired; // canonical text, or the special word
        bool special = false;
        std::string source;
        std::string live;
        bool changed = true;
    };
    std::shared_ptr<const Connection> connection;
    std::vector<Item> items;
};

NodeOps::NodeOps(const Config &config, Instances &instances, Store *store)
    : m_config(config), m_instances(instances), m_store(store)
{
}

Result<std::vector<InstanceSpecs>> NodeOps::listParams(const std::string &pattern,
                                                       const std::string &instanceGlob)
{
    auto glob = params::Glob::compile(pattern.empty() ? "*" : pattern);
    if (!glob) {
        return Status(Errc::invalid_argument,
                      "pattern '" + pattern + "': " + glob.status().message());
    }
    std::vector<InstanceSpecs> out;
    for (const auto &connection : m_instances.connected(instanceGlob)) {
        InstanceSpecs specs{connection->info.id, {}};
        for (const auto &spec : connection->specs) {
            if (pattern.empty() || glob->matches(spec.name) ||
                glob->matchesLeadingComponents(spec.name)) {
                specs.specs.push_back(spec);
            }
        }
        if (!specs.specs.empty()) {
            out.push_back(std::move(specs));
        }
    }
    if (out.empty() && !pattern.empty()) {
        return Status(Errc::not_found,
                      "no parameter matches '" + pattern + "' on " + m_config.node);
    }
    return out;
}

std::vector<std::string> NodeOps::notConnectedMatching(const params::Glob &glob,
                                                       const std::string &instanceGlob) const
{
    std::vector<std::string> ids;
    for (const auto &connection : m_instances.disconnected(instanceGlob)) {
        if (std::any_of(connection->specs.begin(), connection->specs.end(),
                        [&](const params::Spec &spec) { return glob.matches(spec.name); })) {
            ids.push_back(connection->info.id);
        }
    }
    return ids;
}

namespace {

std::string notConnectedMessage(const std::string &id)
{
    return id + " is not connected (its process is down or not answering; ctld reconnects "
                "when it is back)";
}

} // namespace

Result<ParamValues> NodeOps::getParams(const std::vector<std::string> &patterns,
                                       const std::string &instanceGlob)
{
    if (patterns.empty()) {
        return Status(Errc::invalid_argument, "give at least one parameter name or glob");
    }
    std::vector<params::Glob> globs;
    for (const auto &pattern : patterns) {
        auto glob = params::Glob::compile(pattern);
        if (!glob) {
            return Status(Errc::invalid_argument,
                          "pattern '" + pattern + "': " + glob.status().message());
        }
        globs.push_back(std::move(*glob));
    }
    ParamValues out;
    std::vector<bool> matched(patterns.size(), false);
    auto fail = [&out](const std::string &id, const std::string &message) {
        out.failures.push_back({id, message});
    };
    for (const auto &connection : m_instances.connected(instanceGlob)) {
        dv1::GetParamsRequest request;
        for (std::size_t i = 0; i < globs.size(); ++i) {
            for (const auto &spec : connection->specs) {
                if (globs[i].matches(spec.name)) {
                    request.add_patterns(patterns[i]);
                    matched[i] = true;
                    break;
                }
            }
        }
        if (request.patterns().empty()) {
            continue;
        }
        grpc::ClientContext context;
        context.set_deadline(deadlineIn(kCallTimeout));
        dv1::GetParamsReply reply;
        const auto status = connection->stub->GetParams(&context, request, &reply);
        if (!status.ok()) {
            // One instance that does not answer must not hide the others' values.
            m_instances.lost(connection->info.id);
            fail(connection->info.id,
                 connection->info.id + " did not answer: " + status.error_message());
            continue;
        }
        for (const auto &value : reply.values()) {
            out.values.push_back({connection->info.id, value.name(), value.value()});
        }
    }
    std::set<std::string> named; // each instance is named once
    for (const auto &failure : out.failures) {
        named.insert(failure.instance);
    }
    for (std::size_t i = 0; i < globs.size(); ++i) {
        for (const auto &id : notConnectedMatching(globs[i], instanceGlob)) {
            matched[i] = true;
            if (named.insert(id).second) {
                fail(id, notConnectedMessage(id));
            }
        }
    }
    std::vector<std::string> missing;
    for (std::size_t i = 0; i < patterns.size(); ++i) {
        if (!matched[i]) {
            missing.push_back("no parameter matches '" + patterns[i] + "' on " + m_config.node);
        }
    }
    if (!missing.empty()) {
        return Status(Errc::not_found, joinLines(missing));
    }
    if (out.values.empty() && !out.failures.empty()) {
        std::vector<std::string> messages;
        for (const auto &failure : out.failures) {
            messages.push_back(failure.message);
        }
        return Status(Errc::unavailable, joinLines(messages));
    }
    return out;
}

Result<std::vector<NodeOps::InstancePlan>> NodeOps::plan(const ChangeRequest &request,
                                                         std::vector<std::string> *errors)
{
    std::vector<params::Glob> globs;
    for (const auto &target : request.targets) {
        auto glob = params::Glob::compile(target.pattern);
        if (!glob) {
            errors->push_back("pattern '" + target.pattern + "': " + glob.status().message());
            continue;
        }
        globs.push_back(std::move(*glob));
    }
    if (!errors->empty()) {
        return Status(Errc::invalid_argument, joinLines(*errors));
    }
    const auto connections = m_instances.connected(request.instanceGlob);
    if (connections.empty() && !m_instances.disconnected(request.instanceGlob).empty()) {
        std::vector<std::string> messages;
        for (const auto &connection : m_instances.disconnected(request.instanceGlob)) {
            messages.push_back(notConnectedMessage(connection->info.id));
        }
        return Status(Errc::unavailable, "nothing was changed: " + joinLines(messages));
    }
    if (connections.empty()) {
        return Status(
            Errc::failed_precondition,
            "no datapath process is running on " + m_config.node +
                (request.instanceGlob.empty() ? "" : " as '" + request.instanceGlob + "'"));
    }
    // Each instance's batch is planned by the registry's own planning step against the
    // instance's schema, so ctld means exactly what the datapath process will do.
    std::vector<InstancePlan> plans;
    std::vector<bool> matched(request.targets.size(), false);
    for (const auto &connection : connections) {
        std::vector<params::Assignment> batch;
        std::vector<std::size_t> targetOf; // batch index -> request.targets index
        for (std::size_t t = 0; t < request.targets.size(); ++t) {
            const auto &target = request.targets[t];
            if (target.instance.empty() || target.instance == connection->info.id) {
                batch.push_back({target.pattern, target.value});
                targetOf.push_back(t);
            }
        }
        const params::BatchPlan batchPlan =
            params::planBatch(batch, connection->specs, {.allowUnmatched = true});
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (batchPlan.matched[i]) {
                matched[targetOf[i]] = true;
            }
        }
        for (const auto &error : batchPlan.errors) {
            errors->push_back(connection->info.id + ": " + error.status.message());
        }
        InstancePlan plan;
        plan.connection = connection;
        for (const auto &planned : batchPlan.items) {
            const auto &target = request.targets[targetOf[planned.assignment]];
            InstancePlan::Item item;
            item.name = planned.spec->name;
            item.value = target.value;
            item.special = planned.isSpecial();
            item.desired = planned.requested;
            item.source = target.source;
            plan.items.push_back(std::move(item));
        }
        if (!plan.items.empty()) {
            plans.push_back(std::move(plan));
        }
    }
    if (!request.allowUnmatched) {
        for (std::size_t t = 0; t < request.targets.size(); ++t) {
            if (!matched[t]) {
                const auto &target = request.targets[t];
                const auto down = notConnectedMatching(globs[t], request.instanceGlob);
                if (!down.empty()) {
                    errors->push_back(
                        (target.source.empty() ? std::string() : target.source + ": ") + "'" +
                        target.pattern + "' cannot be set now: " + notConnectedMessage(down[0]));
                    continue;
                }
                errors->push_back(
                    (target.source.empty() ? std::string() : target.source + ": ") +
                    "no parameter matches '" + target.pattern + "' on " + m_config.node +
                    (target.instance.empty() ? std::string() : " in " + target.instance));
            }
        }
    }
    if (!errors->empty()) {
        return Status(Errc::invalid_argument, joinLines(*errors));
    }
    return plans;
}

Status NodeOps::readCurrent(std::vector<InstancePlan> &plans)
{
    for (auto &plan : plans) {
        dv1::GetParamsRequest request;
        for (const auto &item : plan.items) {
            request.add_patterns(item.name);
        }
        grpc::ClientContext context;
        context.set_deadline(deadlineIn(kCallTimeout));
        dv1::GetParamsReply reply;
        const auto status = plan.connection->stub->GetParams(&context, request, &reply);
        if (!status.ok()) {
            m_instances.lost(plan.connection->info.id);
            return {Errc::unavailable,
                    plan.connection->info.id +
                        " did not answer reading current values: " + status.error_message()};
        }
        if (!reply.errors().empty()) {
            return {Errc::failed_precondition,
                    plan.connection->info.id +
                        " changed its parameters meanwhile: " + reply.errors(0).message()};
        }
        std::map<std::string, std::string> values;
        for (const auto &value : reply.values()) {
            values[value.name()] = value.value();
        }
        for (auto &item : plan.items) {
            item.live = values[item.name];
            item.changed = item.special || item.live != item.desired;
        }
    }
    return {};
}

Status NodeOps::restore(const std::vector<InstancePlan> &plans, std::size_t count,
                        const std::string &principal, std::vector<std::string> *errors)
{
    Status first;
    for (std::size_t i = 0; i < count; ++i) {
        const auto &plan = plans[i];
        dv1::SetParamsRequest request;
        request.set_principal(principal + " (restore)");
        for (const auto &item : plan.items) {
            if (item.changed && !item.special) {
                auto *assignment = request.add_assignments();
                assignment->set_pattern(item.name);
                assignment->set_value(item.live);
            }
        }
        if (request.assignments().empty()) {
            continue;
        }
        grpc::ClientContext context;
        context.set_deadline(deadlineIn(kCallTimeout));
        dv1::SetParamsReply reply;
        const auto status = plan.connection->stub->SetParams(&context, request, &reply);
        if (!status.ok() || !reply.result().applied()) {
            const std::string error =
                plan.connection->info.id + ": could not restore the previous values: " +
                (status.ok()
                     ? (reply.result().errors().empty() ? std::string("rejected")
                                                        : reply.result().errors(0).message())
                     : status.error_message());
            errors->push_back(error);
            log::error(kLog, error);
            if (first.ok()) {
                first = {Errc::internal, error};
            }
        }
    }
    return first;
}

Result<ChangeResult> NodeOps::change(const ChangeRequest &request)
{
    std::lock_guard serialise(m_changeMutex);
    return changeLocked(request);
}

Result<ChangeResult> NodeOps::changeLocked(const ChangeRequest &request)
{
    if (request.targets.empty()) {
        return Status(Errc::invalid_argument, "nothing to set: give at least one NAME=VALUE");
    }
    std::vector<std::string> errors;
    auto plans = plan(request, &errors);
    if (!plans) {
        return plans.status();
    }
    if (auto read = readCurrent(*plans); !read) {
        return read;
    }
    ChangeResult outcome;
    std::vector<PlannedChange> journal;
    // Actions (lru_size=clear) cannot be undone: only values go into the crash journal.
    for (const auto &plan : *plans) {
        for (const auto &item : plan.items) {
            outcome.plan.push_back({plan.connection->info.id, item.name, item.live, item.desired,
                                    item.changed, item.source});
            if (item.changed && !item.special) {
                journal.push_back({plan.connection->info.id, item.name, item.live, item.desired});
            }
        }
    }
    if (request.dryRun) {
        return outcome;
    }
    const bool nothingToDo = std::all_of(outcome.plan.begin(), outcome.plan.end(),
                                         [](const auto &entry) { return !entry.changed; });
    if (request.action == Action::reconcile && nothingToDo) {
        outcome.applied = true; // already in the desired state: nothing to audit
        return outcome;
    }

    const PointDraft draft{{Clock::now(), m_config.node, request.principal, request.description},
                           request.action,
                           request.profile};
    // An undo of an interrupted point is journaled by that point: its target is fixed.
    auto historyId =
        m_store && request.undoes == 0 ? m_store->beginApply(draft, journal) : Result<PointId>(0);
    if (!historyId) {
        return Status(historyId.status().code(), "nothing was changed: cannot record the change: " +
                                                     historyId.status().message());
    }
    outcome.historyId = static_cast<std::uint64_t>(*historyId);

    std::vector<Change> recorded;
    std::size_t appliedCount = 0;
    std::size_t changedCount = 0; // instances sent a batch, for the fault hook
    bool failed = false;
    for (const auto &plan : *plans) {
        dv1::SetParamsRequest set;
        set.set_principal(request.principal);
        for (const auto &item : plan.items) {
            if (item.changed) {
                auto *assignment = set.add_assignments();
                assignment->set_pattern(item.name);
                assignment->set_value(item.value);
            }
        }
        if (set.assignments().empty()) {
            ++appliedCount;
            continue;
        }
        grpc::ClientContext context;
        context.set_deadline(deadlineIn(kCallTimeout));
        dv1::SetParamsReply reply;
        const auto status = plan.connection->stub->SetParams(&context, set, &reply);
        auto &result = outcome.instances.emplace_back();
        result.instance = plan.connection->info.id;
        if (!status.ok()) {
            // The process may or may not have applied the batch; restoring it too is safe.
            m_instances.lost(plan.connection->info.id);
            auto *error = result.result.add_errors();
            error->set_code(params::v1::ERROR_CODE_UNAVAILABLE);
            error->set_message(plan.connection->info.id +
                               " did not answer: " + status.error_message());
            errors.push_back(error->message());
            ++appliedCount;
            failed = true;
            break;
        }
        result.result = reply.result();
        for (const auto &r : reply.result().results()) {
            const bool ok = r.error().code() == params::v1::ERROR_CODE_OK;
            recorded.push_back(
                {plan.connection->info.id, r.name(), r.old_value(), r.requested(), r.read_back(),
                 ok ? (reply.result().applied() ? ChangeOutcome::ok : ChangeOutcome::reverted)
                    : ChangeOutcome::error,
                 r.error().message()});
        }
        if (!reply.result().applied()) {
            for (const auto &error : reply.result().errors()) {
                errors.push_back(plan.connection->info.id + ": " + error.message());
            }
            failed = true;
            break;
        }
        ++appliedCount;
        if (++changedCount == m_faultHooks.killAfterInstances) {
            log::error(kLog, "fault hook: killing ctld after " + std::to_string(changedCount) +
                                 " instance(s) applied");
            ::kill(::getpid(), SIGKILL);
        }
    }
    if (failed) {
        // The instance that failed rolled its own batch back; the ones before it are restored.
        const std::size_t restoreCount = appliedCount > 0 ? appliedCount - 1 : 0;
        (void)restore(*plans, restoreCount, request.principal, &errors);
        for (auto &change : recorded) {
            if (change.outcome == ChangeOutcome::ok) {
                change.outcome = ChangeOutcome::reverted;
            }
        }
        errors.push_back("nothing was changed on " + m_config.node +
                         ": values applied before the failure were restored");
    }
    outcome.applied = !failed;
    outcome.errors = errors;
    if (m_store) {
        // Actions (lru_size=clear) are not states to keep: they never become desired.
        DesiredUpdate desired;
        if (!failed) {
            desired.removals = request.desired.removals;
            for (const auto &param : request.desired.upserts) {
                const bool action =
                    std::any_of(plans->begin(), plans->end(), [&](const InstancePlan &plan) {
                        return std::any_of(plan.items.begin(), plan.items.end(),
                                           [&](const auto &item) {
                                               return item.special && item.value == param.value;
                                           });
                    });
                if (!action) {
                    desired.upserts.push_back(param);
                }
            }
        }
        ApplyResult result{Clock::now(), failed ? Outcome::error : Outcome::ok,
                           failed ? joinLines(errors) : std::string(), std::move(recorded),
                           std::move(desired)};
        if (request.undoes != 0) {
            // A failed undo leaves the interrupted point pending: the next start retries it.
            auto recordedUndo =
                failed ? m_store->recordPoint(draft, result.outcome, result.error, result.changes)
                       : m_store->settleInterrupted(
                             request.undoes, draft, result,
                             "interrupted by a crash of ctld; the node was restored");
            if (!recordedUndo) {
                outcome.applied = false;
                outcome.errors.push_back("the undo was made but not recorded: " +
                                         recordedUndo.status().message());
            } else {
                outcome.historyId = static_cast<std::uint64_t>(*recordedUndo);
            }
        } else if (auto done = m_store->finishApply(*historyId, result); !done) {
            log::error(kLog, "history point " + std::to_string(*historyId) +
                                 " could not be completed: " + done.message());
            outcome.errors.push_back("the change was made but not recorded: " + done.message());
        }
    }
    return outcome;
}

Result<FlushResult> NodeOps::flushJob(const std::string &job, bool all,
                                      std::chrono::milliseconds timeout,
                                      const std::string &principal)
{
    if (all == !job.empty()) {
        return Status(Errc::invalid_argument, all ? "give either a job id or all, not both"
                                                  : "give a job id (--job ID) or all (--all)");
    }
    if (!all && !validJobId(job)) {
        return Status(Errc::invalid_argument,
                      "job id '" + job + "' must be 1-255 printable characters without spaces");
    }
    if (timeout <= std::chrono::milliseconds(0) || timeout > std::chrono::minutes(10)) {
        return Status(Errc::out_of_range, "flush timeout must be 1 ms .. 10 min");
    }
    const auto started = std::chrono::steady_clock::now();
    const auto connections = m_instances.connected();
    // Every instance flushes at once: the node's time is the slowest instance, not the sum.
    std::vector<std::future<std::optional<InstanceFlushReport>>> pending;
    for (const auto &connection : connections) {
        pending.push_back(
            std::async(std::launch::async, [&, connection]() -> std::optional<InstanceFlushReport> {
                dv1::FlushJobRequest request;
                request.set_job_id(all ? std::string() : job);
                request.set_timeout_ms(static_cast<std::uint32_t>(timeout.count()));
                grpc::ClientContext context;
                context.set_deadline(deadlineIn(timeout + std::chrono::seconds(2)));
                dv1::FlushJobReply reply;
                const auto status = connection->stub->FlushJob(&context, request, &reply);
                if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
                    return std::nullopt; // a target: no client cache to flush
                }
                InstanceFlushReport report;
                report.instance = connection->info.id;
                if (!status.ok()) {
                    report.error = Status(Errc::unavailable,
                                          connection->info.id + ": " + status.error_message());
                    return report;
                }
                report.error = control::fromWire(reply.error());
                report.locksCancelled = reply.report().locks_cancelled();
                report.pagesDropped = reply.report().pages_dropped();
                report.bytesWrittenBack = reply.report().bytes_written_back();
                report.durationUs = reply.report().duration_us();
                report.errors.assign(reply.report().errors().begin(),
                                     reply.report().errors().end());
                return report;
            }));
    }
    FlushResult reply;
    reply.jobId = all ? std::string() : job;
    bool ok = true;
    for (auto &future : pending) {
        if (auto report = future.get()) {
            ok = ok && report->error.ok();
            reply.instances.push_back(std::move(*report));
        }
    }
    reply.ok = ok;
    {
        std::lock_guard lock(m_flushMetricsMutex);
        m_flushDurations.observe(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
    reply.durationUs =
        static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                       std::chrono::steady_clock::now() - started)
                                       .count());
    if (m_store) {
        std::vector<FlushReport> reports;
        for (const auto &instance : reply.instances) {
            reports.push_back({all ? std::string("all") : job, instance.instance,
                               instance.locksCancelled, instance.pagesDropped,
                               instance.bytesWrittenBack, instance.durationUs,
                               instance.error.message()});
        }
        const Audit audit{Clock::now(), m_config.node, principal,
                          "flush " + (all ? std::string("--all") : "--job " + job)};
        if (auto recorded = m_store->recordFlush(audit, ok ? Outcome::ok : Outcome::partial,
                                                 ok ? "" : "some instances failed", reports);
            !recorded) {
            log::error(kLog, "flush report not recorded: " + recorded.status().message());
        } else {
            reply.historyId = static_cast<std::uint64_t>(*recorded);
        }
    }
    return reply;
}

Result<std::vector<JobStat>> NodeOps::jobStats(const std::string &jobGlob)
{
    std::vector<JobStat> out;
    for (const auto &connection : m_instances.connected()) {
        dv1::GetParamsRequest request;
        for (const auto &spec : connection->specs) {
            if (params::leafName(spec.name) == "job_stats") {
                request.add_patterns(spec.name);
            }
        }
        if (request.patterns().empty()) {
            continue;
        }
        grpc::ClientContext context;
        context.set_deadline(deadlineIn(kCallTimeout));
        dv1::GetParamsReply reply;
        if (const auto status = connection->stub->GetParams(&context, request, &reply);
            !status.ok()) {
            return Status(Errc::unavailable,
                          connection->info.id + " did not answer: " + status.error_message());
        }
        for (const auto &value : reply.values()) {
            auto parsed = parseJobStats(value.value());
            if (!parsed) {
                return Status(parsed.status().code(), connection->info.id + " " + value.name() +
                                                          ": " + parsed.status().message());
            }
            for (auto &stat : *parsed) {
                if (!jobGlob.empty() && !params::matchComponent(jobGlob, stat.jobId)) {
                    continue;
                }
                stat.instance = connection->info.id;
                stat.block = value.name();
                out.push_back(std::move(stat));
            }
        }
    }
    return out;
}

metrics::DurationHistogram NodeOps::flushDurations() const
{
    std::lock_guard lock(m_flushMetricsMutex);
    return m_flushDurations;
}

void NodeOps::reconcile(const std::shared_ptr<const Connection> &connection, bool restarted)
{
    if (!m_store) {
        return;
    }
    // The desired state is read under the change lock: read before it, a set committed in
    // between would be undone by this reconcile's stale values (found by lutra-ctl-bench soak).
    std::lock_guard serialise(m_changeMutex);
    auto desired = m_store->listDesired();
    if (!desired) {
        log::error(kLog, "reconcile of " + connection->info.id + ": " + desired.status().message());
        return;
    }
    ChangeRequest request;
    request.principal = "ctld";
    request.action = Action::reconcile;
    request.description = connection->info.id + (restarted ? " restarted" : " appeared");
    request.allowUnmatched = true;
    request.instanceGlob = connection->info.id;
    for (const auto &entry : *desired) {
        request.targets.push_back({connection->info.id, entry.param.pattern, entry.param.value,
                                   "desired (" + entry.param.source + ")"});
    }
    if (request.targets.empty()) {
        return;
    }
    auto outcome = changeLocked(request);
    if (!outcome) {
        log::error(kLog, "reconcile of " + connection->info.id + ": " + outcome.status().message());
    } else if (!outcome->applied) {
        log::error(kLog, "reconcile of " + connection->info.id +
                             " failed: " + joinLines(outcome->errors));
    } else if (outcome->historyId == 0) {
        log::info(kLog, connection->info.id + " already has the desired parameters");
    } else {
        log::info(kLog, "reconciled " + connection->info.id + " (history point " +
                            std::to_string(outcome->historyId) + ")");
    }
}

Status NodeOps::recoverInterruptedApplies()
{
    if (!m_store) {
        return {};
    }
    auto pending = m_store->pendingApplies();
    if (!pending) {
        return pending.status();
    }
    // Newest first, each undo committed with the abort of the point it undoes: any number of
    // crashes during recovery leaves the same pending points, so the next start does the same.
    for (const auto &interrupted : *pending) {
        ChangeRequest request;
        const auto id = std::to_string(interrupted.point.id);
        request.principal = "ctld";
        request.action = Action::rollback;
        request.description = "undo point " + id + ", interrupted by a crash of ctld";
        request.allowUnmatched = true;
        request.undoes = interrupted.point.id;
        for (const auto &planned : interrupted.planned) {
            request.targets.push_back(
                {planned.instance, planned.param, planned.oldValue, "history " + id});
        }
        Status result;
        if (request.targets.empty()) {
            result = m_store->finishApply(interrupted.point.id,
                                          {Clock::now(),
                                           Outcome::aborted,
                                           "interrupted by a crash of ctld; nothing was changed",
                                           {},
                                           {}});
        } else if (auto outcome = change(request); !outcome) {
            result = outcome.status();
        } else if (!outcome->applied) {
            result = {Errc::internal, joinLines(outcome->errors)};
        }
        if (!result.ok()) {
            log::error(kLog, "could not undo point " + id + ": " + result.message());
            continue; // kept pending: retried at the next start
        }
        log::info(kLog, "undid point " + id + ", interrupted by a crash of ctld");
    }
    return {};
}

} // namespace lutra::ctld
