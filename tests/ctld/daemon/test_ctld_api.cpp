// lutra.ctl.v1 driven as an independent client would: a huge name, integers at the ends of
// their wire types, and strings that are not UTF-8 (hand-built bytes through a generic stub).
#include "ctld_node.h"
#include "lutra/ctl/v1/ctl.grpc.pb.h"

#include <grpcpp/generic/generic_stub.h>

#include <future>
#include <limits>
#include <mutex>

using namespace lutra::test;
namespace ctl = lutra::ctl::v1;

class TestCtldApi : public QObject {
    Q_OBJECT

    std::unique_ptr<CtldNode> m_node;
    std::unique_ptr<CtldProcess> m_ctld;
    std::shared_ptr<grpc::Channel> m_channel;
    std::unique_ptr<ctl::Ctl::Stub> m_stub;

    static void withDeadline(grpc::ClientContext &context)
    {
        context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    }

    // A GetParams request whose pattern is not UTF-8: field 1, length 2, bytes ff fe.
    grpc::Status rawGetParams()
    {
        grpc::GenericStub generic(m_channel);
        grpc::ClientContext context;
        withDeadline(context);
        grpc::Slice bytes(std::string("\x0a\x02\xff\xfe", 4));
        grpc::ByteBuffer request(&bytes, 1);
        grpc::ByteBuffer response;
        std::promise<grpc::Status> done;
        auto finished = done.get_future();
        generic.UnaryCall(&context, "/lutra.ctl.v1.Ctl/GetParams", {}, &request, &response,
                          [&done](grpc::Status status) { done.set_value(status); });
        return finished.get();
    }

private slots:
    void initTestCase()
    {
        m_node = std::make_unique<CtldNode>();
        QVERIFY(m_node->ready());
        m_ctld = m_node->startCtld();
        QVERIFY(m_ctld);
        grpc::ChannelArguments arguments;
        arguments.SetMaxReceiveMessageSize(64 << 20);
        m_channel =
            grpc::CreateCustomChannel("unix:" + m_node->runDir().toStdString() + "/ctld.sock",
                                      grpc::InsecureChannelCredentials(), arguments);
        m_stub = ctl::Ctl::NewStub(m_channel);
    }
    void cleanupTestCase()
    {
        if (m_ctld) {
            QCOMPARE(m_ctld->stop(), 0);
        }
        m_node.reset();
    }

    void errorsQuoteAShortPrefixOfAHugeInput()
    {
        grpc::ClientContext context;
        withDeadline(context);
        ctl::GetParamsRequest request;
        request.add_patterns(std::string(1 << 20, 'x'));
        ctl::GetParamsReply reply;
        const auto status = m_stub->GetParams(&context, request, &reply);
        QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
        QVERIFY2(status.error_message().starts_with("pattern 'xxxx"),
                 status.error_message().c_str());
        QVERIFY2(status.error_message().size() <= 1100,
                 std::to_string(status.error_message().size()).c_str());
        QVERIFY2(status.error_message().ends_with(" bytes)"), status.error_message().c_str());
    }

    void wireIntegersAreRangeChecked()
    {
        auto expectInvalid = [](const grpc::Status &status, const char *field) {
            QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
            QVERIFY2(status.error_message().find(field) != std::string::npos,
                     status.error_message().c_str());
        };
        {
            grpc::ClientContext context;
            withDeadline(context);
            ctl::ListHistoryRequest request;
            request.set_before_id(std::uint64_t{1} << 63);
            ctl::ListHistoryReply reply;
            expectInvalid(m_stub->ListHistory(&context, request, &reply), "before_id");
        }
        {
            grpc::ClientContext context;
            withDeadline(context);
            ctl::RollbackRequest request;
            request.set_history_id(std::numeric_limits<std::uint64_t>::max());
            request.set_dry_run(true);
            ctl::RollbackReply reply;
            expectInvalid(m_stub->Rollback(&context, request, &reply), "history_id");
        }
        {
            grpc::ClientContext context;
            withDeadline(context);
            ctl::GetCounterHistoryRequest request;
            request.set_since_ns(std::numeric_limits<std::int64_t>::min());
            ctl::GetCounterHistoryReply reply;
            expectInvalid(m_stub->GetCounterHistory(&context, request, &reply), "since_ns");
        }
    }

    void theDocumentedConcurrencyIsServed()
    {
        // ctld/README: a node serves 256 concurrent calls without RESOURCE_EXHAUSTED.
        constexpr int kCalls = 256;
        struct Call {
            grpc::ClientContext context;
            ctl::GetParamsRequest request;
            ctl::GetParamsReply reply;
        };
        std::vector<std::unique_ptr<Call>> calls;
        std::mutex mutex;
        std::vector<grpc::Status> statuses;
        std::promise<void> allDone;
        for (int i = 0; i < kCalls; ++i) {
            auto &call = calls.emplace_back(std::make_unique<Call>());
            withDeadline(call->context);
            call->request.add_patterns("llite.*.max_read_ahead_mb");
        }
        for (auto &call : calls) {
            m_stub->async()->GetParams(&call->context, &call->request, &call->reply,
                                       [&](grpc::Status status) {
                                           std::lock_guard lock(mutex);
                                           statuses.push_back(status);
                                           if (statuses.size() == kCalls) {
                                               allDone.set_value();
                                           }
                                       });
        }
        allDone.get_future().wait();
        for (const auto &status : statuses) {
            QVERIFY2(status.ok(), status.error_message().c_str());
        }
    }

    void invalidUtf8IsAnInvalidArgumentNamingTheField()
    {
        for (int i = 0; i < 20; ++i) {
            const auto status = rawGetParams();
            QCOMPARE(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
            QCOMPARE(
                QString::fromStdString(status.error_message()),
                QStringLiteral("GetParams: GetParamsRequest.patterns[0]: not UTF-8 (byte 0 of 2)"));
        }
        // The daemon still answers, and the library's parser never saw a bad string: no protobuf
        // error line for the twenty requests.
        grpc::ClientContext context;
        withDeadline(context);
        ctl::GetNodeInfoRequest request;
        ctl::NodeInfo reply;
        QVERIFY(m_stub->GetNodeInfo(&context, request, &reply).ok());
        QTest::qWait(300);
        const QString log = m_ctld->process().readAllStandardError();
        QCOMPARE(log.count("UTF-8"), 0);
    }
};

QTEST_GUILESS_MAIN(TestCtldApi)
#include "test_ctld_api.moc"
