#include "transport/kit/endpoint.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <charconv>
#include <cstring>

namespace lutra::transport::kit {

Result<HostPort> splitHostPort(std::string_view uri, std::string_view hostPort,
                               std::string_view expected)
{
    const auto colon = hostPort.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return Status(Errc::invalid_argument,
                      "'" + std::string(uri) + "': " + std::string(expected));
    }
    const auto portText = hostPort.substr(colon + 1);
    unsigned port = 0;
    const auto [end, error] =
        std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (portText.empty() || error != std::errc() || end != portText.data() + portText.size() ||
        port > 65535) {
        return Status(Errc::invalid_argument, "'" + std::string(uri) + "': bad port");
    }
    return HostPort{std::string(hostPort.substr(0, colon)), static_cast<std::uint16_t>(port)};
}

Result<sockaddr_in> resolveIpv4(std::string_view uri, const HostPort &endpoint)
{
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (const int rc = getaddrinfo(endpoint.host.c_str(), nullptr, &hints, &found); rc != 0) {
        return Status(Errc::invalid_argument,
                      "'" + std::string(uri) + "': cannot resolve host: " + gai_strerror(rc));
    }
    sockaddr_in address{};
    std::memcpy(&address, found->ai_addr, sizeof(sockaddr_in));
    freeaddrinfo(found);
    address.sin_port = htons(endpoint.port);
    return address;
}

std::string uriOf(std::string_view scheme, const sockaddr_in &address)
{
    char host[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &address.sin_addr, host, sizeof(host));
    return std::string(scheme) + host + ":" + std::to_string(ntohs(address.sin_port));
}

} // namespace lutra::transport::kit
