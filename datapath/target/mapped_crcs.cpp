#include "target/mapped_crcs.h"

#include "protocol/crc32c.h"
#include "protocol/messages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>
#include <utility>

namespace lutra::target {

namespace {

// What a thread summing a mapping tells the SIGBUS handler: where to jump back to, and the range
// whose faults are its own. Trivial, so the handler reads it without TLS initialisation.
struct BusGuard {
    sigjmp_buf jump;
    const std::byte *begin;
    const std::byte *end;
    volatile std::sig_atomic_t armed;
};
thread_local BusGuard tlsGuard;

struct sigaction previousBusAction {};

void onBus(int /*signal*/, siginfo_t *info, void * /*context*/)
{
    BusGuard &guard = tlsGuard;
    const auto *address = static_cast<const std::byte *>(info->si_addr);
    if (guard.armed != 0 && address >= guard.begin && address < guard.end) {
        guard.armed = 0;
        siglongjmp(guard.jump, 1);
    }
    // Not a page of a guarded sum: the faulting access runs again under whatever handled SIGBUS
    // before (the default: die). Calling that handler from here looped when it returned: Qt
    // Test's prints and returns for the access to fault again, which came back here.
    ::sigaction(SIGBUS, &previousBusAction, nullptr);
}

void installBusHandler()
{
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_sigaction = onBus;
        // SA_NODEFER: leaving by siglongjmp (mask not restored) must not leave SIGBUS blocked.
        action.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&action.sa_mask);
        ::sigaction(SIGBUS, &action, &previousBusAction);
    });
}

// No object with a destructor may live in this frame or below: a SIGBUS leaves by siglongjmp.
bool sumUnderGuard(const std::byte *data, std::size_t length, std::uint32_t *out) noexcept
{
    BusGuard &guard = tlsGuard;
    guard.begin = data;
    guard.end = data + length;
    if (sigsetjmp(guard.jump, 0) != 0) {
        return false;
    }
    // The fences keep the compiler from moving the range's stores or the sums out of the armed
    // window (the handler runs on this thread).
    std::atomic_signal_fence(std::memory_order_seq_cst);
    guard.armed = 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    for (std::size_t done = 0, page = 0; done < length; done += protocol::kPageSize, ++page) {
        const std::size_t size = std::min<std::size_t>(protocol::kPageSize, length - done);
        out[page] = protocol::crc32c({data + done, size});
    }
    std::atomic_signal_fence(std::memory_order_seq_cst);
    guard.armed = 0;
    return true;
}

} // namespace

Result<FileMapping> FileMapping::map(int fd, std::uint64_t offset, std::uint64_t length, Fill fill)
{
    static const auto pageSize = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    const std::uint64_t start = offset - offset % pageSize;
    const std::size_t lead = offset - start;
    void *base =
        ::mmap(nullptr, lead + length, PROT_READ,
               MAP_SHARED | (fill == Fill::now ? MAP_POPULATE : 0), fd, static_cast<off_t>(start));
    if (base == MAP_FAILED) {
        const int error = errno;
        return Status(Errc::io_error, "mmap of " + std::to_string(length) + " bytes at " +
                                          std::to_string(offset) + ": " + std::strerror(error));
    }
    FileMapping mapping;
    mapping.m_base = static_cast<const std::byte *>(base);
    mapping.m_lead = lead;
    mapping.m_length = length;
    return mapping;
}

FileMapping::FileMapping(FileMapping &&other) noexcept
    : m_base(std::exchange(other.m_base, nullptr)), m_lead(other.m_lead), m_length(other.m_length)
{
}

FileMapping &FileMapping::operator=(FileMapping &&other) noexcept
{
    if (this != &other) {
        FileMapping gone(std::move(*this));
        m_base = std::exchange(other.m_base, nullptr);
        m_lead = other.m_lead;
        m_length = other.m_length;
    }
    return *this;
}

FileMapping::~FileMapping()
{
    if (m_base != nullptr) {
        ::munmap(const_cast<std::byte *>(m_base), m_lead + m_length);
    }
}

Result<std::shared_ptr<const FileMapping>> ObjectMapping::cover(int fd, std::uint64_t end) const
{
    // A few remaps while a file grows, then none: address space is cheap, page tables are made
    // only for the pages read.
    constexpr std::uint64_t kSmallest = std::uint64_t{16} << 20;
    std::lock_guard lock(m_mutex);
    if (m_current != nullptr && m_current->bytes().size() >= end) {
        return m_current;
    }
    auto mapping = FileMapping::map(fd, 0, std::bit_ceil(std::max(end, kSmallest)),
                                    FileMapping::Fill::onTouch);
    if (!mapping) {
        return mapping.status();
    }
    m_current = std::make_shared<const FileMapping>(std::move(mapping).value());
    return m_current;
}

bool guardedPageCrcs(std::span<const std::byte> data, std::span<std::uint32_t> out) noexcept
{
    if (out.size() != (data.size() + protocol::kPageSize - 1) / protocol::kPageSize) {
        return false;
    }
    installBusHandler();
    return sumUnderGuard(data.data(), data.size(), out.data());
}

} // namespace lutra::target
