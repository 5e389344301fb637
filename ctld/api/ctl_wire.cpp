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

} // namespace lutra::ctld
