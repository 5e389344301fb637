#pragma once
// The parameter registry: every tunable and counter block of a datapath process, by dotted name.
// ctld, lutractl, profiles and the console all read and change parameters through it; nothing
// else keeps a list of parameters.

#include <lutra/status.h>

#include "core/params/counters.h"
#include "core/params/glob.h"
#include "core/params/plan.h"
#include "core/params/spec.h"
#include "core/params/value.h"

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

namespace lutra::params {

// How a parameter is connected to the live component that owns it. Bindings are called with
// the registry's locks held: they must be quick and must not call back into the registry.
struct Binding {
    std::function<Value()> read;                            // required
    std::function<Status(const Value &)> apply;             // required when writable
    std::function<Status(std::string_view special)> action; // required when it has specials
};

struct Reading {
    std::string name;
    std::string value; // canonical text; a counter block renders in Lustre's stats format
};

// What happened to one parameter of a batch.
struct SetResult {
    std::string name;
    std::string oldValue;
    std::string requested; // canonical form of the requested value, or the special word
    std::string readBack;  // value read after the batch (or after its rollback)
    bool special = false;  // an action such as "clear": nothing to compare
    bool clamped = false;  // applied, but the component kept a different value than requested
    bool rolledBack = false;
    Status status;
};

struct BatchResult {
    Status status;              // ok when every assignment was applied
    std::vector<Status> errors; // every validation error, or the apply error that stopped it
    std::vector<SetResult> results;
};

struct ChangeEvent {
    std::string principal; // who asked: "lutractl:root", "ctld:reconcile", ...
    WallClock::time_point time;
    Status status;
    std::vector<SetResult> results;
};

class Registry {
public:
    Registry() = default;
    Registry(const Registry &) = delete;
    Registry &operator=(const Registry &) = delete;

    // Registers one parameter. Fails on an invalid or duplicate name, or a binding that does not
    // fit the spec (writable without apply, specials without action).
    Status add(Spec spec, Binding binding);
    // Registers a counter block: read renders it, writing `clear` resets it. `source` must
    // outlive its registration.
    Status addStats(std::string name, std::string help, StatsSource &source);
    void remove(std::string_view name);

    // Schema of the parameters the pattern matches (sorted by name). With `recursive`, a pattern
    // that names a prefix ("osc.ost0") lists everything below it.
    Result<std::vector<Spec>> list(std::string_view pattern, bool recursive = false) const;
    // Current values. No match is a not_found error naming the pattern.
    Result<std::vector<Reading>> get(std::string_view pattern) const;
    // Structured counters of the counter blocks the pattern matches (`recursive` as for list).
    Result<std::vector<std::pair<std::string, CounterSnapshot>>>
    counters(std::string_view pattern, bool recursive = false) const;

    // Atomic batch set. The batch is planned first (planBatch: pattern, match, writable, value);
    // if anything is wrong nothing changes and every error is reported. Then values are applied
    // in order, special actions (clear) last; if an apply fails, what was applied is restored.
    // A later value of the same parameter replaces an earlier one, as with lctl.
    BatchResult set(std::span<const Assignment> batch, std::string_view principal);

    // Change notifications, delivered after each batch that reached the apply stage, on the
    // thread that called set(). The returned handle unsubscribes when destroyed.
    class Subscription {
    public:
        Subscription() = default;
        Subscription(Registry *registry, std::uint64_t id) : m_registry(registry), m_id(id) {}
        Subscription(Subscription &&other) noexcept;
        Subscription &operator=(Subscription &&other) noexcept;
        ~Subscription();

    private:
        Registry *m_registry = nullptr;
        std::uint64_t m_id = 0;
    };
    [[nodiscard]] Subscription subscribe(std::function<void(const ChangeEvent &)> listener);

    // Bumped whenever a parameter is added or removed, so a client can tell its schema is stale.
    std::uint64_t schemaGeneration() const noexcept;

private:
    struct Entry {
        Spec spec;
        Binding binding;
        StatsSource *stats = nullptr;
    };
    struct Planned {
        const Entry *entry;
        PlannedValue planned;
    };

    std::vector<const Entry *> match(const Glob &glob, bool recursive) const;
    void unsubscribe(std::uint64_t id);
    void notify(const ChangeEvent &event);

    mutable std::shared_mutex m_mutex; // guards m_entries
    std::map<std::string, Entry, std::less<>> m_entries;
    std::uint64_t m_generation = 0;

    std::mutex m_setMutex; // one batch at a time, so batches are atomic with respect to each other

    std::mutex m_listenersMutex;
    std::map<std::uint64_t, std::function<void(const ChangeEvent &)>> m_listeners;
    std::uint64_t m_nextListener = 1;
};

// Registers a group of parameters and removes them all when destroyed: what a component holds
// so its bindings never outlive it.
class ParamGroup {
public:
    explicit ParamGroup(Registry &registry) : m_registry(&registry) {}
    ParamGroup(const ParamGroup &) = delete;
    ParamGroup &operator=(const ParamGroup &) = delete;
    ~ParamGroup();

    Status add(Spec spec, Binding binding);
    Status addStats(std::string name, std::string help, StatsSource &source);

private:
    Registry *m_registry;
    std::vector<std::string> m_names;
};

} // namespace lutra::params
