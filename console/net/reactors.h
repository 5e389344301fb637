#pragma once
// The gRPC side of NodeConnection (private to console/net): the in-flight tracker that lets
// shutdown() wait for every callback, the latest-only counter slot, and the counter stream.
//
// Threading: gRPC callbacks only convert, store under a mutex and post to the connection's thread.
// Every ClientContext (each holds a reference to its channel) is destroyed on the connection's
// thread, so the last channel reference is never dropped on a callback thread (grpc/grpc#37858).

#include "client/ctl_client.h"
#include "core/types.h"

#include <QSet>

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

namespace lutra::console::net {

// Calls and streams gRPC still owes a callback. Shared with the callbacks, which may finish
// touching it after the connection is gone.
class Tracker {
public:
    // Before starting a call: counts it and keeps its context for cancellation.
    void begin(quint64 id, grpc::ClientContext *context);
    // In the last callback, before handing the context to the connection's thread.
    void forget(quint64 id);
    // The very last thing a last callback does.
    void end();

    // Connection's thread only: contexts are destroyed there too, so a pointer taken here stays
    // valid while it is used, and no lock is held while gRPC runs (a callback may run inline).
    void cancel(quint64 id);
    void cancelAll();
    void waitIdle();

private:
    std::mutex m_mutex;
    std::condition_variable m_idle;
    int m_count = 0;
    std::map<quint64, grpc::ClientContext *> m_contexts;
};

// The latest counter update of the current stream: a slot, not a queue.
class CounterSlot {
public:
    struct Put {
        bool filled = false;          // the slot was empty: the connection must be told
        bool unknownInstance = false; // first sight of an instance: ListInstances should run
    };

    void setCurrent(quint64 streamId); // 0: no stream counts
    Put put(quint64 streamId, CounterUpdate update);
    std::optional<CounterUpdate> take();
    // The instance ids ListInstances returned; allows the next unknownInstance.
    void setKnownInstances(QSet<QString> ids);

private:
    std::mutex m_mutex;
    quint64 m_current = 0;
    std::optional<CounterUpdate> m_latest;
    QSet<QString> m_known;
    bool m_refreshAsked = false;
};

// A connection's channel, stub and call credentials; created and destroyed on its thread.
struct Session {
    ctld::CtlClient client;
};

// StreamCounters over one session. Owned by the connection, deleted on its thread after OnDone.
class CounterStream final : public grpc::ClientReadReactor<ctl::v1::CounterUpdate> {
public:
    // Called on gRPC threads; they only post to the connection.
    struct Hooks {
        std::function<void()> filled;
        std::function<void()> unknownInstance;
        std::function<void(QString error)> ended; // "" when the stream ended with OK
    };

    CounterStream(quint64 id, std::shared_ptr<Tracker> tracker, std::shared_ptr<CounterSlot> slot,
                  Hooks hooks);
    void start(Session &session);
    void cancel() { m_context->TryCancel(); }
    quint64 id() const { return m_id; }

    void OnReadDone(bool ok) override;
    void OnDone(const grpc::Status &status) override;

private:
    const quint64 m_id;
    std::shared_ptr<Tracker> m_tracker;
    std::shared_ptr<CounterSlot> m_slot;
    Hooks m_hooks;
    std::unique_ptr<grpc::ClientContext> m_context;
    ctl::v1::StreamCountersRequest m_request;
    ctl::v1::CounterUpdate m_message;
};

} // namespace lutra::console::net
