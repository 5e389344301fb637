#include "daemon/config.h"

#include "control/run_dir.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <fstream>
#include <sstream>

namespace lutra::ctld {

namespace {

class ErrorList {
public:
    explicit ErrorList(std::string source) : m_source(std::move(source)) {}

    void add(const YAML::Mark &mark, const std::string &message)
    {
        if (!m_text.empty()) {
            m_text += '\n';
        }
        m_text += m_source;
        if (!mark.is_null()) {
            m_text += ':' + std::to_string(mark.line + 1) + ':' + std::to_string(mark.column + 1);
        }
        m_text += ": " + message;
    }
    bool empty() const noexcept { return m_text.empty(); }
    const std::string &text() const noexcept { return m_text; }

private:
    std::string m_source;
    std::string m_text;
};

std::string scalarOf(const YAML::Node &node, const std::string &key, ErrorList &errors)
{
    if (!node.IsScalar()) {
        errors.add(node.Mark(), "'" + key + "' must be a single value");
        return {};
    }
    return node.Scalar();
}

bool parseRole(const std::string &text, Role *role)
{
    if (text == "viewer") {
        *role = Role::viewer;
    } else if (text == "operator") {
        *role = Role::operator_;
    } else if (text == "admin") {
        *role = Role::admin;
    } else {
        return false;
    }
    return true;
}

// "10s", "500ms", "5m", "24h"; a bare number is seconds.
bool parseDuration(std::string_view text, std::chrono::milliseconds *out)
{
    std::int64_t number = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || number <= 0) {
        return false;
    }
    const std::string_view unit(end, static_cast<std::size_t>(text.data() + text.size() - end));
    std::int64_t scale = 0;
    if (unit.empty() || unit == "s") {
        scale = 1000;
    } else if (unit == "ms") {
        scale = 1;
    } else if (unit == "m") {
        scale = 60'000;
    } else if (unit == "h") {
        scale = 3'600'000;
    } else {
        return false;
    }
    if (number > std::numeric_limits<std::int64_t>::max() / scale) {
        return false;
    }
    *out = std::chrono::milliseconds(number * scale);
    return true;
}

void durationField(const YAML::Node &node, const std::string &key, std::chrono::milliseconds min,
                   std::chrono::milliseconds max, std::chrono::milliseconds *out, ErrorList &errors)
{
    const auto text = scalarOf(node, key, errors);
    std::chrono::milliseconds value{};
    if (!parseDuration(text, &value) || value < min || value > max) {
        errors.add(node.Mark(), "'" + key + "' is '" + text +
                                    "'; expected a duration such as 10s, 500ms, 5m or 24h, from " +
                                    std::to_string(min.count()) + " ms to " +
                                    std::to_string(max.count() / 1000) + " s");
        return;
    }
    *out = value;
}

bool validHostPort(std::string_view text)
{
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return false;
    }
    int port = 0;
    const auto digits = text.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    return ec == std::errc() && end == digits.data() + digits.size() && port >= 0 &&
           port < 65536; // 0: any free port (tests)
}

std::string readSecretFile(const std::filesystem::path &path, std::string *error)
{
    std::ifstream in(path);
    if (!in) {
        *error = "cannot read token file " + path.native();
        return {};
    }
    std::string token;
    std::getline(in, token);
    while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) {
        token.pop_back();
    }
    if (token.size() < 16) {
        *error = "token in " + path.native() + " is shorter than 16 characters";
        return {};
    }
    return token;
}

void parseAuth(const YAML::Node &auth, Config &config, ErrorList &errors)
{
    if (!auth.IsMap()) {
        errors.add(auth.Mark(), "'auth' must be a map with tokens, client_certs, local_role");
        return;
    }
    for (const auto &entry : auth) {
        const auto key = entry.first.Scalar();
        const auto &value = entry.second;
        if (key == "tokens") {
            if (!value.IsSequence()) {
                errors.add(value.Mark(),
                           "'tokens' must be a list of {name, token|token_file, role}");
                continue;
            }
            for (const auto &item : value) {
                TokenGrant grant;
                std::string roleText;
                if (!item.IsMap()) {
                    errors.add(item.Mark(),
                               "a token entry must be a map {name, token|token_file, role}");
                    continue;
                }
                for (const auto &field : item) {
                    const auto name = field.first.Scalar();
                    if (name == "name") {
                        grant.name = scalarOf(field.second, name, errors);
                    } else if (name == "token") {
                        grant.token = scalarOf(field.second, name, errors);
                        if (grant.token.size() < 16) {
                            errors.add(field.second.Mark(), "token of '" + grant.name +
                                                                "' is shorter than 16 characters");
                        }
                    } else if (name == "token_file") {
                        std::string error;
                        grant.token = readSecretFile(scalarOf(field.second, name, errors), &error);
                        if (!error.empty()) {
                            errors.add(field.second.Mark(), error);
                        }
                    } else if (name == "role") {
                        roleText = scalarOf(field.second, name, errors);
                        if (!parseRole(roleText, &grant.role)) {
                            errors.add(field.second.Mark(),
                                       "unknown role '" + roleText +
                                           "'; roles are viewer, operator, admin");
                        }
                    } else {
                        errors.add(field.first.Mark(),
                                   "unknown key '" + name + "' in a token entry");
                    }
                }
                if (grant.name.empty() || grant.token.empty() || roleText.empty()) {
                    errors.add(item.Mark(),
                               "a token entry needs name, token (or token_file) and role");
                    continue;
                }
                config.tokens.push_back(std::move(grant));
            }
        } else if (key == "client_certs") {
            if (!value.IsSequence()) {
                errors.add(value.Mark(), "'client_certs' must be a list of {subject, role}");
                continue;
            }
            for (const auto &item : value) {
                CertGrant grant;
                std::string roleText;
                if (item.IsMap()) {
                    for (const auto &field : item) {
                        const auto name = field.first.Scalar();
                        if (name == "subject") {
                            grant.subject = scalarOf(field.second, name, errors);
                        } else if (name == "role") {
                            roleText = scalarOf(field.second, name, errors);
                            if (!parseRole(roleText, &grant.role)) {
                                errors.add(field.second.Mark(), "unknown role '" + roleText + "'");
                            }
                        } else {
                            errors.add(field.first.Mark(),
                                       "unknown key '" + name + "' in a client_certs entry");
                        }
                    }
                }
                if (grant.subject.empty() || roleText.empty()) {
                    errors.add(item.Mark(), "a client_certs entry needs subject and role");
                    continue;
                }
                config.certs.push_back(std::move(grant));
            }
        } else if (key == "local_role") {
            const auto text = scalarOf(value, key, errors);
            if (!parseRole(text, &config.localRole)) {
                errors.add(value.Mark(),
                           "unknown role '" + text + "'; roles are viewer, operator, admin");
            }
        } else {
            errors.add(entry.first.Mark(), "unknown key 'auth." + key + "'");
        }
    }
}

void parseTls(const YAML::Node &tls, Config &config, ErrorList &errors)
{
    if (!tls.IsMap()) {
        errors.add(tls.Mark(),
                   "'tls' must be a map with cert, key, client_ca, require_client_cert");
        return;
    }
    for (const auto &entry : tls) {
        const auto key = entry.first.Scalar();
        const auto &value = entry.second;
        if (key == "cert") {
            config.tls.cert = scalarOf(value, key, errors);
        } else if (key == "key") {
            config.tls.key = scalarOf(value, key, errors);
        } else if (key == "client_ca") {
            config.tls.clientCa = scalarOf(value, key, errors);
        } else if (key == "require_client_cert") {
            const auto text = scalarOf(value, key, errors);
            if (text == "true" || text == "yes" || text == "on") {
                config.tls.requireClientCert = true;
            } else if (text == "false" || text == "no" || text == "off") {
                config.tls.requireClientCert = false;
            } else {
                errors.add(value.Mark(), "'require_client_cert' must be true or false");
            }
        } else {
            errors.add(entry.first.Mark(), "unknown key 'tls." + key + "'");
            continue;
        }
        if (key != "require_client_cert") {
            std::error_code ec;
            if (!std::filesystem::is_regular_file(value.Scalar(), ec)) {
                errors.add(value.Mark(), "tls." + key + ": cannot read " + value.Scalar());
            }
        }
    }
    if (config.tls.cert.empty() != config.tls.key.empty()) {
        errors.add(tls.Mark(), "'tls' needs both cert and key");
    }
    if (config.tls.requireClientCert && config.tls.clientCa.empty()) {
        errors.add(tls.Mark(), "'require_client_cert' needs 'client_ca' to verify certificates");
    }
}

// audit_retention: {max_points, max_age}; 0 turns a limit off.
void parseAuditRetention(const YAML::Node &retention, Config &config, ErrorList &errors)
{
    if (!retention.IsMap()) {
        errors.add(retention.Mark(), "'audit_retention' must be a map with max_points, max_age");
        return;
    }
    for (const auto &entry : retention) {
        const auto key = entry.first.Scalar();
        const auto &value = entry.second;
        const auto text = scalarOf(value, "audit_retention." + key, errors);
        if (key == "max_points") {
            std::uint64_t number = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
            if (ec != std::errc() || end != text.data() + text.size() ||
                (number != 0 && (number < 100 || number > 1'000'000'000))) {
                errors.add(value.Mark(), "'audit_retention.max_points' is '" + text +
                                             "'; expected 0 (no limit) or a whole number from "
                                             "100 to 1000000000");
                continue;
            }
            config.auditMaxPoints = number;
        } else if (key == "max_age") {
            if (text == "0") {
                config.auditMaxAge = std::chrono::hours(0);
                continue;
            }
            std::chrono::milliseconds age{};
            durationField(value, "audit_retention.max_age", std::chrono::hours(1),
                          std::chrono::hours(24 * 366 * 10), &age, errors);
            if (age.count() > 0) {
                if (age % std::chrono::hours(1) != std::chrono::milliseconds(0)) {
                    errors.add(value.Mark(), "'audit_retention.max_age' is '" + text +
                                                 "'; give whole hours, e.g. 2160h (90 days)");
                    continue;
                }
                config.auditMaxAge = std::chrono::duration_cast<std::chrono::hours>(age);
            }
        } else {
            errors.add(entry.first.Mark(),
                       "unknown key 'audit_retention." + key + "' (known: max_points, max_age)");
        }
    }
}

std::string hostName()
{
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
        return "localhost";
    }
    std::string text(name);
    return text.substr(0, text.find('.'));
}

} // namespace

std::string_view roleName(Role role) noexcept
{
    switch (role) {
    case Role::viewer: return "viewer";
    case Role::operator_: return "operator";
    case Role::admin: return "admin";
    }
    return "unknown";
}

bool isLoopbackAddress(std::string_view hostPort)
{
    const auto host = hostPort.substr(0, hostPort.rfind(':'));
    return host == "localhost" || host == "[::1]" || host == "::1" || host.starts_with("127.");
}

Status checkListenSecurity(const Config &config)
{
    if (config.tls.enabled()) {
        return {};
    }
    for (const auto &address : config.listen) {
        if (!isLoopbackAddress(address)) {
            return {Errc::failed_precondition,
                    "refusing to listen on " + address +
                        " without TLS: tokens would cross the network in clear text. Configure "
                        "tls.cert and tls.key in " +
                        (config.file.empty() ? std::string("ctld.yaml") : config.file.native()) +
                        ", or listen on loopback (127.0.0.1) only"};
        }
    }
    return {};
}

Result<Config> parseConfig(std::string_view yaml, const std::string &source)
{
    ErrorList errors(source);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml));
    } catch (const YAML::Exception &error) {
        errors.add(error.mark, error.msg);
        return Status(Errc::invalid_argument, errors.text());
    }
    Config config;
    config.file = source;
    if (root.IsNull()) {
        root = YAML::Node(YAML::NodeType::Map);
    }
    if (!root.IsMap()) {
        errors.add(root.Mark(), "ctld.yaml must be a map of settings");
        return Status(Errc::invalid_argument, errors.text());
    }
    for (const auto &entry : root) {
        const auto key = entry.first.Scalar();
        const auto &value = entry.second;
        try {
            if (key == "node") {
                config.node = scalarOf(value, key, errors);
            } else if (key == "labels") {
                if (!value.IsMap()) {
                    errors.add(value.Mark(), "'labels' must be a map of name: value");
                    continue;
                }
                for (const auto &label : value) {
                    config.labels[label.first.Scalar()] = scalarOf(label.second, "labels", errors);
                }
            } else if (key == "listen") {
                config.listen.clear();
                if (value.IsScalar()) {
                    config.listen.push_back(value.Scalar());
                } else if (value.IsSequence()) {
                    for (const auto &item : value) {
                        config.listen.push_back(scalarOf(item, key, errors));
                    }
                } else if (!value.IsNull()) {
                    errors.add(value.Mark(), "'listen' must be host:port or a list of them");
                }
                for (const auto &address : config.listen) {
                    if (!validHostPort(address)) {
                        errors.add(value.Mark(), "listen address '" + address +
                                                     "' is not host:port (e.g. 127.0.0.1:7370)");
                    }
                }
            } else if (key == "local_socket") {
                config.localSocket = scalarOf(value, key, errors);
            } else if (key == "metrics_listen") {
                config.metricsListen = value.IsNull() ? "" : scalarOf(value, key, errors);
                if (!config.metricsListen.empty() && !validHostPort(config.metricsListen)) {
                    errors.add(value.Mark(), "metrics_listen '" + config.metricsListen +
                                                 "' is not host:port (or empty to disable)");
                }
            } else if (key == "run_dir") {
                config.runDir = scalarOf(value, key, errors);
            } else if (key == "db") {
                config.db = scalarOf(value, key, errors);
            } else if (key == "profiles_dir") {
                config.profilesDir = scalarOf(value, key, errors);
            } else if (key == "sample_interval") {
                durationField(value, key, std::chrono::seconds(1), std::chrono::hours(1),
                              &config.sampleInterval, errors);
            } else if (key == "poll_interval") {
                durationField(value, key, std::chrono::milliseconds(100), std::chrono::minutes(1),
                              &config.pollInterval, errors);
            } else if (key == "history_retention") {
                std::chrono::milliseconds retention{};
                durationField(value, key, std::chrono::hours(1), std::chrono::hours(24 * 366),
                              &retention, errors);
                config.historyRetention = std::chrono::duration_cast<std::chrono::hours>(retention);
            } else if (key == "audit_retention") {
                parseAuditRetention(value, config, errors);
            } else if (key == "tls") {
                parseTls(value, config, errors);
            } else if (key == "auth") {
                parseAuth(value, config, errors);
            } else {
                errors.add(entry.first.Mark(),
                           "unknown setting '" + key +
                               "' (known: node, labels, listen, local_socket, metrics_listen, "
                               "run_dir, db, profiles_dir, sample_interval, poll_interval, "
                               "history_retention, audit_retention, tls, auth)");
            }
        } catch (const YAML::Exception &error) {
            errors.add(error.mark, error.msg);
        }
    }
    if (config.node.empty()) {
        config.node = hostName();
    }
    if (config.runDir.empty()) {
        config.runDir = control::runDirectory();
    }
    if (config.localSocket.empty()) {
        config.localSocket = config.runDir / "ctld.sock";
    }
    if (!errors.empty()) {
        return Status(Errc::invalid_argument, errors.text());
    }
    return config;
}

Result<Config> loadConfig(const std::filesystem::path &file)
{
    std::ifstream in(file);
    if (!in) {
        return Status(Errc::not_found, "cannot read config " + file.native());
    }
    std::stringstream text;
    text << in.rdbuf();
    return parseConfig(text.str(), file.native());
}

} // namespace lutra::ctld
