#include "raw_client.h"

#include "protocol/little_endian.h"
#include "target/raw_baseline.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace lutra::tools {

Result<RawConnection> RawConnection::open(const std::string &uri)
{
    auto parsed = target::parseTcpUri(uri);
    if (!parsed) {
        return parsed.status();
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    const std::string port = std::to_string(parsed->second);
    if (::getaddrinfo(parsed->first.c_str(), port.c_str(), &hints, &found) != 0) {
        return Status(Errc::invalid_argument, "cannot resolve " + uri);
    }
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int rc = ::connect(fd, found->ai_addr, found->ai_addrlen);
    const int error = errno;
    ::freeaddrinfo(found);
    if (rc != 0) {
        ::close(fd);
        return Status(Errc::unavailable, "raw baseline " + uri + ": " + std::strerror(error));
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return RawConnection(fd);
}

RawConnection::RawConnection(RawConnection &&other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_lowat(other.m_lowat)
{
}

RawConnection::~RawConnection()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

Status RawConnection::request(std::uint32_t op, std::uint64_t size)
{
    return sendRequest(op, 0, size);
}

Status RawConnection::sendRequest(std::uint32_t op, std::uint32_t word, std::uint64_t size)
{
    std::byte header[16];
    protocol::storeLe<std::uint32_t>(header, op);
    protocol::storeLe<std::uint32_t>(header + 4, word);
    protocol::storeLe<std::uint64_t>(header + 8, size);
    return sendAll(header, sizeof header);
}

Result<std::uint64_t> RawConnection::requestObject(const std::string &name, std::uint64_t size)
{
    if (auto status =
            sendRequest(target::RawBaseline::object, static_cast<std::uint32_t>(name.size()), size);
        !status) {
        return status;
    }
    if (auto status = sendAll(name.data(), name.size()); !status) {
        return status;
    }
    std::byte answer[8];
    if (auto status = receiveAll(answer, sizeof answer); !status) {
        return status;
    }
    const auto length = protocol::loadLe<std::uint64_t>(answer);
    if (length != target::RawBaseline::kObjectError) {
        return length;
    }
    std::byte messageLength[4];
    if (auto status = receiveAll(messageLength, sizeof messageLength); !status) {
        return status;
    }
    std::string message(
        std::min<std::uint32_t>(protocol::loadLe<std::uint32_t>(messageLength), 4096), '\0');
    if (auto status = receiveAll(message.data(), message.size()); !status) {
        return status;
    }
    return Status(Errc::failed_precondition, message);
}

Status RawConnection::sendAll(const void *data, std::size_t size)
{
    const auto *bytes = static_cast<const char *>(data);
    while (size > 0) {
        const ssize_t sent = ::send(m_fd, bytes, size, MSG_NOSIGNAL);
        if (sent <= 0) {
            if (sent < 0 && errno == EINTR) {
                continue;
            }
            return {Errc::unavailable, std::string("raw send: ") + std::strerror(errno)};
        }
        bytes += sent;
        size -= static_cast<std::size_t>(sent);
    }
    return {};
}

void RawConnection::setWakeThreshold(std::size_t remaining)
{
    const int lowat =
        remaining >= kWakeLowatMin ? static_cast<int>(std::min(remaining, kWakeLowatMax)) : 1;
    if (lowat != m_lowat &&
        ::setsockopt(m_fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof lowat) == 0) {
        m_lowat = lowat;
    }
}

Status RawConnection::receiveAll(void *data, std::size_t size)
{
    auto *bytes = static_cast<char *>(data);
    while (size > 0) {
        setWakeThreshold(size);
        const ssize_t got = ::recv(m_fd, bytes, size, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) {
                continue;
            }
            return {Errc::unavailable, "raw baseline connection closed"};
        }
        bytes += got;
        size -= static_cast<std::size_t>(got);
    }
    return {};
}

} // namespace lutra::tools
