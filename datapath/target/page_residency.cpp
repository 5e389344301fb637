#include "target/page_residency.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace lutra::target {

namespace {

std::uintptr_t pageSize() noexcept
{
    static const auto size = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
    return size;
}

} // namespace

std::size_t residencyScratchBytes(std::size_t bytes) noexcept
{
    return bytes / pageSize() + 2;
}

bool isResident(std::span<const std::byte> data, std::span<unsigned char> scratch) noexcept
{
    if (data.empty()) {
        return true;
    }
    const std::uintptr_t page = pageSize();
    const auto begin = reinterpret_cast<std::uintptr_t>(data.data()) & ~(page - 1);
    const auto end =
        (reinterpret_cast<std::uintptr_t>(data.data()) + data.size() + page - 1) & ~(page - 1);
    const std::size_t pages = (end - begin) / page;
    if (scratch.size() < pages ||
        ::mincore(reinterpret_cast<void *>(begin), end - begin, scratch.data()) != 0) {
        return false;
    }
    for (std::size_t i = 0; i < pages; ++i) {
        if ((scratch[i] & 1) == 0) {
            return false;
        }
    }
    return true;
}

Residency makeResident(std::span<const std::byte> data, std::span<unsigned char> scratch) noexcept
{
    if (data.empty()) {
        return Residency::resident;
    }
    const std::uintptr_t page = pageSize();
    const auto begin = reinterpret_cast<std::uintptr_t>(data.data()) & ~(page - 1);
    const auto end =
        (reinterpret_cast<std::uintptr_t>(data.data()) + data.size() + page - 1) & ~(page - 1);
    const std::size_t pages = (end - begin) / page;
    if (scratch.size() < pages) {
        return Residency::failed;
    }
    auto *base = reinterpret_cast<void *>(begin);
    if (::mincore(base, end - begin, scratch.data()) != 0) {
        return Residency::failed;
    }
    std::size_t first = 0;
    while (first < pages && (scratch[first] & 1) != 0) {
        ++first;
    }
    if (first == pages) {
        return Residency::resident;
    }
    std::size_t last = pages;
    while ((scratch[last - 1] & 1) != 0) {
        --last;
    }
    // Only the stretch from the first missing page to the last: one call, and the kernel's
    // readahead makes it a few large reads. EINTR (a signal) only interrupts it: go on.
    auto *from = reinterpret_cast<std::byte *>(begin + first * page);
    const std::size_t length = (last - first) * page;
    int result = 0;
    do {
        result = ::madvise(from, length, MADV_POPULATE_READ);
    } while (result != 0 && errno == EINTR);
    // EFAULT: a page past the file's end now (it shrank); EINVAL: a kernel before 5.14.
    return result == 0 ? Residency::filled : Residency::failed;
}

} // namespace lutra::target
