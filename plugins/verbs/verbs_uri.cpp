#include "verbs_uri.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>

namespace lutra::transport::verbs {

namespace {

constexpr std::string_view kScheme = "verbs://";

Status badUri(std::string_view uri, std::string_view why)
{
    return {Errc::invalid_argument, "'" + std::string(uri) + "': " + std::string(why) +
                                        " (expected verbs://host:port or "
                                        "verbs://device/host:port)"};
}

} // namespace

Result<Endpoint> parseUri(std::string_view uri)
{
    if (!uri.starts_with(kScheme)) {
        return badUri(uri, "not a verbs URI");
    }
    auto rest = uri.substr(kScheme.size());
    Endpoint out;
    if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
        out.device = std::string(rest.substr(0, slash));
        rest.remove_prefix(slash + 1);
        if (out.device.empty()) {
            return badUri(uri, "empty device name");
        }
    }
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return badUri(uri, "no host:port");
    }
    const std::string host(rest.substr(0, colon));
    const auto portText = rest.substr(colon + 1);
    unsigned port = 0;
    const auto [end, error] =
        std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (portText.empty() || error != std::errc() || end != portText.data() + portText.size() ||
        port > 65535) {
        return badUri(uri, "bad port");
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found); rc != 0) {
        return Status(Errc::invalid_argument,
                      "'" + std::string(uri) + "': cannot resolve host: " + gai_strerror(rc));
    }
    std::memcpy(&out.address, found->ai_addr, sizeof(sockaddr_in));
    freeaddrinfo(found);
    out.address.sin_port = htons(static_cast<std::uint16_t>(port));
    return out;
}

std::string uriOf(const sockaddr_in &address)
{
    char host[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &address.sin_addr, host, sizeof(host));
    return std::string(kScheme) + host + ":" + std::to_string(ntohs(address.sin_port));
}

} // namespace lutra::transport::verbs
