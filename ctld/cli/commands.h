#pragma once
// lutractl's commands: each makes its call(s) to one node and renders the answer as lctl-style
// text and as JSON.

#include "client/ctl_client.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace lutra::ctld {

struct NodeResult {
    bool ok = false;
    std::string text;    // lines for a terminal, each ending in '\n'
    nlohmann::json json; // the reply, for --json
    std::string error;   // why ok is false
};

using Command = std::function<NodeResult(CtlClient &client)>;

struct GetOptions {
    std::vector<std::string> patterns;
    bool valuesOnly = false; // -n
    bool namesOnly = false;  // -N
    std::string instance;
};
Command getParamCommand(GetOptions options);

struct SetOptions {
    std::vector<std::string> assignments; // NAME=VALUE
    bool valuesOnly = false;
    bool dryRun = false;
    std::string instance;
};
// Checks the NAME=VALUE syntax before any call; the error names the bad argument.
Result<Command> setParamCommand(SetOptions options);

Command listParamCommand(std::vector<std::string> patterns, std::string instance);

struct ProfileOptions {
    std::string name;
    std::string file; // inline YAML document (diff and apply)
    bool force = false;
};
enum class ProfileMode { diff, apply, verify };
Result<Command> profileCommand(ProfileMode mode, ProfileOptions options);
Result<Command> putProfileCommand(const std::string &file);
Command deleteProfileCommand(const std::string &name);
Command listProfilesCommand();

Command rollbackCommand(std::uint64_t historyId, bool dryRun);

struct HistoryOptions {
    std::uint32_t limit = 20;
    std::uint64_t beforeId = 0;
    std::string action, param, instance, principal;
};
Command historyCommand(HistoryOptions options);

Command jobsCommand(std::string jobGlob);
Command flushCommand(std::string job, bool all, std::chrono::milliseconds timeout);
Command instancesCommand();
Command statusCommand();

} // namespace lutra::ctld
