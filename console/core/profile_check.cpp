#include "core/profile_check.h"

#include "core/param_check.h"
#include "core/params/spec.h"
#include "ctld/profiles/parser.h"
#include "ctld/profiles/profile_set.h"
#include "ctld/profiles/schema_check.h"

#include <QSet>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

namespace lutra::console {

namespace {

namespace profiles = ctld::profiles;

// ctld's nodeSchema: the first spec of each name, in the order the instances list them (the
// order decides between equally close "did you mean" candidates).
std::vector<params::Spec> unionSchema(const QList<InstanceSpecs> &schema)
{
    std::vector<params::Spec> specs;
    std::set<std::string> names;
    for (const InstanceSpecs &instance : schema) {
        for (const ParamSpec &spec : instance.specs) {
            params::Spec registry = toRegistrySpec(spec);
            if (names.insert(registry.name).second) {
                specs.push_back(std::move(registry));
            }
        }
    }
    return specs;
}

QList<ProfileError> toErrors(const profiles::Diagnostics &diagnostics)
{
    QList<ProfileError> errors;
    errors.reserve(static_cast<qsizetype>(diagnostics.size()));
    for (const auto &diagnostic : diagnostics) {
        errors.append({QString::fromStdString(diagnostic.location.file), diagnostic.location.line,
                       diagnostic.location.column, QString::fromStdString(diagnostic.message)});
    }
    return errors;
}

QList<int> linesOf(const QList<ProfileError> &errors)
{
    QSet<int> seen;
    for (const ProfileError &error : errors) {
        if (error.line > 0) {
            seen.insert(error.line);
        }
    }
    QList<int> lines(seen.cbegin(), seen.cend());
    std::sort(lines.begin(), lines.end());
    return lines;
}

ProfileCheck finished(ProfileCheck check)
{
    check.errorLines = linesOf(check.errors);
    return check;
}

} // namespace

ProfileCheck checkProfile(const QString &yaml, const QString &source,
                          const QList<InstanceSpecs> &schema, const QStringList &knownProfiles)
{
    ProfileCheck check;
    profiles::ParseResult parsed = profiles::parseProfile(yaml.toStdString(), source.toStdString());
    check.name = QString::fromStdString(parsed.profile.name);
    if (!parsed.ok()) {
        check.errors = toErrors(parsed.errors);
        return finished(std::move(check));
    }

    // The set ctld resolves in: the document first (it wins over a namesake), then the other
    // profiles. Their contents are the node's; names are enough to resolve `extends` with ctld's
    // own messages and suggestions.
    const std::string name = parsed.profile.name;
    profiles::ProfileSet set;
    (void)set.add(std::move(parsed.profile));
    for (const QString &known : knownProfiles) {
        profiles::Profile parent;
        parent.name = known.toStdString();
        parent.source = "profile:" + parent.name;
        if (parent.name != name) {
            (void)set.add(std::move(parent)); // a name ctld could not hold is refused: fine
        }
    }
    const profiles::Resolved resolved = set.resolve(name);
    profiles::Diagnostics errors = resolved.errors;
    // ctld validates only a profile that resolves, and says nothing of parameters without a
    // datapath process to compare with.
    const std::vector<params::Spec> specs = unionSchema(schema);
    if (resolved.ok() && !specs.empty()) {
        const profiles::Diagnostics invalid = profiles::validateParams(resolved.params, specs);
        errors.insert(errors.end(), invalid.begin(), invalid.end());
    }
    check.errors = toErrors(errors);
    return finished(std::move(check));
}

} // namespace lutra::console
