#include "transport/loader.h"

#include "core/log.h"

#include <dlfcn.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <thread>

#ifndef LUTRA_PLUGIN_DIR
#error "LUTRA_PLUGIN_DIR must be defined by the build"
#endif

namespace lutra::transport {

namespace {

constexpr std::string_view kPrefix = "liblutra-transport-";
constexpr std::string_view kSuffix = ".so";

// "liblutra-transport-tcp.so" -> "tcp"; empty when the file is not a plugin.
std::string nameFromFile(std::string_view fileName)
{
    if (fileName.size() <= kPrefix.size() + kSuffix.size() || !fileName.starts_with(kPrefix) ||
        !fileName.ends_with(kSuffix)) {
        return {};
    }
    fileName.remove_prefix(kPrefix.size());
    fileName.remove_suffix(kSuffix.size());
    return std::string(fileName);
}

std::string joinPath(const std::vector<std::string> &dirs)
{
    std::string out;
    for (const auto &dir : dirs) {
        if (!out.empty()) {
            out += ':';
        }
        out += dir;
    }
    return out.empty() ? "(empty search path)" : out;
}

std::string describe(std::string_view name, std::string_view path)
{
    std::string text = "transport plugin '";
    text += name;
    text += "' (";
    text += path;
    text += ")";
    return text;
}

} // namespace

std::vector<std::string> defaultSearchPath()
{
    std::vector<std::string> dirs;
    const char *env = std::getenv("LUTRA_PLUGIN_PATH");
    if (env == nullptr || *env == '\0') {
        // Next to the running program first: a build tree keeps plugins in <build>/lib beside
        // <build>/bin, an install in <prefix>/<libdir>/lutra/plugins beside <prefix>/bin (or
        // sbin), e.g. /usr/lib/x86_64-linux-gnu/lutra/plugins on Debian.
        std::error_code error;
        const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
        if (!error) {
            const auto prefix = self.parent_path().parent_path();
            dirs.push_back((prefix / "lib").string());
            dirs.push_back((prefix / LUTRA_PLUGIN_RELATIVE_DIR).string());
        }
        dirs.emplace_back(LUTRA_PLUGIN_DIR);
        return dirs;
    }
    std::string_view rest(env);
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const auto dir = rest.substr(0, colon);
        if (!dir.empty()) {
            dirs.emplace_back(dir);
        }
        if (colon == std::string_view::npos) {
            break;
        }
        rest.remove_prefix(colon + 1);
    }
    return dirs;
}

LogSink processLogSink(const std::string &category)
{
    const auto write = [](void *context, LogLevel level, std::string_view text) {
        const auto *name = static_cast<const std::string *>(context);
        const log::Level mapped = level == LogLevel::error     ? log::Level::error
                                  : level == LogLevel::warning ? log::Level::warning
                                  : level == LogLevel::info    ? log::Level::info
                                                               : log::Level::debug;
        log::write(mapped, *name, text);
    };
    return {write, const_cast<std::string *>(&category)};
}

std::string pluginFileName(std::string_view name)
{
    std::string file(kPrefix);
    file += name;
    file += kSuffix;
    return file;
}

PluginLoader::PluginLoader(LogSink log, std::vector<std::string> searchPath)
    : m_log(log), m_searchPath(std::move(searchPath))
{
}

Status PluginLoader::report(Status status) const
{
    if (!status.ok()) {
        m_log(LogLevel::error, status.toString());
    }
    return status;
}

Status PluginLoader::registerPlugin(const PluginEntry &entry, std::string origin)
{
    std::lock_guard lock(m_mutex);
    return report(registerLocked(entry, origin, {}));
}

Status PluginLoader::registerLocked(const PluginEntry &entry, const std::string &origin,
                                    std::string_view expectedName)
{
    const std::string_view declared = entry.name != nullptr ? entry.name : "";
    const std::string_view shown = expectedName.empty() ? declared : expectedName;
    if (entry.abiVersion != kAbiVersion) {
        return {Errc::failed_precondition, describe(shown, origin) + ": ABI version " +
                                               std::to_string(entry.abiVersion) +
                                               ", this host needs " + std::to_string(kAbiVersion)};
    }
    if (declared.empty() || entry.create == nullptr) {
        return {Errc::invalid_argument,
                describe(shown, origin) + ": incomplete plugin entry (no name or no factory)"};
    }
    if (!expectedName.empty() && declared != expectedName) {
        return {Errc::invalid_argument,
                describe(shown, origin) + ": declares the name '" + std::string(declared) + "'"};
    }
    if (const auto it = m_plugins.find(declared); it != m_plugins.end()) {
        return {Errc::already_exists, describe(declared, origin) +
                                          ": duplicate plugin name, already loaded from " +
                                          it->second.origin};
    }
    m_plugins.emplace(std::string(declared), Loaded{&entry, origin});
    m_log(LogLevel::info, "loaded " + describe(declared, origin));
    return {};
}

Result<const PluginEntry *> PluginLoader::openLocked(const std::string &path,
                                                     std::string_view expectedName)
{
    const std::string fileName = std::filesystem::path(path).filename().string();
    const std::string guessed =
        expectedName.empty() ? nameFromFile(fileName) : std::string(expectedName);
    // RTLD_NODELETE: objects a plugin created (connections, vtables) may outlive the loader, so
    // plugins stay mapped for the life of the process.
    void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (handle == nullptr) {
        const char *error = dlerror();
        return Status(Errc::invalid_argument, describe(guessed, path) + ": cannot load: " +
                                                  (error != nullptr ? error : "unknown error"));
    }
    auto *symbol = dlsym(handle, kEntrySymbol);
    if (symbol == nullptr) {
        dlclose(handle);
        return Status(Errc::not_found,
                      describe(guessed, path) + ": no entry point " + kEntrySymbol);
    }
    const auto entryFunction = reinterpret_cast<EntryFunction>(symbol);
    const PluginEntry *entry = entryFunction();
    if (entry == nullptr) {
        dlclose(handle);
        return Status(Errc::invalid_argument,
                      describe(guessed, path) + ": " + kEntrySymbol + "() returned null");
    }
    if (auto status = registerLocked(*entry, path, expectedName); !status.ok()) {
        dlclose(handle);
        return status;
    }
    return entry;
}

Result<const PluginEntry *> PluginLoader::load(std::string_view name)
{
    std::lock_guard lock(m_mutex);
    if (const auto it = m_plugins.find(name); it != m_plugins.end()) {
        return it->second.entry;
    }
    if (name.empty() || name.find('/') != std::string_view::npos) {
        return report(Status(Errc::invalid_argument,
                             "transport plugin '" + std::string(name) + "': invalid name"));
    }
    const std::string fileName = pluginFileName(name);
    for (const auto &dir : m_searchPath) {
        const std::string path = (std::filesystem::path(dir) / fileName).string();
        std::error_code error;
        if (!std::filesystem::exists(path, error)) {
            continue;
        }
        auto entry = openLocked(path, name);
        if (!entry.ok()) {
            (void)report(entry.status());
        }
        return entry;
    }
    return report(Status(Errc::not_found, "transport plugin '" + std::string(name) +
                                              "': " + fileName + " not found in " +
                                              joinPath(m_searchPath)));
}

Status PluginLoader::loadFile(const std::string &path)
{
    std::lock_guard lock(m_mutex);
    return report(openLocked(path, {}).status());
}

std::vector<Status> PluginLoader::loadAll()
{
    std::vector<Status> errors;
    std::set<std::string> seenFiles;
    for (const auto &dir : m_searchPath) {
        std::error_code error;
        std::vector<std::string> files;
        for (const auto &item : std::filesystem::directory_iterator(dir, error)) {
            const auto fileName = item.path().filename().string();
            if (!nameFromFile(fileName).empty()) {
                files.push_back(fileName);
            }
        }
        std::sort(files.begin(), files.end());
        for (const auto &fileName : files) {
            if (!seenFiles.insert(fileName).second) {
                m_log(LogLevel::debug,
                      dir + "/" + fileName + " is shadowed by an earlier directory");
                continue;
            }
            std::lock_guard lock(m_mutex);
            const std::string path = (std::filesystem::path(dir) / fileName).string();
            if (auto entry = openLocked(path, {}); !entry.ok()) {
                errors.push_back(report(entry.status()));
            }
        }
    }
    return errors;
}

std::uint32_t ioThreadsForCpus(unsigned cpus) noexcept
{
    return std::clamp(cpus / 2, 1u, 2u);
}

std::uint32_t clientIoThreadsForCpus(unsigned cpus) noexcept
{
    return std::clamp(cpus, 1u, 2u);
}

namespace {

unsigned allowedCpus() noexcept
{
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        return std::thread::hardware_concurrency();
    }
    return static_cast<unsigned>(CPU_COUNT(&allowed));
}

} // namespace

std::uint32_t automaticIoThreads() noexcept
{
    return ioThreadsForCpus(allowedCpus());
}

std::uint32_t automaticClientIoThreads() noexcept
{
    return clientIoThreadsForCpus(allowedCpus());
}

Result<std::unique_ptr<Transport>> PluginLoader::create(std::string_view name,
                                                        const TransportOptions &options)
{
    auto entry = load(name);
    if (!entry.ok()) {
        return entry.status();
    }
    if (options.ioThreads != 0) {
        return (*entry)->create(options);
    }
    TransportOptions resolved = options;
    resolved.ioThreads = automaticIoThreads();
    return (*entry)->create(resolved);
}

std::vector<std::string> PluginLoader::names() const
{
    std::lock_guard lock(m_mutex);
    std::vector<std::string> out;
    for (const auto &[name, loaded] : m_plugins) {
        out.push_back(name);
    }
    return out;
}

std::string PluginLoader::origin(std::string_view name) const
{
    std::lock_guard lock(m_mutex);
    const auto it = m_plugins.find(name);
    return it == m_plugins.end() ? std::string() : it->second.origin;
}

} // namespace lutra::transport
