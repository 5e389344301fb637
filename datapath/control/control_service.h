#pragma once
// lutra.datapath.v1.DatapathControl over a Registry: a thin adapter, the logic is the registry's.

#include "control/control_server.h"
#include "control/work_queue.h"
#include "lutra/datapath/v1/control.grpc.pb.h"

namespace lutra::control {

class ControlService final : public datapath::v1::DatapathControl::CallbackService {
public:
    ControlService(ServerOptions options, std::chrono::system_clock::time_point startTime);
    ~ControlService() override;

    ControlService(const ControlService &) = delete;
    ControlService &operator=(const ControlService &) = delete;

    // Stops taking blocking work and fails what is queued; called before the server shuts down.
    void stop();

    grpc::ServerUnaryReactor *Describe(grpc::CallbackServerContext *context,
                                       const datapath::v1::DescribeRequest *request,
                                       datapath::v1::DescribeReply *reply) override;
    grpc::ServerUnaryReactor *ListParams(grpc::CallbackServerContext *context,
                                         const datapath::v1::ListParamsRequest *request,
                                         datapath::v1::ListParamsReply *reply) override;
    grpc::ServerUnaryReactor *GetParams(grpc::CallbackServerContext *context,
                                        const datapath::v1::GetParamsRequest *request,
                                        datapath::v1::GetParamsReply *reply) override;
    grpc::ServerUnaryReactor *SetParams(grpc::CallbackServerContext *context,
                                        const datapath::v1::SetParamsRequest *request,
                                        datapath::v1::SetParamsReply *reply) override;
    grpc::ServerUnaryReactor *ReadCounters(grpc::CallbackServerContext *context,
                                           const datapath::v1::ReadCountersRequest *request,
                                           datapath::v1::ReadCountersReply *reply) override;
    grpc::ServerWriteReactor<datapath::v1::ReadCountersReply> *
    StreamCounters(grpc::CallbackServerContext *context,
                   const datapath::v1::StreamCountersRequest *request) override;
    grpc::ServerUnaryReactor *FlushJob(grpc::CallbackServerContext *context,
                                       const datapath::v1::FlushJobRequest *request,
                                       datapath::v1::FlushJobReply *reply) override;

    static constexpr std::size_t kMaxQueuedFlushes = 8;
    static constexpr std::size_t kMaxQueuedSets = 64;
    // The threads that run flushes and parameter batches (named so a test can see where an
    // action ran).
    static constexpr const char *kFlushThread = "lutra-ctl-flush";
    static constexpr const char *kSetThread = "lutra-ctl-set";

private:
    ServerOptions m_options;
    std::chrono::system_clock::time_point m_startTime;
    // Batches first: an action (lru_size=clear) writes back and cancels locks, which may take
    // long; a flush may take minutes. Neither may hold a gRPC callback thread, nor wait for the
    // other.
    WorkQueue m_sets{kSetThread, kMaxQueuedSets};
    WorkQueue m_flushes{kFlushThread, kMaxQueuedFlushes};
};

// Fills a ReadCountersReply for a pattern (empty: every block).
void readCounters(const params::Registry &registry, const std::string &pattern,
                  const google::protobuf::RepeatedPtrField<std::string> &gauges,
                  datapath::v1::ReadCountersReply *reply);

} // namespace lutra::control
