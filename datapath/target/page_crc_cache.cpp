#include "target/page_crc_cache.h"

#include <algorithm>

namespace lutra::target {

void PageCrcCache::dropPages(Object &object, std::uint64_t firstPage, std::uint64_t endPage)
{
    const std::uint64_t end = std::min<std::uint64_t>(endPage, object.valid.size());
    for (std::uint64_t page = firstPage; page < end; ++page) {
        object.valid[page] = false;
    }
}

bool PageCrcCache::lookup(std::uint64_t inode, const Identity &identity, std::uint64_t firstPage,
                          std::span<std::uint32_t> out)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_objects.find(inode);
    if (it == m_objects.end()) {
        return false;
    }
    Object &object = it->second;
    if (object.changes > 0 || object.identity != identity ||
        firstPage + out.size() > object.valid.size()) {
        return false;
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (!object.valid[firstPage + i]) {
            return false;
        }
        out[i] = object.crcs[firstPage + i];
    }
    m_hits += out.size();
    return true;
}

PageCrcCache::Ticket PageCrcCache::ticket(std::uint64_t inode)
{
    std::lock_guard lock(m_mutex);
    const auto it = m_objects.find(inode);
    return {m_epoch, it == m_objects.end() || it->second.changes == 0};
}

void PageCrcCache::store(std::uint64_t inode, const Identity &identity, const Ticket &ticket,
                         std::uint64_t firstPage, std::span<const std::uint32_t> crcs)
{
    if (!ticket.valid || crcs.empty() || firstPage + crcs.size() > kMaxPagesPerObject) {
        return;
    }
    std::lock_guard lock(m_mutex);
    auto it = m_objects.find(inode);
    if (it == m_objects.end()) {
        if (m_objects.size() >= kMaxObjects || m_forgottenAt > ticket.epoch) {
            return;
        }
        it = m_objects.emplace(inode, Object{}).first;
        it->second.identity = identity;
    }
    Object &object = it->second;
    if (object.changes > 0 || object.lastChange > ticket.epoch) {
        return; // a change began after the ticket: the sums may predate it
    }
    if (object.identity != identity) {
        // Changed behind the target's back (or summed from a newer look): start over.
        object.identity = identity;
        std::fill(object.valid.begin(), object.valid.end(), false);
    }
    const std::uint64_t end = firstPage + crcs.size();
    if (object.valid.size() < end) {
        object.valid.resize(end, false);
        object.crcs.resize(end, 0);
    }
    std::copy(crcs.begin(), crcs.end(),
              object.crcs.begin() + static_cast<std::ptrdiff_t>(firstPage));
    for (std::uint64_t page = firstPage; page < end; ++page) {
        object.valid[page] = true;
    }
    m_stored += crcs.size();
}

void PageCrcCache::beginChange(std::uint64_t inode, std::uint64_t firstPage, std::uint64_t endPage)
{
    std::lock_guard lock(m_mutex);
    ++m_epoch;
    auto it = m_objects.find(inode);
    if (it == m_objects.end()) {
        if (m_objects.size() >= kMaxObjects) {
            m_forgottenAt = m_epoch; // untracked: refuse every older ticket for a new object
            return;
        }
        it = m_objects.emplace(inode, Object{}).first;
    }
    Object &object = it->second;
    ++object.changes;
    object.lastChange = m_epoch;
    dropPages(object, firstPage, endPage);
}

PageCrcCache::Ticket PageCrcCache::endChange(std::uint64_t inode, std::uint64_t firstPage,
                                             std::uint64_t endPage,
                                             const std::optional<Identity> &after)
{
    std::lock_guard lock(m_mutex);
    ++m_epoch;
    const auto it = m_objects.find(inode);
    if (it == m_objects.end()) {
        m_forgottenAt = m_epoch;
        return {m_epoch, false};
    }
    Object &object = it->second;
    if (object.changes > 0) {
        --object.changes;
    }
    object.lastChange = m_epoch;
    dropPages(object, firstPage, endPage);
    if (!after) {
        std::fill(object.valid.begin(), object.valid.end(), false); // look unknown: keep nothing
        return {m_epoch, false};
    }
    object.identity = *after;
    return {m_epoch, object.changes == 0};
}

void PageCrcCache::forget(std::uint64_t inode)
{
    std::lock_guard lock(m_mutex);
    ++m_epoch;
    const auto it = m_objects.find(inode);
    if (it == m_objects.end()) {
        return;
    }
    if (it->second.changes > 0) {
        // A change is still in progress: keep the object (its count), drop its pages.
        it->second.lastChange = m_epoch;
        std::fill(it->second.valid.begin(), it->second.valid.end(), false);
        return;
    }
    m_forgottenAt = m_epoch;
    m_objects.erase(it);
}

std::uint64_t PageCrcCache::hits() const
{
    std::lock_guard lock(m_mutex);
    return m_hits;
}

std::uint64_t PageCrcCache::stored() const
{
    std::lock_guard lock(m_mutex);
    return m_stored;
}

} // namespace lutra::target
