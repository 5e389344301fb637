#pragma once
// ctld's own types -> lutra.ctl.v1. The daemon's logic (NodeOps) returns plain structs; this is
// where they become replies.

#include "daemon/job_stats_text.h"
#include "daemon/node_ops.h"
#include "daemon/profile_ops.h"
#include "lutra/ctl/v1/ctl.pb.h"

namespace lutra::ctld {

void toWire(const InstanceSpecs &specs, ctl::v1::InstanceSpecs *out);
void toWire(const InstanceValue &value, ctl::v1::InstanceValue *out);
void toWire(const InstanceFailure &failure, ctl::v1::InstanceFailure *out);
void toWire(const PlanEntry &entry, ctl::v1::PlanEntry *out);
void toWire(const InstanceSetResult &result, ctl::v1::InstanceSetResult *out);
void toWire(const FlushResult &result, ctl::v1::FlushJobReply *out);
void toWire(const JobStat &stat, ctl::v1::JobStat *out);
void toWire(const profiles::Diagnostic &diagnostic, ctl::v1::ProfileError *out);
void toWire(const ProfileList &list, ctl::v1::ListProfilesReply *out);
void toWire(const ProfileDocument &document, ctl::v1::GetProfileReply *out);
void toWire(const StoredProfile &stored, ctl::v1::PutProfileReply *out);
void toWire(const ProfilePlan &plan, ctl::v1::ProfilePlan *out);
ProfileRequest fromWire(const ctl::v1::ProfileRequest &request);
void toWire(const HistoryList &list, ctl::v1::ListHistoryReply *out);
HistoryRequest fromWire(const ctl::v1::ListHistoryRequest &request);
void toWire(const RollbackResult &result, ctl::v1::RollbackReply *out);
void toWire(const std::vector<CounterSeries> &series, ctl::v1::GetCounterHistoryReply *out);
CounterHistoryRequest fromWire(const ctl::v1::GetCounterHistoryRequest &request);

} // namespace lutra::ctld
