#include "net/convert.h"

namespace lutra::console::convert {

namespace {

template <typename Repeated> QList<qint64> int64s(const Repeated &values)
{
    return QList<qint64>(values.begin(), values.end());
}

QStringList texts(const google::protobuf::RepeatedPtrField<std::string> &values)
{
    QStringList out;
    out.reserve(values.size());
    for (const auto &value : values) {
        out.append(text(value));
    }
    return out;
}

} // namespace

QString text(const std::string &value)
{
    return QString::fromStdString(value);
}

Role role(ctl::v1::Role role)
{
    switch (role) {
    case ctl::v1::ROLE_VIEWER: return Role::viewer;
    case ctl::v1::ROLE_OPERATOR: return Role::operator_;
    case ctl::v1::ROLE_ADMIN: return Role::admin;
    default: return Role::unknown;
    }
}

NodeInfo nodeInfo(const ctl::v1::NodeInfo &info)
{
    NodeInfo out;
    out.node = text(info.node());
    for (const auto &[key, value] : info.labels()) {
        out.labels.insert(text(key), text(value));
    }
    out.version = text(info.version());
    out.startTimeNs = info.start_time_ns();
    out.principal = text(info.principal());
    out.role = role(info.role());
    out.instanceCount = static_cast<int>(info.instance_count());
    out.lastProfile = text(info.last_profile());
    return out;
}

InstanceInfo instance(const ctl::v1::Instance &instance)
{
    InstanceInfo out;
    out.id = text(instance.id());
    out.kind = text(instance.kind());
    out.name = text(instance.name());
    out.pid = instance.pid();
    out.version = text(instance.version());
    out.startTimeNs = instance.start_time_ns();
    out.connected = instance.connected();
    out.seenSinceNs = instance.seen_since_ns();
    out.restarts = static_cast<int>(instance.restarts());
    return out;
}

QList<InstanceInfo> instances(const ctl::v1::ListInstancesReply &reply)
{
    QList<InstanceInfo> out;
    out.reserve(reply.instances_size());
    for (const auto &one : reply.instances()) {
        out.append(instance(one));
    }
    return out;
}

ParamType paramType(params::v1::ParamType type)
{
    switch (type) {
    case params::v1::PARAM_TYPE_INTEGER: return ParamType::integer;
    case params::v1::PARAM_TYPE_SIZE: return ParamType::size;
    case params::v1::PARAM_TYPE_BOOLEAN: return ParamType::boolean;
    case params::v1::PARAM_TYPE_ENUM: return ParamType::enumeration;
    case params::v1::PARAM_TYPE_DURATION: return ParamType::duration;
    case params::v1::PARAM_TYPE_STRING: return ParamType::string;
    case params::v1::PARAM_TYPE_COUNTERS: return ParamType::counters;
    default: return ParamType::unspecified;
    }
}

ParamSpec paramSpec(const params::v1::ParamSpec &spec)
{
    ParamSpec out;
    out.name = text(spec.name());
    out.type = paramType(spec.type());
    out.unit = text(spec.unit());
    out.min = spec.min();
    out.max = spec.max();
    out.defaultValue = text(spec.default_value());
    out.writable = spec.writable();
    out.help = text(spec.help());
    out.choices = texts(spec.choices());
    for (const auto &special : spec.special_values()) {
        out.specialValues.append({text(special.word()), text(special.help())});
    }
    out.allowed = text(spec.allowed());
    out.textCommands = spec.text_commands();
    return out;
}

QList<InstanceSpecs> instanceSpecs(const ctl::v1::ListParamsReply &reply)
{
    QList<InstanceSpecs> out;
    out.reserve(reply.instances_size());
    for (const auto &instance : reply.instances()) {
        InstanceSpecs specs;
        specs.instance = text(instance.instance());
        specs.specs.reserve(instance.specs_size());
        for (const auto &spec : instance.specs()) {
            specs.specs.append(paramSpec(spec));
        }
        out.append(std::move(specs));
    }
    return out;
}

QList<InstanceValue> values(const ctl::v1::GetParamsReply &reply)
{
    QList<InstanceValue> out;
    out.reserve(reply.values_size());
    for (const auto &value : reply.values()) {
        out.append({text(value.instance()), text(value.name()), text(value.value())});
    }
    return out;
}

QString error(const params::v1::Error &error)
{
    if (error.code() == params::v1::ERROR_CODE_OK) {
        return {};
    }
    if (!error.message().empty()) {
        return text(error.message());
    }
    return text(params::v1::ErrorCode_Name(error.code()));
}

PlanEntry planEntry(const ctl::v1::PlanEntry &entry)
{
    PlanEntry out;
    out.instance = text(entry.instance());
    out.name = text(entry.name());
    out.live = text(entry.live());
    out.desired = text(entry.desired());
    out.changed = entry.changed();
    out.source = text(entry.source());
    return out;
}

InstanceSetOutcome instanceSetOutcome(const ctl::v1::InstanceSetResult &result)
{
    InstanceSetOutcome out;
    out.instance = text(result.instance());
    out.applied = result.result().applied();
    for (const auto &batchError : result.result().errors()) {
        out.errors.append(error(batchError));
    }
    for (const auto &one : result.result().results()) {
        SetEntry entry;
        entry.name = text(one.name());
        entry.oldValue = text(one.old_value());
        entry.requested = text(one.requested());
        entry.readBack = text(one.read_back());
        entry.special = one.special();
        entry.clamped = one.clamped();
        entry.rolledBack = one.rolled_back();
        entry.error = error(one.error());
        out.entries.append(std::move(entry));
    }
    return out;
}

SetOutcome setOutcome(const ctl::v1::SetParamsReply &reply, bool dryRun)
{
    SetOutcome out;
    out.applied = reply.applied();
    out.dryRun = dryRun;
    out.historyId = reply.history_id();
    for (const auto &instance : reply.instances()) {
        out.instances.append(instanceSetOutcome(instance));
    }
    for (const auto &nodeError : reply.errors()) {
        out.errors.append(error(nodeError));
    }
    for (const auto &entry : reply.plan()) {
        out.plan.append(planEntry(entry));
    }
    return out;
}

ProfileError profileError(const ctl::v1::ProfileError &error)
{
    ProfileError out;
    out.file = text(error.file());
    out.line = static_cast<int>(error.line());
    out.column = static_cast<int>(error.column());
    out.message = text(error.message());
    return out;
}

ProfileList profileList(const ctl::v1::ListProfilesReply &reply)
{
    ProfileList out;
    out.profiles.reserve(reply.profiles_size());
    for (const auto &profile : reply.profiles()) {
        ProfileSummary one;
        one.name = text(profile.name());
        one.description = text(profile.description());
        one.extends = texts(profile.extends());
        one.matchesNode = profile.matches_node();
        one.source = text(profile.source());
        one.updatedNs = profile.updated_ns();
        out.profiles.append(std::move(one));
    }
    for (const auto &loadError : reply.errors()) {
        out.errors.append(profileError(loadError));
    }
    return out;
}

ProfileText profileText(const ctl::v1::GetProfileReply &reply)
{
    return {text(reply.name()), text(reply.yaml()), text(reply.source())};
}

QList<ProfileError> profileErrors(const ctl::v1::PutProfileReply &reply)
{
    QList<ProfileError> out;
    out.reserve(reply.errors_size());
    for (const auto &putError : reply.errors()) {
        out.append(profileError(putError));
    }
    return out;
}

ProfilePlan profilePlan(const ctl::v1::ProfilePlan &plan)
{
    ProfilePlan out;
    out.profile = text(plan.profile());
    out.matchesNode = plan.matches_node();
    for (const auto &planError : plan.errors()) {
        out.errors.append(profileError(planError));
    }
    out.entries.reserve(plan.entries_size());
    for (const auto &entry : plan.entries()) {
        out.entries.append(planEntry(entry));
    }
    out.applied = plan.applied();
    out.historyId = plan.history_id();
    for (const auto &result : plan.results()) {
        out.results.append(instanceSetOutcome(result));
    }
    out.drift = static_cast<int>(plan.drift());
    return out;
}

RollbackOutcome rollbackOutcome(const ctl::v1::RollbackReply &reply)
{
    RollbackOutcome out;
    out.applied = reply.applied();
    out.historyId = reply.history_id();
    out.entries.reserve(reply.entries_size());
    for (const auto &entry : reply.entries()) {
        out.entries.append(planEntry(entry));
    }
    for (const auto &result : reply.results()) {
        out.results.append(instanceSetOutcome(result));
    }
    for (const auto &nodeError : reply.errors()) {
        out.errors.append(error(nodeError));
    }
    return out;
}

FlushOutcome flushOutcome(const ctl::v1::FlushJobReply &reply)
{
    FlushOutcome out;
    out.jobId = text(reply.job_id());
    out.ok = reply.ok();
    out.durationUs = reply.duration_us();
    out.instances.reserve(reply.instances_size());
    for (const auto &report : reply.instances()) {
        InstanceFlushReport one;
        one.instance = text(report.instance());
        one.error = error(report.error());
        one.locksCancelled = report.locks_cancelled();
        one.pagesDropped = report.pages_dropped();
        one.bytesWrittenBack = report.bytes_written_back();
        one.durationUs = report.duration_us();
        one.problems = texts(report.errors());
        out.instances.append(std::move(one));
    }
    out.historyId = reply.history_id();
    return out;
}

Counter counter(const params::v1::Counter &wire)
{
    Counter out;
    out.name = text(wire.name());
    out.unit = text(wire.unit());
    out.samples = wire.samples();
    out.withMinMaxSum = wire.with_min_max_sum();
    out.min = wire.min();
    out.max = wire.max();
    out.sum = wire.sum();
    return out;
}

QList<JobStat> jobStats(const ctl::v1::GetJobStatsReply &reply)
{
    QList<JobStat> out;
    out.reserve(reply.jobs_size());
    for (const auto &job : reply.jobs()) {
        JobStat one;
        one.instance = text(job.instance());
        one.block = text(job.block());
        one.jobId = text(job.job_id());
        one.snapshotTimeS = job.snapshot_time_s();
        one.counters.reserve(job.counters_size());
        for (const auto &wire : job.counters()) {
            one.counters.append(counter(wire));
        }
        out.append(std::move(one));
    }
    return out;
}

HistoryPoint historyPoint(const ctl::v1::HistoryPoint &point)
{
    HistoryPoint out;
    out.id = point.id();
    out.timeNs = point.time_ns();
    out.principal = text(point.principal());
    out.action = text(point.action());
    out.description = text(point.description());
    out.profile = text(point.profile());
    out.outcome = text(point.outcome());
    out.changes.reserve(point.changes_size());
    for (const auto &change : point.changes()) {
        HistoryChange one;
        one.instance = text(change.instance());
        one.name = text(change.name());
        one.oldValue = text(change.old_value());
        one.requested = text(change.requested());
        one.readBack = text(change.read_back());
        one.ok = change.ok();
        one.error = text(change.error());
        out.changes.append(std::move(one));
    }
    return out;
}

HistoryPage historyPage(const ctl::v1::ListHistoryReply &reply)
{
    HistoryPage out;
    out.points.reserve(reply.points_size());
    for (const auto &point : reply.points()) {
        out.points.append(historyPoint(point));
    }
    out.nextBeforeId = reply.next_before_id();
    return out;
}

CounterBlock counterBlock(const params::v1::CounterBlock &block)
{
    CounterBlock out;
    out.name = text(block.name());
    out.snapshotTimeNs = block.snapshot_time_ns();
    out.startTimeNs = block.start_time_ns();
    out.counters.reserve(block.counters_size());
    for (const auto &one : block.counters()) {
        out.counters.append(counter(one));
    }
    return out;
}

CounterUpdate counterUpdate(const ctl::v1::CounterUpdate &update)
{
    CounterUpdate out;
    out.timeNs = update.time_ns();
    out.instances.reserve(update.instances_size());
    for (const auto &instance : update.instances()) {
        InstanceCounters one;
        one.instance = text(instance.instance());
        one.blocks.reserve(instance.blocks_size());
        for (const auto &block : instance.blocks()) {
            one.blocks.append(counterBlock(block));
        }
        one.gauges.reserve(instance.gauges_size());
        for (const auto &gauge : instance.gauges()) {
            one.gauges.append({text(gauge.instance()), text(gauge.name()), text(gauge.value())});
        }
        out.instances.append(std::move(one));
    }
    return out;
}

QList<HistorySeries> history(const ctl::v1::GetCounterHistoryReply &reply)
{
    QList<HistorySeries> out;
    out.reserve(reply.series_size());
    for (const auto &series : reply.series()) {
        HistorySeries one;
        one.instance = text(series.instance());
        one.counter = text(series.counter());
        one.timeNs = int64s(series.time_ns());
        one.value = int64s(series.value());
        one.min = int64s(series.min());
        one.max = int64s(series.max());
        out.append(std::move(one));
    }
    return out;
}

} // namespace lutra::console::convert
