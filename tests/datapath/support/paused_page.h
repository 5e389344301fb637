#pragma once
// A buffer whose last page is not there yet: whoever reads it stops on that page (userfaultfd,
// missing mode) until the test supplies it. A test pauses a call in the middle of copying its
// input this way, at an exact byte, with no timing.
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

namespace lutra::tools {

class PausedPage {
public:
    // `pages` pages of which all but the last hold `head` (its size: pages - 1 pages).
    PausedPage(std::span<const std::byte> head, std::size_t pages)
        : m_pageSize(static_cast<std::size_t>(sysconf(_SC_PAGESIZE))), m_pages(pages)
    {
        m_fd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK));
        if (m_fd < 0) {
            m_error = std::string("userfaultfd: ") + std::strerror(errno);
            return;
        }
        uffdio_api api{};
        api.api = UFFD_API;
        if (ioctl(m_fd, UFFDIO_API, &api) != 0) {
            m_error = std::string("UFFDIO_API: ") + std::strerror(errno);
            return;
        }
        void *memory = mmap(nullptr, m_pages * m_pageSize, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (memory == MAP_FAILED) {
            m_error = std::string("mmap: ") + std::strerror(errno);
            return;
        }
        m_base = static_cast<std::byte *>(memory);
        std::memcpy(m_base, head.data(), std::min(head.size(), (m_pages - 1) * m_pageSize));
        uffdio_register range{};
        range.range.start = reinterpret_cast<std::uintptr_t>(last());
        range.range.len = m_pageSize;
        range.mode = UFFDIO_REGISTER_MODE_MISSING;
        if (ioctl(m_fd, UFFDIO_REGISTER, &range) != 0) {
            m_error = std::string("UFFDIO_REGISTER: ") + std::strerror(errno);
        }
    }
    ~PausedPage()
    {
        if (m_base != nullptr) {
            munmap(m_base, m_pages * m_pageSize);
        }
        if (m_fd >= 0) {
            close(m_fd);
        }
    }
    PausedPage(const PausedPage &) = delete;
    PausedPage &operator=(const PausedPage &) = delete;

    // Empty when the buffer is ready; else what failed.
    const std::string &error() const noexcept { return m_error; }
    std::span<const std::byte> bytes() const noexcept { return {m_base, m_pages * m_pageSize}; }
    std::size_t pageSize() const noexcept { return m_pageSize; }

    // Waits until someone stopped on the last page; false after `timeoutMs`.
    bool waitForReader(int timeoutMs)
    {
        pollfd ready{m_fd, POLLIN, 0};
        if (poll(&ready, 1, timeoutMs) != 1) {
            return false;
        }
        uffd_msg message{};
        return read(m_fd, &message, sizeof message) == sizeof message &&
               message.event == UFFD_EVENT_PAGEFAULT;
    }
    // Supplies the last page (`tail`, one page) and wakes the reader.
    bool supply(std::span<const std::byte> tail)
    {
        uffdio_copy copy{};
        copy.dst = reinterpret_cast<std::uintptr_t>(last());
        copy.src = reinterpret_cast<std::uintptr_t>(tail.data());
        copy.len = m_pageSize;
        return ioctl(m_fd, UFFDIO_COPY, &copy) == 0;
    }

private:
    std::byte *last() const noexcept { return m_base + (m_pages - 1) * m_pageSize; }

    std::size_t m_pageSize;
    std::size_t m_pages;
    int m_fd = -1;
    std::byte *m_base = nullptr;
    std::string m_error;
};

} // namespace lutra::tools
