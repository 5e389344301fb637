#include "control/utf8_fields.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <string>

namespace lutra::control {

std::size_t firstInvalidUtf8(std::string_view text) noexcept
{
    const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
    const std::size_t size = text.size();
    std::size_t i = 0;
    while (i < size) {
        const unsigned char lead = bytes[i];
        if (lead < 0x80) {
            ++i;
            continue;
        }
        std::size_t length;
        unsigned char low = 0x80; // bounds of the second byte (rejecting overlongs, surrogates)
        unsigned char high = 0xbf;
        if (lead >= 0xc2 && lead <= 0xdf) {
            length = 2;
        } else if (lead >= 0xe0 && lead <= 0xef) {
            length = 3;
            low = lead == 0xe0 ? 0xa0 : 0x80;
            high = lead == 0xed ? 0x9f : 0xbf;
        } else if (lead >= 0xf0 && lead <= 0xf4) {
            length = 4;
            low = lead == 0xf0 ? 0x90 : 0x80;
            high = lead == 0xf4 ? 0x8f : 0xbf;
        } else {
            return i;
        }
        if (i + length > size || bytes[i + 1] < low || bytes[i + 1] > high) {
            return i;
        }
        for (std::size_t k = 2; k < length; ++k) {
            if ((bytes[i + k] & 0xc0) != 0x80) {
                return i;
            }
        }
        i += length;
    }
    return std::string_view::npos;
}

namespace {

Status check(const google::protobuf::Message &message, const std::string &path)
{
    const auto *descriptor = message.GetDescriptor();
    const auto *reflection = message.GetReflection();
    for (int f = 0; f < descriptor->field_count(); ++f) {
        const auto *field = descriptor->field(f);
        const std::string name = path + "." + field->name();
        const bool repeated = field->is_repeated();
        const int count = repeated ? reflection->FieldSize(message, field) : 1;
        for (int i = 0; i < count; ++i) {
            const std::string where = repeated ? name + "[" + std::to_string(i) + "]" : name;
            if (field->type() == google::protobuf::FieldDescriptor::TYPE_BYTES) {
                std::string scratch;
                const std::string &text =
                    repeated ? reflection->GetRepeatedStringReference(message, field, i, &scratch)
                             : reflection->GetStringReference(message, field, &scratch);
                if (const auto at = firstInvalidUtf8(text); at != std::string_view::npos) {
                    return {Errc::invalid_argument, where + ": not UTF-8 (byte " +
                                                        std::to_string(at) + " of " +
                                                        std::to_string(text.size()) + ")"};
                }
            } else if (field->type() == google::protobuf::FieldDescriptor::TYPE_MESSAGE) {
                const auto &inner = repeated ? reflection->GetRepeatedMessage(message, field, i)
                                             : reflection->GetMessage(message, field);
                if (auto status = check(inner, where); !status) {
                    return status;
                }
            }
        }
    }
    return {};
}

} // namespace

Status checkUtf8Fields(const google::protobuf::Message &message)
{
    return check(message, message.GetDescriptor()->name());
}

} // namespace lutra::control
