#include "ctld/profiles/suggest.h"

#include "core/params/glob.h"

#include <algorithm>
#include <vector>

namespace lutra::ctld::profiles {

namespace {

std::vector<std::string_view> components(std::string_view name)
{
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = name.find('.', start);
        parts.push_back(name.substr(start, dot - start));
        if (dot == std::string_view::npos) {
            return parts;
        }
        start = dot + 1;
    }
}

// The spec name rewritten in the pattern's shape: each component the pattern's component
// already matches is replaced by the pattern's text, so wildcards survive into the suggestion.
std::string inPatternShape(const std::vector<std::string_view> &pattern, std::string_view name)
{
    const auto parts = components(name);
    std::string shaped;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) {
            shaped += '.';
        }
        const bool sameShape = parts.size() == pattern.size();
        if (sameShape && params::matchComponent(pattern[i], parts[i])) {
            shaped += pattern[i];
        } else {
            shaped += parts[i];
        }
    }
    return shaped;
}

std::size_t allowedDistance(std::string_view word)
{
    return std::max<std::size_t>(2, word.size() / 5);
}

// The distance is at least the difference in length: most candidates are ruled out unmeasured.
bool mayBeWithin(std::string_view a, std::string_view b, std::size_t limit)
{
    const std::size_t difference = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
    return difference <= limit;
}

// Parameter names are short; a longer pattern is no typo of one and gets no suggestion.
constexpr std::size_t kMaxSuggestedLength = 256;

} // namespace

std::size_t editDistance(std::string_view a, std::string_view b)
{
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) {
        row[j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] =
                std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string closestWord(std::string_view word, std::span<const std::string_view> candidates)
{
    std::string best;
    std::size_t bestDistance = allowedDistance(word) + 1;
    if (word.size() > kMaxSuggestedLength) {
        return best;
    }
    for (const auto candidate : candidates) {
        if (!mayBeWithin(word, candidate, bestDistance - 1)) {
            continue;
        }
        const std::size_t distance = editDistance(word, candidate);
        if (distance < bestDistance) {
            bestDistance = distance;
            best = candidate;
        }
    }
    return best;
}

std::string closestParameter(std::string_view pattern, std::span<const params::Spec> schema)
{
    if (pattern.size() > kMaxSuggestedLength) {
        return {};
    }
    const auto patternParts = components(pattern);
    const std::string_view leaf = patternParts.back();
    std::string best;
    std::size_t bestDistance = allowedDistance(pattern) + 1;
    // A right leaf under a wrong prefix ("osc.*.max_read_ahead_mb") is worth suggesting even
    // when the whole name is far off; the closest such candidate wins.
    std::string sameLeaf;
    std::size_t sameLeafDistance = std::string::npos;
    for (const auto &spec : schema) {
        const std::string shaped = inPatternShape(patternParts, spec.name);
        const bool sameLeafCandidate = params::leafName(spec.name) == leaf;
        if (!sameLeafCandidate && !mayBeWithin(pattern, shaped, bestDistance - 1)) {
            continue;
        }
        const std::size_t distance = editDistance(pattern, shaped);
        if (distance < bestDistance) {
            bestDistance = distance;
            best = shaped;
        }
        if (sameLeafCandidate && distance < sameLeafDistance) {
            sameLeafDistance = distance;
            sameLeaf = shaped;
        }
    }
    return best.empty() ? sameLeaf : best;
}

} // namespace lutra::ctld::profiles
