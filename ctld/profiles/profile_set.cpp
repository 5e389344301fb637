#include "ctld/profiles/profile_set.h"

#include "ctld/profiles/parser.h"
#include "ctld/profiles/schema_check.h"
#include "ctld/profiles/suggest.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lutra::ctld::profiles {

struct ProfileSet::Walk {
    std::map<std::string, bool, std::less<>> onStack; // visited profiles; true while on the stack
    std::vector<const Profile *> stack;
    Resolved out;
    bool collectParams = true;
};

namespace {

void merge(std::vector<ParamEntry> &effective, const std::vector<ParamEntry> &own)
{
    for (const auto &entry : own) {
        // The child's entry goes last so it also wins over overlapping parent globs.
        std::erase_if(effective, [&](const ParamEntry &e) { return e.pattern == entry.pattern; });
        effective.push_back(entry);
    }
}

void appendUnique(Diagnostics &to, const Diagnostics &from)
{
    for (const auto &diagnostic : from) {
        if (std::find(to.begin(), to.end(), diagnostic) == to.end()) {
            to.push_back(diagnostic);
        }
    }
}

} // namespace

Diagnostics ProfileSet::loadDirectory(const std::filesystem::path &dir)
{
    std::error_code ec;
    std::filesystem::directory_iterator it(dir, ec);
    if (ec) {
        return {{Location{dir.string()}, "cannot read profile directory: " + ec.message(),
                 Errc::not_found}};
    }
    std::vector<std::filesystem::path> files;
    for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
        const auto &path = it->path();
        const auto extension = path.extension();
        if ((extension == ".yaml" || extension == ".yml") && it->is_regular_file(ec)) {
            files.push_back(path);
        }
    }
    if (ec) {
        return {{Location{dir.string()}, "cannot list profile directory: " + ec.message(),
                 Errc::io_error}};
    }
    std::sort(files.begin(), files.end());
    Diagnostics all;
    for (const auto &file : files) {
        auto errors = loadFile(file);
        all.insert(all.end(), errors.begin(), errors.end());
    }
    return all;
}

Diagnostics ProfileSet::loadFile(const std::filesystem::path &file)
{
    const std::string source = file.string();
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec) {
        return {{Location{source}, "cannot read profile: " + ec.message(), Errc::not_found}};
    }
    if (size > kMaxProfileBytes) {
        return {{Location{source},
                 "profile is larger than " + std::to_string(kMaxProfileBytes >> 10) + " KiB"}};
    }
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        return {{Location{source}, std::string("cannot read profile: ") + std::strerror(errno),
                 Errc::io_error}};
    }
    return addText(text.str(), source);
}

Diagnostics ProfileSet::addText(std::string_view text, std::string_view source)
{
    ParseResult parsed = parseProfile(text, source);
    if (!parsed.ok()) {
        return std::move(parsed.errors);
    }
    return add(std::move(parsed.profile));
}

Diagnostics ProfileSet::add(Profile profile)
{
    if (const Profile *existing = find(profile.name)) {
        return {{profile.location,
                 "profile " + inQuotes(profile.name) + " is already defined at " +
                     existing->location.toString(),
                 Errc::already_exists}};
    }
    if (!isValidProfileName(profile.name)) {
        return {{profile.location, "invalid profile name " + inQuotes(profile.name)}};
    }
    std::string name = profile.name;
    m_profiles.emplace(std::move(name), std::move(profile));
    return {};
}

const Profile *ProfileSet::find(std::string_view name) const
{
    const auto found = m_profiles.find(name);
    return found == m_profiles.end() ? nullptr : &found->second;
}

std::vector<std::string> ProfileSet::names() const
{
    std::vector<std::string> list;
    list.reserve(m_profiles.size());
    for (const auto &[name, profile] : m_profiles) {
        list.push_back(name);
    }
    return list;
}

void ProfileSet::visit(const Profile &profile, Walk &walk) const
{
    walk.onStack[profile.name] = true;
    walk.stack.push_back(&profile);
    for (const auto &parent : profile.extends) {
        const auto state = walk.onStack.find(parent.name);
        if (state != walk.onStack.end() && state->second) {
            std::string chain;
            bool inCycle = false;
            for (const Profile *member : walk.stack) {
                inCycle = inCycle || member->name == parent.name;
                if (inCycle) {
                    chain += member->name + " -> ";
                }
            }
            chain += parent.name;
            walk.out.errors.push_back({parent.location, "cycle in extends: " + chain});
            continue;
        }
        if (state != walk.onStack.end()) {
            continue; // already applied through another parent
        }
        const Profile *found = find(parent.name);
        if (found == nullptr) {
            std::string message = "unknown profile " + inQuotes(parent.name) + " in extends";
            std::vector<std::string_view> known;
            for (const auto &[name, p] : m_profiles) {
                known.push_back(name);
            }
            if (const std::string close = closestWord(parent.name, known); !close.empty()) {
                message += " (did you mean " + close + "?)";
            }
            walk.out.errors.push_back({parent.location, std::move(message), Errc::not_found});
            continue;
        }
        if (walk.stack.size() >= kMaxDepth) {
            walk.out.errors.push_back(
                {parent.location,
                 "extends chain is deeper than " + std::to_string(kMaxDepth) + " profiles"});
            continue;
        }
        visit(*found, walk);
    }
    walk.stack.pop_back();
    walk.onStack[profile.name] = false;
    walk.out.chain.push_back(profile.name);
    if (walk.collectParams) {
        merge(walk.out.params, profile.params);
    }
}

Resolved ProfileSet::resolve(std::string_view name) const
{
    const Profile *profile = find(name);
    if (profile == nullptr) {
        Resolved missing;
        missing.errors.push_back({Location{"profile:" + std::string(name)},
                                  "no profile named " + inQuotes(name), Errc::not_found});
        return missing;
    }
    Walk walk;
    visit(*profile, walk);
    return std::move(walk.out);
}

Diagnostics ProfileSet::checkExtends() const
{
    // One walk over the whole set, so each cycle and each unknown parent shows up once.
    Walk walk;
    walk.collectParams = false;
    for (const auto &[name, profile] : m_profiles) {
        if (!walk.onStack.contains(name)) {
            visit(profile, walk);
        }
    }
    Diagnostics unique;
    appendUnique(unique, walk.out.errors);
    return unique;
}

Diagnostics ProfileSet::validate(std::span<const params::Spec> schema) const
{
    Diagnostics all = checkExtends();
    for (const auto &[name, profile] : m_profiles) {
        appendUnique(all, validateParams(profile.params, schema));
    }
    return all;
}

std::vector<std::string> ProfileSet::matching(std::string_view nodeName,
                                              const Labels &nodeLabels) const
{
    std::vector<std::string> list;
    for (const auto &[name, profile] : m_profiles) {
        if (profile.matches(nodeName, nodeLabels)) {
            list.push_back(name);
        }
    }
    return list;
}

} // namespace lutra::ctld::profiles
