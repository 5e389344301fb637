#pragma once
// Checks a value for a parameter with the registry's own parser (datapath/core/params), so an
// editor says exactly what the datapath would say, before anything is sent.

#include "core/types.h"

namespace lutra::console {

struct ValueCheck {
    bool ok = false;
    QString error;     // the registry's message when !ok
    QString canonical; // the value as get_param would print it (or the special word)
    bool special = false;
};

ValueCheck checkValue(const ParamSpec &spec, const QString &text);

} // namespace lutra::console
