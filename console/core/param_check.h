#pragma once
// Checks a value for a parameter with the registry's own parser (datapath/core/params), so an
// editor says exactly what the datapath would say, before anything is sent.

#include "core/types.h"

// Declared only: the console's public headers do not need the datapath's include path. Callers of
// toRegistrySpec include "core/params/spec.h" themselves.
namespace lutra::params {
struct Spec;
} // namespace lutra::params

namespace lutra::console {

struct ValueCheck {
    bool ok = false;
    QString error;     // the registry's message when !ok
    QString canonical; // the value as get_param would print it (or the special word)
    bool special = false;
};

ValueCheck checkValue(const ParamSpec &spec, const QString &text);

// The registry's Spec for a console ParamSpec (as ctld sent it), for code that reuses the
// registry's or ctld's checks. A type this console does not know (unspecified) becomes a string:
// any one-line value passes here and the node, which knows the type, judges it.
lutra::params::Spec toRegistrySpec(const ParamSpec &spec);

} // namespace lutra::console
