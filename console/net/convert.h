#pragma once
// lutra.ctl.v1 / lutra.params.v1 messages → the console's value types. Private to console/net:
// nothing past this layer sees protobuf.

#include "core/types.h"
#include "lutra/ctl/v1/ctl.pb.h"

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
SetOutcome setOutcome(const ctl::v1::SetParamsReply &reply, bool dryRun);

CounterBlock counterBlock(const params::v1::CounterBlock &block);
CounterUpdate counterUpdate(const ctl::v1::CounterUpdate &update);
QList<HistorySeries> history(const ctl::v1::GetCounterHistoryReply &reply);

} // namespace lutra::console::convert
