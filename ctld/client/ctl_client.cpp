#include "client/ctl_client.h"

#include "api/metadata.h"

#include <grpcpp/grpcpp.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace lutra::ctld {

namespace {

Result<std::string> readFile(const std::string &path, std::string_view what)
{
    std::ifstream in(path);
    if (!in) {
        return Status(Errc::not_found, "cannot read " + std::string(what) + " " + path);
    }
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string userName()
{
    if (const passwd *entry = ::getpwuid(::geteuid()); entry != nullptr) {
        return entry->pw_name;
    }
    return "uid" + std::to_string(::geteuid());
}

const char *codeName(grpc::StatusCode code)
{
    switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "ERROR";
    }
}

} // namespace

std::string describe(const grpc::Status &status)
{
    return std::string(codeName(status.error_code())) + ": " + status.error_message();
}

Result<CtlClient> CtlClient::connect(const std::string &node, const ClientOptions &options)
{
    CtlClient client;
    client.m_timeout = options.timeout;
    client.m_user = userName();
    std::shared_ptr<grpc::ChannelCredentials> credentials = grpc::InsecureChannelCredentials();
    std::string target;
    if (node.empty()) {
        target = "unix:" + options.socket;
    } else {
        target = node;
        if (!options.tlsCa.empty()) {
            grpc::SslCredentialsOptions ssl;
            auto ca = readFile(options.tlsCa, "TLS CA file");
            if (!ca) {
                return ca.status();
            }
            ssl.pem_root_certs = *ca;
            if (!options.tlsCert.empty()) {
                auto cert = readFile(options.tlsCert, "TLS certificate");
                auto key = readFile(options.tlsKey, "TLS key");
                if (!cert || !key) {
                    return cert ? key.status() : cert.status();
                }
                ssl.pem_cert_chain = *cert;
                ssl.pem_private_key = *key;
            }
            credentials = grpc::SslCredentials(ssl);
        }
        if (!options.tokenFile.empty()) {
            auto token = readFile(options.tokenFile, "token file");
            if (!token) {
                return token.status();
            }
            client.m_token = token->substr(0, token->find_first_of("\r\n"));
        }
    }
    client.m_channel = grpc::CreateChannel(target, credentials);
    client.m_stub = ctl::v1::Ctl::NewStub(client.m_channel);
    return client;
}

std::unique_ptr<grpc::ClientContext> CtlClient::context(std::chrono::milliseconds timeout) const
{
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() +
                          (timeout.count() > 0 ? timeout : m_timeout));
    if (!m_token.empty()) {
        context->AddMetadata("authorization", "Bearer " + m_token);
    }
    context->AddMetadata(kLocalUserMetadata, m_user);
    return context;
}

} // namespace lutra::ctld
