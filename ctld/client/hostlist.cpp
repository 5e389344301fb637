#include "client/hostlist.h"

#include "ctld/profiles/node_pattern.h"

#include <charconv>

namespace lutra::ctld {

namespace {

Status errorAt(std::string_view hostlist, std::size_t column, const std::string &what)
{
    return {Errc::invalid_argument, "hostlist '" + std::string(hostlist) + "', column " +
                                        std::to_string(column + 1) + ": " + what};
}

// Expands one item (no top-level commas) into `out`.
Status expandItem(std::string_view hostlist, std::string_view item, std::size_t offset,
                  std::vector<std::string> &out)
{
    std::vector<std::string> prefixes{""};
    std::size_t i = 0;
    while (i < item.size()) {
        if (item[i] == ']') {
            return errorAt(hostlist, offset + i, "']' without '['");
        }
        if (item[i] != '[') {
            const auto next = item.find('[', i);
            const auto text = item.substr(i, next == std::string_view::npos ? item.npos : next - i);
            if (text.find(']') != std::string_view::npos) {
                return errorAt(hostlist, offset + i + text.find(']'), "']' without '['");
            }
            for (auto &prefix : prefixes) {
                prefix += text;
            }
            i += text.size();
            continue;
        }
        const auto close = item.find(']', i);
        if (close == std::string_view::npos) {
            return errorAt(hostlist, offset + i, "'[' is never closed");
        }
        std::vector<std::string> numbers;
        std::string_view body = item.substr(i + 1, close - i - 1);
        std::size_t position = i + 1;
        if (body.empty()) {
            return errorAt(hostlist, offset + i, "empty brackets");
        }
        while (true) {
            const auto comma = body.find(',');
            const auto range = body.substr(0, comma);
            const auto dash = range.find('-');
            const auto lowText = range.substr(0, dash);
            const auto highText = dash == std::string_view::npos ? lowText : range.substr(dash + 1);
            std::uint64_t low = 0;
            std::uint64_t high = 0;
            const auto parse = [](std::string_view text, std::uint64_t *value) {
                const auto [end, ec] =
                    std::from_chars(text.data(), text.data() + text.size(), *value);
                return !text.empty() && ec == std::errc() && end == text.data() + text.size();
            };
            if (!parse(lowText, &low) || !parse(highText, &high)) {
                return errorAt(hostlist, offset + position,
                               "'" + std::string(range) + "' is not a number or a range a-b");
            }
            if (high < low) {
                return errorAt(hostlist, offset + position,
                               "range " + std::string(range) + " goes backwards");
            }
            if (high - low >= kMaxHostlistHosts) {
                return errorAt(hostlist, offset + position,
                               "range " + std::string(range) + " names too many hosts");
            }
            for (std::uint64_t n = low; n <= high; ++n) {
                std::string digits = std::to_string(n);
                if (digits.size() < lowText.size()) {
                    digits.insert(0, lowText.size() - digits.size(), '0');
                }
                numbers.push_back(std::move(digits));
            }
            if (comma == std::string_view::npos) {
                break;
            }
            position += comma + 1;
            body.remove_prefix(comma + 1);
        }
        if (prefixes.size() * numbers.size() > kMaxHostlistHosts) {
            return errorAt(hostlist, offset + i,
                           "names more than " + std::to_string(kMaxHostlistHosts) + " hosts");
        }
        std::vector<std::string> next;
        next.reserve(prefixes.size() * numbers.size());
        for (const auto &prefix : prefixes) {
            for (const auto &number : numbers) {
                next.push_back(prefix + number);
            }
        }
        prefixes = std::move(next);
        i = close + 1;
    }
    for (auto &host : prefixes) {
        if (out.size() >= kMaxHostlistHosts) {
            return errorAt(hostlist, offset,
                           "names more than " + std::to_string(kMaxHostlistHosts) + " hosts");
        }
        out.push_back(std::move(host));
    }
    return {};
}

} // namespace

Result<std::vector<std::string>> expandHostlist(std::string_view hostlist)
{
    std::vector<std::string> hosts;
    // The same splitting as profiles' `match: nodes:` (commas outside brackets).
    for (const auto &[item, offset] : profiles::splitHostlist(hostlist)) {
        if (item.empty()) {
            return errorAt(hostlist, offset, "empty host name");
        }
        if (auto expanded = expandItem(hostlist, item, offset, hosts); !expanded) {
            return expanded;
        }
    }
    return hosts;
}

} // namespace lutra::ctld
