// lutra-bench mdtest: file and directory create / stat / remove rates through the client
// (LU-9972's table), against the same operations on a local directory through the kernel.
#include "bench_ior_cluster.h"
#include "bench_loop.h"
#include "bench_modes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace lutra::tools {

namespace {

// One namespace to run mdtest against: the client's or the kernel's.
struct Namespace {
    std::string root; // per-thread directories go below it
    std::function<Status(const std::string &)> createFile;
    std::function<Status(const std::string &)> stat;
    std::function<Status(const std::string &)> unlink;
    std::function<Status(const std::string &)> mkdir;
    std::function<Status(const std::string &)> rmdir;
};

enum Phase : std::size_t {
    file_create,
    file_stat,
    file_remove,
    dir_create,
    dir_stat,
    dir_remove,
    phase_count
};
constexpr std::array<const char *, phase_count> kPhaseNames{
    "file_create", "file_stat", "file_remove", "dir_create", "dir_stat", "dir_remove"};

std::string threadDir(const Namespace &ns, unsigned thread)
{
    return ns.root + "/mdtest." + std::to_string(thread);
}

std::string itemPath(const Namespace &ns, unsigned thread, const char *kind, unsigned item)
{
    return threadDir(ns, thread) + "/" + kind + "." + std::to_string(item);
}

// Items per second of every phase, in Phase order.
Result<std::array<double, phase_count>> runMdtest(const Namespace &ns, const LoopOptions &loop,
                                                  const MdtestBenchOptions &mdtest)
{
    for (unsigned t = 0; t < mdtest.threads; ++t) {
        if (auto status = ns.mkdir(threadDir(ns, t)); !status) {
            return status;
        }
    }
    std::array<double, phase_count> rates{};
    const double items = static_cast<double>(mdtest.items) * mdtest.threads;
    for (std::size_t phase = 0; phase < phase_count; ++phase) {
        const bool files = phase < dir_create;
        const char *kind = files ? "file" : "dir";
        const std::function<Status(const std::string &)> *op = nullptr;
        switch (phase) {
        case file_create: op = &ns.createFile; break;
        case dir_create: op = &ns.mkdir; break;
        case file_stat:
        case dir_stat: op = &ns.stat; break;
        case file_remove: op = &ns.unlink; break;
        default: op = &ns.rmdir; break;
        }
        auto seconds = runPhase(mdtest.threads, loop, [&](unsigned t) -> Status {
            for (unsigned i = 0; i < mdtest.items; ++i) {
                if (auto status = (*op)(itemPath(ns, t, kind, i)); !status) {
                    return status.withContext(kPhaseNames[phase]);
                }
            }
            return {};
        });
        if (!seconds) {
            return seconds.status();
        }
        rates[phase] = *seconds > 0 ? items / *seconds : 0;
    }
    for (unsigned t = 0; t < mdtest.threads; ++t) {
        if (auto status = ns.rmdir(threadDir(ns, t)); !status) {
            return status;
        }
    }
    return rates;
}

Status kernelStatus(int result, const char *what, const std::string &path)
{
    if (result == 0) {
        return {};
    }
    return Status(Errc::io_error, std::string(what) + " " + path + ": " + std::strerror(errno));
}

Namespace kernelNamespace(const std::string &root)
{
    Namespace ns;
    ns.root = root;
    ns.createFile = [](const std::string &path) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) {
            return kernelStatus(-1, "creat", path);
        }
        return kernelStatus(::close(fd), "close", path);
    };
    ns.stat = [](const std::string &path) {
        struct stat info {};
        return kernelStatus(::stat(path.c_str(), &info), "stat", path);
    };
    ns.unlink = [](const std::string &path) {
        return kernelStatus(::unlink(path.c_str()), "unlink", path);
    };
    ns.mkdir = [](const std::string &path) {
        return kernelStatus(::mkdir(path.c_str(), 0755), "mkdir", path);
    };
    ns.rmdir = [](const std::string &path) {
        return kernelStatus(::rmdir(path.c_str()), "rmdir", path);
    };
    return ns;
}

Namespace clientNamespace(client::Mount &mount, const std::string &root)
{
    Namespace ns;
    ns.root = root;
    ns.createFile = [&mount](const std::string &path) -> Status {
        auto file =
            mount.open(path, client::kOpenWrite | client::kOpenCreate | client::kOpenExclusive);
        if (!file) {
            return file.status();
        }
        return (*file)->close();
    };
    ns.stat = [&mount](const std::string &path) -> Status {
        auto attr = mount.stat(path);
        if (!attr) {
            return attr.status();
        }
        return {};
    };
    ns.unlink = [&mount](const std::string &path) { return mount.unlink(path); };
    ns.mkdir = [&mount](const std::string &path) { return mount.mkdir(path); };
    ns.rmdir = [&mount](const std::string &path) { return mount.rmdir(path); };
    return ns;
}

} // namespace

Result<Report> runMdtestBench(const BenchOptions &options, const LoopOptions &loop,
                              const MdtestBenchOptions &mdtest)
{
    if (mdtest.threads == 0 || mdtest.threads > 256 || mdtest.items == 0) {
        return Status(Errc::out_of_range, "--threads (1..256) and --items must be positive");
    }
    auto cluster = BenchCluster::start(options, loop, "lutra-bench-mdtest");
    if (!cluster) {
        return cluster.status();
    }
    BenchCluster &c = **cluster;
    auto scratch = TempDir::create("lutra-bench-mdtest-local");
    if (!scratch) {
        return scratch.status();
    }
    // A top directory of its own per process, so runs against a shared --target do not collide.
    const std::string clientRoot = "mdtest-" + std::to_string(::getpid());
    if (auto status = c.mount().mkdir(clientRoot); !status) {
        return status;
    }
    const Namespace lutraNs = clientNamespace(c.mount(), clientRoot);
    const Namespace kernelNs = kernelNamespace(scratch->path());

    Report report;
    report.mode = "mdtest";
    report.params = {{"targets", c.uris().size()},
                     {"spawned_targets", c.spawned()},
                     {"threads", mdtest.threads},
                     {"items_per_thread", mdtest.items},
                     {"layout", "per-thread directories; every phase runs on all threads"},
                     {"baseline", "open(O_CREAT|O_EXCL)+close, stat, unlink, mkdir, rmdir on a "
                                  "local temporary directory"}};
    const auto iteration = [&]() -> Status {
        const ReadAheadCounts before = c.readAheadStats();
        auto lutra = runMdtest(lutraNs, loop, mdtest);
        if (!lutra) {
            return lutra.status().withContext("lutra");
        }
        report.results["read_ahead_stats"] = readAheadDelta(before, c.readAheadStats());
        auto kernel = runMdtest(kernelNs, loop, mdtest);
        if (!kernel) {
            return kernel.status().withContext("kernel");
        }
        for (std::size_t phase = 0; phase < phase_count; ++phase) {
            const std::string name = kPhaseNames[phase];
            report.results["lutra_" + name + "_per_s"] = rounded((*lutra)[phase]);
            report.results["kernel_" + name + "_per_s"] = rounded((*kernel)[phase]);
            report.ratios[name + "_vs_kernel"] = rounded((*lutra)[phase] / (*kernel)[phase]);
        }
        return {};
    };
    if (auto status = repeatWorkload(c, iteration); !status) {
        return status;
    }
    if (auto status = c.mount().rmdir(clientRoot); !status) {
        return status;
    }
    return report;
}

} // namespace lutra::tools
