#include "client/reply_json.h"

#include <google/protobuf/util/json_util.h>

namespace lutra::ctld {

std::string replyJson(const google::protobuf::Message &message)
{
    std::string text;
    google::protobuf::util::JsonPrintOptions options;
    // Scripts index fields by name: a zero or an empty list must still be there.
    options.always_print_primitive_fields = true;
    options.preserve_proto_field_names = true;
    // Fails only for messages the printer cannot describe (Any without a type); "" then.
    (void)google::protobuf::util::MessageToJsonString(message, &text, options);
    return text;
}

} // namespace lutra::ctld
