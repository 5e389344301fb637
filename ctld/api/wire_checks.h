#pragma once
// Range checks of integers from the wire, before they reach signed arithmetic or SQLite: a
// uint64 id above 2^63-1 would turn negative, a time near -2^63 overflows bucket arithmetic.
// Each failure is INVALID_ARGUMENT naming the call and the field.

#include <lutra/status.h>

#include "lutra/ctl/v1/ctl.pb.h"

namespace lutra::ctld {

Status checkWire(const ctl::v1::ListHistoryRequest &request);
Status checkWire(const ctl::v1::RollbackRequest &request);
Status checkWire(const ctl::v1::GetCounterHistoryRequest &request);

} // namespace lutra::ctld
