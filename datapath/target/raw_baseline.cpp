#include "target/raw_baseline.h"

#include "protocol/little_endian.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstring>

namespace lutra::target {

namespace {

bool readFully(int fd, void *data, std::size_t size)
{
    auto *bytes = static_cast<char *>(data);
    while (size > 0) {
        const ssize_t got = ::recv(fd, bytes, size, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) {
                continue;
            }
            return false;
        }
        bytes += got;
        size -= static_cast<std::size_t>(got);
    }
    return true;
}

bool writeFully(int fd, const void *data, std::size_t size)
{
    const auto *bytes = static_cast<const char *>(data);
    while (size > 0) {
        const ssize_t sent = ::send(fd, bytes, size, MSG_NOSIGNAL);
        if (sent <= 0) {
            if (sent < 0 && errno == EINTR) {
                continue;
            }
            return false;
        }
        bytes += sent;
        size -= static_cast<std::size_t>(sent);
    }
    return true;
}

} // namespace

Result<std::pair<std::string, std::uint16_t>> parseTcpUri(std::string_view uri)
{
    constexpr std::string_view scheme = "tcp://";
    if (uri.substr(0, scheme.size()) != scheme) {
        return Status(Errc::invalid_argument, "'" + std::string(uri) + "' is not tcp://host:port");
    }
    const std::string_view rest = uri.substr(scheme.size());
    const auto colon = rest.rfind(':');
    if (colon == std::string_view::npos || colon == 0) {
        return Status(Errc::invalid_argument, "'" + std::string(uri) + "' has no host:port");
    }
    unsigned port = 0;
    const auto portText = rest.substr(colon + 1);
    const auto [end, ec] =
        std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (ec != std::errc() || end != portText.data() + portText.size() || port > 65535) {
        return Status(Errc::invalid_argument, "'" + std::string(uri) + "': bad port");
    }
    return std::pair{std::string(rest.substr(0, colon)), static_cast<std::uint16_t>(port)};
}

Result<std::unique_ptr<RawBaseline>> RawBaseline::start(std::string_view uri,
                                                        const std::string &objectRoot)
{
    auto parsed = parseTcpUri(uri);
    if (!parsed) {
        return parsed.status();
    }
    std::optional<ObjectStore> objects;
    if (!objectRoot.empty()) {
        auto opened = ObjectStore::openRoot(objectRoot);
        if (!opened) {
            return opened.status().withContext("raw baseline");
        }
        objects.emplace(std::move(opened).value());
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    if (::getaddrinfo(parsed->first.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
        return Status(Errc::invalid_argument, "cannot resolve '" + parsed->first + "'");
    }
    sockaddr_in address = *reinterpret_cast<sockaddr_in *>(found->ai_addr);
    ::freeaddrinfo(found);
    address.sin_port = htons(parsed->second);
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 ||
        ::listen(fd, 64) != 0) {
        const int error = errno;
        ::close(fd);
        return Status(Errc::unavailable, "raw baseline cannot listen on " + std::string(uri) +
                                             ": " + std::strerror(error));
    }
    socklen_t length = sizeof address;
    ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
    char host[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &address.sin_addr, host, sizeof host);
    const std::string bound =
        "tcp://" + std::string(host) + ":" + std::to_string(ntohs(address.sin_port));
    return std::unique_ptr<RawBaseline>(new RawBaseline(fd, bound, std::move(objects)));
}

RawBaseline::RawBaseline(int listenFd, std::string uri, std::optional<ObjectStore> objects)
    : m_listenFd(listenFd), m_uri(std::move(uri)), m_objects(std::move(objects)),
      m_acceptor([this] { acceptLoop(); })
{
}

RawBaseline::~RawBaseline()
{
    m_stopping = true;
    ::shutdown(m_listenFd, SHUT_RDWR);
    m_acceptor.join();
    ::close(m_listenFd);
    {
        std::lock_guard lock(m_mutex);
        for (const int fd : m_clients) {
            ::shutdown(fd, SHUT_RDWR);
        }
    }
    for (auto &worker : m_workers) {
        worker.join();
    }
}

void RawBaseline::acceptLoop()
{
    while (!m_stopping) {
        const int fd = ::accept4(m_listenFd, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR) {
                continue;
            }
            return;
        }
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        std::lock_guard lock(m_mutex);
        m_clients.push_back(fd);
        m_workers.emplace_back([this, fd] { serve(fd); });
    }
}

void RawBaseline::serve(int fd)
{
    // sendfile has no MSG_NOSIGNAL: a client gone mid-object raises SIGPIPE in this thread,
    // which would end the whole process. Blocked here, the send fails with EPIPE instead.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    std::byte request[16];
    if (readFully(fd, request, sizeof request)) {
        const auto op = protocol::loadLe<std::uint32_t>(request);
        auto size = protocol::loadLe<std::uint64_t>(request + 8);
        std::vector<char> buffer(1 << 20);
        if (op == sink) {
            bool ok = true;
            while (ok && size > 0) {
                const std::size_t chunk = std::min<std::uint64_t>(size, buffer.size());
                ok = readFully(fd, buffer.data(), chunk);
                size -= chunk;
            }
            const char ack = 1;
            if (ok) {
                writeFully(fd, &ack, 1);
            }
        } else if (op == source) {
            bool ok = true;
            while (ok && size > 0) {
                const std::size_t chunk = std::min<std::uint64_t>(size, buffer.size());
                ok = writeFully(fd, buffer.data(), chunk);
                size -= chunk;
            }
        } else if (op == object) {
            sendObject(fd, protocol::loadLe<std::uint32_t>(request + 4), size);
        } else if (op == echo && size > 0 && size <= kMaxEchoSize) {
            while (readFully(fd, buffer.data(), size) && writeFully(fd, buffer.data(), size)) {
            }
        }
    }
    std::lock_guard lock(m_mutex);
    std::erase(m_clients, fd);
    ::close(fd);
}

void RawBaseline::sendObject(int fd, std::uint32_t nameLength, std::uint64_t size)
{
    const auto refuse = [fd](const std::string &message) {
        std::byte header[12];
        protocol::storeLe<std::uint64_t>(header, kObjectError);
        protocol::storeLe<std::uint32_t>(header + 8, static_cast<std::uint32_t>(message.size()));
        if (writeFully(fd, header, sizeof header)) {
            writeFully(fd, message.data(), message.size());
        }
    };
    if (nameLength == 0 || nameLength > ObjectStore::kMaxNameLength) {
        refuse("raw baseline: an object name of " + std::to_string(nameLength) + " bytes (1 to " +
               std::to_string(ObjectStore::kMaxNameLength) + ")");
        return;
    }
    std::string name(nameLength, '\0');
    if (!readFully(fd, name.data(), name.size())) {
        return;
    }
    if (!m_objects) {
        refuse("raw baseline: this target serves no objects to the baseline (no --root given)");
        return;
    }
    auto handle = m_objects->open(name);
    if (!handle) {
        refuse("raw baseline: " + handle.status().message());
        return;
    }
    auto attr = handle->stat();
    if (!attr) {
        refuse("raw baseline: " + attr.status().message());
        return;
    }
    const std::uint64_t length = std::min(size, attr->size);
    std::byte header[8];
    protocol::storeLe<std::uint64_t>(header, length);
    if (!writeFully(fd, header, sizeof header)) {
        return;
    }
    off_t offset = 0;
    while (static_cast<std::uint64_t>(offset) < length) {
        const ssize_t sent =
            ::sendfile(fd, handle->fd(), &offset, static_cast<std::size_t>(length - offset));
        if (sent <= 0 && !(sent < 0 && errno == EINTR)) {
            return; // the peer sees the stream end early
        }
    }
}

} // namespace lutra::target
