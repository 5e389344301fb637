#pragma once
// Endpoint URIs of the form <scheme>host:port, shared by the plugins: splitting (with the texts
// every plugin gives for a bad one), IPv4 resolution and the canonical URI of an address.

#include <lutra/status.h>

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace lutra::transport::kit {

struct HostPort {
    std::string host;
    std::uint16_t port = 0;
};

// `hostPort` ("host:port", the part of `uri` after its scheme and any prefix): invalid_argument
// "'<uri>': <expected>" without a host or a colon, "'<uri>': bad port" for a port that is not
// 0…65535.
Result<HostPort> splitHostPort(std::string_view uri, std::string_view hostPort,
                               std::string_view expected);
// The IPv4 address of `host` (a literal or a name) with `port`; invalid_argument "'<uri>':
// cannot resolve host: ..." when it has none.
Result<sockaddr_in> resolveIpv4(std::string_view uri, const HostPort &endpoint);
// "<scheme>a.b.c.d:port"
std::string uriOf(std::string_view scheme, const sockaddr_in &address);

} // namespace lutra::transport::kit
