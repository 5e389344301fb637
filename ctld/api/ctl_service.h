#pragma once
// lutra.ctl.v1.Ctl over NodeOps: authenticate, check the role, hand the work to the pool,
// translate the result. No logic of its own.

#include "daemon/auth.h"
#include "daemon/node_ops.h"
#include "daemon/telemetry.h"
#include "daemon/work_pool.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"

namespace lutra::ctld {

class ProfileOps;
class HistoryOps;

struct ServiceParts {
    const Config *config = nullptr;
    const Authenticator *auth = nullptr;
    NodeOps *node = nullptr;
    ProfileOps *profiles = nullptr;
    HistoryOps *history = nullptr;
    Telemetry *telemetry = nullptr;
    Instances *instances = nullptr;
    WorkPool *pool = nullptr;
    std::int64_t startTimeNs = 0;
};

grpc::Status toGrpc(const Status &status);

// The most of an error message a caller gets; longer ones end in "… (N bytes)".
inline constexpr std::size_t kMaxErrorBytes = 1024;
// A failure as a remote caller sees it: without the database's path, at most kMaxErrorBytes.
Status forCaller(const Status &status, const std::string &dbPath);

class CtlService final : public ctl::v1::Ctl::CallbackService {
public:
    explicit CtlService(ServiceParts parts);

    grpc::ServerUnaryReactor *GetNodeInfo(grpc::CallbackServerContext *context,
                                          const ctl::v1::GetNodeInfoRequest *request,
                                          ctl::v1::NodeInfo *reply) override;
    grpc::ServerUnaryReactor *ListInstances(grpc::CallbackServerContext *context,
                                            const ctl::v1::ListInstancesRequest *request,
                                            ctl::v1::ListInstancesReply *reply) override;
    grpc::ServerUnaryReactor *ListParams(grpc::CallbackServerContext *context,
                                         const ctl::v1::ListParamsRequest *request,
                                         ctl::v1::ListParamsReply *reply) override;
    grpc::ServerUnaryReactor *GetParams(grpc::CallbackServerContext *context,
                                        const ctl::v1::GetParamsRequest *request,
                                        ctl::v1::GetParamsReply *reply) override;
    grpc::ServerUnaryReactor *SetParams(grpc::CallbackServerContext *context,
                                        const ctl::v1::SetParamsRequest *request,
                                        ctl::v1::SetParamsReply *reply) override;
    grpc::ServerUnaryReactor *ListProfiles(grpc::CallbackServerContext *context,
                                           const ctl::v1::ListProfilesRequest *request,
                                           ctl::v1::ListProfilesReply *reply) override;
    grpc::ServerUnaryReactor *GetProfile(grpc::CallbackServerContext *context,
                                         const ctl::v1::GetProfileRequest *request,
                                         ctl::v1::GetProfileReply *reply) override;
    grpc::ServerUnaryReactor *PutProfile(grpc::CallbackServerContext *context,
                                         const ctl::v1::PutProfileRequest *request,
                                         ctl::v1::PutProfileReply *reply) override;
    grpc::ServerUnaryReactor *DeleteProfile(grpc::CallbackServerContext *context,
                                            const ctl::v1::DeleteProfileRequest *request,
                                            ctl::v1::DeleteProfileReply *reply) override;
    grpc::ServerUnaryReactor *DiffProfile(grpc::CallbackServerContext *context,
                                          const ctl::v1::ProfileRequest *request,
                                          ctl::v1::ProfilePlan *reply) override;
    grpc::ServerUnaryReactor *ApplyProfile(grpc::CallbackServerContext *context,
                                           const ctl::v1::ProfileRequest *request,
                                           ctl::v1::ProfilePlan *reply) override;
    grpc::ServerUnaryReactor *VerifyProfile(grpc::CallbackServerContext *context,
                                            const ctl::v1::ProfileRequest *request,
                                            ctl::v1::ProfilePlan *reply) override;
    grpc::ServerUnaryReactor *Rollback(grpc::CallbackServerContext *context,
                                       const ctl::v1::RollbackRequest *request,
                                       ctl::v1::RollbackReply *reply) override;
    grpc::ServerUnaryReactor *FlushJob(grpc::CallbackServerContext *context,
                                       const ctl::v1::FlushJobRequest *request,
                                       ctl::v1::FlushJobReply *reply) override;
    grpc::ServerUnaryReactor *GetJobStats(grpc::CallbackServerContext *context,
                                          const ctl::v1::GetJobStatsRequest *request,
                                          ctl::v1::GetJobStatsReply *reply) override;
    grpc::ServerUnaryReactor *ListHistory(grpc::CallbackServerContext *context,
                                          const ctl::v1::ListHistoryRequest *request,
                                          ctl::v1::ListHistoryReply *reply) override;
    grpc::ServerWriteReactor<ctl::v1::CounterUpdate> *
    StreamCounters(grpc::CallbackServerContext *context,
                   const ctl::v1::StreamCountersRequest *request) override;
    grpc::ServerUnaryReactor *GetCounterHistory(grpc::CallbackServerContext *context,
                                                const ctl::v1::GetCounterHistoryRequest *request,
                                                ctl::v1::GetCounterHistoryReply *reply) override;

private:
    // Authenticates, checks the role, then runs `work(caller)` on the pool and finishes the call
    // with the status it returns.
    template <typename Work>
    // Authenticates, checks the role and that the request's text is UTF-8, then runs `work` on
    // the pool.
    grpc::ServerUnaryReactor *serve(grpc::CallbackServerContext *context,
                                    const google::protobuf::Message &request, Role needed,
                                    std::string_view operation, Work work);

    ServiceParts m_parts;
};

} // namespace lutra::ctld
