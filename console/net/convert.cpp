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

SetOutcome setOutcome(const ctl::v1::SetParamsReply &reply, bool dryRun)
{
    SetOutcome out;
    out.applied = reply.applied();
    out.dryRun = dryRun;
    out.historyId = reply.history_id();
    for (const auto &instance : reply.instances()) {
        InstanceSetOutcome one;
        one.instance = text(instance.instance());
        one.applied = instance.result().applied();
        for (const auto &batchError : instance.result().errors()) {
            one.errors.append(error(batchError));
        }
        for (const auto &result : instance.result().results()) {
            SetEntry entry;
            entry.name = text(result.name());
            entry.oldValue = text(result.old_value());
            entry.requested = text(result.requested());
            entry.readBack = text(result.read_back());
            entry.special = result.special();
            entry.clamped = result.clamped();
            entry.rolledBack = result.rolled_back();
            entry.error = error(result.error());
            one.entries.append(std::move(entry));
        }
        out.instances.append(std::move(one));
    }
    for (const auto &nodeError : reply.errors()) {
        out.errors.append(error(nodeError));
    }
    return out;
}

CounterBlock counterBlock(const params::v1::CounterBlock &block)
{
    CounterBlock out;
    out.name = text(block.name());
    out.snapshotTimeNs = block.snapshot_time_ns();
    out.startTimeNs = block.start_time_ns();
    out.counters.reserve(block.counters_size());
    for (const auto &counter : block.counters()) {
        Counter one;
        one.name = text(counter.name());
        one.unit = text(counter.unit());
        one.samples = counter.samples();
        one.withMinMaxSum = counter.with_min_max_sum();
        one.min = counter.min();
        one.max = counter.max();
        one.sum = counter.sum();
        out.counters.append(std::move(one));
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
