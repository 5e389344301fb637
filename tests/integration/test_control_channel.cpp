// The datapath control channel over a real gRPC unix socket: describe, schema, get, atomic set,
// counters (read and streamed), flush, and the socket's life cycle in the run dir.
#include "control/control_server.h"
#include "control/control_service.h"
#include "core/locks/lock_namespace.h"
#include "core/params/catalog.h"
#include "lutra/datapath/v1/control.grpc.pb.h"

#include <QTemporaryDir>
#include <QTest>

#include <grpcpp/grpcpp.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <fstream>

using namespace lutra;
using namespace lutra::control;
namespace v1 = lutra::datapath::v1;

namespace {

// A registry with a few live tunables and the read_ahead_stats block, as a datapath process has.
struct Process {
    params::Registry registry;
    std::atomic<std::int64_t> maxPages{1024};
    std::atomic<std::int64_t> rpcsInFlight{8};
    params::CounterBlock readAhead{params::catalog::readAheadStatDefs()};

    Process()
    {
        auto specs = params::catalog::oscSpecs("ost0");
        add(specs[0], maxPages);
        add(specs[1], rpcsInFlight);
        require(registry.addStats("llite.lutra.read_ahead_stats",
                                  std::string(params::catalog::kReadAheadStatsHelp), readAhead));
    }

    void add(params::Spec spec, std::atomic<std::int64_t> &cell)
    {
        require(registry.add(std::move(spec), {[&cell] { return params::Value(cell.load()); },
                                               [&cell](const params::Value &v) {
                                                   cell = std::get<std::int64_t>(v);
                                                   return Status{};
                                               },
                                               {}}));
    }

    static void require(const Status &status)
    {
        if (!status) {
            qFatal("%s", status.toString().c_str());
        }
    }
};

// Grants every enqueue; cancels always succeed (the failure under test is the write-back).
class GrantingRpc final : public locks::LockRpc {
public:
    Result<locks::Grant> enqueue(const core::ObjectKey &, locks::LockMode mode, core::JobTag,
                                 locks::OnConflict) override
    {
        return locks::Grant{++m_handle, mode};
    }
    Status cancel(const core::ObjectKey &, locks::RemoteHandle) override { return {}; }

private:
    std::atomic<locks::RemoteHandle> m_handle{0};
};

std::string currentThreadName()
{
    char name[16] = {};
    ::pthread_getname_np(::pthread_self(), name, sizeof(name));
    return name;
}

std::unique_ptr<v1::DatapathControl::Stub> connectStub(const std::filesystem::path &socket)
{
    return v1::DatapathControl::NewStub(
        grpc::CreateChannel("unix:" + socket.native(), grpc::InsecureChannelCredentials()));
}

void withDeadline(grpc::ClientContext &context, int seconds = 10)
{
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
}

} // namespace

class TestControlChannel : public QObject {
    Q_OBJECT

    QTemporaryDir m_runDir;
    std::unique_ptr<Process> m_process;
    std::unique_ptr<ControlServer> m_server;
    std::unique_ptr<v1::DatapathControl::Stub> m_stub;

    std::filesystem::path runDir() const { return m_runDir.path().toStdString(); }

private slots:
    void init()
    {
        QVERIFY(m_runDir.isValid());
        m_process = std::make_unique<Process>();
        auto server = ControlServer::start({"target", "ost0", runDir(), &m_process->registry, {}});
        QVERIFY2(server.ok(), server.status().toString().c_str());
        m_server = std::move(server).value();
        m_stub = connectStub(m_server->socketPath());
    }

    void cleanup()
    {
        m_stub.reset();
        m_server.reset();
        m_process.reset();
    }

    void socketIsNamedAndProtected()
    {
        QCOMPARE(m_server->socketPath(), runDir() / "target-ost0.sock");
        struct stat info {};
        QCOMPARE(::stat(m_server->socketPath().c_str(), &info), 0);
        QVERIFY(S_ISSOCK(info.st_mode));
        QCOMPARE(info.st_mode & 0777, mode_t(0660));
        const auto path = m_server->socketPath();
        m_server.reset();
        QVERIFY(!std::filesystem::exists(path)); // removed on shutdown
    }

    void describe()
    {
        grpc::ClientContext context;
        withDeadline(context);
        v1::DescribeReply reply;
        QVERIFY(m_stub->Describe(&context, {}, &reply).ok());
        QCOMPARE(reply.kind(), std::string("target"));
        QCOMPARE(reply.name(), std::string("ost0"));
        QCOMPARE(reply.pid(), std::int64_t(::getpid()));
        QVERIFY(!reply.version().empty());
        QVERIFY(reply.start_time_ns() > 0);
        QVERIFY(reply.schema_generation() >= 3);
    }

    void listAndGet()
    {
        grpc::ClientContext listContext;
        withDeadline(listContext);
        v1::ListParamsReply list;
        QVERIFY(m_stub->ListParams(&listContext, {}, &list).ok());
        QCOMPARE(list.specs_size(), 3);
        QCOMPARE(list.specs(1).name(), std::string("osc.ost0.max_pages_per_rpc"));
        QCOMPARE(list.specs(1).unit(), std::string("pages"));
        QCOMPARE(list.specs(1).max(), std::int64_t(4096));
        QCOMPARE(list.specs(1).default_value(), std::string("1024"));

        grpc::ClientContext getContext;
        withDeadline(getContext);
        v1::GetParamsRequest get;
        get.add_patterns("osc.*.max_*");
        get.add_patterns("osc.ost9.*");
        v1::GetParamsReply values;
        QVERIFY(m_stub->GetParams(&getContext, get, &values).ok());
        QCOMPARE(values.values_size(), 2);
        QCOMPARE(values.values(0).value(), std::string("1024"));
        QCOMPARE(values.errors_size(), 1);
        QCOMPARE(values.errors(0).code(), params::v1::ERROR_CODE_NOT_FOUND);
        QCOMPARE(values.errors(0).message(), std::string("no parameter matches 'osc.ost9.*'"));

        grpc::ClientContext emptyContext;
        withDeadline(emptyContext);
        const auto empty = m_stub->GetParams(&emptyContext, {}, &values);
        QCOMPARE(empty.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    }

    void setIsAtomicAndAudited()
    {
        std::vector<params::ChangeEvent> events;
        auto subscription = m_process->registry.subscribe(
            [&](const params::ChangeEvent &event) { events.push_back(event); });

        v1::SetParamsRequest bad;
        bad.set_principal("ctld:admin");
        auto *a = bad.add_assignments();
        a->set_pattern("osc.ost0.max_pages_per_rpc");
        a->set_value("16M");
        auto *b = bad.add_assignments();
        b->set_pattern("osc.ost0.max_rpcs_in_flight");
        b->set_value("999");
        grpc::ClientContext badContext;
        withDeadline(badContext);
        v1::SetParamsReply rejected;
        QVERIFY(m_stub->SetParams(&badContext, bad, &rejected).ok());
        QVERIFY(!rejected.result().applied());
        QCOMPARE(rejected.result().errors_size(), 1);
        QCOMPARE(rejected.result().errors(0).code(), params::v1::ERROR_CODE_OUT_OF_RANGE);
        QCOMPARE(m_process->maxPages.load(), 1024); // nothing changed
        QVERIFY(events.empty());

        b->set_value("16");
        grpc::ClientContext goodContext;
        withDeadline(goodContext);
        v1::SetParamsReply applied;
        QVERIFY(m_stub->SetParams(&goodContext, bad, &applied).ok());
        QVERIFY(applied.result().applied());
        QCOMPARE(applied.result().results_size(), 2);
        QCOMPARE(applied.result().results(0).old_value(), std::string("1024"));
        QCOMPARE(applied.result().results(0).read_back(), std::string("4096"));
        QCOMPARE(m_process->maxPages.load(), 4096);
        QCOMPARE(m_process->rpcsInFlight.load(), 16);
        QCOMPARE(events.size(), std::size_t(1));
        QCOMPARE(events[0].principal, std::string("ctld:admin"));

        bad.clear_principal();
        grpc::ClientContext anonymousContext;
        withDeadline(anonymousContext);
        const auto anonymous = m_stub->SetParams(&anonymousContext, bad, &applied);
        QCOMPARE(anonymous.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    }

    void textThatIsNotUtf8IsRefusedNamingTheField()
    {
        v1::SetParamsRequest request;
        request.set_principal("ctld:admin");
        auto *good = request.add_assignments();
        good->set_pattern("osc.ost0.max_rpcs_in_flight");
        good->set_value("16");
        auto *bad = request.add_assignments();
        bad->set_pattern(std::string("osc.ost0.max_pages_per_rpc\xc0\xaf", 28));
        bad->set_value("16M");
        grpc::ClientContext context;
        withDeadline(context);
        v1::SetParamsReply reply;
        const auto status = m_stub->SetParams(&context, request, &reply);
        QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QCOMPARE(status.error_message(),
                 std::string("SetParams: SetParamsRequest.assignments[1].pattern: not UTF-8 "
                             "(byte 26 of 28)"));
        QCOMPARE(m_process->rpcsInFlight.load(), 8); // nothing changed
    }

    void specialValuesRunOffTheCallbackThreadAndReportFailure()
    {
        // lru_size=clear of a namespace whose one unused lock cannot be written back.
        GrantingRpc rpc;
        locks::LockNamespace ns("ost9", rpc, [](const locks::CancelInfo &) {
            locks::CancelOutcome outcome;
            outcome.status = Status(Errc::io_error, "write-back of object 7: disk full");
            outcome.keep = true;
            return outcome;
        });
        params::ParamGroup group(m_process->registry);
        QVERIFY(ns.publish(group).ok());
        {
            auto lock = ns.acquire({0, 7}, locks::LockMode::PW, 1);
            QVERIFY(lock.ok());
        }
        QCOMPARE(ns.unusedCount(), std::size_t(1));
        // And an action that notes which thread runs it.
        std::string actionThread;
        auto spec = params::catalog::ldlmSpecs("ost8");
        const auto lruSize = std::find_if(spec.begin(), spec.end(), [](const auto &s) {
            return params::leafName(s.name) == "lru_size";
        });
        QVERIFY(lruSize != spec.end());
        QVERIFY(group
                    .add(*lruSize, {[] { return params::Value(std::int64_t{0}); },
                                    [](const params::Value &) { return Status{}; },
                                    [&actionThread](std::string_view) {
                                        actionThread = currentThreadName();
                                        return Status{};
                                    }})
                    .ok());

        grpc::ClientContext context;
        withDeadline(context);
        v1::SetParamsRequest request;
        request.set_principal("test");
        auto *clear = request.add_assignments();
        clear->set_pattern("ldlm.namespaces.ost9.lru_size");
        clear->set_value("clear");
        v1::SetParamsReply reply;
        QVERIFY(m_stub->SetParams(&context, request, &reply).ok());
        QVERIFY(!reply.result().applied());
        QCOMPARE(reply.result().errors_size(), 1);
        const std::string message = reply.result().errors(0).message();
        QVERIFY2(message.find("1 kept because their write-back failed") != std::string::npos &&
                     message.find("disk full") != std::string::npos,
                 message.c_str());
        QCOMPARE(ns.keptCount(), std::size_t(1)); // nothing written is lost to the cancel

        grpc::ClientContext again;
        withDeadline(again);
        clear->set_pattern("ldlm.namespaces.ost8.lru_size");
        QVERIFY(m_stub->SetParams(&again, request, &reply).ok());
        QVERIFY(reply.result().applied());
        QCOMPARE(actionThread, std::string(ControlService::kSetThread));
    }

    void readCounters()
    {
        m_process->readAhead.add(params::catalog::ra_hits, 41);
        grpc::ClientContext context;
        withDeadline(context);
        v1::ReadCountersReply reply;
        QVERIFY(m_stub->ReadCounters(&context, {}, &reply).ok());
        QCOMPARE(reply.blocks_size(), 1);
        QCOMPARE(reply.blocks(0).name(), std::string("llite.lutra.read_ahead_stats"));
        QCOMPARE(reply.blocks(0).counters_size(), 18);
        QCOMPARE(reply.blocks(0).counters(0).name(), std::string("hits"));
        QCOMPARE(reply.blocks(0).counters(0).samples(), std::uint64_t(41));
        QVERIFY(reply.blocks(0).snapshot_time_ns() >= reply.blocks(0).start_time_ns());
    }

    void streamCounters()
    {
        grpc::ClientContext context;
        withDeadline(context);
        v1::StreamCountersRequest request;
        request.set_interval_ms(100);
        m_process->readAhead.add(params::catalog::ra_misses, 5);
        auto reader = m_stub->StreamCounters(&context, request);
        v1::ReadCountersReply first;
        QVERIFY(reader->Read(&first));
        QCOMPARE(first.blocks_size(), 1);
        QCOMPARE(first.blocks(0).counters(1).samples(), std::uint64_t(5));

        // The stream keeps coming at the interval and soon shows the new count.
        m_process->readAhead.add(params::catalog::ra_misses, 5);
        std::int64_t lastTime = first.blocks(0).snapshot_time_ns();
        bool sawUpdate = false;
        for (int i = 0; i < 50 && !sawUpdate; ++i) {
            v1::ReadCountersReply reply;
            QVERIFY(reader->Read(&reply));
            QVERIFY(reply.blocks(0).snapshot_time_ns() > lastTime);
            lastTime = reply.blocks(0).snapshot_time_ns();
            sawUpdate = reply.blocks(0).counters(1).samples() == 10;
        }
        QVERIFY(sawUpdate);
        context.TryCancel();
        v1::ReadCountersReply rest;
        while (reader->Read(&rest)) {
        }
        QCOMPARE(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);

        grpc::ClientContext badContext;
        withDeadline(badContext);
        request.set_interval_ms(10);
        auto badReader = m_stub->StreamCounters(&badContext, request);
        v1::ReadCountersReply none;
        QVERIFY(!badReader->Read(&none));
        const auto status = badReader->Finish();
        QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QVERIFY(status.error_message().find("outside 100..3600000") != std::string::npos);
    }

    void serverShutdownEndsOpenStreams()
    {
        grpc::ClientContext context;
        withDeadline(context);
        v1::StreamCountersRequest request;
        request.set_interval_ms(100);
        auto reader = m_stub->StreamCounters(&context, request);
        v1::ReadCountersReply reply;
        QVERIFY(reader->Read(&reply));
        m_server.reset(); // must not hang on the open stream
        while (reader->Read(&reply)) {
        }
        QVERIFY(!reader->Finish().ok());
    }

    void flushJob()
    {
        grpc::ClientContext context;
        withDeadline(context);
        v1::FlushJobReply reply;
        QCOMPARE(m_stub->FlushJob(&context, {}, &reply).error_code(),
                 grpc::StatusCode::UNIMPLEMENTED);

        m_server.reset();
        ServerOptions options{"bench", "b1", runDir(), &m_process->registry, {}};
        options.flush = [](std::string_view job, std::chrono::milliseconds timeout) {
            FlushReport report;
            report.jobId = std::string(job);
            report.locksCancelled = 3;
            report.pagesDropped = static_cast<std::uint64_t>(timeout.count());
            return Result<FlushReport>(report);
        };
        auto server = ControlServer::start(std::move(options));
        QVERIFY(server.ok());
        auto stub = connectStub((*server)->socketPath());
        grpc::ClientContext flushContext;
        withDeadline(flushContext);
        v1::FlushJobRequest request;
        request.set_job_id("slurm.42");
        request.set_timeout_ms(1234);
        QVERIFY(stub->FlushJob(&flushContext, request, &reply).ok());
        QCOMPARE(reply.report().job_id(), std::string("slurm.42"));
        QCOMPARE(reply.report().locks_cancelled(), std::uint64_t(3));
        QCOMPARE(reply.report().pages_dropped(), std::uint64_t(1234));
    }

    void socketPathIsClaimedSafely()
    {
        // A live server owns its name.
        auto second = ControlServer::start({"target", "ost0", runDir(), &m_process->registry, {}});
        QCOMPARE(second.status().code(), Errc::already_exists);
        QVERIFY(second.status().message().find("another process is serving") != std::string::npos);

        // A socket left by a crashed process is replaced.
        const auto stale = runDir() / "target-ost1.sock";
        const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, stale.c_str(), sizeof(address.sun_path) - 1);
        QCOMPARE(::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)), 0);
        ::close(fd);
        auto replaced =
            ControlServer::start({"target", "ost1", runDir(), &m_process->registry, {}});
        QVERIFY2(replaced.ok(), replaced.status().toString().c_str());

        // Anything else at the path is left alone.
        const auto file = runDir() / "target-ost2.sock";
        {
            std::ofstream(file) << "not a socket";
        }
        auto refused = ControlServer::start({"target", "ost2", runDir(), &m_process->registry, {}});
        QCOMPARE(refused.status().code(), Errc::already_exists);
        QVERIFY(std::filesystem::exists(file));

        auto badName = ControlServer::start({"target", "../x", runDir(), &m_process->registry, {}});
        QCOMPARE(badName.status().code(), Errc::invalid_argument);
    }
};

QTEST_GUILESS_MAIN(TestControlChannel)
#include "test_control_channel.moc"
