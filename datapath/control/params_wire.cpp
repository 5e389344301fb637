#include "control/params_wire.h"

#include <chrono>

namespace lutra::control {

static_assert(static_cast<int>(Errc::internal) == params::v1::ERROR_CODE_INTERNAL &&
                  static_cast<int>(Errc::out_of_range) == params::v1::ERROR_CODE_OUT_OF_RANGE,
              "lutra::Errc and lutra.params.v1.ErrorCode must keep the same numbering");

namespace {

std::int64_t nanosSinceEpoch(params::WallClock::time_point time)
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

params::v1::ParamType toWire(params::Type type) noexcept
{
    switch (type) {
    case params::Type::integer: return params::v1::PARAM_TYPE_INTEGER;
    case params::Type::size: return params::v1::PARAM_TYPE_SIZE;
    case params::Type::boolean: return params::v1::PARAM_TYPE_BOOLEAN;
    case params::Type::enumeration: return params::v1::PARAM_TYPE_ENUM;
    case params::Type::duration: return params::v1::PARAM_TYPE_DURATION;
    case params::Type::string: return params::v1::PARAM_TYPE_STRING;
    case params::Type::counters: return params::v1::PARAM_TYPE_COUNTERS;
    }
    return params::v1::PARAM_TYPE_UNSPECIFIED;
}

} // namespace

params::v1::ErrorCode toWire(Errc code) noexcept
{
    // lutra::Errc and the wire enum share their numbering by design.
    return static_cast<params::v1::ErrorCode>(static_cast<int>(code));
}

Errc fromWire(params::v1::ErrorCode code) noexcept
{
    const int value = static_cast<int>(code);
    if (value < 0 || value > static_cast<int>(Errc::internal)) {
        return Errc::internal;
    }
    return static_cast<Errc>(value);
}

void toWire(const Status &status, params::v1::Error *out)
{
    out->set_code(toWire(status.code()));
    out->set_message(status.message());
}

Status fromWire(const params::v1::Error &error)
{
    if (error.code() == params::v1::ERROR_CODE_OK) {
        return {};
    }
    return {fromWire(error.code()), error.message()};
}

void toWire(const params::Spec &spec, params::v1::ParamSpec *out)
{
    out->set_name(spec.name);
    out->set_type(toWire(spec.type));
    out->set_unit(std::string(params::unitName(spec.unit)));
    out->set_min(spec.min);
    out->set_max(spec.max);
    if (spec.type != params::Type::counters) {
        out->set_default_value(params::formatValue(spec, spec.defaultValue));
    }
    out->set_writable(spec.writable);
    out->set_help(spec.help);
    for (const auto &choice : spec.enumValues) {
        out->add_choices(choice);
    }
    for (const auto &special : spec.specialValues) {
        auto *wire = out->add_special_values();
        wire->set_word(special.word);
        wire->set_help(special.help);
    }
    out->set_allowed(params::describeAllowed(spec));
    out->set_text_commands(spec.textCommands);
}

Result<params::Spec> fromWire(const params::v1::ParamSpec &wire)
{
    params::Spec spec;
    spec.name = wire.name();
    if (!params::isValidName(spec.name)) {
        return Status(Errc::protocol_error, "parameter spec with invalid name '" + spec.name + "'");
    }
    switch (wire.type()) {
    case params::v1::PARAM_TYPE_INTEGER: spec.type = params::Type::integer; break;
    case params::v1::PARAM_TYPE_SIZE: spec.type = params::Type::size; break;
    case params::v1::PARAM_TYPE_BOOLEAN: spec.type = params::Type::boolean; break;
    case params::v1::PARAM_TYPE_ENUM: spec.type = params::Type::enumeration; break;
    case params::v1::PARAM_TYPE_DURATION: spec.type = params::Type::duration; break;
    case params::v1::PARAM_TYPE_STRING: spec.type = params::Type::string; break;
    case params::v1::PARAM_TYPE_COUNTERS: spec.type = params::Type::counters; break;
    default:
        return Status(Errc::protocol_error, spec.name + ": unknown parameter type " +
                                                std::to_string(static_cast<int>(wire.type())));
    }
    bool unitKnown = false;
    for (const auto unit :
         {params::Unit::none, params::Unit::bytes, params::Unit::mib, params::Unit::pages,
          params::Unit::seconds, params::Unit::milliseconds}) {
        if (params::unitName(unit) == wire.unit()) {
            spec.unit = unit;
            unitKnown = true;
        }
    }
    if (!unitKnown) {
        return Status(Errc::protocol_error, spec.name + ": unknown unit '" + wire.unit() + "'");
    }
    spec.min = wire.min();
    spec.max = wire.max();
    spec.writable = wire.writable();
    spec.help = wire.help();
    spec.enumValues.assign(wire.choices().begin(), wire.choices().end());
    for (const auto &special : wire.special_values()) {
        spec.specialValues.push_back({special.word(), special.help()});
    }
    spec.textCommands = wire.text_commands();
    if (spec.type == params::Type::string) {
        spec.defaultValue = wire.default_value();
    } else if (spec.type != params::Type::counters) {
        // The default is checked like any value, so a spec that cannot round-trip is refused.
        auto parsed = params::parseValue(spec, wire.default_value());
        if (!parsed || parsed->isSpecial()) {
            return Status(Errc::protocol_error,
                          spec.name + ": bad default '" + wire.default_value() + "'");
        }
        spec.defaultValue = parsed->value;
    }
    return spec;
}

void toWire(const params::BatchResult &result, params::v1::BatchResult *out)
{
    out->set_applied(result.status.ok());
    for (const auto &error : result.errors) {
        toWire(error, out->add_errors());
    }
    for (const auto &r : result.results) {
        auto *wire = out->add_results();
        wire->set_name(r.name);
        wire->set_old_value(r.oldValue);
        wire->set_requested(r.requested);
        wire->set_read_back(r.readBack);
        wire->set_special(r.special);
        wire->set_clamped(r.clamped);
        wire->set_rolled_back(r.rolledBack);
        toWire(r.status, wire->mutable_error());
    }
}

void toWire(const params::CounterReading &counter, params::v1::Counter *out)
{
    out->set_name(counter.name);
    out->set_unit(counter.unit);
    out->set_samples(counter.samples);
    out->set_with_min_max_sum(counter.withMinMaxSum);
    out->set_min(counter.min);
    out->set_max(counter.max);
    out->set_sum(counter.sum);
}

void toWire(const std::string &name, const params::CounterSnapshot &snapshot,
            params::v1::CounterBlock *out)
{
    out->set_name(name);
    out->set_snapshot_time_ns(nanosSinceEpoch(snapshot.snapshotTime));
    out->set_start_time_ns(nanosSinceEpoch(snapshot.startTime));
    for (const auto &counter : snapshot.counters) {
        toWire(counter, out->add_counters());
    }
}

} // namespace lutra::control
