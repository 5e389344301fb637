#pragma once
// The in-process `loopback` transport: listeners and connections inside one process
// (loopback://host:port, port 0 picks one), with no socket. Messages and bulk data move by
// memcpy between the two ends' buffers and exposed segments on the transport's I/O threads,
// under the same limits and error semantics as tcp (queue depth, maximum message and bulk size,
// a disconnect failing what is pending). bulkPutFile is the SDK's default (unimplemented: the
// host reads into memory and puts). Hosts register it with PluginLoader::registerPlugin.

#include <lutra/transport.h>

namespace lutra::transport::loopback {

const PluginEntry &plugin() noexcept;

} // namespace lutra::transport::loopback
