#pragma once
// Bounded-concurrency fan-out for blocking per-node work (lutractl): every index in [0, count)
// is handed to `work` exactly once, at most `concurrency` at a time; returns when all are done.
// Per-node deadlines are the calls' own (CtlClient::context).

#include <cstddef>
#include <functional>

namespace lutra::ctld {

void fanOut(std::size_t count, std::size_t concurrency,
            const std::function<void(std::size_t index)> &work);

} // namespace lutra::ctld
