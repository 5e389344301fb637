#include "api/ctl_wire.h"

#include "control/params_wire.h"

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
        auto *wire = out->add_counters();
        wire->set_name(counter.name);
        wire->set_unit(counter.unit);
        wire->set_samples(counter.samples);
        wire->set_with_min_max_sum(counter.withMinMaxSum);
        wire->set_min(counter.min);
        wire->set_max(counter.max);
        wire->set_sum(counter.sum);
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

} // namespace lutra::ctld
