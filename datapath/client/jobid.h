#pragma once
// The job id of each I/O, as Lustre's jobid_var/jobid_name work: jobid_var names an environment
// variable that holds it (SLURM_JOB_ID), or is `procname_uid` (program name and uid: "dd.0"),
// or `disable`; when the variable is unset, jobid_name is expanded instead (%e program name,
// %u uid, %h short host name, %p pid). A thread may override all of this (setThreadJobId), as
// a server thread acting for a job does. Job ids are also interned into small JobTags that
// pages and locks remember.

#include <lutra/status.h>

#include "core/params/catalog.h"
#include "core/types.h"

#include <atomic>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lutra::params {
class ParamGroup;
}

namespace lutra::client {

namespace detail {
// Moves each time the thread's override is set (JobIds::setThreadJobId).
[[gnu::tls_model("initial-exec")]] inline thread_local constinit std::uint64_t t_jobOverrides = 0;
// Moves on every jobid_var / jobid_name change of any JobIds in the process: one word at a fixed
// address, so the fast read's check is one load (an instance's own generation was two: the
// engine's JobIds reference, then the generation). Settings change rarely; every thread then
// recomputes once.
inline constinit std::atomic<std::uint64_t> g_jobSettings{1};
} // namespace detail

class JobIds {
public:
    static constexpr std::size_t kMaxJobIdLength = 64; // what the wire protocol carries
    static constexpr std::size_t kMaxTags = 1 << 20;

    // What this thread's job id was derived from: while the version read before a current()
    // call is unchanged, current() returns the same id, so a caller that keeps both (the fast
    // read) compares two numbers instead of the id. Versions are process-wide: one kept for
    // one JobIds says nothing of another (key it by the instance, as the fast read's per-engine
    // context does).
    struct Version {
        std::uint64_t settings = 0;
        std::uint64_t overrides = 0;
        friend bool operator==(const Version &, const Version &) = default;
    };

    JobIds();

    // Read it before current(): a change in between then shows as a different version later.
    Version version() const noexcept
    {
        return {detail::g_jobSettings.load(std::memory_order_acquire), detail::t_jobOverrides};
    }

    // This thread's job id: the override if set, else from jobid_var / jobid_name. Cached per
    // thread and recomputed only when the settings change, so an I/O pays no getenv.
    std::string_view current();
    // Overrides the job id of the calling thread (empty: back to the settings).
    static void setThreadJobId(std::string_view jobId);

    // The tag of a job id, created on first use (0 when the table is full or the id is empty).
    core::JobTag tag(std::string_view jobId);
    // The tag of current(), remembered per thread with the version it was taken at: the I/O
    // path pays neither the table's lock, nor an allocation, nor an id comparison.
    core::JobTag currentTag();
    std::string name(core::JobTag tag) const;

    // Validates and sets jobid_var: an environment variable name, procname_uid or disable.
    Status setJobIdVar(std::string_view value);
    Status setJobIdName(std::string_view value);
    std::string jobIdVar() const;
    std::string jobIdName() const;

    // Publishes jobid_var and jobid_name (catalog::jobidSpecs) with their validation.
    Status publish(params::ParamGroup &group);

private:
    std::string compute() const;

    // Names this instance in threads' caches; unlike its address, never reused.
    const std::uint64_t m_instance;
    mutable std::mutex m_mutex; // settings and the tag table
    std::string m_var{params::catalog::defaultTextOf(params::catalog::kJobIds, "jobid_var")};
    std::string m_name{params::catalog::defaultTextOf(params::catalog::kJobIds, "jobid_name")};
    std::unordered_map<std::string, core::JobTag> m_tags;
    std::vector<std::string> m_names{std::string()}; // index = tag; 0 is "no job"
};

} // namespace lutra::client
