#include "core/params/registry.h"

#include <algorithm>

namespace lutra::params {

namespace {

std::string joinMessages(const std::vector<Status> &errors)
{
    std::string text;
    for (const auto &error : errors) {
        if (!text.empty()) {
            text += "; ";
        }
        text += error.message();
    }
    return text;
}

Status noMatch(std::string_view pattern)
{
    return {Errc::not_found, "no parameter matches '" + std::string(pattern) + "'"};
}

} // namespace

Status Registry::add(Spec spec, Binding binding)
{
    if (!isValidName(spec.name)) {
        return {Errc::invalid_argument,
                "invalid parameter name '" + spec.name +
                    "': use dot-separated components of letters, digits, '_' and '-'"};
    }
    if (!binding.read) {
        return {Errc::invalid_argument, spec.name + ": a parameter needs a read binding"};
    }
    if (spec.writable && spec.type != Type::counters && !binding.apply) {
        return {Errc::invalid_argument,
                spec.name + ": a writable parameter needs an apply binding"};
    }
    if (!spec.specialValues.empty() && !binding.action) {
        return {Errc::invalid_argument, spec.name + ": special values need an action binding"};
    }
    if (spec.type == Type::enumeration && spec.enumValues.empty()) {
        return {Errc::invalid_argument, spec.name + ": an enumeration needs its choices"};
    }
    std::unique_lock lock(m_mutex);
    if (m_entries.contains(spec.name)) {
        return {Errc::already_exists, "parameter '" + spec.name + "' is already registered"};
    }
    std::string name = spec.name;
    m_entries.emplace(std::move(name), Entry{std::move(spec), std::move(binding), nullptr});
    ++m_generation;
    return {};
}

Status Registry::addStats(std::string name, std::string help, StatsSource &source)
{
    Spec spec;
    spec.name = std::move(name);
    spec.type = Type::counters;
    spec.writable = true;
    spec.help = std::move(help);
    spec.defaultValue = std::string();
    spec.specialValues = {{"clear", "reset every counter of the block"}};
    Binding binding;
    binding.read = [&source] { return Value(source.render(WallClock::now())); };
    binding.action = [&source](std::string_view) {
        source.clear();
        return Status{};
    };
    const std::string key = spec.name;
    if (auto status = add(std::move(spec), std::move(binding)); !status) {
        return status;
    }
    std::unique_lock lock(m_mutex);
    m_entries.find(key)->second.stats = &source;
    return {};
}

void Registry::remove(std::string_view name)
{
    std::unique_lock lock(m_mutex);
    if (const auto it = m_entries.find(name); it != m_entries.end()) {
        m_entries.erase(it);
        ++m_generation;
    }
}

std::uint64_t Registry::schemaGeneration() const noexcept
{
    std::shared_lock lock(m_mutex);
    return m_generation;
}

std::vector<const Registry::Entry *> Registry::match(const Glob &glob, bool recursive) const
{
    std::vector<const Entry *> found;
    if (!glob.hasWildcards() && !recursive) {
        if (const auto it = m_entries.find(glob.pattern()); it != m_entries.end()) {
            found.push_back(&it->second);
        }
        return found;
    }
    for (const auto &[name, entry] : m_entries) {
        if (recursive ? glob.matchesLeadingComponents(name) : glob.matches(name)) {
            found.push_back(&entry);
        }
    }
    return found;
}

Result<std::vector<Spec>> Registry::list(std::string_view pattern, bool recursive) const
{
    auto glob = Glob::compile(pattern);
    if (!glob) {
        return glob.status();
    }
    std::shared_lock lock(m_mutex);
    std::vector<Spec> specs;
    for (const Entry *entry : match(*glob, recursive)) {
        specs.push_back(entry->spec);
    }
    if (specs.empty()) {
        return noMatch(pattern);
    }
    return specs;
}

Result<std::vector<Reading>> Registry::get(std::string_view pattern) const
{
    auto glob = Glob::compile(pattern);
    if (!glob) {
        return glob.status();
    }
    std::shared_lock lock(m_mutex);
    std::vector<Reading> readings;
    for (const Entry *entry : match(*glob, false)) {
        readings.push_back({entry->spec.name, formatValue(entry->spec, entry->binding.read())});
    }
    if (readings.empty()) {
        return noMatch(pattern);
    }
    return readings;
}

Result<std::vector<std::pair<std::string, CounterSnapshot>>>
Registry::counters(std::string_view pattern, bool recursive) const
{
    auto glob = Glob::compile(pattern);
    if (!glob) {
        return glob.status();
    }
    std::shared_lock lock(m_mutex);
    std::vector<std::pair<std::string, CounterSnapshot>> blocks;
    for (const Entry *entry : match(*glob, recursive)) {
        if (entry->stats != nullptr) {
            blocks.emplace_back(entry->spec.name, entry->stats->snapshot());
        }
    }
    if (blocks.empty()) {
        return Status(Errc::not_found, "no counter block matches '" + std::string(pattern) + "'");
    }
    return blocks;
}

BatchResult Registry::set(std::span<const Assignment> batch, std::string_view principal)
{
    std::lock_guard setLock(m_setMutex);
    std::shared_lock lock(m_mutex);
    BatchResult result;

    // 1. Plan (validate everything): the same function ctld and the console plan with.
    const BatchPlan batchPlan = planBatch(batch, [this](const Glob &glob) {
        std::vector<const Spec *> specs;
        for (const Entry *entry : match(glob, false)) {
            specs.push_back(&entry->spec);
        }
        return specs;
    });
    for (const auto &error : batchPlan.errors) {
        result.errors.push_back(error.status);
    }
    if (!result.errors.empty()) {
        result.status = Status(result.errors.front().code(), joinMessages(result.errors));
        return result;
    }
    std::vector<Planned> plan;
    plan.reserve(batchPlan.items.size());
    for (const auto &item : batchPlan.items) {
        plan.push_back({&m_entries.find(item.spec->name)->second, item});
    }
    if (plan.empty()) {
        return result;
    }

    // 2. Apply: values in order, then special actions (they cannot be undone).
    std::stable_partition(plan.begin(), plan.end(),
                          [](const Planned &p) { return !p.planned.isSpecial(); });
    result.results.reserve(plan.size());
    std::vector<Value> oldValues;
    oldValues.reserve(plan.size());
    for (const auto &item : plan) {
        Value old = item.entry->binding.read();
        SetResult entryResult;
        entryResult.name = item.entry->spec.name;
        entryResult.oldValue = item.planned.isSpecial() && item.entry->spec.type == Type::counters
                                   ? std::string()
                                   : formatValue(item.entry->spec, old);
        entryResult.requested = item.planned.requested;
        entryResult.special = item.planned.isSpecial();
        result.results.push_back(std::move(entryResult));
        oldValues.push_back(std::move(old));
    }
    std::size_t applied = 0;
    for (; applied < plan.size(); ++applied) {
        const auto &item = plan[applied];
        Status status = item.planned.isSpecial()
                            ? item.entry->binding.action(item.planned.value.special)
                            : item.entry->binding.apply(item.planned.value.value);
        if (!status) {
            result.results[applied].status = status.withContext(item.entry->spec.name);
            result.errors.push_back(result.results[applied].status);
            break;
        }
    }
    if (applied < plan.size()) {
        // Restore in reverse order; special actions already run cannot be undone.
        for (std::size_t i = applied; i-- > 0;) {
            const auto &item = plan[i];
            if (item.planned.isSpecial()) {
                continue;
            }
            Status restored = item.entry->binding.apply(oldValues[i]);
            result.results[i].rolledBack = restored.ok();
            if (!restored) {
                result.results[i].status = restored.withContext(
                    item.entry->spec.name + ": restoring " + result.results[i].oldValue);
                result.errors.push_back(result.results[i].status);
            }
        }
        for (std::size_t i = applied + 1; i < plan.size(); ++i) {
            result.results[i].status = Status(
                Errc::cancelled, plan[i].entry->spec.name + ": not applied, the batch failed");
        }
        result.status = Status(result.errors.front().code(),
                               "batch rolled back: " + joinMessages(result.errors));
    }

    // 3. Read back; a component that kept another value than requested is reported, not hidden.
    for (std::size_t i = 0; i < plan.size(); ++i) {
        const auto &spec = plan[i].entry->spec;
        auto &entryResult = result.results[i];
        if (spec.type == Type::counters) {
            continue;
        }
        entryResult.readBack = formatValue(spec, plan[i].entry->binding.read());
        entryResult.clamped = result.status.ok() && !entryResult.special &&
                              entryResult.readBack != entryResult.requested;
    }
    lock.unlock();

    notify(ChangeEvent{std::string(principal), WallClock::now(), result.status, result.results});
    return result;
}

Registry::Subscription Registry::subscribe(std::function<void(const ChangeEvent &)> listener)
{
    std::lock_guard lock(m_listenersMutex);
    const std::uint64_t id = m_nextListener++;
    m_listeners.emplace(id, std::move(listener));
    return {this, id};
}

void Registry::unsubscribe(std::uint64_t id)
{
    std::lock_guard lock(m_listenersMutex);
    m_listeners.erase(id);
}

void Registry::notify(const ChangeEvent &event)
{
    std::vector<std::function<void(const ChangeEvent &)>> listeners;
    {
        std::lock_guard lock(m_listenersMutex);
        for (const auto &[id, listener] : m_listeners) {
            listeners.push_back(listener);
        }
    }
    for (const auto &listener : listeners) {
        listener(event);
    }
}

Registry::Subscription::Subscription(Subscription &&other) noexcept
    : m_registry(std::exchange(other.m_registry, nullptr)), m_id(other.m_id)
{
}

Registry::Subscription &Registry::Subscription::operator=(Subscription &&other) noexcept
{
    if (this != &other) {
        if (m_registry != nullptr) {
            m_registry->unsubscribe(m_id);
        }
        m_registry = std::exchange(other.m_registry, nullptr);
        m_id = other.m_id;
    }
    return *this;
}

Registry::Subscription::~Subscription()
{
    if (m_registry != nullptr) {
        m_registry->unsubscribe(m_id);
    }
}

ParamGroup::~ParamGroup()
{
    for (const auto &name : m_names) {
        m_registry->remove(name);
    }
}

Status ParamGroup::add(Spec spec, Binding binding)
{
    std::string name = spec.name;
    Status status = m_registry->add(std::move(spec), std::move(binding));
    if (status) {
        m_names.push_back(std::move(name));
    }
    return status;
}

Status ParamGroup::addStats(std::string name, std::string help, StatsSource &source)
{
    std::string key = name;
    Status status = m_registry->addStats(std::move(name), std::move(help), source);
    if (status) {
        m_names.push_back(std::move(key));
    }
    return status;
}

} // namespace lutra::params
