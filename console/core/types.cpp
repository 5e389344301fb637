#include "core/types.h"

namespace lutra::console {

QString roleName(Role role)
{
    switch (role) {
    case Role::viewer: return QStringLiteral("viewer");
    case Role::operator_: return QStringLiteral("operator");
    case Role::admin: return QStringLiteral("admin");
    case Role::unknown: break;
    }
    return QStringLiteral("unknown");
}

QString connectionStateName(ConnectionState state)
{
    switch (state) {
    case ConnectionState::connecting: return QStringLiteral("connecting");
    case ConnectionState::ready: return QStringLiteral("ready");
    case ConnectionState::unreachable: return QStringLiteral("unreachable");
    }
    return QStringLiteral("unknown");
}

} // namespace lutra::console
