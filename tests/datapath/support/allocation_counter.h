#pragma once
// Counts heap allocations while armed: how a test proves a path allocates nothing
// (g_countAllocations = true; run it; check g_allocations). It replaces the global operator new
// and delete, so include it in exactly one source file of a test executable.

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_countAllocations{false};
std::atomic<long> g_allocations{0};
} // namespace

void *operator new(std::size_t size)
{
    if (g_countAllocations.load(std::memory_order_relaxed)) {
        g_allocations.fetch_add(1, std::memory_order_relaxed);
    }
    if (void *p = std::malloc(size == 0 ? 1 : size)) {
        return p;
    }
    throw std::bad_alloc();
}
void *operator new[](std::size_t size)
{
    return operator new(size);
}
// The nothrow forms too (std::stable_partition's buffer uses them), so every delete below frees
// what malloc gave.
void *operator new(std::size_t size, const std::nothrow_t &) noexcept
{
    return std::malloc(size == 0 ? 1 : size);
}
void *operator new[](std::size_t size, const std::nothrow_t &) noexcept
{
    return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void *p) noexcept
{
    std::free(p);
}
void operator delete[](void *p) noexcept
{
    std::free(p);
}
void operator delete(void *p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete[](void *p, std::size_t) noexcept
{
    std::free(p);
}
void operator delete(void *p, const std::nothrow_t &) noexcept
{
    std::free(p);
}
void operator delete[](void *p, const std::nothrow_t &) noexcept
{
    std::free(p);
}

// The positive control: a test that relies on the counter first checks it sees an allocation
// (a direct operator new call, which the compiler may not elide as it may a new-expression).
inline bool allocationCounterWorks()
{
    const long before = g_allocations.load();
    g_countAllocations = true;
    void *probe = ::operator new(16);
    g_countAllocations = false;
    ::operator delete(probe);
    return g_allocations.load() == before + 1;
}
