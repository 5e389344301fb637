#include "control/control_service.h"

#include "control/params_wire.h"
#include "control/utf8_fields.h"

#include <grpcpp/alarm.h>
#include <unistd.h>

#include <atomic>

namespace lutra::control {

namespace {

using namespace std::chrono;
namespace v1 = datapath::v1;

std::string allIfEmpty(const std::string &pattern)
{
    return pattern.empty() ? std::string("*") : pattern;
}

// Sends one counters reply at once, then one per interval, until the client goes away.
class CounterStream final : public grpc::ServerWriteReactor<v1::ReadCountersReply> {
public:
    CounterStream(const params::Registry &registry, const v1::StreamCountersRequest &request,
                  milliseconds interval)
        : m_registry(registry), m_pattern(request.pattern()), m_gauges(request.gauges()),
          m_interval(interval)
    {
        writeNext();
    }

    void OnWriteDone(bool ok) override
    {
        if (!ok) {
            Finish(grpc::Status(grpc::StatusCode::CANCELLED, "counter stream closed"));
            return;
        }
        m_alarm.Set(system_clock::now() + m_interval, [this](bool fired) {
            if (!fired || m_cancelled.load()) {
                Finish(grpc::Status(grpc::StatusCode::CANCELLED, "counter stream cancelled"));
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
        m_reply.Clear();
        readCounters(m_registry, m_pattern, m_gauges, &m_reply);
        StartWrite(&m_reply);
    }

    const params::Registry &m_registry;
    std::string m_pattern;
    google::protobuf::RepeatedPtrField<std::string> m_gauges;
    milliseconds m_interval;
    v1::ReadCountersReply m_reply;
    grpc::Alarm m_alarm;
    std::atomic<bool> m_cancelled{false};
};

grpc::ServerUnaryReactor *finishNow(grpc::CallbackServerContext *context,
                                    grpc::Status status = grpc::Status::OK)
{
    auto *reactor = context->DefaultReactor();
    reactor->Finish(status);
    return reactor;
}

} // namespace

void readCounters(const params::Registry &registry, const std::string &pattern,
                  const google::protobuf::RepeatedPtrField<std::string> &gauges,
                  v1::ReadCountersReply *reply)
{
    for (const auto &gauge : gauges) {
        auto readings = registry.get(gauge);
        if (!readings) {
            continue; // a gauge this process does not have (a target has no ldlm namespaces)
        }
        for (const auto &reading : *readings) {
            auto *value = reply->add_gauges();
            value->set_name(reading.name);
            value->set_value(reading.value);
        }
    }
    auto blocks = registry.counters(allIfEmpty(pattern), pattern.empty());
    if (!blocks) {
        toWire(blocks.status(), reply->mutable_error());
        return;
    }
    for (const auto &[name, snapshot] : *blocks) {
        toWire(name, snapshot, reply->add_blocks());
    }
}

ControlService::ControlService(ServerOptions options, system_clock::time_point startTime)
    : m_options(std::move(options)), m_startTime(startTime)
{
}

ControlService::~ControlService()
{
    stop();
}

void ControlService::stop()
{
    m_sets.stop();
    m_flushes.stop();
}

namespace {

// Answers a call whose work a queue refused.
grpc::ServerUnaryReactor *refused(grpc::ServerUnaryReactor *reactor, WorkQueue::Push pushed,
                                  const std::string &call, std::size_t limit)
{
    if (pushed == WorkQueue::Push::stopping) {
        reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
    } else {
        reactor->Finish(
            grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                         call + ": " + std::to_string(limit) + " already queued; retry later"));
    }
    return reactor;
}

} // namespace

grpc::ServerUnaryReactor *ControlService::Describe(grpc::CallbackServerContext *context,
                                                   const v1::DescribeRequest * /*request*/,
                                                   v1::DescribeReply *reply)
{
    reply->set_kind(m_options.kind);
    reply->set_name(m_options.name);
    reply->set_pid(::getpid());
    reply->set_version(LUTRA_VERSION);
    reply->set_start_time_ns(duration_cast<nanoseconds>(m_startTime.time_since_epoch()).count());
    reply->set_schema_generation(m_options.registry->schemaGeneration());
    return finishNow(context);
}

grpc::ServerUnaryReactor *ControlService::ListParams(grpc::CallbackServerContext *context,
                                                     const v1::ListParamsRequest *request,
                                                     v1::ListParamsReply *reply)
{
    const bool recursive = request->recursive() || request->pattern().empty();
    auto specs = m_options.registry->list(allIfEmpty(request->pattern()), recursive);
    if (!specs) {
        toWire(specs.status(), reply->mutable_error());
        return finishNow(context);
    }
    for (const auto &spec : *specs) {
        toWire(spec, reply->add_specs());
    }
    return finishNow(context);
}

grpc::ServerUnaryReactor *ControlService::GetParams(grpc::CallbackServerContext *context,
                                                    const v1::GetParamsRequest *request,
                                                    v1::GetParamsReply *reply)
{
    if (request->patterns().empty()) {
        return finishNow(context, {grpc::StatusCode::INVALID_ARGUMENT,
                                   "GetParams: give at least one name or glob"});
    }
    for (const auto &pattern : request->patterns()) {
        auto readings = m_options.registry->get(pattern);
        if (!readings) {
            toWire(readings.status(), reply->add_errors());
            continue;
        }
        for (const auto &reading : *readings) {
            auto *value = reply->add_values();
            value->set_name(reading.name);
            value->set_value(reading.value);
        }
    }
    return finishNow(context);
}

grpc::ServerUnaryReactor *ControlService::SetParams(grpc::CallbackServerContext *context,
                                                    const v1::SetParamsRequest *request,
                                                    v1::SetParamsReply *reply)
{
    if (request->assignments().empty()) {
        return finishNow(context, {grpc::StatusCode::INVALID_ARGUMENT,
                                   "SetParams: the batch has no assignments"});
    }
    if (auto text = checkUtf8Fields(*request); !text) {
        return finishNow(context,
                         {grpc::StatusCode::INVALID_ARGUMENT, "SetParams: " + text.message()});
    }
    if (request->principal().empty()) {
        return finishNow(context, {grpc::StatusCode::INVALID_ARGUMENT,
                                   "SetParams: principal is required for the audit trail"});
    }
    std::vector<params::Assignment> batch;
    batch.reserve(static_cast<std::size_t>(request->assignments_size()));
    for (const auto &assignment : request->assignments()) {
        batch.push_back({assignment.pattern(), assignment.value()});
    }
    // Off the callback thread: an action such as lru_size=clear writes back and cancels locks,
    // and its outcome (a failed write-back, with the cancel report) goes into the reply.
    auto *reactor = context->DefaultReactor();
    const auto pushed = m_sets.push([this, reactor, reply, batch = std::move(batch),
                                     principal = request->principal()](bool run) {
        if (!run) {
            reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
            return;
        }
        toWire(m_options.registry->set(batch, principal), reply->mutable_result());
        reactor->Finish(grpc::Status::OK);
    });
    if (pushed != WorkQueue::Push::queued) {
        return refused(reactor, pushed, "SetParams", kMaxQueuedSets);
    }
    return reactor;
}

grpc::ServerUnaryReactor *ControlService::ReadCounters(grpc::CallbackServerContext *context,
                                                       const v1::ReadCountersRequest *request,
                                                       v1::ReadCountersReply *reply)
{
    readCounters(*m_options.registry, request->pattern(), request->gauges(), reply);
    return finishNow(context);
}

grpc::ServerWriteReactor<v1::ReadCountersReply> *
ControlService::StreamCounters(grpc::CallbackServerContext * /*context*/,
                               const v1::StreamCountersRequest *request)
{
    const std::uint32_t requested = request->interval_ms() == 0 ? 1000 : request->interval_ms();
    if (requested < 100 || requested > 3'600'000) {
        class Reject final : public grpc::ServerWriteReactor<v1::ReadCountersReply> {
        public:
            explicit Reject(std::uint32_t interval)
            {
                Finish(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                    "StreamCounters: interval_ms " + std::to_string(interval) +
                                        " is outside 100..3600000"));
            }
            void OnDone() override { delete this; }
        };
        return new Reject(requested);
    }
    return new CounterStream(*m_options.registry, *request, milliseconds(requested));
}

grpc::ServerUnaryReactor *ControlService::FlushJob(grpc::CallbackServerContext *context,
                                                   const v1::FlushJobRequest *request,
                                                   v1::FlushJobReply *reply)
{
    if (!m_options.flush) {
        return finishNow(
            context, {grpc::StatusCode::UNIMPLEMENTED,
                      "FlushJob: a " + m_options.kind + " process has no client cache to flush"});
    }
    const milliseconds timeout(request->timeout_ms() == 0 ? 30000 : request->timeout_ms());
    auto *reactor = context->DefaultReactor();
    const auto pushed =
        m_flushes.push([this, reactor, reply, job = request->job_id(), timeout](bool run) {
            if (!run) {
                reactor->Finish(grpc::Status(grpc::StatusCode::UNAVAILABLE, "shutting down"));
                return;
            }
            auto report = m_options.flush(job, timeout);
            if (!report) {
                toWire(report.status(), reply->mutable_error());
            } else {
                auto *wire = reply->mutable_report();
                wire->set_job_id(report->jobId);
                wire->set_locks_cancelled(report->locksCancelled);
                wire->set_pages_dropped(report->pagesDropped);
                wire->set_bytes_written_back(report->bytesWrittenBack);
                wire->set_duration_us(static_cast<std::uint64_t>(report->duration.count()));
                for (const auto &error : report->errors) {
                    wire->add_errors(error);
                }
            }
            reactor->Finish(grpc::Status::OK);
        });
    if (pushed != WorkQueue::Push::queued) {
        return refused(reactor, pushed, "FlushJob", kMaxQueuedFlushes);
    }
    return reactor;
}

} // namespace lutra::control
