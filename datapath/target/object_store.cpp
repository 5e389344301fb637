#include "target/object_store.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

namespace lutra::target {

namespace {

// glibc 2.36 has no openat2 wrapper.
int openBeneath(int dirfd, const std::string &path, int flags, mode_t mode)
{
    open_how how{};
    how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
    how.mode = (flags & O_CREAT) != 0 ? mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    // EAGAIN: a concurrent rename or mount made the kernel unsure the walk stayed beneath; retry.
    for (int attempt = 0;; ++attempt) {
        const long fd = ::syscall(SYS_openat2, dirfd, path.c_str(), &how, sizeof how);
        if (fd >= 0) {
            return static_cast<int>(fd);
        }
        if (errno == EINTR || (errno == EAGAIN && attempt < 16)) {
            continue;
        }
        return -1;
    }
}

ObjectType typeOf(mode_t mode)
{
    if (S_ISREG(mode)) {
        return ObjectType::file;
    }
    if (S_ISDIR(mode)) {
        return ObjectType::directory;
    }
    return ObjectType::other;
}

ObjectAttr attrOf(const struct stat &st)
{
    ObjectAttr attr;
    attr.size = static_cast<std::uint64_t>(st.st_size);
    attr.mtime = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::seconds(st.st_mtim.tv_sec) +
            std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
    attr.type = typeOf(st.st_mode);
    attr.inode = static_cast<std::uint64_t>(st.st_ino);
    attr.mode = static_cast<std::uint32_t>(st.st_mode & 07777);
    return attr;
}

std::string quoted(std::string_view name)
{
    std::string out = "'";
    out += name;
    out += '\'';
    return out;
}

Status escapeError(std::string_view name)
{
    return {Errc::permission_denied,
            "object name " + quoted(name) + " escapes the backing directory"};
}

// The kernel's dirent64; getdents64 fills a buffer with these.
struct LinuxDirent64 {
    ino64_t d_ino;
    off64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[1];
};

ObjectType typeOfDirent(unsigned char type)
{
    switch (type) {
    case DT_REG: return ObjectType::file;
    case DT_DIR: return ObjectType::directory;
    default: return ObjectType::other;
    }
}

} // namespace

Fd &Fd::operator=(Fd &&other) noexcept
{
    if (this != &other) {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
        m_fd = other.release();
    }
    return *this;
}

Fd::~Fd()
{
    if (m_fd >= 0) {
        ::close(m_fd);
    }
}

int Fd::release() noexcept
{
    const int fd = m_fd;
    m_fd = -1;
    return fd;
}

Status errnoStatus(int error, std::string_view what, std::string_view name)
{
    const std::string where = std::string(what) + " " + quoted(name) + ": ";
    switch (error) {
    case EXDEV: return escapeError(name);
    case ENOENT: return {Errc::not_found, where + "no such object"};
    case EEXIST: return {Errc::already_exists, where + "object exists"};
    case EACCES:
    case EPERM:
    case EROFS: return {Errc::permission_denied, where + std::strerror(error)};
    case ELOOP:
        return {Errc::permission_denied,
                where + "too many symbolic links, or a link the target does not follow"};
    case ENOTDIR: return {Errc::failed_precondition, where + "a component is not a directory"};
    case EISDIR: return {Errc::failed_precondition, where + "is a directory"};
    case ENOTEMPTY: return {Errc::failed_precondition, where + "directory not empty"};
    case ENAMETOOLONG: return {Errc::invalid_argument, where + "name too long"};
    case EINVAL: return {Errc::invalid_argument, where + std::strerror(error)};
    case EFBIG: return {Errc::out_of_range, where + std::strerror(error)};
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM: return {Errc::resource_exhausted, where + std::strerror(error)};
    default: return {Errc::io_error, where + std::strerror(error)};
    }
}

Status ObjectStore::validateName(std::string_view name)
{
    if (name.empty()) {
        return {Errc::invalid_argument, "object name is empty"};
    }
    if (name.find('\0') != std::string_view::npos) {
        return {Errc::invalid_argument, "object name contains a NUL byte"};
    }
    if (name.front() == '/') {
        return escapeError(name);
    }
    if (name.size() > kMaxNameLength) {
        return {Errc::invalid_argument, "object name is longer than 4096 bytes"};
    }
    // Walk the components lexically: catch `..` above the root and the reserved directory early,
    // with a clear message. The kernel still enforces RESOLVE_BENEATH on every real lookup.
    int depth = 0;
    std::size_t start = 0;
    while (start <= name.size()) {
        std::size_t end = name.find('/', start);
        if (end == std::string_view::npos) {
            end = name.size();
        }
        const std::string_view component = name.substr(start, end - start);
        start = end + 1;
        if (component.size() > kMaxComponentLength) {
            return {Errc::invalid_argument, "object name " + quoted(name.substr(0, 64)) +
                                                " has a component longer than 255 bytes"};
        }
        if (component.empty() || component == ".") {
            continue;
        }
        if (component == "..") {
            if (--depth < 0) {
                return escapeError(name);
            }
            continue;
        }
        if (depth == 0 && component == kReservedDir) {
            return {Errc::permission_denied,
                    "object name " + quoted(name) + " is reserved for the target"};
        }
        ++depth;
    }
    return {};
}

Result<ObjectStore> ObjectStore::openRoot(const std::string &root)
{
    const int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        return errnoStatus(errno, "open backing directory", root);
    }
    return ObjectStore(Fd(fd), root);
}

Result<Fd> ObjectStore::resolve(std::string_view name, int flags, std::string_view what) const
{
    const int fd = openBeneath(m_root.get(), std::string(name), flags, 0);
    if (fd < 0) {
        return errnoStatus(errno, what, name);
    }
    return Fd(fd);
}

Result<std::pair<Fd, std::string>> ObjectStore::resolveParent(std::string_view name,
                                                              std::string_view what) const
{
    std::string_view trimmed = name;
    while (trimmed.size() > 1 && trimmed.back() == '/') {
        trimmed.remove_suffix(1);
    }
    const auto slash = trimmed.rfind('/');
    const std::string_view parent =
        slash == std::string_view::npos ? std::string_view(".") : trimmed.substr(0, slash);
    std::string leaf(slash == std::string_view::npos ? trimmed : trimmed.substr(slash + 1));
    if (leaf.empty() || leaf == "." || leaf == "..") {
        return Status(Errc::invalid_argument,
                      "object name " + quoted(name) + " does not end in a plain name");
    }
    const int fd =
        openBeneath(m_root.get(), parent.empty() ? std::string(".") : std::string(parent),
                    O_PATH | O_DIRECTORY, 0);
    if (fd < 0) {
        return errnoStatus(errno, what, name); // name the object, not just its parent
    }
    Fd dir(fd);
    return std::pair<Fd, std::string>(std::move(dir), std::move(leaf));
}

Result<ObjectHandle> ObjectStore::create(std::string_view name, mode_t mode)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    const int fd = openBeneath(m_root.get(), std::string(name), O_RDWR | O_CREAT | O_EXCL, mode);
    if (fd < 0) {
        return errnoStatus(errno, "create", name);
    }
    Fd owned(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return errnoStatus(errno, "create", name);
    }
    return ObjectHandle(std::move(owned), std::string(name), st.st_dev, st.st_ino);
}

Result<ObjectHandle> ObjectStore::open(std::string_view name)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    // O_NONBLOCK: opening a FIFO someone placed in the tree must not hang a service thread.
    const int fd = openBeneath(m_root.get(), std::string(name), O_RDWR | O_NONBLOCK, 0);
    if (fd < 0) {
        return errnoStatus(errno, "open", name);
    }
    Fd owned(fd);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        return errnoStatus(errno, "open", name);
    }
    if (!S_ISREG(st.st_mode)) {
        return Status(Errc::failed_precondition, "open " + quoted(name) + ": not a regular file");
    }
    // Back to blocking mode for data I/O (it makes no difference to regular files anyway).
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return ObjectHandle(std::move(owned), std::string(name), st.st_dev, st.st_ino);
}

Result<ObjectAttr> ObjectStore::stat(std::string_view name)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    auto fd = resolve(name, O_PATH, "stat");
    if (!fd) {
        return fd.status();
    }
    struct stat st {};
    if (::fstat(fd->get(), &st) != 0) {
        return errnoStatus(errno, "stat", name);
    }
    return attrOf(st);
}

Status ObjectStore::unlink(std::string_view name)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    auto parent = resolveParent(name, "unlink");
    if (!parent) {
        return parent.status();
    }
    if (::unlinkat(parent->first.get(), parent->second.c_str(), 0) != 0) {
        return errnoStatus(errno, "unlink", name);
    }
    return {};
}

Status ObjectStore::truncate(std::string_view name, std::uint64_t size)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    const int fd = openBeneath(m_root.get(), std::string(name), O_WRONLY | O_NONBLOCK, 0);
    if (fd < 0) {
        return errnoStatus(errno, "truncate", name);
    }
    Fd owned(fd);
    if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
        return errnoStatus(errno, "truncate", name);
    }
    return {};
}

Status ObjectStore::mkdir(std::string_view name, mode_t mode)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    auto parent = resolveParent(name, "mkdir");
    if (!parent) {
        return parent.status();
    }
    if (::mkdirat(parent->first.get(), parent->second.c_str(), mode) != 0) {
        return errnoStatus(errno, "mkdir", name);
    }
    return {};
}

Status ObjectStore::rmdir(std::string_view name)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    auto parent = resolveParent(name, "rmdir");
    if (!parent) {
        return parent.status();
    }
    if (::unlinkat(parent->first.get(), parent->second.c_str(), AT_REMOVEDIR) != 0) {
        return errnoStatus(errno, "rmdir", name);
    }
    return {};
}

Result<DirPage> ObjectStore::readdir(std::string_view name, std::uint64_t cookie,
                                     std::size_t maxEntries)
{
    if (auto status = validateName(name); !status) {
        return status;
    }
    if (maxEntries == 0 || maxEntries > kMaxReaddirEntries) {
        return Status(Errc::out_of_range, "readdir " + quoted(name) +
                                              ": entries per call must be 1.." +
                                              std::to_string(kMaxReaddirEntries));
    }
    auto dir = resolve(name, O_RDONLY | O_DIRECTORY, "readdir");
    if (!dir) {
        return dir.status();
    }
    if (::lseek(dir->get(), static_cast<off_t>(cookie), SEEK_SET) < 0) {
        return errnoStatus(errno, "readdir", name);
    }
    // The reserved directory is hidden from listings of the root, however the root was named.
    struct stat dirStat {};
    struct stat rootStat {};
    const bool atRoot = ::fstat(dir->get(), &dirStat) == 0 &&
                        ::fstat(m_root.get(), &rootStat) == 0 &&
                        dirStat.st_dev == rootStat.st_dev && dirStat.st_ino == rootStat.st_ino;

    DirPage page;
    page.nextCookie = cookie;
    page.entries.reserve(std::min<std::size_t>(maxEntries, 128));
    alignas(LinuxDirent64) char buffer[16384];
    while (page.entries.size() < maxEntries) {
        const long got = ::syscall(SYS_getdents64, dir->get(), buffer, sizeof buffer);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errnoStatus(errno, "readdir", name);
        }
        if (got == 0) {
            page.end = true;
            break;
        }
        for (long pos = 0; pos < got;) {
            const auto *entry = reinterpret_cast<const LinuxDirent64 *>(buffer + pos);
            pos += entry->d_reclen;
            const std::string_view entryName(entry->d_name);
            const auto entryCookie = static_cast<std::uint64_t>(entry->d_off);
            if (entryName == "." || entryName == ".." || (atRoot && entryName == kReservedDir)) {
                page.nextCookie = entryCookie;
                continue;
            }
            if (page.entries.size() == maxEntries) {
                // Full: the rest of this buffer is read again from nextCookie next time.
                return page;
            }
            ObjectType type = typeOfDirent(entry->d_type);
            if (entry->d_type == DT_UNKNOWN) {
                struct stat st {};
                if (::fstatat(dir->get(), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
                    type = typeOf(st.st_mode);
                }
            }
            page.entries.push_back({std::string(entryName), type, entryCookie,
                                    static_cast<std::uint64_t>(entry->d_ino)});
            page.nextCookie = entryCookie;
        }
    }
    return page;
}

Result<FsStat> ObjectStore::statfs()
{
    struct statfs st {};
    if (::fstatfs(m_root.get(), &st) != 0) {
        return errnoStatus(errno, "statfs", m_rootPath);
    }
    const auto block = static_cast<std::uint64_t>(st.f_bsize);
    FsStat out;
    out.blockSize = block;
    out.totalBytes = static_cast<std::uint64_t>(st.f_blocks) * block;
    out.freeBytes = static_cast<std::uint64_t>(st.f_bfree) * block;
    out.availableBytes = static_cast<std::uint64_t>(st.f_bavail) * block;
    out.totalFiles = static_cast<std::uint64_t>(st.f_files);
    out.freeFiles = static_cast<std::uint64_t>(st.f_ffree);
    return out;
}

Result<Fd> ObjectStore::openReserved(std::string_view leaf, int flags)
{
    if (leaf.empty() || leaf.find('/') != std::string_view::npos || leaf == "." || leaf == "..") {
        return Status(Errc::invalid_argument, "reserved file name " + quoted(leaf) + " is invalid");
    }
    const std::string dir(kReservedDir);
    if (::mkdirat(m_root.get(), dir.c_str(), 0700) != 0 && errno != EEXIST) {
        return errnoStatus(errno, "mkdir", dir);
    }
    const std::string path = dir + "/" + std::string(leaf);
    const int fd = openBeneath(m_root.get(), path, flags, 0600);
    if (fd < 0) {
        return errnoStatus(errno, "open", path);
    }
    return Fd(fd);
}

Result<std::size_t> ObjectHandle::pread(std::span<std::byte> buffer, std::uint64_t offset) const
{
    std::size_t done = 0;
    while (done < buffer.size()) {
        const ssize_t got = ::pread(m_fd.get(), buffer.data() + done, buffer.size() - done,
                                    static_cast<off_t>(offset + done));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errnoStatus(errno, "read", m_name);
        }
        if (got == 0) {
            break; // end of file
        }
        done += static_cast<std::size_t>(got);
    }
    return done;
}

Result<std::size_t> ObjectHandle::preadv(std::span<const iovec> buffers, std::uint64_t offset) const
{
    for (;;) {
        const int count = static_cast<int>(std::min<std::size_t>(buffers.size(), IOV_MAX));
        const ssize_t got = ::preadv(m_fd.get(), buffers.data(), count, static_cast<off_t>(offset));
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errnoStatus(errno, "read", m_name);
        }
        return static_cast<std::size_t>(got);
    }
}

Result<std::size_t> ObjectHandle::pwritev(std::span<const iovec> buffers,
                                          std::uint64_t offset) const
{
    std::size_t total = 0;
    std::size_t index = 0;
    std::size_t skip = 0; // bytes of buffers[index] already written
    while (index < buffers.size()) {
        if (buffers[index].iov_len == 0) {
            ++index;
            continue;
        }
        ssize_t put = 0;
        if (skip == 0) {
            const int count =
                static_cast<int>(std::min<std::size_t>(buffers.size() - index, IOV_MAX));
            put = ::pwritev(m_fd.get(), buffers.data() + index, count, static_cast<off_t>(offset));
        } else {
            // A short write stopped inside an iovec: finish that one without copying the array.
            put = ::pwrite(m_fd.get(), static_cast<const char *>(buffers[index].iov_base) + skip,
                           buffers[index].iov_len - skip, static_cast<off_t>(offset));
        }
        if (put < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errnoStatus(errno, "write", m_name);
        }
        if (put == 0) {
            return Status(Errc::io_error, "write " + quoted(m_name) + ": no progress");
        }
        auto left = static_cast<std::size_t>(put);
        offset += left;
        total += left;
        while (left > 0 && index < buffers.size()) {
            const std::size_t rest = buffers[index].iov_len - skip;
            if (left >= rest) {
                left -= rest;
                ++index;
                skip = 0;
            } else {
                skip += left;
                left = 0;
            }
        }
    }
    return total;
}

Status ObjectHandle::truncate(std::uint64_t size) const
{
    if (::ftruncate(m_fd.get(), static_cast<off_t>(size)) != 0) {
        return errnoStatus(errno, "truncate", m_name);
    }
    return {};
}

Result<ObjectAttr> ObjectHandle::stat() const
{
    struct stat st {};
    if (::fstat(m_fd.get(), &st) != 0) {
        return errnoStatus(errno, "stat", m_name);
    }
    return attrOf(st);
}

} // namespace lutra::target
