#pragma once
// Checks a profile document the way lutra-ctld checks an inline one for DiffProfile, with the
// same ctld/profiles code, so the console shows the node's own errors, word for word, before
// anything is sent.

#include "core/types.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace lutra::console {

struct ProfileCheck {
    QString name;               // the profile's name; empty when the document has none (yet)
    QList<ProfileError> errors; // file:line:col, messages verbatim from ctld/profiles
    QList<int> errorLines;      // 1-based lines with at least one error, ascending, once each
};

// `source` names the document in errors: "inline" (what ctld calls a document sent with the
// request) or a file name. `schema` is the connected nodes' parameters; their union is checked,
// as ctld checks against the union of its instances. `knownProfiles` are the profiles the
// document may extend.
//
// Like ctld: structural errors alone when the document does not parse; then `extends` (unknown
// parents with "did you mean", a profile extending itself); then, only when that resolves, the
// parameters against the schema. Without a schema (no node connected) parameters are not
// checked. The console knows parents by name only: what is wrong inside a parent is reported by
// the node.
ProfileCheck checkProfile(const QString &yaml, const QString &source,
                          const QList<InstanceSpecs> &schema, const QStringList &knownProfiles);

} // namespace lutra::console
