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

QString profileErrorText(const ProfileError &error)
{
    if (error.line <= 0) {
        return QStringLiteral("%1: %2").arg(error.file, error.message);
    }
    return QStringLiteral("%1:%2:%3: %4")
        .arg(error.file)
        .arg(error.line)
        .arg(error.column)
        .arg(error.message);
}

} // namespace lutra::console
