#pragma once
// Who is calling and what they may do: bearer tokens and client certificates map to roles;
// callers on the local unix socket (root or the socket's group) get the configured local role.

#include <lutra/status.h>

#include "api/metadata.h"
#include "daemon/config.h"

#include <grpcpp/server_context.h>

#include <shared_mutex>
#include <string>

namespace lutra::ctld {

struct Caller {
    std::string principal; // "alice", "cert:console", "local:root"
    Role role = Role::viewer;
};

class Authenticator {
public:
    explicit Authenticator(const Config &config);

    // SIGHUP: new tokens, certificate grants and local role take effect for the next call.
    void reload(const Config &config);

    // UNAUTHENTICATED when the call carries no known credential.
    Result<Caller> authenticate(const grpc::ServerContextBase &context) const;

private:
    mutable std::shared_mutex m_mutex;
    std::vector<TokenGrant> m_tokens;
    std::vector<CertGrant> m_certs;
    Role m_localRole;
};

// PERMISSION_DENIED (as a lutra status) when the caller's role is below `needed`.
Status requireRole(const Caller &caller, Role needed, std::string_view operation);

} // namespace lutra::ctld
