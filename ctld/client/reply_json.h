#pragma once
// A reply as JSON the way lutractl --json prints it under "result": proto field names
// ("history_id"), default values included. One definition, so the console's copy-as-JSON and
// lutractl never drift apart.

#include <google/protobuf/message.h>

#include <string>

namespace lutra::ctld {

std::string replyJson(const google::protobuf::Message &message);

} // namespace lutra::ctld
