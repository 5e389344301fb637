#pragma once
// verbs endpoint URIs: verbs://host:port, or verbs://device/host:port to insist that the
// address belongs to that RDMA device (host: an IPv4 literal or a resolvable name).

#include <lutra/status.h>

#include <netinet/in.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace lutra::transport::verbs {

struct Endpoint {
    sockaddr_in address{};
    std::string device; // empty: whichever device owns the address
};

Result<Endpoint> parseUri(std::string_view uri);
std::string uriOf(const sockaddr_in &address);

} // namespace lutra::transport::verbs
