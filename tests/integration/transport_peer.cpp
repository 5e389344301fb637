// A peer process for the transport conformance suite: loads a plugin for real, connects to the
// given endpoint, sends "ready" and waits to be killed.
//   transport_peer <plugin> <uri>
#include "transport/loader.h"

#include <chrono>
#include <cstdio>
#include <string_view>
#include <thread>

using namespace lutra::transport;

namespace {

class Quiet final : public Handler {
public:
    void onMessage(Connection &, std::span<const std::byte>) noexcept override {}
    void onDisconnected(Connection &, const lutra::Status &) noexcept override {}
};

} // namespace

int main(int argc, char **argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: transport_peer <plugin> <uri>\n");
        return 2;
    }
    PluginLoader loader;
    auto transport = loader.create(argv[1], {});
    if (!transport.ok()) {
        std::fprintf(stderr, "%s\n", transport.status().toString().c_str());
        return 1;
    }
    Quiet handler;
    auto connection = (*transport)->connect(argv[2], handler);
    if (!connection.ok()) {
        std::fprintf(stderr, "%s\n", connection.status().toString().c_str());
        return 1;
    }
    constexpr std::string_view ready = "ready";
    auto status =
        (*connection)->send(std::as_bytes(std::span(ready)), deadlineIn(std::chrono::seconds(5)));
    if (!status.ok()) {
        return 1;
    }
    for (;;) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
    }
}
