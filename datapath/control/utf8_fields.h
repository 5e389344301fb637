#pragma once
// Request text arrives as protobuf `bytes` (see lutra/ctl/v1/ctl.proto): this checks it is UTF-8
// before anything uses it, so a bad request gets an error naming the field and never reaches a
// reply (whose `string` fields the client's parser would reject).

#include <lutra/status.h>

#include <string_view>

namespace google::protobuf {
class Message;
}

namespace lutra::control {

// The offset of the first byte that does not belong to a well-formed UTF-8 sequence (overlong
// forms, surrogates and code points above U+10FFFF are malformed), or npos.
std::size_t firstInvalidUtf8(std::string_view text) noexcept;

// invalid_argument "<Message>.<field>[i]: not UTF-8 (byte N)" for the first `bytes` field,
// at any depth, that is not UTF-8; ok otherwise.
Status checkUtf8Fields(const google::protobuf::Message &message);

} // namespace lutra::control
