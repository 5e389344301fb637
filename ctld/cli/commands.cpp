#include "cli/commands.h"

#include "client/reply_json.h"

#include <grpcpp/grpcpp.h>

#include <ctime>
#include <fstream>
#include <set>
#include <sstream>

namespace lutra::ctld {

namespace {

namespace v1 = ctl::v1;

nlohmann::json toJson(const google::protobuf::Message &message)
{
    return nlohmann::json::parse(replyJson(message), nullptr, false);
}

NodeResult failed(const grpc::Status &status)
{
    NodeResult result;
    result.error = describe(status);
    return result;
}

// lctl prints a multi-line value (a stats block) on the lines after "name=".
void appendValue(std::string &out, const std::string &name, const std::string &value,
                 bool valuesOnly, bool namesOnly)
{
    if (namesOnly) {
        out += name + "\n";
        return;
    }
    const bool multiLine = value.find('\n') != std::string::npos;
    if (!valuesOnly) {
        out += name + "=";
        if (multiLine) {
            out += "\n";
        }
    }
    out += value;
    if (value.empty() || value.back() != '\n') {
        out += "\n";
    }
}

std::string timeText(std::int64_t ns)
{
    const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
    std::tm tm{};
    localtime_r(&seconds, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return text;
}

void appendBatchErrors(std::string &out, const v1::InstanceSetResult &instance)
{
    for (const auto &error : instance.result().errors()) {
        out += "error: " + instance.instance() + ": " + error.message() + "\n";
    }
}

// A document sent inline (diff/apply --file) is "inline" to ctld: name it after the local file.
std::string inlineNamed(const std::string &source, const std::string &inlineFile)
{
    if (!inlineFile.empty() && (source == "inline" || source.starts_with("inline:"))) {
        return inlineFile + source.substr(6);
    }
    return source;
}

void appendPlan(std::string &out, const google::protobuf::RepeatedPtrField<v1::PlanEntry> &entries,
                bool onlyChanged, const std::string &inlineFile = {})
{
    for (const auto &entry : entries) {
        if (onlyChanged && !entry.changed()) {
            continue;
        }
        out +=
            (entry.changed() ? "~ " : "  ") + entry.instance() + " " + entry.name() + ": " +
            (entry.changed() ? entry.live() + " -> " + entry.desired() : entry.live()) +
            (entry.source().empty() ? "" : "   (" + inlineNamed(entry.source(), inlineFile) + ")") +
            "\n";
    }
}

Result<std::string> readFile(const std::string &path)
{
    std::ifstream in(path);
    if (!in) {
        return Status(Errc::not_found, "cannot read " + path);
    }
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// "file:line:col: message"; errors in a document sent inline are named after the local file.
std::string profileErrorText(const v1::ProfileError &error, const std::string &inlineFile = {})
{
    std::string where = inlineNamed(error.file(), inlineFile);
    if (error.line() > 0) {
        where += ":" + std::to_string(error.line()) + ":" + std::to_string(error.column());
    }
    return where + ": " + error.message();
}

} // namespace

Command getParamCommand(GetOptions options)
{
    return [options](CtlClient &client) {
        v1::GetParamsRequest request;
        for (const auto &pattern : options.patterns) {
            request.add_patterns(pattern);
        }
        request.set_instance(options.instance);
        v1::GetParamsReply reply;
        const auto status = client.stub().GetParams(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{true, {}, toJson(reply), {}};
        for (const auto &value : reply.values()) {
            appendValue(result.text, value.name(), value.value(), options.valuesOnly,
                        options.namesOnly);
        }
        // A partial result: the values that came, and the node fails naming who did not answer.
        for (const auto &failure : reply.failures()) {
            result.ok = false;
            result.error += (result.error.empty() ? "" : "; ") + failure.message();
        }
        return result;
    };
}

Result<Command> setParamCommand(SetOptions options)
{
    v1::SetParamsRequest request;
    for (const auto &argument : options.assignments) {
        const auto equals = argument.find('=');
        if (equals == std::string::npos || equals == 0) {
            return Status(Errc::invalid_argument,
                          "set_param: '" + argument + "' is not NAME=VALUE");
        }
        auto *assignment = request.add_assignments();
        assignment->set_pattern(argument.substr(0, equals));
        assignment->set_value(argument.substr(equals + 1));
    }
    if (request.assignments().empty()) {
        return Status(Errc::invalid_argument, "set_param: give at least one NAME=VALUE");
    }
    request.set_dry_run(options.dryRun);
    request.set_instance(options.instance);
    return Command([request, options](CtlClient &client) {
        v1::SetParamsReply reply;
        const auto status = client.stub().SetParams(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{reply.applied() || options.dryRun, {}, toJson(reply), {}};
        for (const auto &instance : reply.instances()) {
            for (const auto &r : instance.result().results()) {
                if (r.error().code() != params::v1::ERROR_CODE_OK || r.rolled_back()) {
                    continue;
                }
                std::string line =
                    options.valuesOnly ? r.read_back() : r.name() + "=" + r.read_back();
                if (r.clamped()) {
                    line += "   (clamped: " + r.requested() + " was asked)";
                }
                result.text += line + "\n";
            }
            appendBatchErrors(result.text, instance);
        }
        for (const auto &error : reply.errors()) {
            result.text += "error: " + error.message() + "\n";
        }
        if (!result.ok) {
            result.error = "set_param failed; nothing was changed";
        }
        return result;
    });
}

Command listParamCommand(std::vector<std::string> patterns, std::string instance)
{
    return [patterns, instance](CtlClient &client) {
        NodeResult result{true, {}, nlohmann::json::array(), {}};
        std::set<std::string> names;
        for (const auto &pattern : patterns.empty() ? std::vector<std::string>{""} : patterns) {
            v1::ListParamsRequest request;
            request.set_pattern(pattern);
            request.set_instance(instance);
            v1::ListParamsReply reply;
            const auto status = client.stub().ListParams(client.context().get(), request, &reply);
            if (!status.ok()) {
                return failed(status);
            }
            result.json.push_back(toJson(reply));
            for (const auto &specs : reply.instances()) {
                for (const auto &spec : specs.specs()) {
                    names.insert(spec.name());
                }
            }
        }
        for (const auto &name : names) {
            result.text += name + "\n";
        }
        return result;
    };
}

Result<Command> profileCommand(ProfileMode mode, ProfileOptions options)
{
    v1::ProfileRequest request;
    request.set_name(options.name);
    request.set_force(options.force);
    if (!options.file.empty()) {
        auto text = readFile(options.file);
        if (!text) {
            return text.status();
        }
        request.set_yaml(*text);
    }
    if (request.name().empty() == request.yaml().empty()) {
        return Status(Errc::invalid_argument, "give a profile NAME or --file FILE");
    }
    return Command([request, mode, file = options.file](CtlClient &client) {
        v1::ProfilePlan reply;
        auto context = client.context();
        grpc::Status status;
        if (mode == ProfileMode::diff) {
            status = client.stub().DiffProfile(context.get(), request, &reply);
        } else if (mode == ProfileMode::apply) {
            status = client.stub().ApplyProfile(context.get(), request, &reply);
        } else {
            status = client.stub().VerifyProfile(context.get(), request, &reply);
        }
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{reply.errors().empty(), {}, toJson(reply), {}};
        for (const auto &error : reply.errors()) {
            result.text += profileErrorText(error, file) + "\n";
        }
        if (!reply.errors().empty()) {
            // A document that does not parse has no name yet: say which one was meant.
            const std::string named = !reply.profile().empty() ? reply.profile()
                                      : !file.empty()          ? file
                                                               : request.name();
            result.error = "profile " + named + ": " + std::to_string(reply.errors_size()) +
                           " error(s); nothing was changed";
            return result;
        }
        appendPlan(result.text, reply.entries(), true, file);
        const std::string name = reply.profile();
        switch (mode) {
        case ProfileMode::diff:
            result.text += name + ": " + std::to_string(reply.drift()) + " change(s) of " +
                           std::to_string(reply.entries_size()) + " parameter(s)" +
                           (reply.matches_node() ? "" : " (the profile does not match this node)") +
                           "\n";
            break;
        case ProfileMode::apply:
            result.ok = reply.applied();
            for (const auto &instance : reply.results()) {
                appendBatchErrors(result.text, instance);
            }
            result.text += name + (reply.applied() ? ": applied " : ": NOT applied ") +
                           std::to_string(reply.drift()) + " change(s) (history point " +
                           std::to_string(reply.history_id()) + ")\n";
            if (!result.ok) {
                result.error = "apply failed; every value was restored";
            }
            break;
        case ProfileMode::verify:
            result.ok = reply.drift() == 0;
            result.text += name + (reply.drift() == 0 ? ": in effect, no drift\n"
                                                      : ": " + std::to_string(reply.drift()) +
                                                            " parameter(s) drifted\n");
            if (!result.ok) {
                result.error = "drift from profile " + name;
            }
            break;
        }
        return result;
    });
}

Command deleteProfileCommand(const std::string &name)
{
    return [name](CtlClient &client) {
        v1::DeleteProfileRequest request;
        request.set_name(name);
        v1::DeleteProfileReply reply;
        const auto status = client.stub().DeleteProfile(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        return NodeResult{true,
                          "deleted profile " + name + " (history point " +
                              std::to_string(reply.history_id()) + ")\n",
                          toJson(reply),
                          {}};
    };
}

Result<Command> putProfileCommand(const std::string &file)
{
    auto text = readFile(file);
    if (!text) {
        return text.status();
    }
    v1::PutProfileRequest request;
    request.set_yaml(*text);
    return Command([request, file](CtlClient &client) {
        v1::PutProfileReply reply;
        const auto status = client.stub().PutProfile(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{reply.errors().empty(), {}, toJson(reply), {}};
        for (const auto &error : reply.errors()) {
            result.text += profileErrorText(error, file) + "\n";
        }
        if (result.ok) {
            result.text += "stored profile " + reply.name() + "\n";
        } else {
            result.error = "profile not stored";
        }
        return result;
    });
}

Command listProfilesCommand()
{
    return [](CtlClient &client) {
        v1::ListProfilesReply reply;
        const auto status =
            client.stub().ListProfiles(client.context().get(), v1::ListProfilesRequest(), &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{true, {}, toJson(reply), {}};
        for (const auto &profile : reply.profiles()) {
            std::string extends;
            for (const auto &parent : profile.extends()) {
                extends += (extends.empty() ? " extends " : ",") + parent;
            }
            result.text += (profile.matches_node() ? "* " : "  ") + profile.name() + extends +
                           " [" + profile.source() + "]: " + profile.description() + "\n";
        }
        for (const auto &error : reply.errors()) {
            result.text += "error: " + profileErrorText(error) + "\n";
        }
        return result;
    };
}

Command rollbackCommand(std::uint64_t historyId, bool dryRun)
{
    return [historyId, dryRun](CtlClient &client) {
        v1::RollbackRequest request;
        request.set_history_id(historyId);
        request.set_dry_run(dryRun);
        v1::RollbackReply reply;
        const auto status = client.stub().Rollback(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{reply.applied() || dryRun, {}, toJson(reply), {}};
        appendPlan(result.text, reply.entries(), true);
        for (const auto &error : reply.errors()) {
            result.text += "note: " + error.message() + "\n";
        }
        result.text += dryRun ? "dry run: nothing changed\n"
                              : (reply.applied() ? "rolled back to point " +
                                                       std::to_string(historyId) + " (new point " +
                                                       std::to_string(reply.history_id()) + ")\n"
                                                 : "rollback failed; nothing was changed\n");
        if (!result.ok) {
            result.error = "rollback failed";
        }
        return result;
    };
}

Command historyCommand(HistoryOptions options)
{
    return [options](CtlClient &client) {
        v1::ListHistoryRequest request;
        request.set_limit(options.limit);
        request.set_before_id(options.beforeId);
        request.set_action(options.action);
        request.set_param(options.param);
        request.set_instance(options.instance);
        request.set_principal(options.principal);
        v1::ListHistoryReply reply;
        const auto status = client.stub().ListHistory(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{true, {}, toJson(reply), {}};
        for (const auto &point : reply.points()) {
            result.text += std::to_string(point.id()) + "  " + timeText(point.time_ns()) + "  " +
                           point.principal() + "  " + point.action() + "  " + point.outcome() +
                           "  " + point.description() + "\n";
            for (const auto &change : point.changes()) {
                result.text += "      " + change.instance() + " " + change.name() + ": " +
                               change.old_value() + " -> " + change.read_back() +
                               (change.requested() != change.read_back()
                                    ? " (asked " + change.requested() + ")"
                                    : "") +
                               (change.ok() ? "" : "  [" + change.error() + "]") + "\n";
            }
        }
        if (reply.next_before_id() != 0) {
            result.text += "(older: --before " + std::to_string(reply.next_before_id()) + ")\n";
        }
        return result;
    };
}

Command jobsCommand(std::string jobGlob)
{
    return [jobGlob](CtlClient &client) {
        v1::GetJobStatsRequest request;
        request.set_job_id(jobGlob);
        v1::GetJobStatsReply reply;
        const auto status = client.stub().GetJobStats(client.context().get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{true, {}, toJson(reply), {}};
        for (const auto &job : reply.jobs()) {
            std::string line = job.job_id() + "  " + job.block() + " ";
            for (const auto &counter : job.counters()) {
                if (counter.samples() == 0) {
                    continue;
                }
                line += " " + counter.name() + "=" + std::to_string(counter.samples());
                if (counter.with_min_max_sum()) {
                    line += "/" + std::to_string(counter.sum()) + counter.unit().substr(0, 1);
                }
            }
            result.text += line + "\n";
        }
        return result;
    };
}

Command flushCommand(std::string job, bool all, std::chrono::milliseconds timeout)
{
    return [job, all, timeout](CtlClient &client) {
        v1::FlushJobRequest request;
        request.set_job_id(job);
        request.set_all(all);
        request.set_timeout_ms(static_cast<std::uint32_t>(timeout.count()));
        v1::FlushJobReply reply;
        const auto status = client.stub().FlushJob(
            client.context(timeout + std::chrono::seconds(5)).get(), request, &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{reply.ok(), {}, toJson(reply), {}};
        std::uint64_t locks = 0;
        std::uint64_t pages = 0;
        std::uint64_t bytes = 0;
        for (const auto &instance : reply.instances()) {
            locks += instance.locks_cancelled();
            pages += instance.pages_dropped();
            bytes += instance.bytes_written_back();
            result.text +=
                instance.instance() + ": " +
                (instance.error().code() == params::v1::ERROR_CODE_OK
                     ? "locks_cancelled=" + std::to_string(instance.locks_cancelled()) +
                           " pages_dropped=" + std::to_string(instance.pages_dropped()) +
                           " bytes_written_back=" + std::to_string(instance.bytes_written_back()) +
                           " time=" + std::to_string(instance.duration_us()) + "us"
                     : "FAILED " + instance.error().message()) +
                "\n";
            for (const auto &error : instance.errors()) {
                result.text += "  note: " + error + "\n";
            }
        }
        result.text += "flushed " + (all ? std::string("all jobs") : "job " + job) + ": " +
                       std::to_string(locks) + " locks, " + std::to_string(pages) + " pages, " +
                       std::to_string(bytes) + " bytes written back in " +
                       std::to_string(reply.duration_us() / 1000) + " ms\n";
        if (!result.ok) {
            result.error = "flush failed on some instances";
        }
        return result;
    };
}

Command instancesCommand()
{
    return [](CtlClient &client) {
        v1::ListInstancesReply reply;
        const auto status =
            client.stub().ListInstances(client.context().get(), v1::ListInstancesRequest(), &reply);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{true, {}, toJson(reply), {}};
        for (const auto &instance : reply.instances()) {
            result.text += instance.id() + "  pid " + std::to_string(instance.pid()) + "  " +
                           (instance.connected() ? "connected" : "gone") + "  since " +
                           timeText(instance.start_time_ns()) + "  restarts " +
                           std::to_string(instance.restarts()) + "\n";
        }
        return result;
    };
}

Command statusCommand()
{
    return [](CtlClient &client) {
        v1::NodeInfo info;
        auto status =
            client.stub().GetNodeInfo(client.context().get(), v1::GetNodeInfoRequest(), &info);
        if (!status.ok()) {
            return failed(status);
        }
        NodeResult result{true, {}, toJson(info), {}};
        std::string labels;
        for (const auto &[key, value] : info.labels()) {
            labels += (labels.empty() ? "" : ",") + key + "=" + value;
        }
        result.text =
            "node " + info.node() + " (lutra-ctld " + info.version() + ", up since " +
            timeText(info.start_time_ns()) + ")" + (labels.empty() ? "" : " labels " + labels) +
            "\n" + "instances: " + std::to_string(info.instance_count()) +
            ", last profile: " + (info.last_profile().empty() ? "none" : info.last_profile()) +
            ", you: " + info.principal() + " (" + ctl::v1::Role_Name(info.role()).substr(5) + ")\n";
        return result;
    };
}

} // namespace lutra::ctld
