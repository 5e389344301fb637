#include "client/jobid.h"

#include "core/params/bind.h"
#include "core/params/registry.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>

namespace lutra::client {

namespace {

struct ThreadJob {
    std::string overrideId;
    std::string cached;
    std::uint64_t generation = 0;
    std::uint64_t owner = 0;    // JobIds instance the cache belongs to
    JobIds::Version tagVersion; // the version `tag` was taken at
    std::uint64_t tagOwner = 0; // JobIds instance `tag` belongs to
    core::JobTag tag = 0;
};

std::atomic<std::uint64_t> g_nextInstance{1};

// Release: a thread that reads the new generation computes its id from the new settings.
void settingsChanged() noexcept
{
    detail::g_jobSettings.fetch_add(1, std::memory_order_release);
}

thread_local ThreadJob t_job;

std::string programName()
{
    std::ifstream comm("/proc/self/comm");
    std::string name;
    std::getline(comm, name);
    return name.empty() ? std::string("unknown") : name;
}

std::string shortHostName()
{
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string name(host);
    return name.substr(0, name.find('.'));
}

bool isEnvironmentName(std::string_view text)
{
    if (text.empty() || text.size() > 64 || (text[0] >= '0' && text[0] <= '9')) {
        return false;
    }
    for (const char c : text) {
        const bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        if (!ok) {
            return false;
        }
    }
    return true;
}

// Keeps what the wire protocol accepts: printable, no spaces, at most 64 bytes.
std::string sanitize(std::string text)
{
    for (char &c : text) {
        if (static_cast<unsigned char>(c) <= 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
            c = '_';
        }
    }
    if (text.size() > JobIds::kMaxJobIdLength) {
        text.resize(JobIds::kMaxJobIdLength);
    }
    return text;
}

} // namespace

JobIds::JobIds() : m_instance(g_nextInstance.fetch_add(1)) {}

void JobIds::setThreadJobId(std::string_view jobId)
{
    t_job.overrideId = sanitize(std::string(jobId));
    ++detail::t_jobOverrides;
}

std::string_view JobIds::current()
{
    if (!t_job.overrideId.empty()) {
        return t_job.overrideId;
    }
    const std::uint64_t generation = detail::g_jobSettings.load(std::memory_order_acquire);
    if (t_job.owner != m_instance || t_job.generation != generation) {
        t_job.cached = compute();
        t_job.generation = generation;
        t_job.owner = m_instance;
    }
    return t_job.cached;
}

std::string JobIds::compute() const
{
    std::string var;
    std::string pattern;
    {
        std::lock_guard lock(m_mutex);
        var = m_var;
        pattern = m_name;
    }
    if (var == "disable") {
        return "disabled";
    }
    if (var != "procname_uid") {
        if (const char *value = std::getenv(var.c_str()); value != nullptr && *value != '\0') {
            return sanitize(value);
        }
    } else {
        pattern = "%e.%u";
    }
    std::string out;
    for (std::size_t i = 0; i < pattern.size(); ++i) {
        if (pattern[i] != '%' || i + 1 == pattern.size()) {
            out += pattern[i];
            continue;
        }
        switch (pattern[++i]) {
        case 'e': out += programName(); break;
        case 'u': out += std::to_string(::getuid()); break;
        case 'h': out += shortHostName(); break;
        case 'p': out += std::to_string(::getpid()); break;
        case '%': out += '%'; break;
        default: out += '%'; out += pattern[i];
        }
    }
    out = sanitize(std::move(out));
    return out.empty() ? std::string("unknown") : out;
}

core::JobTag JobIds::currentTag()
{
    const Version now = version();
    if (t_job.tagOwner != m_instance || t_job.tagVersion != now) {
        t_job.tag = tag(current());
        t_job.tagVersion = now;
        t_job.tagOwner = m_instance;
    }
    return t_job.tag;
}

core::JobTag JobIds::tag(std::string_view jobId)
{
    if (jobId.empty()) {
        return 0;
    }
    std::lock_guard lock(m_mutex);
    const auto found = m_tags.find(std::string(jobId));
    if (found != m_tags.end()) {
        return found->second;
    }
    if (m_names.size() >= kMaxTags) {
        return 0;
    }
    const auto tag = static_cast<core::JobTag>(m_names.size());
    m_names.emplace_back(jobId);
    m_tags.emplace(std::string(jobId), tag);
    return tag;
}

std::string JobIds::name(core::JobTag tag) const
{
    std::lock_guard lock(m_mutex);
    return tag < m_names.size() ? m_names[tag] : std::string();
}

Status JobIds::setJobIdVar(std::string_view value)
{
    if (value != "procname_uid" && value != "disable" && !isEnvironmentName(value)) {
        return {Errc::invalid_argument,
                "jobid_var=" + std::string(value) +
                    ": not an environment variable name; allowed: a name such as SLURM_JOB_ID, "
                    "procname_uid or disable"};
    }
    {
        std::lock_guard lock(m_mutex);
        m_var = std::string(value);
    }
    settingsChanged();
    return {};
}

Status JobIds::setJobIdName(std::string_view value)
{
    if (value.empty() || value.size() > kMaxJobIdLength) {
        return {Errc::invalid_argument,
                "jobid_name=" + std::string(value) + ": must be 1-64 characters"};
    }
    {
        std::lock_guard lock(m_mutex);
        m_name = std::string(value);
    }
    settingsChanged();
    return {};
}

std::string JobIds::jobIdVar() const
{
    std::lock_guard lock(m_mutex);
    return m_var;
}

std::string JobIds::jobIdName() const
{
    std::lock_guard lock(m_mutex);
    return m_name;
}

Status JobIds::publish(params::ParamGroup &group)
{
    params::Binding var;
    var.read = [this] { return params::Value(jobIdVar()); };
    var.apply = [this](const params::Value &value) {
        return setJobIdVar(std::get<std::string>(value));
    };
    params::Binding name;
    name.read = [this] { return params::Value(jobIdName()); };
    name.apply = [this](const params::Value &value) {
        return setJobIdName(std::get<std::string>(value));
    };
    std::vector<params::BindRow> rows;
    rows.push_back({"jobid_var", std::move(var), {}});
    rows.push_back({"jobid_name", std::move(name), {}});
    return params::bindGroup(group, params::catalog::kJobIds, {}, std::move(rows));
}

} // namespace lutra::client
