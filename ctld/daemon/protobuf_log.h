#pragma once
// The protobuf library logs a line per message it cannot parse (a request with invalid UTF-8 in
// a string field, sent by anyone, even without a token): routed into ctld's own log and
// rate-limited, so a peer cannot flood the log.

#include <chrono>

namespace lutra::ctld {

// At most one protobuf line per `interval`; the next one says how many were left out.
void routeProtobufLog(std::chrono::seconds interval = std::chrono::seconds(60));

} // namespace lutra::ctld
