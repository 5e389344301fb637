#include "net/reactors.h"

#include "net/convert.h"

#include <vector>

namespace lutra::console::net {

void Tracker::begin(quint64 id, grpc::ClientContext *context)
{
    std::lock_guard lock(m_mutex);
    ++m_count;
    m_contexts[id] = context;
}

void Tracker::forget(quint64 id)
{
    std::lock_guard lock(m_mutex);
    m_contexts.erase(id);
}

void Tracker::end()
{
    std::lock_guard lock(m_mutex);
    --m_count;
    if (m_count == 0) {
        m_idle.notify_all();
    }
}

void Tracker::cancel(quint64 id)
{
    grpc::ClientContext *context = nullptr;
    {
        std::lock_guard lock(m_mutex);
        if (const auto found = m_contexts.find(id); found != m_contexts.end()) {
            context = found->second;
        }
    }
    if (context != nullptr) {
        context->TryCancel();
    }
}

void Tracker::cancelAll()
{
    std::vector<grpc::ClientContext *> contexts;
    {
        std::lock_guard lock(m_mutex);
        for (const auto &[id, context] : m_contexts) {
            contexts.push_back(context);
        }
    }
    for (auto *context : contexts) {
        context->TryCancel();
    }
}

void Tracker::waitIdle()
{
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [this] { return m_count == 0; });
}

void CounterSlot::setCurrent(quint64 streamId)
{
    std::lock_guard lock(m_mutex);
    m_current = streamId;
}

CounterSlot::Put CounterSlot::put(quint64 streamId, CounterUpdate update)
{
    Put result;
    std::lock_guard lock(m_mutex);
    if (streamId != m_current) {
        return result; // a stream of an older connection
    }
    for (const auto &instance : update.instances) {
        if (!m_known.contains(instance.instance) && !m_refreshAsked) {
            m_refreshAsked = true;
            result.unknownInstance = true;
        }
    }
    result.filled = !m_latest.has_value();
    m_latest = std::move(update);
    return result;
}

std::optional<CounterUpdate> CounterSlot::take()
{
    std::lock_guard lock(m_mutex);
    auto latest = std::move(m_latest);
    m_latest.reset();
    return latest;
}

void CounterSlot::setKnownInstances(QSet<QString> ids)
{
    std::lock_guard lock(m_mutex);
    m_known = std::move(ids);
    m_refreshAsked = false;
}

CounterStream::CounterStream(quint64 id, std::shared_ptr<Tracker> tracker,
                             std::shared_ptr<CounterSlot> slot, Hooks hooks)
    : m_id(id), m_tracker(std::move(tracker)), m_slot(std::move(slot)), m_hooks(std::move(hooks))
{
    m_request.set_interval_ms(1000);
}

void CounterStream::start(Session &session)
{
    // The stream lives as long as the connection: no deadline.
    m_context = session.client.context();
    m_context->set_deadline(std::chrono::system_clock::time_point::max());
    m_tracker->begin(m_id, m_context.get());
    session.client.stub().async()->StreamCounters(m_context.get(), &m_request, this);
    StartRead(&m_message);
    StartCall();
}

void CounterStream::OnReadDone(bool ok)
{
    if (!ok) {
        return; // OnDone follows
    }
    const auto put = m_slot->put(m_id, convert::counterUpdate(m_message));
    if (put.filled) {
        m_hooks.filled();
    }
    if (put.unknownInstance) {
        m_hooks.unknownInstance();
    }
    StartRead(&m_message);
}

void CounterStream::OnDone(const grpc::Status &status)
{
    // Once `ended` has posted, the connection may delete this reactor: use locals only.
    auto tracker = m_tracker;
    auto ended = std::move(m_hooks.ended);
    tracker->forget(m_id);
    ended(status.ok() ? QString() : QString::fromStdString(ctld::describe(status)));
    tracker->end();
}

} // namespace lutra::console::net
