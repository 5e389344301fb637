#pragma once
// gRPC metadata keys of lutra.ctl.v1 that both ctld and its clients use.

namespace lutra::ctld {

// Which user runs a client on the local socket (informational: the socket's permissions are what
// admit the caller).
inline constexpr const char *kLocalUserMetadata = "x-lutra-user";

} // namespace lutra::ctld
