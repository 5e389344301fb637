#include "bench_ior_raw.h"

#include "client/layout.h"
#include "core/types.h"
#include "protocol/crc32c.h"
#include "raw_client.h"
#include "target/raw_baseline.h"

#include <algorithm>
#include <cstring>

namespace lutra::tools {

std::string easyPath(unsigned thread)
{
    return "ior-easy." + std::to_string(thread);
}

namespace {

// Makes `data` (and what it points to) look read, so the compiler keeps the work that filled it.
void keep(const void *data)
{
    asm volatile("" : : "r"(data) : "memory");
}

// Per target a connection that streams its object of `path`, checked to hold the bytes the layout
// places there.
Result<std::vector<RawConnection>> openObjectStreams(const std::vector<std::string> &rawUris,
                                                     const client::StripeLayout &layout,
                                                     const std::string &path,
                                                     std::uint64_t fileBytes)
{
    std::vector<RawConnection> connections;
    for (std::uint32_t k = 0; k < layout.targets; ++k) {
        auto connection = RawConnection::open(rawUris[k]);
        if (!connection) {
            return connection.status();
        }
        const std::uint64_t expected = layout.objectSizeFor(k, fileBytes);
        auto length = connection->requestObject(path, expected);
        if (!length) {
            return length.status();
        }
        if (*length != expected) {
            return Status(Errc::failed_precondition, "raw baseline " + rawUris[k] + ": object " +
                                                         path + " has " + std::to_string(*length) +
                                                         " bytes, not " + std::to_string(expected));
        }
        connections.push_back(std::move(connection).value());
    }
    return connections;
}

// Receives the file's bytes [offset, offset + length) into `destination` from the streams, which
// deliver each object in order.
Status receiveFileRange(std::vector<RawConnection> &connections, const client::StripeLayout &layout,
                        std::uint64_t offset, std::uint64_t length, std::byte *destination)
{
    for (std::uint64_t at = 0; at < length;) {
        const auto piece = layout.pieceAt(offset + at, length - at);
        if (auto status = connections[piece.target].receiveAll(
                destination + at, static_cast<std::size_t>(piece.length));
            !status) {
            return status;
        }
        at += piece.length;
    }
    return {};
}

} // namespace

Result<double> rawMemoryStream(const std::vector<std::string> &rawUris,
                               const IorEasyBenchOptions &ior, const LoopOptions &loop)
{
    const std::uint64_t fileBytes = std::uint64_t{ior.fileMb} << 20;
    const std::size_t transfer = std::size_t{ior.transferKb} * 1024;
    return runPhase(ior.threads, loop, [&](unsigned t) -> Status {
        auto connection = RawConnection::open(rawUris[t % rawUris.size()]);
        if (!connection) {
            return connection.status();
        }
        if (auto status = connection->request(target::RawBaseline::source, fileBytes); !status) {
            return status;
        }
        std::vector<std::byte> buffer(transfer);
        for (std::uint64_t done = 0; done < fileBytes; done += transfer) {
            const auto length =
                static_cast<std::size_t>(std::min<std::uint64_t>(transfer, fileBytes - done));
            if (auto status = connection->receiveAll(buffer.data(), length); !status) {
                return status;
            }
        }
        return {};
    });
}

Result<double> rawObjectStream(const std::vector<std::string> &rawUris,
                               const IorEasyBenchOptions &ior, std::uint64_t stripeSize,
                               const LoopOptions &loop)
{
    const std::uint64_t fileBytes = std::uint64_t{ior.fileMb} << 20;
    const std::size_t transfer = std::size_t{ior.transferKb} * 1024;
    const client::StripeLayout layout{static_cast<std::uint32_t>(rawUris.size()), stripeSize};
    return runPhase(ior.threads, loop, [&](unsigned t) -> Status {
        auto connections = openObjectStreams(rawUris, layout, easyPath(t), fileBytes);
        if (!connections) {
            return connections.status();
        }
        std::vector<std::byte> buffer(transfer);
        for (std::uint64_t done = 0; done < fileBytes; done += transfer) {
            const std::uint64_t length = std::min<std::uint64_t>(transfer, fileBytes - done);
            if (auto status = receiveFileRange(*connections, layout, done, length, buffer.data());
                !status) {
                return status;
            }
        }
        return {};
    });
}

CachingClientFloor::CachingClientFloor(unsigned threads, std::uint64_t fileBytes)
    : m_fileBytes(fileBytes)
{
    for (unsigned t = 0; t < threads; ++t) {
        // Value-initialised: every page written once, as a page pool in steady state.
        m_cache.push_back(std::make_unique<std::byte[]>(fileBytes));
    }
}

Result<double> CachingClientFloor::run(const std::vector<std::string> &rawUris,
                                       const IorEasyBenchOptions &ior, std::uint64_t stripeSize,
                                       std::uint64_t readaheadBytes, bool checksums,
                                       const LoopOptions &loop)
{
    const std::uint64_t fileBytes = m_fileBytes;
    const std::size_t transfer = std::size_t{ior.transferKb} * 1024;
    const client::StripeLayout layout{static_cast<std::uint32_t>(rawUris.size()), stripeSize};
    // The arrival unit: one RPC's worth, as a client receives a bulk reply before the pages are
    // up to date.
    const std::uint64_t arrival = std::uint64_t{1} << 20;
    return runPhase(ior.threads, loop, [&](unsigned t) -> Status {
        auto connections = openObjectStreams(rawUris, layout, easyPath(t), fileBytes);
        if (!connections) {
            return connections.status();
        }
        std::byte *cache = m_cache[t].get();
        std::vector<std::byte> buffer(transfer);
        std::uint32_t crcs = 0;
        std::uint64_t received = 0;
        for (std::uint64_t done = 0; done < fileBytes; done += transfer) {
            const std::uint64_t length = std::min<std::uint64_t>(transfer, fileBytes - done);
            const std::uint64_t wanted =
                std::min(fileBytes, std::max(done + length, done + readaheadBytes));
            while (received < wanted) {
                const std::uint64_t piece = std::min(arrival, fileBytes - received);
                if (auto status =
                        receiveFileRange(*connections, layout, received, piece, cache + received);
                    !status) {
                    return status;
                }
                if (checksums) {
                    for (std::uint64_t page = 0; page < piece; page += core::kPageSize) {
                        crcs ^= protocol::crc32c(
                            {cache + received + page,
                             std::min<std::uint64_t>(core::kPageSize, piece - page)});
                    }
                }
                received += piece;
            }
            std::memcpy(buffer.data(), cache + done, static_cast<std::size_t>(length));
            keep(buffer.data());
        }
        keep(&crcs);
        return {};
    });
}

} // namespace lutra::tools
