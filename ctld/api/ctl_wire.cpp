#include "api/ctl_wire.h"

#include "control/params_wire.h"

namespace {

std::int64_t toNs(lutra::ctld::TimePoint time)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

} // namespace

namespace lutra::ctld {

void toWire(const InstanceSpecs &specs, ctl::v1::InstanceSpecs *out)
{
    out->set_instance(specs.instance);
    for (const auto &spec : specs.specs) {
        control::toWire(spec, out->add_specs());
    }
}

void toWire(const InstanceValue &value, ctl::v1::InstanceValue *out)
{
    out->set_instance(value.instance);
    out->set_name(value.name);
    out->set_value(value.value);
}

void toWire(const InstanceFailure &failure, ctl::v1::InstanceFailure *out)
{
    out->set_instance(failure.instance);
    out->set_message(failure.message);
}

void toWire(const PlanEntry &entry, ctl::v1::PlanEntry *out)
{
    out->set_instance(entry.instance);
    out->set_name(entry.name);
    out->set_live(entry.live);
    out->set_desired(entry.desired);
    out->set_changed(entry.changed);
    out->set_source(entry.source);
}

void toWire(const InstanceSetResult &result, ctl::v1::InstanceSetResult *out)
{
    out->set_instance(result.instance);
    *out->mutable_result() = result.result;
}

void toWire(const FlushResult &result, ctl::v1::FlushJobReply *out)
{
    out->set_job_id(result.jobId);
    out->set_ok(result.ok);
    out->set_duration_us(result.durationUs);
    out->set_history_id(result.historyId);
    for (const auto &instance : result.instances) {
        auto *wire = out->add_instances();
        wire->set_instance(instance.instance);
        control::toWire(instance.error, wire->mutable_error());
        wire->set_locks_cancelled(instance.locksCancelled);
        wire->set_pages_dropped(instance.pagesDropped);
        wire->set_bytes_written_back(instance.bytesWrittenBack);
        wire->set_duration_us(instance.durationUs);
        for (const auto &error : instance.errors) {
            wire->add_errors(error);
        }
    }
}

void toWire(const JobStat &stat, ctl::v1::JobStat *out)
{
    out->set_instance(stat.instance);
    out->set_block(stat.block);
    out->set_job_id(stat.jobId);
    out->set_snapshot_time_s(stat.snapshotTimeS);
    for (const auto &counter : stat.counters) {
        control::toWire(counter, out->add_counters());
    }
}

void toWire(const profiles::Diagnostic &diagnostic, ctl::v1::ProfileError *out)
{
    out->set_file(diagnostic.location.file);
    out->set_line(static_cast<std::uint32_t>(diagnostic.location.line));
    out->set_column(static_cast<std::uint32_t>(diagnostic.location.column));
    out->set_message(diagnostic.message);
}

void toWire(const ProfileList &list, ctl::v1::ListProfilesReply *out)
{
    for (const auto &profile : list.profiles) {
        auto *summary = out->add_profiles();
        summary->set_name(profile.name);
        summary->set_description(profile.description);
        for (const auto &parent : profile.extends) {
            summary->add_extends(parent);
        }
        summary->set_matches_node(profile.matchesNode);
        summary->set_source(profile.source);
        if (profile.updated) {
            summary->set_updated_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        profile.updated->time_since_epoch())
                                        .count());
        }
    }
    for (const auto &error : list.errors) {
        toWire(error, out->add_errors());
    }
}

void toWire(const ProfileDocument &document, ctl::v1::GetProfileReply *out)
{
    out->set_name(document.name);
    out->set_yaml(document.yaml);
    out->set_source(document.source);
}

void toWire(const StoredProfile &stored, ctl::v1::PutProfileReply *out)
{
    out->set_name(stored.name);
    for (const auto &error : stored.errors) {
        toWire(error, out->add_errors());
    }
}

void toWire(const ProfilePlan &plan, ctl::v1::ProfilePlan *out)
{
    out->set_profile(plan.profile);
    out->set_matches_node(plan.matchesNode);
    for (const auto &error : plan.errors) {
        toWire(error, out->add_errors());
    }
    for (const auto &entry : plan.entries) {
        toWire(entry, out->add_entries());
    }
    out->set_applied(plan.applied);
    out->set_history_id(plan.historyId);
    for (const auto &result : plan.results) {
        toWire(result, out->add_results());
    }
    out->set_drift(plan.drift);
}

ProfileRequest fromWire(const ctl::v1::ProfileRequest &request)
{
    return {request.name(), request.yaml(), request.force()};
}

void toWire(const HistoryList &list, ctl::v1::ListHistoryReply *out)
{
    for (const auto &entry : list.points) {
        const HistoryPoint &point = entry.point;
        auto *wire = out->add_points();
        wire->set_id(static_cast<std::uint64_t>(point.id));
        wire->set_time_ns(toNs(point.time));
        wire->set_principal(point.principal);
        wire->set_action(std::string(actionName(point.action)));
        wire->set_description(point.description);
        wire->set_profile(point.profile);
        wire->set_outcome(std::string(outcomeName(point.outcome)));
        for (const auto &change : entry.changes) {
            auto *c = wire->add_changes();
            c->set_instance(change.instance);
            c->set_name(change.param);
            c->set_old_value(change.oldValue);
            c->set_requested(change.requested);
            c->set_read_back(change.readBack);
            c->set_ok(change.outcome == ChangeOutcome::ok);
            if (change.outcome != ChangeOutcome::ok) {
                c->set_error(change.error.empty() ? std::string(changeOutcomeName(change.outcome))
                                                  : change.error);
            }
        }
    }
    out->set_next_before_id(list.nextBeforeId);
}

HistoryRequest fromWire(const ctl::v1::ListHistoryRequest &request)
{
    return {request.limit(), request.before_id(), request.principal(), request.action(),
            request.param(), request.instance(),  request.since_ns(),  request.until_ns()};
}

void toWire(const RollbackResult &result, ctl::v1::RollbackReply *out)
{
    out->set_applied(result.applied);
    out->set_history_id(result.historyId);
    for (const auto &entry : result.entries) {
        toWire(entry, out->add_entries());
    }
    for (const auto &instance : result.results) {
        toWire(instance, out->add_results());
    }
    for (const auto &error : result.errors) {
        control::toWire(error, out->add_errors());
    }
}

void toWire(const std::vector<CounterSeries> &series, ctl::v1::GetCounterHistoryReply *out)
{
    for (const auto &one : series) {
        auto *wire = out->add_series();
        wire->set_instance(one.instance);
        wire->set_counter(one.counter);
        for (const auto &point : one.points) {
            wire->add_time_ns(toNs(point.lastTime));
            wire->add_value(point.last);
            wire->add_min(point.min);
            wire->add_max(point.max);
        }
    }
}

CounterHistoryRequest fromWire(const ctl::v1::GetCounterHistoryRequest &request)
{
    return {request.instance(), request.counter(), request.since_ns(), request.until_ns()};
}

} // namespace lutra::ctld
