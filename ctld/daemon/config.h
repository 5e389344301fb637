#pragma once
// ctld.yaml: who this node is, where ctld listens, who may do what.

#include <lutra/status.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lutra::ctld {

enum class Role { viewer = 1, operator_ = 2, admin = 3 };

std::string_view roleName(Role role) noexcept;

struct TokenGrant {
    std::string name;  // the principal: "alice"
    std::string token; // the bearer secret (from `token` or `token_file`)
    Role role = Role::viewer;
};

struct CertGrant {
    std::string subject; // the client certificate's common name
    Role role = Role::viewer;
};

struct TlsConfig {
    std::filesystem::path cert;     // PEM server certificate chain
    std::filesystem::path key;      // PEM private key
    std::filesystem::path clientCa; // PEM CA bundle; set: client certificates are verified
    bool requireClientCert = false; // mTLS: refuse clients without a valid certificate

    bool enabled() const noexcept { return !cert.empty(); }
};

struct Config {
    std::filesystem::path file; // where it was read from ("" for defaults)
    std::string node;           // default: the host name
    std::map<std::string, std::string> labels;
    std::vector<std::string> listen{"127.0.0.1:7370"}; // host:port, TCP
    std::filesystem::path localSocket;                 // default: <run_dir>/ctld.sock
    std::string metricsListen = "127.0.0.1:7371";      // "" disables /metrics
    std::filesystem::path runDir;                      // default: LUTRA_RUN_DIR or /run/lutra
    std::filesystem::path db = "/var/lib/lutra/ctld.db";
    std::filesystem::path profilesDir; // YAML profiles shipped with the node ("" for none)
    std::chrono::milliseconds sampleInterval{10'000}; // counter history resolution
    std::chrono::milliseconds pollInterval{1'000};    // live counters for streams, /metrics
    std::chrono::hours historyRetention{24};
    // audit_retention: history points kept (0 = no limit); points desired state or a pending
    // apply needs are always kept.
    std::uint64_t auditMaxPoints = 100'000;
    std::chrono::hours auditMaxAge{24 * 365};
    TlsConfig tls;
    std::vector<TokenGrant> tokens;
    std::vector<CertGrant> certs;
    Role localRole = Role::admin; // callers on the local unix socket (root or its group)
};

// Reads and checks ctld.yaml. Errors are "file:line:column: what is wrong", all of them.
Result<Config> loadConfig(const std::filesystem::path &file);
// Parses a document (for tests and --check-config on stdin); `source` names it in errors.
Result<Config> parseConfig(std::string_view yaml, const std::string &source);

// A listen address that is not on loopback needs TLS; this says why one is refused.
Status checkListenSecurity(const Config &config);

bool isLoopbackAddress(std::string_view hostPort);

} // namespace lutra::ctld
