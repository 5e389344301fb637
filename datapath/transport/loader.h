#pragma once
// Finds transport plugins by name and keeps them loaded. A plugin that fails to load (missing
// file or symbol, wrong ABI, duplicate name) is reported with its name and path; the host goes on
// with the plugins that did load.

#include <lutra/status.h>
#include <lutra/transport.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::transport {

// LUTRA_PLUGIN_PATH (':'-separated) when set; else <prefix>/lib and <prefix>/<libdir>/lutra/plugins
// of the running program (<prefix>/bin/program), then the install directory.
std::vector<std::string> defaultSearchPath();
// A LogSink that writes to lutra's process log (core/log.h) under `category`, which must outlive
// every transport using the sink.
LogSink processLogSink(const std::string &category);

// I/O threads for `cpus` CPUs: one per two, at least one, at most two. A host's I/O threads
// compete with the threads they serve (callers, service threads, a target on the same cores):
// more of them than half the CPUs halved bulk reads on 2 cores (datapath/transport/README.md).
std::uint32_t ioThreadsForCpus(unsigned cpus) noexcept;
// ioThreadsForCpus of the CPUs this thread may run on (sched_getaffinity); what create() uses
// for TransportOptions::ioThreads == 0.
std::uint32_t automaticIoThreads() noexcept;
// A client mount's I/O threads for `cpus` CPUs: one per CPU, at least one, at most two. A
// client's I/O threads mostly receive (the copies out of the sockets of a striped read): on 2
// CPUs a second one lifts cold streaming reads ~25 % and, since readahead grabs its windows a
// run at a time (PageCache::grabMany), pressured reads too (client README, "Session 23").
std::uint32_t clientIoThreadsForCpus(unsigned cpus) noexcept;
// clientIoThreadsForCpus of the CPUs this thread may run on; what a mount uses for
// MountOptions::transportIoThreads == 0.
std::uint32_t automaticClientIoThreads() noexcept;

// "liblutra-transport-<name>.so"
std::string pluginFileName(std::string_view name);

class PluginLoader {
public:
    explicit PluginLoader(LogSink log = {},
                          std::vector<std::string> searchPath = defaultSearchPath());
    PluginLoader(const PluginLoader &) = delete;
    PluginLoader &operator=(const PluginLoader &) = delete;

    // The seam: registers an in-process plugin (a test double, a host's built-in) without
    // dlopen. `entry` must outlive the loader. Same checks as a file: ABI, name, duplicates.
    Status registerPlugin(const PluginEntry &entry, std::string origin = "(in-process)");

    // The plugin called `name`: already registered, or loaded from the first search directory
    // that holds liblutra-transport-<name>.so.
    Result<const PluginEntry *> load(std::string_view name);
    // Loads one shared object and registers the plugin it declares.
    Status loadFile(const std::string &path);
    // Loads every liblutra-transport-*.so on the search path (a file name found in an earlier
    // directory shadows later ones). Returns one error per plugin that failed; the others stay.
    std::vector<Status> loadAll();

    // Creates a transport from a loaded plugin (loading it first if needed); ioThreads 0 becomes
    // automaticIoThreads().
    Result<std::unique_ptr<Transport>> create(std::string_view name,
                                              const TransportOptions &options);

    std::vector<std::string> names() const;
    // Where a registered plugin came from: a path or "(in-process)".
    std::string origin(std::string_view name) const;
    const std::vector<std::string> &searchPath() const noexcept { return m_searchPath; }

private:
    struct Loaded {
        const PluginEntry *entry = nullptr;
        std::string origin;
    };

    Status registerLocked(const PluginEntry &entry, const std::string &origin,
                          std::string_view expectedName);
    Result<const PluginEntry *> openLocked(const std::string &path, std::string_view expectedName);
    Status report(Status status) const;

    LogSink m_log;
    std::vector<std::string> m_searchPath;
    mutable std::mutex m_mutex;
    std::map<std::string, Loaded, std::less<>> m_plugins;
};

} // namespace lutra::transport
