#include "client/osc.h"

#include "core/params/bind.h"

#include <algorithm>
#include <cstdint>
#include <variant>
#include <vector>

namespace lutra::client {

namespace {

static_assert(params::catalog::maxOf(params::catalog::kOsc, "conns_per_target") ==
              RpcSession::kMaxConnections);
using params::catalog::counterIndex;
static_assert(counterIndex(params::catalog::kOscStats, "req_waittime") == Osc::req_waittime &&
              counterIndex(params::catalog::kOscStats, "ost_read") == Osc::ost_read &&
              counterIndex(params::catalog::kOscStats, "ost_write") == Osc::ost_write &&
              params::catalog::kOscStats.counters.size() == Osc::counter_count);

// Which Osc's completion this thread is running, if any: a completion that submits must never
// wait for a record only another completion could free.
thread_local const void *t_completingFor = nullptr;

// osc.<t>.max_pages_per_rpc before the negotiated bulk size caps it.
constexpr std::uint32_t kDefaultPagesPerRpc =
    params::catalog::defaultOf(params::catalog::kOsc, "max_pages_per_rpc");
static_assert(params::catalog::maxOf(params::catalog::kOsc, "max_pages_per_rpc") ==
                  protocol::kMaxBulkPages,
              "max_pages_per_rpc's catalog maximum is the protocol's largest bulk");

OscRpcStats::Direction directionOf(bool write) noexcept
{
    return write ? OscRpcStats::write : OscRpcStats::read;
}

} // namespace

Result<std::unique_ptr<Osc>> Osc::create(RpcSession &session, params::ParamGroup &group,
                                         Options options)
{
    std::string target = options.target.empty() ? session.negotiated().targetName : options.target;
    if (target.empty()) {
        return Status(Errc::invalid_argument, "osc: no target name given or negotiated");
    }
    if (session.negotiated().maxBulkBytes < kPageBytes) {
        return Status(Errc::failed_precondition,
                      "osc." + target + ": the session negotiated no room for one bulk page");
    }
    options.requestSlots = std::max(options.requestSlots, kMaxRpcsInFlight);
    std::unique_ptr<Osc> osc(new Osc(session, std::move(options), std::move(target)));
    if (Status status = osc->publish(group); !status.ok()) {
        return status;
    }
    return osc;
}

Osc::Osc(RpcSession &session, Options options, std::string target)
    : m_session(session), m_options(std::move(options)), m_target(std::move(target)),
      m_pagesLimit(std::min<std::uint32_t>(session.negotiated().maxBulkBytes / kPageBytes,
                                           protocol::kMaxBulkPages)),
      m_maxPagesPerRpc(std::min<std::uint32_t>(kDefaultPagesPerRpc, m_pagesLimit)),
      m_times(params::catalog::counterDefs(params::catalog::kOscStats))
{
    m_records = std::make_unique<Request[]>(m_options.requestSlots);
    for (std::uint32_t i = m_options.requestSlots; i > 0; --i) {
        m_records[i - 1].next = m_free;
        m_free = &m_records[i - 1];
    }
    m_session.setSlotWaiter(&Osc::slotFreed, this);
}

Osc::~Osc()
{
    Request *queued = nullptr;
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        queued = takeQueueLocked();
    }
    m_recordFreed.notify_all();
    failAll(queued, Status(Errc::cancelled, "osc." + m_target + ": shut down"));
    {
        // The RPCs in flight complete on the session's threads (reply, timeout, disconnect).
        std::unique_lock lock(m_mutex);
        m_idle.wait(
            lock, [&] { return m_inFlight == 0 && m_outstanding == 0 && m_callbacksRunning == 0; });
    }
    m_session.setSlotWaiter(nullptr, nullptr);
}

Status Osc::publish(params::ParamGroup &group)
{
    params::Binding pagesPerRpc;
    pagesPerRpc.read = [this] { return params::Value(std::int64_t{maxPagesPerRpc()}); };
    pagesPerRpc.apply = [this](const params::Value &value) {
        m_maxPagesPerRpc.store(static_cast<std::uint32_t>(std::get<std::int64_t>(value)),
                               std::memory_order_relaxed);
        return Status{};
    };
    // The session's negotiated bulk size is the real ceiling.
    auto capPagesPerRpc = [this](params::Spec &spec) {
        spec.max = std::min<std::int64_t>(spec.max, m_pagesLimit);
        spec.defaultValue =
            std::int64_t{std::min<std::uint32_t>(kDefaultPagesPerRpc, m_pagesLimit)};
    };

    params::Binding rpcsInFlight;
    rpcsInFlight.read = [this] { return params::Value(std::int64_t{maxRpcsInFlight()}); };
    rpcsInFlight.apply = [this](const params::Value &value) {
        {
            // Under the dispatch lock so no dispatch misses the raise.
            std::lock_guard lock(m_mutex);
            m_maxRpcsInFlight.store(static_cast<std::uint32_t>(std::get<std::int64_t>(value)),
                                    std::memory_order_relaxed);
        }
        dispatch(); // a raise sends what was queued at once
        return Status{};
    };

    params::Binding dirtyMb;
    dirtyMb.read = [this] {
        return params::Value(
            static_cast<std::int64_t>(m_maxDirtyMb.load(std::memory_order_relaxed)));
    };
    dirtyMb.apply = [this](const params::Value &value) {
        m_maxDirtyMb.store(static_cast<std::uint64_t>(std::get<std::int64_t>(value)),
                           std::memory_order_relaxed);
        return Status{};
    };

    params::Binding checksums;
    checksums.read = [this] {
        return params::Value(std::int64_t{m_checksums.load(std::memory_order_relaxed)});
    };
    checksums.apply = [this](const params::Value &value) {
        m_checksums.store(std::get<std::int64_t>(value) != 0, std::memory_order_relaxed);
        return Status{};
    };

    // crc32c is the only algorithm: nothing to switch.
    params::Binding checksumType;
    checksumType.read = [] { return params::Value(std::int64_t{0}); };
    checksumType.apply = [](const params::Value &) { return Status{}; };

    // The session's connections: raising opens and joins more (see RpcSession).
    params::Binding connections;
    connections.read = [this] { return params::Value(std::int64_t{m_session.connections()}); };
    connections.apply = [this](const params::Value &value) {
        return m_session.setConnections(static_cast<std::uint32_t>(std::get<std::int64_t>(value)))
            .withContext("osc." + m_target + ".conns_per_target");
    };

    params::Binding protocolVersion;
    protocolVersion.read = [this] {
        return params::Value(std::int64_t{m_session.negotiated().version});
    };

    std::vector<params::BindRow> rows;
    rows.push_back({"max_pages_per_rpc", std::move(pagesPerRpc), std::move(capPagesPerRpc)});
    rows.push_back({"max_rpcs_in_flight", std::move(rpcsInFlight), {}});
    rows.push_back({"max_dirty_mb", std::move(dirtyMb), {}});
    rows.push_back({"checksums", std::move(checksums), {}});
    rows.push_back({"checksum_type", std::move(checksumType), {}});
    rows.push_back({"conns_per_target", std::move(connections), {}});
    rows.push_back({"protocol_version", std::move(protocolVersion), {}});
    if (Status status = params::bindGroup(group, params::catalog::kOsc, m_target, std::move(rows));
        !status.ok()) {
        return status;
    }
    if (Status status = group.addStats("osc." + m_target + ".rpc_stats",
                                       std::string(params::catalog::kRpcStatsHelp), m_stats);
        !status.ok()) {
        return status;
    }
    return group.addStats("osc." + m_target + "." + std::string(params::catalog::kOscStats.leaf),
                          std::string(params::catalog::kOscStats.help), m_times);
}

bool Osc::checksumsEffective() const noexcept
{
    return m_checksums.load(std::memory_order_relaxed) &&
           (m_session.negotiated().features & protocol::kFeatureChecksums) != 0;
}

Status Osc::submitRead(std::uint64_t handle, std::uint64_t firstPage, std::uint32_t pageCount,
                       std::uint16_t lastPageBytes, std::span<const transport::Segment> segments,
                       std::string_view jobId, OscCompletion completion,
                       transport::Deadline admission, transport::Deadline deadline, Send send)
{
    return submit(Op::read, handle, firstPage, pageCount, lastPageBytes, segments, jobId,
                  completion, admission, deadline, send);
}

Status Osc::submitWrite(std::uint64_t handle, std::uint64_t firstPage, std::uint32_t pageCount,
                        std::uint16_t lastPageBytes, std::span<const transport::Segment> segments,
                        std::string_view jobId, OscCompletion completion,
                        transport::Deadline admission, transport::Deadline deadline)
{
    return submit(Op::write, handle, firstPage, pageCount, lastPageBytes, segments, jobId,
                  completion, admission, deadline, Send::now);
}

Status Osc::validate(Op op, std::uint64_t firstPage, std::uint32_t pageCount,
                     std::uint16_t lastPageBytes,
                     std::span<const transport::Segment> segments) const
{
    const auto where = [&] {
        return "osc." + m_target + ": " + (op == Op::read ? "read" : "write") + " of " +
               std::to_string(pageCount) + " pages at page " + std::to_string(firstPage);
    };
    if (pageCount == 0 || lastPageBytes == 0 || lastPageBytes > kPageBytes) {
        return Status(Errc::invalid_argument,
                      where() + ": needs 1 or more pages and a last page of 1..4096 bytes");
    }
    if (firstPage > (std::uint64_t{1} << 51)) {
        return Status(Errc::invalid_argument, where() + ": offset beyond 2^63 bytes");
    }
    const std::uint32_t limit = maxPagesPerRpc();
    if (pageCount > limit) {
        return Status(Errc::out_of_range,
                      where() + ": more than max_pages_per_rpc=" + std::to_string(limit) +
                          " (split the run with forEachRpc)");
    }
    const std::uint64_t bytes = std::uint64_t{pageCount - 1} * kPageBytes + lastPageBytes;
    std::uint64_t available = 0;
    std::size_t needed = 0;
    while (needed < segments.size() && available < bytes) {
        available += segments[needed++].length;
    }
    if (available < bytes || needed > transport::kMaxBulkSegments) {
        return Status(Errc::invalid_argument,
                      where() + ": " + std::to_string(needed) + " segments of " +
                          std::to_string(available) + " bytes for " + std::to_string(bytes) +
                          " bytes (at most " + std::to_string(transport::kMaxBulkSegments) +
                          " segments)");
    }
    return {};
}

Status Osc::submit(Op op, std::uint64_t handle, std::uint64_t firstPage, std::uint32_t pageCount,
                   std::uint16_t lastPageBytes, std::span<const transport::Segment> segments,
                   std::string_view jobId, OscCompletion &completion, transport::Deadline admission,
                   transport::Deadline deadline, Send send)
{
    if (!completion) {
        return Status(Errc::invalid_argument,
                      "osc." + m_target + ": submission without completion");
    }
    if (Status status = validate(op, firstPage, pageCount, lastPageBytes, segments); !status.ok()) {
        return status;
    }
    if (t_completingFor == this) {
        admission = transport::noWait(); // only another completion could free a record
    }
    admission = std::min(admission, deadline);
    std::unique_lock lock(m_mutex);
    const auto admissible = [&] {
        return m_stopping || !m_lostReason.empty() || m_free != nullptr;
    };
    if (admission == transport::Deadline::max()) {
        m_recordFreed.wait(lock, admissible);
    } else if (!m_recordFreed.wait_until(lock, admission, admissible)) {
        return Status(Errc::resource_exhausted, "osc." + m_target + ": all " +
                                                    std::to_string(m_options.requestSlots) +
                                                    " request records busy");
    }
    if (m_stopping) {
        return Status(Errc::unavailable, "osc." + m_target + ": shutting down");
    }
    if (!m_lostReason.empty()) {
        return Status(Errc::unavailable, "osc." + m_target + ": " + m_lostReason);
    }
    Request *request = std::exchange(m_free, m_free->next);
    request->next = nullptr;
    request->op = op;
    request->handle = handle;
    request->firstPage = firstPage;
    request->pageCount = pageCount;
    request->lastPageBytes = lastPageBytes;
    request->segments = segments;
    request->jobId = jobId;
    request->completion = std::move(completion);
    request->deadline = deadline;
    request->sent = {};
    if (m_queueTail != nullptr) {
        m_queueTail->next = request;
    } else {
        m_queueHead = request;
    }
    m_queueTail = request;
    ++m_queued;
    ++m_outstanding;
    m_stats.addPendingPages(directionOf(op == Op::write), pageCount);
    // Left to a completion: m_inFlight is counted down under this lock before that completion
    // dispatches, so it finds this request queued.
    const bool canStart =
        m_inFlight < maxRpcsInFlight() && !(send == Send::afterInFlight && m_inFlight > 0);
    lock.unlock();
    if (canStart) {
        dispatch();
    }
    return {};
}

void Osc::dispatch() noexcept
{
    for (;;) {
        Request *request = nullptr;
        std::uint32_t inFlight = 0;
        {
            std::lock_guard lock(m_mutex);
            if (m_queueHead == nullptr || m_inFlight >= maxRpcsInFlight()) {
                return;
            }
            request = std::exchange(m_queueHead, m_queueHead->next);
            if (m_queueHead == nullptr) {
                m_queueTail = nullptr;
            }
            request->next = nullptr;
            --m_queued;
            const OscRpcStats::Direction direction = directionOf(request->op == Op::write);
            ++m_inFlight;
            // Tallied after counting itself, as Lustre's osc_build_rpc does.
            inFlight = ++m_inFlightByOp[direction];
            m_stats.addPendingPages(direction, -std::int64_t{request->pageCount});
            m_stats.addInFlight(direction, 1);
        }
        // Copied out: once submitted, the RPC may complete (and the record be reused) at once.
        const Op op = request->op;
        const OscRpcStats::Direction direction = directionOf(op == Op::write);
        const std::uint32_t pages = request->pageCount;
        const std::uint64_t firstPage = request->firstPage;
        const BulkCallback done{&Osc::rpcDone, this, reinterpret_cast<std::uintptr_t>(request)};
        const transport::Deadline deadline =
            std::min(transport::deadlineIn(m_options.rpcTimeout), request->deadline);
        if (deadline <= transport::Clock::now()) {
            // The caller has given up while it waited its turn: nothing is sent.
            finishRpc(request,
                      Status(Errc::timeout, "osc." + m_target +
                                                ": the caller's deadline passed "
                                                "while the RPC was queued"),
                      0, Redispatch::no);
            continue;
        }
        const bool checksums = checksumsEffective();
        const std::uint64_t offset = firstPage * kPageBytes;
        request->sent = transport::Clock::now(); // before: the reply may come at once
        const Status sent =
            op == Op::read
                ? m_session.submitRead(request->handle, offset, pages, request->lastPageBytes,
                                       request->segments, checksums, request->jobId, deadline, done)
                : m_session.submitWrite(request->handle, offset, pages, request->lastPageBytes,
                                        request->segments, checksums, request->jobId, deadline,
                                        done);
        if (sent.ok()) {
            m_stats.recordRpc(direction, pages, inFlight, firstPage);
            continue;
        }
        if (sent.code() == Errc::resource_exhausted && m_session.connected()) {
            // Every session slot is busy (synchronous calls share them): back to the head of
            // the queue; the next slot freed dispatches again.
            {
                std::lock_guard lock(m_mutex);
                --m_inFlight;
                --m_inFlightByOp[direction];
                m_stats.addInFlight(direction, -1);
                m_stats.addPendingPages(direction, pages);
                request->sent = {};
                request->next = m_queueHead;
                m_queueHead = request;
                if (m_queueTail == nullptr) {
                    m_queueTail = request;
                }
                ++m_queued;
            }
            if (m_session.armSlotWaiter()) {
                continue; // freed meanwhile
            }
            return;
        }
        // Refused for good (the session is lost, ...): the request fails, never sent.
        request->sent = {};
        finishRpc(request, sent, 0);
    }
}

void Osc::rpcDone(void *context, std::uint64_t tag, const Status &status,
                  std::uint32_t bytes) noexcept
{
    auto *osc = static_cast<Osc *>(context);
    osc->finishRpc(reinterpret_cast<Request *>(tag), status, bytes);
}

void Osc::slotFreed(void *context) noexcept
{
    static_cast<Osc *>(context)->dispatch();
}

void Osc::finishRpc(Request *request, const Status &status, std::uint32_t bytes,
                    Redispatch redispatch) noexcept
{
    const OscRpcStats::Direction direction = directionOf(request->op == Op::write);
    if (request->sent != transport::Clock::time_point{}) {
        const auto waited = std::chrono::duration_cast<std::chrono::microseconds>(
                                transport::Clock::now() - request->sent)
                                .count();
        m_times.sample(req_waittime, waited);
        m_times.sample(request->op == Op::read ? ost_read : ost_write, waited);
    }
    OscCompletion completion = std::move(request->completion);
    Request *failed = nullptr;
    std::string lostReason;
    {
        std::lock_guard lock(m_mutex);
        ++m_callbacksRunning;
        --m_inFlight;
        --m_inFlightByOp[direction];
        m_stats.addInFlight(direction, -1);
        releaseLocked(request);
        if (status.code() == Errc::unavailable && !m_session.connected() && m_lostReason.empty()) {
            // The session is gone for good: nothing queued can succeed, fail it all now.
            m_lostReason = status.message();
        }
        if (!m_lostReason.empty()) {
            failed = takeQueueLocked();
            lostReason = failed != nullptr ? m_lostReason : std::string();
        }
    }
    m_recordFreed.notify_one();
    runCompletion(completion, status, bytes);
    finished(1);
    if (failed != nullptr) {
        failAll(failed,
                Status(Errc::unavailable, "osc." + m_target + ": session lost: " + lostReason));
    }
    if (redispatch == Redispatch::yes) {
        dispatch(); // room for the next queued RPC
    }
    // Notified under the lock: the destructor may go ahead (and free this) once it is released.
    std::lock_guard lock(m_mutex);
    if (--m_callbacksRunning == 0) {
        m_idle.notify_all();
    }
}

void Osc::runCompletion(OscCompletion &completion, const Status &status,
                        std::uint32_t bytes) noexcept
{
    const void *outer = std::exchange(t_completingFor, this);
    completion(status, bytes);
    completion.reset();
    t_completingFor = outer;
}

Osc::Request *Osc::takeQueueLocked() noexcept
{
    Request *head = std::exchange(m_queueHead, nullptr);
    m_queueTail = nullptr;
    for (Request *request = head; request != nullptr; request = request->next) {
        m_stats.addPendingPages(directionOf(request->op == Op::write),
                                -std::int64_t{request->pageCount});
    }
    m_queued = 0;
    return head;
}

void Osc::releaseLocked(Request *request) noexcept
{
    request->segments = {};
    request->jobId = {};
    request->next = m_free;
    m_free = request;
}

void Osc::failAll(Request *head, const Status &status)
{
    while (head != nullptr) {
        Request *request = head;
        head = head->next;
        OscCompletion completion = std::move(request->completion);
        {
            std::lock_guard lock(m_mutex);
            releaseLocked(request);
        }
        m_recordFreed.notify_one();
        runCompletion(completion, status, 0);
        finished(1);
    }
}

void Osc::finished(std::uint32_t count) noexcept
{
    bool idle = false;
    {
        std::lock_guard lock(m_mutex);
        m_outstanding -= count;
        idle = m_outstanding == 0;
    }
    if (idle) {
        m_idle.notify_all();
    }
}

bool Osc::waitIdle(transport::Deadline deadline)
{
    std::unique_lock lock(m_mutex);
    return m_idle.wait_until(lock, deadline, [&] { return m_outstanding == 0; });
}

} // namespace lutra::client
