#pragma once
// ObjectStore: the objects of one target, kept as files under a backing directory. Every name is
// resolved by the kernel beneath the root (openat2 RESOLVE_BENEATH), so no name, `..` or symlink
// can reach outside it, whatever races happen in the tree meanwhile.

#include <lutra/status.h>

#include <sys/types.h>
#include <sys/uio.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::target {

// Owns one file descriptor; closes it when destroyed.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) noexcept : m_fd(fd) {}
    Fd(Fd &&other) noexcept : m_fd(other.release()) {}
    Fd &operator=(Fd &&other) noexcept;
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    ~Fd();

    int get() const noexcept { return m_fd; }
    bool valid() const noexcept { return m_fd >= 0; }
    int release() noexcept;

private:
    int m_fd = -1;
};

enum class ObjectType : std::uint8_t { file, directory, other };

struct ObjectAttr {
    std::uint64_t size = 0;
    std::chrono::system_clock::time_point mtime;
    ObjectType type = ObjectType::other;
    std::uint64_t inode = 0; // stable identity: the protocol's object id, the lock resource
    std::uint32_t mode = 0;  // permission bits
};

struct DirEntry {
    std::string name;
    ObjectType type = ObjectType::other;
    std::uint64_t cookie = 0; // pass it to readdir to continue after this entry
    std::uint64_t inode = 0;
};

struct DirPage {
    std::vector<DirEntry> entries;
    std::uint64_t nextCookie = 0; // where the next call continues
    bool end = false;             // no entries after these
};

struct FsStat {
    std::uint64_t blockSize = 0;
    std::uint64_t totalBytes = 0;
    std::uint64_t freeBytes = 0;
    std::uint64_t availableBytes = 0; // free to unprivileged users
    std::uint64_t totalFiles = 0;
    std::uint64_t freeFiles = 0;
};

// An open object. Data moves straight between the caller's buffers and the file (no copy).
class ObjectHandle {
public:
    ObjectHandle() = default;
    ObjectHandle(ObjectHandle &&) noexcept = default;
    ObjectHandle &operator=(ObjectHandle &&) noexcept = default;

    bool valid() const noexcept { return m_fd.valid(); }
    int fd() const noexcept { return m_fd.get(); }
    const std::string &name() const noexcept { return m_name; }
    // The file's identity, so group commit syncs a file once however many handles wrote to it.
    dev_t device() const noexcept { return m_device; }
    ino_t inode() const noexcept { return m_inode; }

    // Reads up to buffer.size() bytes at offset; fewer only at end of file.
    Result<std::size_t> pread(std::span<std::byte> buffer, std::uint64_t offset) const;
    Result<std::size_t> preadv(std::span<const iovec> buffers, std::uint64_t offset) const;
    // Writes every byte of the iovecs at offset (not yet durable: see GroupCommit).
    Result<std::size_t> pwritev(std::span<const iovec> buffers, std::uint64_t offset) const;
    Status truncate(std::uint64_t size) const;
    Result<ObjectAttr> stat() const;

private:
    friend class ObjectStore;
    ObjectHandle(Fd fd, std::string name, dev_t device, ino_t inode)
        : m_fd(std::move(fd)), m_name(std::move(name)), m_device(device), m_inode(inode)
    {
    }

    Fd m_fd;
    std::string m_name;
    dev_t m_device = 0;
    ino_t m_inode = 0;
};

class ObjectStore {
public:
    static constexpr std::size_t kMaxNameLength = 4096;     // whole relative name
    static constexpr std::size_t kMaxComponentLength = 255; // one path component
    static constexpr std::size_t kMaxReaddirEntries = 1024; // per readdir call
    // Reserved for the target's own files (the commit log); clients cannot name it.
    static constexpr std::string_view kReservedDir = ".lutra";

    // Opens the backing directory, which must exist.
    static Result<ObjectStore> openRoot(const std::string &root);

    ObjectStore(ObjectStore &&) noexcept = default;
    ObjectStore &operator=(ObjectStore &&) noexcept = default;

    const std::string &root() const noexcept { return m_rootPath; }

    // Creates a new regular file; already_exists if the name is taken.
    Result<ObjectHandle> create(std::string_view name, mode_t mode = 0644);
    // Opens an existing regular file for reading and writing.
    Result<ObjectHandle> open(std::string_view name);
    Result<ObjectAttr> stat(std::string_view name);
    Status unlink(std::string_view name);
    Status truncate(std::string_view name, std::uint64_t size);
    Status mkdir(std::string_view name, mode_t mode = 0755);
    Status rmdir(std::string_view name);
    // Up to maxEntries entries of directory `name` ("." for the root) after `cookie` (0: from
    // the start), without "." and "..".
    Result<DirPage> readdir(std::string_view name, std::uint64_t cookie,
                            std::size_t maxEntries = kMaxReaddirEntries);
    Result<FsStat> statfs();

    // Opens (creating when asked) a file of the reserved directory, for the target itself.
    Result<Fd> openReserved(std::string_view leaf, int flags);

    // Checks a client-supplied name without touching the file system.
    static Status validateName(std::string_view name);

private:
    ObjectStore(Fd root, std::string rootPath)
        : m_root(std::move(root)), m_rootPath(std::move(rootPath))
    {
    }

    // Opens `name` beneath the root; errors name the operation `what` and the object.
    Result<Fd> resolve(std::string_view name, int flags, std::string_view what) const;
    // Opens the parent of `name` beneath the root and returns it with the validated last component.
    Result<std::pair<Fd, std::string>> resolveParent(std::string_view name,
                                                     std::string_view what) const;

    Fd m_root; // O_PATH | O_DIRECTORY
    std::string m_rootPath;
};

// Maps an errno from an operation on `name` to a Status naming the object.
Status errnoStatus(int error, std::string_view what, std::string_view name);

} // namespace lutra::target
