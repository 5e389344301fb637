// A test-only transport plugin, built several times with different defines to make bad plugins:
// FAKE_NAME (declared name), FAKE_ABI (ABI version), FAKE_NO_ENTRY (no entry point at all).
#include <lutra/transport.h>

#ifndef FAKE_NO_ENTRY
namespace {

lutra::Result<std::unique_ptr<lutra::transport::Transport>>
createFake(const lutra::transport::TransportOptions &)
{
    return lutra::Status(lutra::Errc::unimplemented, "fake transport creates nothing");
}

const lutra::transport::PluginEntry kEntry{FAKE_ABI, FAKE_NAME, "test double", &createFake};

} // namespace

extern "C" __attribute__((visibility("default"))) const lutra::transport::PluginEntry *
lutra_transport_entry()
{
    return &kEntry;
}
#else
extern "C" __attribute__((visibility("default"))) int lutra_transport_something_else()
{
    return 0;
}
#endif
