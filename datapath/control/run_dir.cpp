#include "control/run_dir.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>

namespace lutra::control {

namespace {

bool validComponent(std::string_view text)
{
    if (text.empty() || text.size() > 64) {
        return false;
    }
    for (const char c : text) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) {
            return false;
        }
    }
    return true;
}

std::string errnoText(int error)
{
    return std::strerror(error);
}

} // namespace

std::filesystem::path runDirectory()
{
    if (const char *dir = std::getenv("LUTRA_RUN_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    if (::geteuid() == 0) {
        return "/run/lutra";
    }
    if (const char *xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && *xdg != '\0') {
        return std::filesystem::path(xdg) / "lutra";
    }
    return "/tmp/lutra-" + std::to_string(::geteuid());
}

Result<std::filesystem::path> socketPath(const std::filesystem::path &dir, std::string_view kind,
                                         std::string_view name)
{
    if (!validComponent(kind)) {
        return Status(Errc::invalid_argument, "process kind '" + std::string(kind) +
                                                  "' must be 1-64 letters, digits, '_' or '-'");
    }
    if (!validComponent(name)) {
        return Status(Errc::invalid_argument, "process name '" + std::string(name) +
                                                  "' must be 1-64 letters, digits, '_' or '-'");
    }
    auto path = dir / (std::string(kind) + "-" + std::string(name) + ".sock");
    if (path.native().size() >= sizeof(sockaddr_un::sun_path)) {
        return Status(Errc::invalid_argument,
                      "socket path " + path.native() + " is longer than the " +
                          std::to_string(sizeof(sockaddr_un::sun_path) - 1) +
                          " bytes a unix socket allows; choose a shorter LUTRA_RUN_DIR");
    }
    return path;
}

Status claimSocketPath(const std::filesystem::path &path)
{
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
        return {Errc::io_error,
                "cannot create run directory " + path.parent_path().native() + ": " + ec.message()};
    }
    ::chmod(path.parent_path().c_str(), 0770);

    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
        return errno == ENOENT ? Status{}
                               : Status(Errc::io_error, path.native() + ": " + errnoText(errno));
    }
    if (!S_ISSOCK(info.st_mode)) {
        return {Errc::already_exists,
                path.native() + " exists and is not a socket; refusing to replace it"};
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return {Errc::io_error, "socket: " + errnoText(errno)};
    }
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    const int rc = ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
    const int error = errno;
    ::close(fd);
    if (rc == 0) {
        return {Errc::already_exists,
                "another process is serving " + path.native() + " (is one already running?)"};
    }
    if (error != ECONNREFUSED) {
        return {Errc::io_error, "cannot probe " + path.native() + ": " + errnoText(error)};
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        return {Errc::io_error,
                "cannot remove stale socket " + path.native() + ": " + errnoText(errno)};
    }
    return {};
}

} // namespace lutra::control
