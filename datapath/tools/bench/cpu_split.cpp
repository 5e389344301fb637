#include "cpu_split.h"

#include <sched.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace lutra::tools {

Result<CpuSplit> splitAllowedCpus()
{
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        return Status(Errc::io_error, std::string("sched_getaffinity: ") + std::strerror(errno));
    }
    std::vector<int> cpus;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
        if (CPU_ISSET(cpu, &allowed)) {
            cpus.push_back(cpu);
        }
    }
    if (cpus.size() < 2) {
        return Status(Errc::failed_precondition,
                      "--split-cpus needs at least 2 CPUs to run on; this process may use " +
                          std::to_string(cpus.size()));
    }
    const auto half = static_cast<std::ptrdiff_t>(cpus.size() / 2);
    return CpuSplit{{cpus.begin(), cpus.begin() + half}, {cpus.begin() + half, cpus.end()}};
}

Status pinThisThread(const std::vector<int> &cpus)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const int cpu : cpus) {
        CPU_SET(cpu, &set);
    }
    if (::sched_setaffinity(0, sizeof set, &set) != 0) {
        return Status(Errc::io_error,
                      "pinning to CPUs " + cpuList(cpus) + ": " + std::strerror(errno));
    }
    return {};
}

std::string cpuList(const std::vector<int> &cpus)
{
    std::string list;
    for (const int cpu : cpus) {
        list += (list.empty() ? "" : ",") + std::to_string(cpu);
    }
    return list;
}

Result<std::string> allowedCpusOf(pid_t pid)
{
    const std::string path = "/proc/" + std::to_string(pid) + "/status";
    std::ifstream status(path);
    const std::string key = "Cpus_allowed_list:";
    for (std::string line; std::getline(status, line);) {
        if (line.starts_with(key)) {
            const auto first = line.find_first_not_of(" \t", key.size());
            return first == std::string::npos ? std::string() : line.substr(first);
        }
    }
    return Status(Errc::not_found, path + ": no Cpus_allowed_list");
}

} // namespace lutra::tools
