#include "ctld/profiles/profile.h"

#include <algorithm>

namespace lutra::ctld::profiles {

bool Match::matches(std::string_view nodeName, const Labels &nodeLabels) const
{
    const bool nameOk =
        nodes.empty() ||
        std::any_of(nodes.begin(), nodes.end(), [&](const auto &p) { return p.matches(nodeName); });
    if (!nameOk) {
        return false;
    }
    return std::all_of(labels.begin(), labels.end(), [&](const auto &label) {
        const auto found = nodeLabels.find(label.first);
        return found != nodeLabels.end() && found->second == label.second;
    });
}

} // namespace lutra::ctld::profiles
