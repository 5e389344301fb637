#include "api/ctl_service.h"

#include "api/ctl_wire.h"
#include "api/wire_checks.h"
#include "control/utf8_fields.h"
#include "core/params/glob.h"
#include "daemon/profile_ops.h"

#include <grpcpp/alarm.h>

namespace lutra::ctld {

namespace v1 = ctl::v1;

grpc::Status toGrpc(const Status &status)
{
    using grpc::StatusCode;
    if (status.ok()) {
        return grpc::Status::OK;
    }
    StatusCode code = StatusCode::INTERNAL;
    switch (status.code()) {
    case Errc::ok: code = StatusCode::OK; break;
    case Errc::invalid_argument: code = StatusCode::INVALID_ARGUMENT; break;
    case Errc::out_of_range: code = StatusCode::OUT_OF_RANGE; break;
    case Errc::not_found: code = StatusCode::NOT_FOUND; break;
    case Errc::already_exists: code = StatusCode::ALREADY_EXISTS; break;
    case Errc::permission_denied: code = StatusCode::PERMISSION_DENIED; break;
    case Errc::failed_precondition: code = StatusCode::FAILED_PRECONDITION; break;
    case Errc::unavailable: code = StatusCode::UNAVAILABLE; break;
    case Errc::timeout: code = StatusCode::DEADLINE_EXCEEDED; break;
    case Errc::resource_exhausted: code = StatusCode::RESOURCE_EXHAUSTED; break;
    case Errc::cancelled: code = StatusCode::CANCELLED; break;
    case Errc::unimplemented: code = StatusCode::UNIMPLEMENTED; break;
    case Errc::io_error:
    case Errc::protocol_error:
    case Errc::internal: code = StatusCode::INTERNAL; break;
    }
    return {code, status.message()};
}

namespace {

// A result of the daemon's logic as the reply, or its error.
template <class T, class Reply> Status answer(Result<T> result, Reply *reply)
{
    if (!result) {
        return result.status();
    }
    toWire(*result, reply);
    return {};
}

v1::Role toWire(Role role)
{
    switch (role) {
    case Role::viewer: return v1::ROLE_VIEWER;
    case Role::operator_: return v1::ROLE_OPERATOR;
    case Role::admin: return v1::ROLE_ADMIN;
    }
    return v1::ROLE_UNSPECIFIED;
}

std::vector<std::string> toVector(const google::protobuf::RepeatedPtrField<std::string> &field)
{
    return {field.begin(), field.end()};
}

} // namespace

Status forCaller(const Status &status, const std::string &dbPath)
{
    if (status.ok()) {
        return status;
    }
    std::string message = status.message();
    // The node's file layout is not the caller's business; ctld's own log has the path.
    for (auto at = message.find(dbPath); !dbPath.empty() && at != std::string::npos;
         at = message.find(dbPath, at)) {
        message.replace(at, dbPath.size(), "ctld's database");
    }
    // An error quoting a huge input must not become a huge status (oversize metadata).
    if (message.size() > kMaxErrorBytes) {
        std::size_t cut = kMaxErrorBytes;
        while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) {
            --cut; // not inside a UTF-8 sequence
        }
        message = message.substr(0, cut) + "\u2026 (" + std::to_string(message.size()) + " bytes)";
    }
    return {status.code(), std::move(message)};
}

CtlService::CtlService(ServiceParts parts) : m_parts(parts) {}

template <typename Work>
grpc::ServerUnaryReactor *CtlService::serve(grpc::CallbackServerContext *context,
                                            const google::protobuf::Message &request, Role needed,
                                            std::string_view operation, Work work)
{
    auto *reactor = context->DefaultReactor();
    auto caller = m_parts.auth->authenticate(*context);
    if (!caller) {
        reactor->Finish({grpc::StatusCode::UNAUTHENTICATED,
                         std::string(operation) + ": " + caller.status().message()});
        return reactor;
    }
    if (auto allowed = requireRole(*caller, needed, operation); !allowed) {
        reactor->Finish({grpc::StatusCode::PERMISSION_DENIED, allowed.message()});
        return reactor;
    }
    if (auto text = control::checkUtf8Fields(request); !text) {
        reactor->Finish(
            {grpc::StatusCode::INVALID_ARGUMENT, std::string(operation) + ": " + text.message()});
        return reactor;
    }
    const bool queued = m_parts.pool->submit(
        [this, reactor, work = std::move(work), who = std::move(*caller)]() mutable {
            reactor->Finish(toGrpc(forCaller(work(who), m_parts.config->db.native())));
        });
    if (!queued) {
        reactor->Finish({grpc::StatusCode::RESOURCE_EXHAUSTED,
                         std::string(operation) + ": ctld is busy; retry shortly"});
    }
    return reactor;
}

grpc::ServerUnaryReactor *CtlService::GetNodeInfo(grpc::CallbackServerContext *context,
                                                  const v1::GetNodeInfoRequest *request,
                                                  v1::NodeInfo *reply)
{
    return serve(context, *request, Role::viewer, "GetNodeInfo",
                 [this, reply](const Caller &caller) {
                     const auto &config = *m_parts.config;
                     reply->set_node(config.node);
                     for (const auto &[key, value] : config.labels) {
                         (*reply->mutable_labels())[key] = value;
                     }
                     reply->set_version(LUTRA_VERSION);
                     reply->set_start_time_ns(m_parts.startTimeNs);
                     reply->set_principal(caller.principal);
                     reply->set_role(toWire(caller.role));
                     reply->set_instance_count(
                         static_cast<std::uint32_t>(m_parts.instances->connected().size()));
                     if (m_parts.profiles) {
                         reply->set_last_profile(m_parts.profiles->lastApplied());
                     }
                     return Status{};
                 });
}

grpc::ServerUnaryReactor *CtlService::ListInstances(grpc::CallbackServerContext *context,
                                                    const v1::ListInstancesRequest *request,
                                                    v1::ListInstancesReply *reply)
{
    return serve(context, *request, Role::viewer, "ListInstances", [this, reply](const Caller &) {
        for (const auto &info : m_parts.instances->list()) {
            auto *wire = reply->add_instances();
            wire->set_id(info.id);
            wire->set_kind(info.kind);
            wire->set_name(info.name);
            wire->set_pid(info.pid);
            wire->set_version(info.version);
            wire->set_start_time_ns(info.startTimeNs);
            wire->set_connected(info.connected);
            wire->set_seen_since_ns(info.seenSinceNs);
            wire->set_restarts(info.restarts);
        }
        return Status{};
    });
}

grpc::ServerUnaryReactor *CtlService::ListParams(grpc::CallbackServerContext *context,
                                                 const v1::ListParamsRequest *request,
                                                 v1::ListParamsReply *reply)
{
    return serve(context, *request, Role::viewer, "ListParams",
                 [this, request, reply](const Caller &) {
                     auto specs = m_parts.node->listParams(request->pattern(), request->instance());
                     if (!specs) {
                         return specs.status();
                     }
                     for (const auto &instance : *specs) {
                         toWire(instance, reply->add_instances());
                     }
                     return Status{};
                 });
}

grpc::ServerUnaryReactor *CtlService::GetParams(grpc::CallbackServerContext *context,
                                                const v1::GetParamsRequest *request,
                                                v1::GetParamsReply *reply)
{
    return serve(
        context, *request, Role::viewer, "GetParams", [this, request, reply](const Caller &) {
            auto values =
                m_parts.node->getParams(toVector(request->patterns()), request->instance());
            if (!values) {
                return values.status();
            }
            for (const auto &value : values->values) {
                toWire(value, reply->add_values());
            }
            for (const auto &failure : values->failures) {
                toWire(failure, reply->add_failures());
            }
            return Status{};
        });
}

grpc::ServerUnaryReactor *CtlService::SetParams(grpc::CallbackServerContext *context,
                                                const v1::SetParamsRequest *request,
                                                v1::SetParamsReply *reply)
{
    const Role needed = request->dry_run() ? Role::viewer : Role::admin;
    return serve(
        context, *request, needed, "SetParams", [this, request, reply](const Caller &caller) {
            ChangeRequest change;
            change.principal = caller.principal;
            change.action = Action::set;
            change.dryRun = request->dry_run();
            change.instanceGlob = request->instance();
            std::string description = "set_param";
            for (const auto &assignment : request->assignments()) {
                change.targets.push_back(
                    {{}, assignment.pattern(), assignment.value(), "set_param"});
                change.desired.upserts.push_back(
                    {assignment.pattern(), assignment.value(), "set_param"});
                description += " " + assignment.pattern() + "=" + assignment.value();
            }
            change.description =
                description.size() > 200 ? description.substr(0, 197) + "..." : description;
            auto outcome = m_parts.node->change(change);
            if (!outcome) {
                return outcome.status();
            }
            reply->set_applied(outcome->applied);
            reply->set_history_id(outcome->historyId);
            for (const auto &instance : outcome->instances) {
                toWire(instance, reply->add_instances());
            }
            for (const auto &entry : outcome->plan) {
                toWire(entry, reply->add_plan());
            }
            for (const auto &error : outcome->errors) {
                auto *wire = reply->add_errors();
                wire->set_code(params::v1::ERROR_CODE_FAILED_PRECONDITION);
                wire->set_message(error);
            }
            return Status{};
        });
}

grpc::ServerUnaryReactor *CtlService::ListProfiles(grpc::CallbackServerContext *context,
                                                   const v1::ListProfilesRequest *request,
                                                   v1::ListProfilesReply *reply)
{
    return serve(context, *request, Role::viewer, "ListProfiles",
                 [this, reply](const Caller &) { return answer(m_parts.profiles->list(), reply); });
}

grpc::ServerUnaryReactor *CtlService::GetProfile(grpc::CallbackServerContext *context,
                                                 const v1::GetProfileRequest *request,
                                                 v1::GetProfileReply *reply)
{
    return serve(context, *request, Role::viewer, "GetProfile",
                 [this, request, reply](const Caller &) {
                     return answer(m_parts.profiles->get(request->name()), reply);
                 });
}

grpc::ServerUnaryReactor *CtlService::PutProfile(grpc::CallbackServerContext *context,
                                                 const v1::PutProfileRequest *request,
                                                 v1::PutProfileReply *reply)
{
    return serve(context, *request, Role::admin, "PutProfile",
                 [this, request, reply](const Caller &caller) {
                     return answer(m_parts.profiles->put(request->yaml(), caller), reply);
                 });
}

grpc::ServerUnaryReactor *CtlService::DeleteProfile(grpc::CallbackServerContext *context,
                                                    const v1::DeleteProfileRequest *request,
                                                    v1::DeleteProfileReply *reply)
{
    return serve(context, *request, Role::admin, "DeleteProfile",
                 [this, request, reply](const Caller &caller) {
                     auto point = m_parts.profiles->remove(request->name(), caller);
                     if (!point) {
                         return point.status();
                     }
                     reply->set_history_id(*point);
                     return Status{};
                 });
}

grpc::ServerUnaryReactor *CtlService::DiffProfile(grpc::CallbackServerContext *context,
                                                  const v1::ProfileRequest *request,
                                                  v1::ProfilePlan *reply)
{
    return serve(context, *request, Role::viewer, "DiffProfile",
                 [this, request, reply](const Caller &caller) {
                     return answer(
                         m_parts.profiles->run(ProfileOps::Mode::diff, fromWire(*request), caller),
                         reply);
                 });
}

grpc::ServerUnaryReactor *CtlService::ApplyProfile(grpc::CallbackServerContext *context,
                                                   const v1::ProfileRequest *request,
                                                   v1::ProfilePlan *reply)
{
    // Operators apply profiles the admins stored; only admins apply a document of their own.
    const Role needed = request->yaml().empty() ? Role::operator_ : Role::admin;
    return serve(
        context, *request, needed, "ApplyProfile", [this, request, reply](const Caller &caller) {
            return answer(
                m_parts.profiles->run(ProfileOps::Mode::apply, fromWire(*request), caller), reply);
        });
}

grpc::ServerUnaryReactor *CtlService::VerifyProfile(grpc::CallbackServerContext *context,
                                                    const v1::ProfileRequest *request,
                                                    v1::ProfilePlan *reply)
{
    return serve(context, *request, Role::viewer, "VerifyProfile",
                 [this, request, reply](const Caller &caller) {
                     return answer(m_parts.profiles->run(ProfileOps::Mode::verify,
                                                         fromWire(*request), caller),
                                   reply);
                 });
}

grpc::ServerUnaryReactor *CtlService::Rollback(grpc::CallbackServerContext *context,
                                               const v1::RollbackRequest *request,
                                               v1::RollbackReply *reply)
{
    const Role needed = request->dry_run() ? Role::viewer : Role::operator_;
    return serve(context, *request, needed, "Rollback",
                 [this, request, reply](const Caller &caller) {
                     if (auto checked = checkWire(*request); !checked) {
                         return checked;
                     }
                     return answer(m_parts.history->rollback(request->history_id(),
                                                             request->dry_run(), caller),
                                   reply);
                 });
}

grpc::ServerUnaryReactor *CtlService::FlushJob(grpc::CallbackServerContext *context,
                                               const v1::FlushJobRequest *request,
                                               v1::FlushJobReply *reply)
{
    return serve(context, *request, Role::operator_, "FlushJob",
                 [this, request, reply](const Caller &caller) {
                     const std::chrono::milliseconds timeout(
                         request->timeout_ms() == 0 ? 30000 : request->timeout_ms());
                     auto result = m_parts.node->flushJob(request->job_id(), request->all(),
                                                          timeout, caller.principal);
                     if (!result) {
                         return result.status();
                     }
                     toWire(*result, reply);
                     return Status{};
                 });
}

grpc::ServerUnaryReactor *CtlService::GetJobStats(grpc::CallbackServerContext *context,
                                                  const v1::GetJobStatsRequest *request,
                                                  v1::GetJobStatsReply *reply)
{
    return serve(context, *request, Role::viewer, "GetJobStats",
                 [this, request, reply](const Caller &) {
                     auto stats = m_parts.node->jobStats(request->job_id());
                     if (!stats) {
                         return stats.status();
                     }
                     for (const auto &stat : *stats) {
                         toWire(stat, reply->add_jobs());
                     }
                     return Status{};
                 });
}

grpc::ServerUnaryReactor *CtlService::ListHistory(grpc::CallbackServerContext *context,
                                                  const v1::ListHistoryRequest *request,
                                                  v1::ListHistoryReply *reply)
{
    return serve(context, *request, Role::viewer, "ListHistory",
                 [this, request, reply](const Caller &) {
                     if (auto checked = checkWire(*request); !checked) {
                         return checked;
                     }
                     return answer(m_parts.history->history(fromWire(*request)), reply);
                 });
}

grpc::ServerUnaryReactor *CtlService::GetCounterHistory(grpc::CallbackServerContext *context,
                                                        const v1::GetCounterHistoryRequest *request,
                                                        v1::GetCounterHistoryReply *reply)
{
    return serve(context, *request, Role::viewer, "GetCounterHistory",
                 [this, request, reply](const Caller &) {
                     if (auto checked = checkWire(*request); !checked) {
                         return checked;
                     }
                     return answer(m_parts.history->counterHistory(fromWire(*request)), reply);
                 });
}

namespace {

// Sends the latest counters of the node at once, then every interval, from Telemetry's cache:
// no call to a datapath process per client, however many consoles watch.
class NodeCounterStream final : public grpc::ServerWriteReactor<v1::CounterUpdate> {
public:
    NodeCounterStream(Telemetry &telemetry, const v1::StreamCountersRequest &request,
                      std::chrono::milliseconds interval)
        : m_telemetry(telemetry), m_instance(request.instance()), m_interval(interval)
    {
        if (!request.pattern().empty()) {
            auto glob = params::Glob::compile(request.pattern());
            if (!glob) {
                Finish({grpc::StatusCode::INVALID_ARGUMENT, "StreamCounters: pattern '" +
                                                                request.pattern() +
                                                                "': " + glob.status().message()});
                return;
            }
            m_pattern = std::move(*glob);
        }
        writeNext();
    }

    void OnWriteDone(bool ok) override
    {
        if (!ok) {
            Finish({grpc::StatusCode::CANCELLED, "counter stream closed"});
            return;
        }
        m_alarm.Set(std::chrono::system_clock::now() + m_interval, [this](bool fired) {
            if (!fired || m_cancelled.load()) {
                Finish({grpc::StatusCode::CANCELLED, "counter stream cancelled"});
                return;
            }
            writeNext();
        });
    }

    void OnCancel() override
    {
        m_cancelled.store(true);
        m_alarm.Cancel();
    }

    void OnDone() override { delete this; }

private:
    void writeNext()
    {
        m_update.Clear();
        m_update.set_time_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count());
        for (const auto &snapshot : m_telemetry.latest(m_instance)) {
            auto *instance = m_update.add_instances();
            instance->set_instance(snapshot.instance);
            for (const auto &block : snapshot.counters->blocks()) {
                if (!m_pattern || m_pattern->matches(block.name())) {
                    *instance->add_blocks() = block;
                }
            }
            for (const auto &gauge : snapshot.counters->gauges()) {
                auto *value = instance->add_gauges();
                value->set_instance(snapshot.instance);
                value->set_name(gauge.name());
                value->set_value(gauge.value());
            }
        }
        StartWrite(&m_update);
    }

    Telemetry &m_telemetry;
    std::string m_instance;
    std::optional<params::Glob> m_pattern;
    std::chrono::milliseconds m_interval;
    v1::CounterUpdate m_update;
    grpc::Alarm m_alarm;
    std::atomic<bool> m_cancelled{false};
};

class RejectedStream final : public grpc::ServerWriteReactor<v1::CounterUpdate> {
public:
    explicit RejectedStream(grpc::Status status) { Finish(status); }
    void OnDone() override { delete this; }
};

} // namespace

grpc::ServerWriteReactor<v1::CounterUpdate> *
CtlService::StreamCounters(grpc::CallbackServerContext *context,
                           const v1::StreamCountersRequest *request)
{
    auto caller = m_parts.auth->authenticate(*context);
    if (!caller) {
        return new RejectedStream(
            {grpc::StatusCode::UNAUTHENTICATED, "StreamCounters: " + caller.status().message()});
    }
    if (auto text = control::checkUtf8Fields(*request); !text) {
        return new RejectedStream(
            {grpc::StatusCode::INVALID_ARGUMENT, "StreamCounters: " + text.message()});
    }
    const std::uint32_t interval = request->interval_ms() == 0 ? 1000 : request->interval_ms();
    if (interval < 1000 || interval > 3'600'000) {
        return new RejectedStream({grpc::StatusCode::INVALID_ARGUMENT,
                                   "StreamCounters: interval_ms " + std::to_string(interval) +
                                       " is outside 1000..3600000"});
    }
    return new NodeCounterStream(*m_parts.telemetry, *request, std::chrono::milliseconds(interval));
}

} // namespace lutra::ctld
