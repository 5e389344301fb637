#pragma once
// lutra.ctl.v1 / lutra.params.v1 messages → the console's value types. Private to console/net:
// nothing past this layer sees protobuf.

#include "core/types.h"
#include "lutra/ctl/v1/ctl.pb.h"
#include "net/profile_text.h"

namespace lutra::console::convert {

QString text(const std::string &value);

Role role(ctl::v1::Role role);
NodeInfo nodeInfo(const ctl::v1::NodeInfo &info);
InstanceInfo instance(const ctl::v1::Instance &instance);
QList<InstanceInfo> instances(const ctl::v1::ListInstancesReply &reply);

ParamType paramType(params::v1::ParamType type);
ParamSpec paramSpec(const params::v1::ParamSpec &spec);
QList<InstanceSpecs> instanceSpecs(const ctl::v1::ListParamsReply &reply);
QList<InstanceValue> values(const ctl::v1::GetParamsReply &reply);

// The message, or the code's name when a message is missing; "" for ERROR_CODE_OK.
QString error(const params::v1::Error &error);
PlanEntry planEntry(const ctl::v1::PlanEntry &entry);
InstanceSetOutcome instanceSetOutcome(const ctl::v1::InstanceSetResult &result);
SetOutcome setOutcome(const ctl::v1::SetParamsReply &reply, bool dryRun);

ProfileError profileError(const ctl::v1::ProfileError &error);
ProfileList profileList(const ctl::v1::ListProfilesReply &reply);
ProfileText profileText(const ctl::v1::GetProfileReply &reply);
QList<ProfileError> profileErrors(const ctl::v1::PutProfileReply &reply);
ProfilePlan profilePlan(const ctl::v1::ProfilePlan &plan);
RollbackOutcome rollbackOutcome(const ctl::v1::RollbackReply &reply);

FlushOutcome flushOutcome(const ctl::v1::FlushJobReply &reply);
Counter counter(const params::v1::Counter &wire);
QList<JobStat> jobStats(const ctl::v1::GetJobStatsReply &reply);

HistoryPoint historyPoint(const ctl::v1::HistoryPoint &point);
HistoryPage historyPage(const ctl::v1::ListHistoryReply &reply);

CounterBlock counterBlock(const params::v1::CounterBlock &block);
CounterUpdate counterUpdate(const ctl::v1::CounterUpdate &update);
QList<HistorySeries> history(const ctl::v1::GetCounterHistoryReply &reply);

} // namespace lutra::console::convert
