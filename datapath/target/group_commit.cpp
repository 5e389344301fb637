#include "target/group_commit.h"

#include "core/params/bind.h"
#include "core/params/registry.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace lutra::target {

namespace {

constexpr const params::catalog::CounterGroup &kStats = params::catalog::kCommitStats;
using params::catalog::counterIndex;
static_assert(counterIndex(kStats, "batches") == GroupCommit::batches &&
              counterIndex(kStats, "writes") == GroupCommit::writes &&
              counterIndex(kStats, "syncs") == GroupCommit::syncs &&
              counterIndex(kStats, "batch_writes") == GroupCommit::batch_writes &&
              counterIndex(kStats, "failed_batches") == GroupCommit::failed_batches &&
              kStats.counters.size() == GroupCommit::counter_count);

std::vector<params::CounterDef> commitStatDefs()
{
    return params::catalog::counterDefs(kStats);
}

std::int64_t wallNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

bool sameFile(const ObjectHandle *a, const ObjectHandle *b)
{
    return a->device() == b->device() && a->inode() == b->inode();
}

} // namespace

Result<std::unique_ptr<GroupCommit>> GroupCommit::open(ObjectStore &store, std::string target,
                                                       CommitMode mode)
{
    auto log = store.openReserved(kLogName, O_RDWR | O_CREAT);
    if (!log) {
        return log.status();
    }
    struct stat st {};
    if (::fstat(log->get(), &st) != 0) {
        return errnoStatus(errno, "stat", kLogName);
    }
    // A torn record at the tail (crash mid-append) is overwritten by the next batch.
    const auto records = static_cast<std::uint64_t>(st.st_size) / sizeof(CommitRecord);
    std::uint64_t nextSequence = 1;
    if (records > 0) {
        CommitRecord last;
        const auto at = static_cast<off_t>((records - 1) * sizeof(CommitRecord));
        if (::pread(log->get(), &last, sizeof last, at) != static_cast<ssize_t>(sizeof last) ||
            last.magic != CommitRecord::kMagic) {
            return Status(Errc::io_error, std::string(kLogName) + ": last record is unreadable");
        }
        nextSequence = last.sequence + 1;
    }
    return std::unique_ptr<GroupCommit>(
        new GroupCommit(std::move(target), mode, std::move(log).value(),
                        records * sizeof(CommitRecord), nextSequence));
}

GroupCommit::GroupCommit(std::string target, CommitMode mode, Fd log, std::uint64_t logOffset,
                         std::uint64_t nextSequence)
    : m_target(std::move(target)), m_mode(mode), m_log(std::move(log)), m_logOffset(logOffset),
      m_nextSequence(nextSequence), m_stats(commitStatDefs())
{
    m_syncScratch.reserve(256);
    if (m_mode == CommitMode::batched) {
        m_thread = std::thread([this] { run(); });
    }
}

GroupCommit::~GroupCommit()
{
    shutdown();
}

void GroupCommit::shutdown()
{
    std::lock_guard shutdownLock(m_shutdownMutex);
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_work.notify_all();
    if (m_thread.joinable()) {
        m_thread.join();
    }
}

void GroupCommit::announce() noexcept
{
    std::lock_guard lock(m_mutex);
    ++m_inbound;
}

void GroupCommit::withdraw() noexcept
{
    std::lock_guard lock(m_mutex);
    if (m_inbound > 0 && --m_inbound == 0) {
        m_work.notify_one();
    }
}

Status GroupCommit::commit(const ObjectHandle &handle, std::uint64_t bytes, bool announced)
{
    if (m_mode == CommitMode::perWrite) {
        if (announced) {
            withdraw();
        }
        {
            std::lock_guard lock(m_mutex);
            if (m_stopping) {
                return {Errc::unavailable, "group commit of " + m_target + " is shut down"};
            }
        }
        return commitOne(handle, bytes);
    }

    Waiter node; // lives on this stack until the committer marks it done
    node.handle = &handle;
    node.bytes = bytes;
    std::unique_lock lock(m_mutex);
    if (m_stopping) {
        return {Errc::unavailable, "group commit of " + m_target + " is shut down"};
    }
    if (announced && m_inbound > 0) {
        --m_inbound;
    }
    node.generation = m_openGeneration;
    const bool wasEmpty = m_head == nullptr;
    if (wasEmpty) {
        m_head = &node;
    } else {
        m_tail->next = &node;
    }
    m_tail = &node;
    ++m_queued;
    if (wasEmpty || (announced && m_inbound == 0)) {
        m_work.notify_one();
    }
    m_done[node.generation & 1].wait(lock, [&node] { return node.done; });
    return std::move(node.status);
}

Result<std::size_t> GroupCommit::writeDurable(const ObjectHandle &handle,
                                              std::span<const iovec> buffers, std::uint64_t offset,
                                              bool announced)
{
    auto written = handle.pwritev(buffers, offset);
    if (!written) {
        if (announced) {
            withdraw();
        }
        return written;
    }
    if (auto status = commit(handle, *written, announced); !status) {
        return status;
    }
    return written;
}

void GroupCommit::run()
{
    std::unique_lock lock(m_mutex);
    for (;;) {
        m_work.wait(lock, [this] { return m_stopping || (m_head != nullptr && !m_hold); });
        if (m_head == nullptr) {
            break; // stopping, and nothing left to commit
        }
        const auto window = std::chrono::microseconds(m_windowUs.load(std::memory_order_relaxed));
        if (window.count() > 0 && !m_stopping) {
            // Gather: writers arriving meanwhile join this batch.
            m_work.wait_for(lock, window, [this] { return m_stopping; });
        } else if (m_inbound > 0 && !m_stopping && !m_hold) {
            // Writers whose data is still arriving are about to queue: let them in.
            m_work.wait_for(lock, kSiblingWait, [this] { return m_stopping || m_inbound == 0; });
        }
        Waiter *head = m_head;
        const std::uint64_t count = m_queued;
        const std::uint64_t generation = m_openGeneration++;
        m_head = m_tail = nullptr;
        m_queued = 0;
        lock.unlock();

        // The waiters are blocked until marked done, so their nodes are safe to read here.
        std::uint64_t bytes = 0;
        for (const Waiter *w = head; w != nullptr; w = w->next) {
            bytes += w->bytes;
        }
        const Status status = commitBatch(head, count, bytes);

        lock.lock();
        for (Waiter *w = head; w != nullptr;) {
            Waiter *next = w->next; // once done is set the node may vanish
            if (!status) {
                w->status = status;
            }
            w->done = true;
            w = next;
        }
        m_done[generation & 1].notify_all();
    }
}

Status GroupCommit::commitBatch(Waiter *head, std::uint64_t writeCount, std::uint64_t bytes)
{
    // One fdatasync per file, however many writes and handles the batch has for it.
    m_syncScratch.clear();
    for (const Waiter *w = head; w != nullptr; w = w->next) {
        m_syncScratch.push_back(w->handle);
    }
    std::sort(m_syncScratch.begin(), m_syncScratch.end(),
              [](const ObjectHandle *a, const ObjectHandle *b) {
                  return a->device() != b->device() ? a->device() < b->device()
                                                    : a->inode() < b->inode();
              });
    m_syncScratch.erase(std::unique(m_syncScratch.begin(), m_syncScratch.end(), sameFile),
                        m_syncScratch.end());

    m_stats.add(batches);
    m_stats.add(writes, writeCount);
    m_stats.sample(batch_writes, static_cast<std::int64_t>(writeCount));
    Status status;
    for (const ObjectHandle *handle : m_syncScratch) {
        m_stats.add(syncs);
        if (const int error = sync(handle->fd()); error != 0) {
            status = Status(Errc::io_error, "fdatasync '" + handle->name() +
                                                "' failed: " + std::strerror(error) + "; the " +
                                                std::to_string(writeCount) +
                                                " writes of this batch are not durable");
            break;
        }
    }
    if (status) {
        status = appendRecord(writeCount, bytes);
    }
    if (!status) {
        m_stats.add(failed_batches);
    }
    return status;
}

Status GroupCommit::appendRecord(std::uint64_t writeCount, std::uint64_t bytes)
{
    std::lock_guard lock(m_logMutex);
    CommitRecord record;
    record.writes = static_cast<std::uint32_t>(std::min<std::uint64_t>(writeCount, UINT32_MAX));
    record.sequence = m_nextSequence;
    record.bytes = bytes;
    record.timeNs = wallNs();
    const ssize_t put =
        ::pwrite(m_log.get(), &record, sizeof record, static_cast<off_t>(m_logOffset));
    if (put != static_cast<ssize_t>(sizeof record)) {
        const int error = put < 0 ? errno : ENOSPC;
        return {Errc::io_error,
                "append to " + std::string(kLogName) + " failed: " + std::strerror(error)};
    }
    m_stats.add(syncs);
    if (const int error = sync(m_log.get()); error != 0) {
        // The slot is rewritten by the next batch; a failed batch leaves no record behind.
        return {Errc::io_error,
                "fdatasync " + std::string(kLogName) + " failed: " + std::strerror(error)};
    }
    m_logOffset += sizeof record;
    ++m_nextSequence;
    return {};
}

Status GroupCommit::commitOne(const ObjectHandle &handle, std::uint64_t bytes)
{
    m_stats.add(batches);
    m_stats.add(writes);
    m_stats.sample(batch_writes, 1);
    m_stats.add(syncs);
    Status status;
    if (const int error = sync(handle.fd()); error != 0) {
        status = Status(Errc::io_error, "fdatasync '" + handle.name() + "' failed: " +
                                            std::strerror(error) + "; the write is not durable");
    } else {
        status = appendRecord(1, bytes);
    }
    if (!status) {
        m_stats.add(failed_batches);
    }
    return status;
}

int GroupCommit::sync(int fd)
{
    if (m_hasHook.load(std::memory_order_acquire)) {
        std::lock_guard lock(m_hookMutex);
        if (m_syncHook) {
            return m_syncHook(fd);
        }
    }
    while (::fdatasync(fd) != 0) {
        if (errno != EINTR) {
            return errno;
        }
    }
    return 0;
}

void GroupCommit::setWindow(std::chrono::microseconds window)
{
    const auto clamped = std::clamp<std::chrono::microseconds>(
        window, std::chrono::microseconds(0), std::chrono::microseconds(kMaxWindow));
    m_windowUs.store(clamped.count(), std::memory_order_relaxed);
}

std::chrono::microseconds GroupCommit::window() const noexcept
{
    return std::chrono::microseconds(m_windowUs.load(std::memory_order_relaxed));
}

Status GroupCommit::publish(params::ParamGroup &group)
{
    params::Binding interval;
    interval.read = [this] {
        return params::Value(
            std::int64_t{std::chrono::duration_cast<std::chrono::milliseconds>(window()).count()});
    };
    interval.apply = [this](const params::Value &value) {
        setWindow(std::chrono::milliseconds(std::get<std::int64_t>(value)));
        return Status{};
    };
    std::vector<params::BindRow> rows;
    rows.push_back({"commit_interval", std::move(interval), {}});
    if (auto status =
            params::bindGroup(group, params::catalog::kGroupCommit, m_target, std::move(rows));
        !status) {
        return status;
    }
    return group.addStats("obdfilter." + m_target + "." + std::string(kStats.leaf),
                          std::string(kStats.help), m_stats);
}

std::uint64_t GroupCommit::lastSequence() const
{
    std::lock_guard lock(m_logMutex);
    return m_nextSequence - 1;
}

void GroupCommit::setSyncHook(std::function<int(int fd)> hook)
{
    std::lock_guard lock(m_hookMutex);
    m_syncHook = std::move(hook);
    m_hasHook.store(static_cast<bool>(m_syncHook), std::memory_order_release);
}

void GroupCommit::holdBatches(bool hold)
{
    {
        std::lock_guard lock(m_mutex);
        m_hold = hold;
    }
    m_work.notify_all();
}

std::size_t GroupCommit::queuedWrites() const
{
    std::lock_guard lock(m_mutex);
    return m_queued;
}

} // namespace lutra::target
