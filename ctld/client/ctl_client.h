#pragma once
// How lutractl reaches a ctld: the local unix socket, or host:port over TCP (TLS when a CA is
// given), with a bearer token when one is configured.

#include <lutra/status.h>

#include "lutra/ctl/v1/ctl.grpc.pb.h"

#include <chrono>
#include <memory>
#include <string>

namespace lutra::ctld {

struct ClientOptions {
    std::string socket;    // local unix socket ("" when talking TCP)
    std::string tokenFile; // bearer token for TCP
    std::string tlsCa;     // PEM CA: TLS on
    std::string tlsCert;   // PEM client certificate (mTLS) ...
    std::string tlsKey;    // ... and its key
    std::chrono::milliseconds timeout{30'000};
};

class CtlClient {
public:
    // `node` is "host:port", or empty for the local socket.
    static Result<CtlClient> connect(const std::string &node, const ClientOptions &options);

    ctl::v1::Ctl::Stub &stub() { return *m_stub; }
    // A context with the deadline and credentials of every call.
    std::unique_ptr<grpc::ClientContext> context(std::chrono::milliseconds timeout = {}) const;

private:
    std::shared_ptr<grpc::Channel> m_channel;
    std::shared_ptr<ctl::v1::Ctl::Stub> m_stub;
    std::string m_token;
    std::string m_user;
    std::chrono::milliseconds m_timeout{};
};

// "UNAVAILABLE: connection refused" style text for a failed call.
std::string describe(const grpc::Status &status);

} // namespace lutra::ctld
