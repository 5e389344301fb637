#include "api/wire_checks.h"

#include <cstdint>
#include <limits>

namespace lutra::ctld {

namespace {

constexpr std::uint64_t kMaxId = std::numeric_limits<std::int64_t>::max();
// 0 or 1970-01-01 .. 2200-01-01: anything else is not a time ctld has or will have recorded.
constexpr std::int64_t kMaxTimeNs = 7'258'118'400LL * 1'000'000'000LL;

Status checkId(std::string_view call, std::string_view field, std::uint64_t id)
{
    if (id > kMaxId) {
        return {Errc::invalid_argument, std::string(call) + ": " + std::string(field) + " " +
                                            std::to_string(id) +
                                            " is not a history point id (1..2^63-1)"};
    }
    return {};
}

Status checkTime(std::string_view call, std::string_view field, std::int64_t ns)
{
    if (ns < 0 || ns > kMaxTimeNs) {
        return {Errc::invalid_argument,
                std::string(call) + ": " + std::string(field) + " " + std::to_string(ns) +
                    " is not a time in ns since 1970 (0 .. " + std::to_string(kMaxTimeNs) + ")"};
    }
    return {};
}

Status firstError(std::initializer_list<Status> checks)
{
    for (const auto &status : checks) {
        if (!status.ok()) {
            return status;
        }
    }
    return {};
}

} // namespace

Status checkWire(const ctl::v1::ListHistoryRequest &request)
{
    constexpr std::string_view call = "ListHistory";
    return firstError({checkId(call, "before_id", request.before_id()),
                       checkTime(call, "since_ns", request.since_ns()),
                       checkTime(call, "until_ns", request.until_ns())});
}

Status checkWire(const ctl::v1::RollbackRequest &request)
{
    return checkId("Rollback", "history_id", request.history_id());
}

Status checkWire(const ctl::v1::GetCounterHistoryRequest &request)
{
    constexpr std::string_view call = "GetCounterHistory";
    return firstError({checkTime(call, "since_ns", request.since_ns()),
                       checkTime(call, "until_ns", request.until_ns())});
}

} // namespace lutra::ctld
