#include "verbs_uri.h"

#include "transport/kit/endpoint.h"

namespace lutra::transport::verbs {

namespace {

constexpr std::string_view kScheme = "verbs://";

constexpr std::string_view kExpected = "expected verbs://host:port or verbs://device/host:port";

Status badUri(std::string_view uri, std::string_view why)
{
    return {Errc::invalid_argument, "'" + std::string(uri) + "': " + std::string(why) + " (" +
                                        std::string(kExpected) + ")"};
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
    auto endpoint = kit::splitHostPort(uri, rest, kExpected);
    if (!endpoint.ok()) {
        return endpoint.status();
    }
    auto address = kit::resolveIpv4(uri, *endpoint);
    if (!address.ok()) {
        return address.status();
    }
    out.address = *address;
    return out;
}

std::string uriOf(const sockaddr_in &address)
{
    return kit::uriOf(kScheme, address);
}

} // namespace lutra::transport::verbs
