#pragma once
// One RAII owner per verbs/rdmacm object. Objects are destroyed in the reverse order of
// rc_pingpong's setup (device → PD → MR → CQ → QP): a connection drops its QP, then its CQ,
// then its MRs; the transport's PDs and rdmacm event channel go last.

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <memory>
#include <utility>

namespace lutra::transport::verbs {

template <typename T, auto Destroy> struct Destroyer {
    void operator()(T *object) const noexcept
    {
        if (object != nullptr) {
            (void)Destroy(object);
        }
    }
};

// rdma_create_event_channel: where rdmacm reports connection events.
using EventChannel =
    std::unique_ptr<rdma_event_channel, Destroyer<rdma_event_channel, &rdma_destroy_event_channel>>;
// rdma_get_cm_event: acknowledged (rdma_ack_cm_event) when dropped.
using CmEvent = std::unique_ptr<rdma_cm_event, Destroyer<rdma_cm_event, &rdma_ack_cm_event>>;
// rdma_create_id: a listening or connected rdmacm endpoint. Destroying it waits until every
// event reported for it has been acknowledged.
using CmId = std::unique_ptr<rdma_cm_id, Destroyer<rdma_cm_id, &rdma_destroy_id>>;
// ibv_alloc_pd: one per device.
using ProtectionDomain = std::unique_ptr<ibv_pd, Destroyer<ibv_pd, &ibv_dealloc_pd>>;
// ibv_reg_mr: pinned memory with its local and remote keys.
using MemoryRegistration = std::unique_ptr<ibv_mr, Destroyer<ibv_mr, &ibv_dereg_mr>>;
// ibv_create_comp_channel: the fd an I/O thread sleeps on when its CQs are idle.
using CompletionChannel =
    std::unique_ptr<ibv_comp_channel, Destroyer<ibv_comp_channel, &ibv_destroy_comp_channel>>;

// ibv_create_cq with a completion channel. Events taken with ibv_get_cq_event are counted and
// acknowledged in batches; all of them before the CQ is destroyed (ibv_destroy_cq waits for
// that otherwise).
class CompletionQueue {
public:
    CompletionQueue() = default;
    explicit CompletionQueue(ibv_cq *cq) noexcept : m_cq(cq) {}
    CompletionQueue(CompletionQueue &&other) noexcept
        : m_cq(std::exchange(other.m_cq, nullptr)), m_unacked(std::exchange(other.m_unacked, 0))
    {
    }
    CompletionQueue &operator=(CompletionQueue &&other) noexcept
    {
        if (this != &other) {
            reset();
            m_cq = std::exchange(other.m_cq, nullptr);
            m_unacked = std::exchange(other.m_unacked, 0);
        }
        return *this;
    }
    CompletionQueue(const CompletionQueue &) = delete;
    CompletionQueue &operator=(const CompletionQueue &) = delete;
    ~CompletionQueue() { reset(); }

    ibv_cq *get() const noexcept { return m_cq; }
    explicit operator bool() const noexcept { return m_cq != nullptr; }

    // One event was taken for this CQ; acknowledged once `batch` have gathered.
    void eventTaken(unsigned batch) noexcept
    {
        if (++m_unacked >= batch) {
            ibv_ack_cq_events(m_cq, m_unacked);
            m_unacked = 0;
        }
    }
    void reset() noexcept
    {
        if (m_cq != nullptr) {
            if (m_unacked > 0) {
                ibv_ack_cq_events(m_cq, m_unacked);
            }
            (void)ibv_destroy_cq(m_cq);
            m_cq = nullptr;
            m_unacked = 0;
        }
    }

private:
    ibv_cq *m_cq = nullptr;
    unsigned m_unacked = 0;
};

// rdma_create_qp: the RC queue pair of a connected id. Must be destroyed before the CQ it uses
// and before the id.
class QueuePair {
public:
    QueuePair() = default;
    explicit QueuePair(rdma_cm_id *id) noexcept : m_id(id) {}
    QueuePair(QueuePair &&other) noexcept : m_id(std::exchange(other.m_id, nullptr)) {}
    QueuePair &operator=(QueuePair &&other) noexcept
    {
        if (this != &other) {
            reset();
            m_id = std::exchange(other.m_id, nullptr);
        }
        return *this;
    }
    QueuePair(const QueuePair &) = delete;
    QueuePair &operator=(const QueuePair &) = delete;
    ~QueuePair() { reset(); }

    ibv_qp *get() const noexcept { return m_id != nullptr ? m_id->qp : nullptr; }
    void reset() noexcept
    {
        if (m_id != nullptr) {
            rdma_destroy_qp(m_id);
            m_id = nullptr;
        }
    }

private:
    rdma_cm_id *m_id = nullptr;
};

} // namespace lutra::transport::verbs
