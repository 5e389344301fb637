#include "daemon/auth.h"

namespace lutra::ctld {

namespace {

// Compares without an early exit, so the time taken does not reveal how much of a token matched.
bool sameSecret(std::string_view a, std::string_view b) noexcept
{
    unsigned char difference = a.size() == b.size() ? 0 : 1;
    const std::size_t n = a.size() < b.size() ? a.size() : b.size();
    for (std::size_t i = 0; i < n; ++i) {
        difference |= static_cast<unsigned char>(a[i] ^ b[i]);
    }
    return difference == 0;
}

std::string metadataValue(const grpc::ServerContextBase &context, std::string_view key)
{
    const auto &metadata = context.client_metadata();
    const auto found = metadata.find(grpc::string_ref(key.data(), key.size()));
    if (found == metadata.end()) {
        return {};
    }
    return std::string(found->second.data(), found->second.size());
}

} // namespace

Authenticator::Authenticator(const Config &config)
    : m_tokens(config.tokens), m_certs(config.certs), m_localRole(config.localRole)
{
}

void Authenticator::reload(const Config &config)
{
    std::unique_lock lock(m_mutex);
    m_tokens = config.tokens;
    m_certs = config.certs;
    m_localRole = config.localRole;
}

Result<Caller> Authenticator::authenticate(const grpc::ServerContextBase &context) const
{
    std::shared_lock lock(m_mutex);
    if (context.peer().starts_with("unix:")) {
        auto user = metadataValue(context, kLocalUserMetadata);
        if (user.empty() || user.size() > 64) {
            user = "unknown";
        }
        return Caller{"local:" + user, m_localRole};
    }
    const auto authorization = metadataValue(context, "authorization");
    if (!authorization.empty()) {
        constexpr std::string_view kBearer = "Bearer ";
        if (!authorization.starts_with(kBearer)) {
            return Status(Errc::permission_denied,
                          "the authorization header must be 'Bearer <token>'");
        }
        const std::string_view token = std::string_view(authorization).substr(kBearer.size());
        for (const auto &grant : m_tokens) {
            if (sameSecret(grant.token, token)) {
                return Caller{grant.name, grant.role};
            }
        }
        return Status(Errc::permission_denied, "unknown bearer token");
    }
    if (const auto auth = context.auth_context(); auth && auth->IsPeerAuthenticated()) {
        for (const auto &name : auth->FindPropertyValues("x509_common_name")) {
            const std::string subject(name.data(), name.size());
            for (const auto &grant : m_certs) {
                if (grant.subject == subject) {
                    return Caller{"cert:" + subject, grant.role};
                }
            }
            return Status(Errc::permission_denied,
                          "client certificate '" + subject + "' is not given a role in ctld.yaml");
        }
    }
    return Status(Errc::permission_denied,
                  "no credentials: send 'authorization: Bearer <token>' (lutractl --token-file) "
                  "or a client certificate");
}

Status requireRole(const Caller &caller, Role needed, std::string_view operation)
{
    if (static_cast<int>(caller.role) >= static_cast<int>(needed)) {
        return {};
    }
    return {Errc::permission_denied, std::string(operation) + " needs role " +
                                         std::string(roleName(needed)) + "; " + caller.principal +
                                         " has role " + std::string(roleName(caller.role))};
}

} // namespace lutra::ctld
