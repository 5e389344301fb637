#pragma once
// Create, write and read one object over an RpcSession, for tests that talk to a target
// directly (in-process over loopback or a real lutra-target over tcp).

#include "client/rpc_session.h"
#include "protocol/messages.h"

#include <QtGlobal>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace lutra::testing {

// The object's handle, or 0 (with a warning naming the path) when the target refused.
inline std::uint64_t createObject(client::RpcSession &session, std::string_view path,
                                  std::string_view job, transport::Deadline deadline)
{
    protocol::CreateRequest request;
    request.path = path;
    auto reply = session.call(request, job, deadline);
    if (!reply) {
        qWarning("create %.*s: %s", static_cast<int>(path.size()), path.data(),
                 reply.status().toString().c_str());
        return 0;
    }
    return reply->handle;
}

inline Result<std::uint32_t> writeObject(client::RpcSession &session, std::uint64_t handle,
                                         std::uint64_t offset, std::span<const std::byte> data,
                                         std::string_view job, transport::Deadline deadline)
{
    const auto pages = static_cast<std::uint32_t>((data.size() + 4095) / 4096);
    const auto last = static_cast<std::uint16_t>(data.size() - (pages - 1) * 4096);
    const transport::Segment segment{const_cast<std::byte *>(data.data()), data.size(), 0};
    return session.write(handle, offset, pages, last, {&segment, 1}, true, job, deadline);
}

// What the target returned, cut to the bytes it had.
inline Result<std::vector<std::byte>> readObject(client::RpcSession &session, std::uint64_t handle,
                                                 std::uint64_t offset, std::size_t size,
                                                 bool checksums, std::string_view job,
                                                 transport::Deadline deadline)
{
    std::vector<std::byte> data(size);
    const auto pages = static_cast<std::uint32_t>((size + 4095) / 4096);
    const auto last = static_cast<std::uint16_t>(size - (pages - 1) * 4096);
    const transport::Segment segment{data.data(), size, 0};
    auto got = session.read(handle, offset, pages, last, {&segment, 1}, checksums, job, deadline);
    if (!got) {
        return got.status();
    }
    data.resize(*got);
    return data;
}

} // namespace lutra::testing
