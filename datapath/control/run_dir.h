#pragma once
// Where datapath processes publish their control sockets, and how a socket path is claimed.

#include <lutra/status.h>

#include <filesystem>
#include <string_view>

namespace lutra::control {

// LUTRA_RUN_DIR when set; else /run/lutra for root, $XDG_RUNTIME_DIR/lutra for other users
// (or /tmp/lutra-<uid> when XDG_RUNTIME_DIR is unset).
std::filesystem::path runDirectory();

// "<dir>/<kind>-<name>.sock", after checking kind and name ([A-Za-z0-9_-], 1..64 chars) and
// the unix socket path limit.
Result<std::filesystem::path> socketPath(const std::filesystem::path &dir, std::string_view kind,
                                         std::string_view name);

// Makes the path free for a new listener: creates the directory (0770) if needed; a socket file
// nobody listens on (left by a crash) is removed; one with a live listener is an already_exists
// error naming it, so two processes never fight over one name.
Status claimSocketPath(const std::filesystem::path &path);

} // namespace lutra::control
