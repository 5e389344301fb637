#include "client/cluster_file.h"

#include "client/hostlist.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace lutra::ctld {

namespace {

class Errors {
public:
    explicit Errors(std::string file) : m_file(std::move(file)) {}
    void add(const YAML::Mark &mark, const std::string &message)
    {
        m_list.push_back(m_file + ":" + std::to_string(mark.line + 1) + ":" +
                         std::to_string(mark.column + 1) + ": " + message);
    }
    std::vector<std::string> take() { return std::move(m_list); }

private:
    std::string m_file;
    std::vector<std::string> m_list;
};

bool scalar(const YAML::Node &node, const std::string &key, std::string &out, Errors &errors)
{
    if (!node.IsScalar()) {
        errors.add(node.Mark(), "'" + key + "' must be a single value");
        return false;
    }
    out = node.Scalar();
    return true;
}

std::string resolve(const std::string &path, const std::string &baseDir)
{
    if (path.empty() || baseDir.empty() || std::filesystem::path(path).is_absolute()) {
        return path;
    }
    return (std::filesystem::path(baseDir) / path).lexically_normal().native();
}

// token_file, tls and timeout at the top level or in a group; other keys are the caller's.
void readCredentials(const YAML::Node &map, ClusterCredentials &credentials,
                     const std::string &baseDir, Errors &errors)
{
    if (const auto timeout = map["timeout"]) {
        std::string value;
        if (scalar(timeout, "timeout", value, errors)) {
            if (const auto parsed = parseCallTimeout(value)) {
                credentials.timeout = parsed;
            } else {
                errors.add(timeout.Mark(),
                           "'timeout' is '" + value + "': give 500ms .. 10m, e.g. 10s, 500ms, 2m");
            }
        }
    }
    if (const auto token = map["token_file"]) {
        std::string value;
        if (scalar(token, "token_file", value, errors)) {
            credentials.tokenFile = resolve(value, baseDir);
        }
    }
    if (const auto tls = map["tls"]) {
        if (!tls.IsMap()) {
            errors.add(tls.Mark(), "'tls' must be a map with ca, cert, key");
            return;
        }
        for (const auto &entry : tls) {
            const auto key = entry.first.Scalar();
            std::string value;
            if (!scalar(entry.second, "tls." + key, value, errors)) {
                continue;
            }
            if (key == "ca") {
                credentials.tlsCa = resolve(value, baseDir);
            } else if (key == "cert") {
                credentials.tlsCert = resolve(value, baseDir);
            } else if (key == "key") {
                credentials.tlsKey = resolve(value, baseDir);
            } else {
                errors.add(entry.first.Mark(),
                           "unknown key 'tls." + key + "' (known: ca, cert, key)");
            }
        }
        if (credentials.tlsCert.empty() != credentials.tlsKey.empty()) {
            errors.add(tls.Mark(), "'tls' needs both cert and key for a client certificate");
        }
    }
}

bool isCredentialKey(const std::string &key)
{
    return key == "token_file" || key == "tls" || key == "timeout";
}

void readGroups(const YAML::Node &groups, const ClusterCredentials &defaults,
                const std::string &baseDir, ClusterFileContents &contents, Errors &errors)
{
    std::set<std::string> seen;
    for (const auto &group : groups) {
        if (!group.IsMap()) {
            errors.add(group.Mark(), "a group is a map with name and hosts");
            continue;
        }
        ClusterCredentials credentials = defaults;
        readCredentials(group, credentials, baseDir, errors);
        std::string name;
        std::vector<std::string> addresses;
        for (const auto &entry : group) {
            const auto key = entry.first.Scalar();
            if (key == "name") {
                scalar(entry.second, key, name, errors);
            } else if (key == "hosts") {
                std::string hosts;
                if (!scalar(entry.second, key, hosts, errors)) {
                    continue;
                }
                auto expanded = expandCtldAddresses(hosts);
                if (!expanded) {
                    errors.add(entry.second.Mark(), expanded.status().message());
                    continue;
                }
                for (auto &address : *expanded) {
                    if (!seen.insert(address).second) {
                        errors.add(entry.second.Mark(), address + " is listed twice");
                        continue;
                    }
                    addresses.push_back(std::move(address));
                }
            } else if (!isCredentialKey(key)) {
                errors.add(entry.first.Mark(), "unknown key '" + key +
                                                   "' in a group (known: name, hosts, "
                                                   "token_file, tls, timeout)");
            }
        }
        if (!group["hosts"]) {
            errors.add(group.Mark(), "a group needs 'hosts' (a hostlist: node[001-064])");
        }
        if (name.empty()) {
            name = "group" + std::to_string(contents.groups.size() + 1);
        }
        contents.groups.push_back(name);
        for (auto &address : addresses) {
            contents.nodes.push_back({name, std::move(address), credentials});
        }
    }
}

} // namespace

std::optional<std::chrono::milliseconds> parseCallTimeout(std::string_view text)
{
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data() || value > 1'000'000'000) {
        return std::nullopt;
    }
    const std::string_view unit(end, text.data() + text.size() - end);
    std::uint64_t ms = 0;
    if (unit == "ms") {
        ms = value;
    } else if (unit == "s") {
        ms = value * 1000;
    } else if (unit == "m") {
        ms = value * 60'000;
    } else {
        return std::nullopt;
    }
    if (ms < 500 || ms > 600'000) {
        return std::nullopt;
    }
    return std::chrono::milliseconds(ms);
}

Result<std::vector<std::string>> expandCtldAddresses(const std::string &hostlist)
{
    auto expanded = expandHostlist(hostlist);
    if (!expanded) {
        return expanded.status();
    }
    for (auto &address : *expanded) {
        if (!address.starts_with("unix:") && address.find(':') == std::string::npos) {
            address += ":" + std::to_string(kDefaultCtldPort);
        }
    }
    return expanded;
}

ParsedClusterFile parseClusterFile(std::string_view text, const std::string &shownPath,
                                   const std::string &baseDir)
{
    ParsedClusterFile parsed;
    Errors errors(shownPath);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(text));
    } catch (const YAML::Exception &error) {
        errors.add(error.mark, error.msg);
        parsed.errors = errors.take();
        return parsed;
    }
    if (!root.IsMap()) {
        parsed.errors.push_back(shownPath + ":1:1: a cluster file is a map with 'groups' (and "
                                            "optionally name, prometheus, token_file, tls)");
        return parsed;
    }
    auto &contents = parsed.contents;
    ClusterCredentials defaults;
    readCredentials(root, defaults, baseDir, errors);
    for (const auto &entry : root) {
        const auto key = entry.first.Scalar();
        if (key == "name") {
            scalar(entry.second, key, contents.name, errors);
        } else if (key == "prometheus") {
            if (scalar(entry.second, key, contents.prometheus.value, errors)) {
                contents.prometheus.line = entry.second.Mark().line + 1;
                contents.prometheus.column = entry.second.Mark().column + 1;
            }
        } else if (key == "prometheus_interval") {
            if (scalar(entry.second, key, contents.prometheusInterval.value, errors)) {
                contents.prometheusInterval.line = entry.second.Mark().line + 1;
                contents.prometheusInterval.column = entry.second.Mark().column + 1;
            }
        } else if (key != "groups" && !isCredentialKey(key)) {
            errors.add(entry.first.Mark(), "unknown key '" + key +
                                               "' (known: name, prometheus, prometheus_interval, "
                                               "token_file, tls, timeout, groups)");
        }
    }
    const auto groups = root["groups"];
    if (!groups) {
        errors.add(root.Mark(), "no 'groups': list the nodes as groups: [{name, hosts}]");
    } else if (!groups.IsSequence()) {
        errors.add(groups.Mark(), "'groups' must be a list of {name, hosts}");
    } else {
        readGroups(groups, defaults, baseDir, contents, errors);
    }
    parsed.errors = errors.take();
    if (!parsed.ok()) {
        contents.nodes.clear();
    }
    return parsed;
}

ParsedClusterFile loadClusterFile(const std::string &path)
{
    std::ifstream in(path);
    if (!in) {
        ParsedClusterFile parsed;
        parsed.unreadable = true;
        parsed.errors.push_back(path + ": cannot read: " + std::strerror(errno));
        return parsed;
    }
    std::stringstream text;
    text << in.rdbuf();
    return parseClusterFile(text.str(), path,
                            std::filesystem::absolute(path).parent_path().native());
}

} // namespace lutra::ctld
