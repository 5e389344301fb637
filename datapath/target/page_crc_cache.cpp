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

bool PageCrcCache::makeRoom(Shard &shard, std::uint64_t keep, std::size_t objects,
                            std::uint64_t pages)
{
    if (objects > kShardObjects || pages > kShardPages) {
        return false;
    }
    while (shard.objects.size() + objects > kShardObjects ||
           shard.pagesKept + pages > kShardPages) {
        auto victim = shard.objects.end();
        for (auto it = shard.objects.begin(); it != shard.objects.end(); ++it) {
            if (it->first != keep && it->second.changes.empty() &&
                (victim == shard.objects.end() || it->second.lastUse < victim->second.lastUse)) {
                victim = it;
            }
        }
        if (victim == shard.objects.end()) {
            return false; // every other object is held by a change
        }
        shard.pagesKept -= victim->second.valid.size();
        shard.objects.erase(victim);
        ++shard.evicted;
        shard.forgottenAt = ++shard.epoch;
    }
    return true;
}

PageCrcCache::Object *PageCrcCache::track(Shard &shard, std::uint64_t inode)
{
    if (!makeRoom(shard, inode, 1, 0)) {
        return nullptr;
    }
    return &shard.objects.emplace(inode, Object{}).first->second;
}

bool PageCrcCache::lookup(std::uint64_t inode, const Identity &identity, std::uint64_t firstPage,
                          std::span<std::uint32_t> out)
{
    Shard &shard = shardOf(inode);
    std::lock_guard lock(shard.mutex);
    const auto it = shard.objects.find(inode);
    if (it == shard.objects.end()) {
        return false;
    }
    Object &object = it->second;
    if (!object.changes.empty() || object.identity != identity ||
        firstPage + out.size() > object.valid.size()) {
        return false;
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (!object.valid[firstPage + i]) {
            return false;
        }
        out[i] = object.crcs[firstPage + i];
    }
    object.lastUse = ++shard.useClock;
    shard.hits += out.size();
    return true;
}

PageCrcCache::Ticket PageCrcCache::ticket(std::uint64_t inode)
{
    Shard &shard = shardOf(inode);
    std::lock_guard lock(shard.mutex);
    const auto it = shard.objects.find(inode);
    return {shard.epoch, it == shard.objects.end() || it->second.changes.empty()};
}

void PageCrcCache::store(std::uint64_t inode, const Identity &identity, const Ticket &ticket,
                         std::uint64_t firstPage, std::span<const std::uint32_t> crcs)
{
    if (!ticket.valid || crcs.empty() || firstPage + crcs.size() > kMaxPagesPerObject) {
        return;
    }
    Shard &shard = shardOf(inode);
    std::lock_guard lock(shard.mutex);
    auto it = shard.objects.find(inode);
    Object *object = nullptr;
    if (it == shard.objects.end()) {
        if (shard.forgottenAt > ticket.epoch) {
            return; // forgotten (or untracked) since the ticket: the sums may predate a change
        }
        object = track(shard, inode);
        if (object == nullptr) {
            return;
        }
        object->identity = identity;
    } else {
        object = &it->second;
    }
    if (!object->changes.empty() || object->lastChange > ticket.epoch) {
        return; // a change began after the ticket: the sums may predate it
    }
    if (object->identity != identity) {
        // Changed behind the target's back (or summed from a newer look): start over.
        object->identity = identity;
        std::fill(object->valid.begin(), object->valid.end(), false);
    }
    (void)keepCrcs(shard, inode, *object, firstPage, crcs);
}

bool PageCrcCache::keepCrcs(Shard &shard, std::uint64_t inode, Object &object,
                            std::uint64_t firstPage, std::span<const std::uint32_t> crcs)
{
    const std::uint64_t end = firstPage + crcs.size();
    if (object.valid.size() < end) {
        const std::uint64_t more = end - object.valid.size();
        if (!makeRoom(shard, inode, 0, more)) {
            return false;
        }
        object.valid.resize(end, false);
        object.crcs.resize(end, 0);
        shard.pagesKept += more;
    }
    std::copy(crcs.begin(), crcs.end(),
              object.crcs.begin() + static_cast<std::ptrdiff_t>(firstPage));
    for (std::uint64_t page = firstPage; page < end; ++page) {
        object.valid[page] = true;
    }
    object.lastUse = ++shard.useClock;
    shard.stored += crcs.size();
    return true;
}

void PageCrcCache::beginChange(std::uint64_t inode, std::uint64_t firstPage, std::uint64_t endPage)
{
    Shard &shard = shardOf(inode);
    std::lock_guard lock(shard.mutex);
    ++shard.epoch;
    auto it = shard.objects.find(inode);
    Object *object = it == shard.objects.end() ? track(shard, inode) : &it->second;
    if (object == nullptr) {
        shard.forgottenAt = shard.epoch; // untracked: refuse every older ticket for a new object
        return;
    }
    Running change{firstPage, endPage, false};
    for (Running &other : object->changes) {
        if (other.firstPage < endPage && firstPage < other.endPage) {
            other.overlapped = true;
            change.overlapped = true;
        }
    }
    object->changes.push_back(change);
    object->lastChange = shard.epoch;
    dropPages(*object, firstPage, endPage);
}

bool PageCrcCache::endChange(std::uint64_t inode, std::uint64_t firstPage, std::uint64_t endPage,
                             const std::optional<Identity> &after,
                             std::span<const std::uint32_t> written)
{
    Shard &shard = shardOf(inode);
    std::lock_guard lock(shard.mutex);
    ++shard.epoch;
    const auto it = shard.objects.find(inode);
    if (it == shard.objects.end()) {
        shard.forgottenAt = shard.epoch;
        return false;
    }
    Object &object = it->second;
    bool overlapped = true; // a change this cache did not see begin: trust nothing of it
    const auto mine =
        std::find_if(object.changes.begin(), object.changes.end(), [&](const Running &change) {
            return change.firstPage == firstPage && change.endPage == endPage;
        });
    if (mine != object.changes.end()) {
        overlapped = mine->overlapped;
        object.changes.erase(mine);
    }
    object.lastChange = shard.epoch;
    dropPages(object, firstPage, endPage);
    if (!after) {
        std::fill(object.valid.begin(), object.valid.end(), false); // look unknown: keep nothing
        return false;
    }
    object.identity = *after;
    if (overlapped || written.size() > endPage - firstPage ||
        firstPage + written.size() > kMaxPagesPerObject) {
        return false;
    }
    return written.empty() || keepCrcs(shard, inode, object, firstPage, written);
}

void PageCrcCache::forget(std::uint64_t inode)
{
    Shard &shard = shardOf(inode);
    std::lock_guard lock(shard.mutex);
    ++shard.epoch;
    const auto it = shard.objects.find(inode);
    if (it == shard.objects.end()) {
        return;
    }
    if (!it->second.changes.empty()) {
        // A change is still in progress: keep the object (its changes), drop its pages.
        it->second.lastChange = shard.epoch;
        std::fill(it->second.valid.begin(), it->second.valid.end(), false);
        return;
    }
    shard.forgottenAt = shard.epoch;
    shard.pagesKept -= it->second.valid.size();
    shard.objects.erase(it);
}

std::uint64_t PageCrcCache::sum(std::uint64_t Shard::*counter) const
{
    std::uint64_t total = 0;
    for (const Shard &shard : m_shards) {
        std::lock_guard lock(shard.mutex);
        total += shard.*counter;
    }
    return total;
}

std::uint64_t PageCrcCache::hits() const
{
    return sum(&Shard::hits);
}

std::uint64_t PageCrcCache::stored() const
{
    return sum(&Shard::stored);
}

std::uint64_t PageCrcCache::evicted() const
{
    return sum(&Shard::evicted);
}

} // namespace lutra::target
