#pragma once
// A set of profiles by name: loading, inheritance (`extends`), effective parameters.

#include "core/params/spec.h"
#include "ctld/profiles/diagnostic.h"
#include "ctld/profiles/profile.h"

#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld::profiles {

// A profile with its ancestry applied.
struct Resolved {
    std::vector<std::string> chain; // every profile that contributed, parents before children
    std::vector<ParamEntry> params; // effective: parents first, a child's same pattern replaces
    Diagnostics errors;             // unknown parents, cycles: do not apply when not empty

    bool ok() const noexcept { return errors.empty(); }
};

class ProfileSet {
public:
    static constexpr std::size_t kMaxDepth = 32; // profiles in one line of inheritance

    // Loads every *.yaml and *.yml file of `dir` in file-name order. Profiles that parse are
    // added even when others fail; every problem is returned.
    Diagnostics loadDirectory(const std::filesystem::path &dir);
    Diagnostics loadFile(const std::filesystem::path &file);
    // `source` names the text in diagnostics: a file path or "profile:<name>".
    Diagnostics addText(std::string_view text, std::string_view source);
    // Fails when a profile of that name exists.
    Diagnostics add(Profile profile);

    const Profile *find(std::string_view name) const;
    std::vector<std::string> names() const; // sorted
    std::size_t size() const noexcept { return m_profiles.size(); }

    // Effective parameters of one profile. Parents apply in the order `extends` lists them, each
    // after its own parents; a profile reached twice (a diamond) applies once, at its first place.
    Resolved resolve(std::string_view name) const;

    // Every unknown parent and every cycle in the set, each reported once.
    Diagnostics checkExtends() const;
    // checkExtends plus every profile's own parameters against a node's schema (schema_check.h).
    Diagnostics validate(std::span<const params::Spec> schema) const;

    // Names of the profiles whose `match` selects this node.
    std::vector<std::string> matching(std::string_view nodeName, const Labels &nodeLabels) const;

private:
    struct Walk;
    void visit(const Profile &profile, Walk &walk) const;

    std::map<std::string, Profile, std::less<>> m_profiles;
};

} // namespace lutra::ctld::profiles
