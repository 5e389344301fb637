#pragma once
// Page CRCs of a file range summed straight from the page cache through a read-only mapping:
// the zero-copy read's checksum pass without copying the range into a buffer first.

#include <lutra/status.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

namespace lutra::target {

// A read-only shared mapping of [offset, offset + length) of a file (mapped from the page below
// `offset`); unmapped when destroyed. It may reach past the file's end: pages there fault in
// once the file grows, and SIGBUS before (see guardedPageCrcs).
class FileMapping {
public:
    enum class Fill {
        now,    // MAP_POPULATE: page tables filled by mmap
        onTouch // faulted in as touched (the kernel maps the cached neighbours of each fault too)
    };
    static Result<FileMapping> map(int fd, std::uint64_t offset, std::uint64_t length, Fill fill);

    FileMapping() = default;
    FileMapping(FileMapping &&other) noexcept;
    FileMapping &operator=(FileMapping &&other) noexcept;
    FileMapping(const FileMapping &) = delete;
    FileMapping &operator=(const FileMapping &) = delete;
    ~FileMapping();

    std::span<const std::byte> bytes() const { return {m_base + m_lead, m_length}; }

private:
    const std::byte *m_base = nullptr; // page aligned
    std::size_t m_lead = 0;            // offset - the page below it
    std::size_t m_length = 0;
};

// The zero-copy reads' view of one open object: one mapping from the file's start, made by the
// first read, faulted in as reads reach its pages, and made anew (twice as large) only when a
// read goes past its end. A read keeps the mapping it got alive, so a remap never unmaps under it;
// the mapping lasts as long as the object's handle, which keeps the file alive anyway.
class ObjectMapping {
public:
    // A mapping of at least [0, end) of `fd`'s file; io_error when mmap fails.
    Result<std::shared_ptr<const FileMapping>> cover(int fd, std::uint64_t end) const;

private:
    mutable std::mutex m_mutex;
    mutable std::shared_ptr<const FileMapping> m_current;
};

// One crc32c per kPageSize page of `data` (the last page partial), `out` one slot per page.
// `data` may lie in a file mapping whose file shrinks meanwhile: a SIGBUS while summing (a page
// beyond the new end) returns false instead of killing the process; `out` is then partly written.
// Also false when `out` does not have one slot per page.
bool guardedPageCrcs(std::span<const std::byte> data, std::span<std::uint32_t> out) noexcept;

} // namespace lutra::target
