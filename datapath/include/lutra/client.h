#pragma once
// The lutra client library: mount a file system made of one or more object targets and use its
// namespace and files. Errors are returned (Status / Result), never thrown; every Errc maps to
// an errno with lutra::toErrno, and messages say what failed and where.
//
// Layout: every target holds the whole namespace; a file's data is striped (RAID-0) over all
// targets in stripes of MountOptions::stripeSize. Target 0 is the authority for names: a create,
// unlink or rmdir is decided there first, then applied to the others.

#include <lutra/status.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::params {
class Registry;
}

namespace lutra::client {

struct MountOptions {
    std::vector<std::string> targets;   // endpoint URIs, e.g. tcp://127.0.0.1:7380; order matters
    std::string fsName = "lutra";       // the instance in llite.<fsName>.* parameters
    std::uint64_t stripeSize = 1 << 20; // bytes; a multiple of 4096
    std::string clientId;               // default: <host>-<pid>
    // Where the mount publishes its tunables and counters; null: its own registry (read and set
    // them with Mount::getParams / setParams). A process that serves lutra's control socket
    // passes the registry it serves.
    params::Registry *registry = nullptr;
    std::chrono::milliseconds rpcTimeout{30000};
    // The newest wire protocol version offered to the targets; 0: the newest this build speaks.
    // 1 acts as an older client (mixed-version tests; osc.<target>.protocol_version shows what
    // was agreed).
    std::uint16_t maxProtocolVersion = 0;
    // I/O threads of each transport (1..64); 0: one per CPU this thread may run on, 1 to 2
    // (a client's receive copies run on them; each target's connection takes the least busy).
    std::uint32_t transportIoThreads = 0;
};

enum class FileKind : std::uint8_t { file, directory };

struct FileAttr {
    FileKind kind = FileKind::file;
    std::uint32_t mode = 0;
    std::uint64_t size = 0; // files: the striped file's size
    std::chrono::system_clock::time_point mtime;
};

struct DirEntryInfo {
    std::string name;
    FileKind kind = FileKind::file;
};

// Flags of Mount::open.
inline constexpr unsigned kOpenRead = 1u << 0;
inline constexpr unsigned kOpenWrite = 1u << 1;
inline constexpr unsigned kOpenCreate = 1u << 2;    // create when missing
inline constexpr unsigned kOpenExclusive = 1u << 3; // with kOpenCreate: fail when it exists

// What a per-job cleanup did (Mount::flushJob).
struct FlushReport {
    std::string jobId; // empty: every job
    std::uint64_t locksCancelled = 0;
    std::uint64_t pagesDropped = 0;
    std::uint64_t bytesWrittenBack = 0;
    std::chrono::microseconds duration{0};
    // Problems met on the way; the flush still finished. A write-back that failed keeps its
    // data cached and its lock held, and is tried again later: nothing written is dropped.
    std::vector<std::string> errors;
};

// One parameter as `lctl get_param` prints it.
struct ParamValue {
    std::string name;  // llite.<fsName>.max_read_ahead_mb, osc.<target>.max_pages_per_rpc, ...
    std::string value; // canonical text; a counter block in Lustre's stats format
};

// One NAME=VALUE of a set: the name may be an lctl glob, the value as an admin writes it (16M).
struct ParamAssignment {
    std::string pattern;
    std::string value;
};

class Mount;

// An open file. Safe to use from several threads.
class File {
public:
    ~File(); // closes on every target; errors are logged
    File(const File &) = delete;
    File &operator=(const File &) = delete;

    const std::string &path() const noexcept;
    Result<FileAttr> stat();
    // truncate, pwrite and write on a file opened without kOpenWrite fail with
    // permission_denied naming the file, and change nothing; pread and read on a file opened
    // without kOpenRead likewise.
    Status truncate(std::uint64_t size);

    // Data goes through the client's page cache, with readahead, under PR/PW locks that keep
    // clients coherent. Reads past the end are short; holes read as zeros.
    Result<std::size_t> pread(std::span<std::byte> out, std::uint64_t offset);
    Result<std::size_t> pwrite(std::span<const std::byte> in, std::uint64_t offset);
    // At the file position, which they advance.
    Result<std::size_t> read(std::span<std::byte> out);
    Result<std::size_t> write(std::span<const std::byte> in);
    // Returns once every byte written so far is durable on its target.
    Status fsync();

    // Writes back, then closes; errors reported; the destructor then does nothing. A stripe
    // object whose write-back fails stays open on its target with its dirty pages and lock, so
    // the client tries again later (lock aging, flushJob, a conflicting client) until unmount.
    Status close();

    struct Impl;
    explicit File(std::unique_ptr<Impl> impl);

private:
    std::unique_ptr<Impl> m_impl;
};

class Mount {
public:
    // Connects to every target (negotiating with each) and publishes the mount's parameters.
    static Result<std::unique_ptr<Mount>> mount(MountOptions options);
    ~Mount(); // files must be closed first

    Mount(const Mount &) = delete;
    Mount &operator=(const Mount &) = delete;

    Result<std::unique_ptr<File>> open(std::string_view path, unsigned flags,
                                       std::uint32_t mode = 0644);
    Result<FileAttr> stat(std::string_view path);
    Status unlink(std::string_view path);
    Status mkdir(std::string_view path, std::uint32_t mode = 0755);
    Status rmdir(std::string_view path);
    Result<std::vector<DirEntryInfo>> readdir(std::string_view path);

    // The job id the calling thread's I/O is tagged with (jobid_var / jobid_name, or the
    // thread's override).
    std::string jobId();
    static void setThreadJobId(std::string_view jobId);

    // End-of-job cleanup (what a Slurm epilog asks for): writes back the job's dirty pages,
    // cancels the unused locks it last used and drops its cached pages, in batches. An empty job
    // id means every job: the lru_size=clear behaviour plus dropping every clean page.
    // No wait lasts past `timeout`: what is left then (dirty data, lock cancels) stays cached,
    // written back later, and is named in the report's errors.
    Result<FlushReport> flushJob(std::string_view jobId,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(30));

    std::size_t targetCount() const noexcept;

    // The tunables and counters in the mount's registry (see MountOptions::registry) that an
    // lctl glob matches, sorted by name; none is a not_found error naming the pattern.
    Result<std::vector<ParamValue>> getParams(std::string_view pattern);
    // One atomic batch (lctl set_param, lutra's rules): every assignment is checked first and
    // any problem changes nothing; the error lists every problem.
    Status setParams(std::span<const ParamAssignment> assignments);

    struct Impl;

private:
    explicit Mount(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace lutra::client
