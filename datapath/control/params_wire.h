#pragma once
// Registry types <-> their protobuf wire form (lutra.params.v1).

#include <lutra/status.h>

#include "core/params/registry.h"
#include "lutra/params/v1/params.pb.h"

namespace lutra::control {

params::v1::ErrorCode toWire(Errc code) noexcept;
Errc fromWire(params::v1::ErrorCode code) noexcept;
void toWire(const Status &status, params::v1::Error *out);
Status fromWire(const params::v1::Error &error);

void toWire(const params::Spec &spec, params::v1::ParamSpec *out);
// The inverse, for processes that validate values before sending them (ctld, lutractl).
Result<params::Spec> fromWire(const params::v1::ParamSpec &wire);
void toWire(const params::BatchResult &result, params::v1::BatchResult *out);
void toWire(const params::CounterReading &counter, params::v1::Counter *out);
void toWire(const std::string &name, const params::CounterSnapshot &snapshot,
            params::v1::CounterBlock *out);

} // namespace lutra::control
