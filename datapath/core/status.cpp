#include <lutra/status.h>

#include <cerrno>

namespace lutra {

std::string_view errcName(Errc code) noexcept
{
    switch (code) {
    case Errc::ok: return "ok";
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::out_of_range: return "out_of_range";
    case Errc::not_found: return "not_found";
    case Errc::already_exists: return "already_exists";
    case Errc::permission_denied: return "permission_denied";
    case Errc::failed_precondition: return "failed_precondition";
    case Errc::unavailable: return "unavailable";
    case Errc::timeout: return "timeout";
    case Errc::io_error: return "io_error";
    case Errc::protocol_error: return "protocol_error";
    case Errc::resource_exhausted: return "resource_exhausted";
    case Errc::cancelled: return "cancelled";
    case Errc::unimplemented: return "unimplemented";
    case Errc::internal: return "internal";
    }
    return "unknown";
}

int toErrno(Errc code) noexcept
{
    switch (code) {
    case Errc::ok: return 0;
    case Errc::invalid_argument: return EINVAL;
    case Errc::out_of_range: return ERANGE;
    case Errc::not_found: return ENOENT;
    case Errc::already_exists: return EEXIST;
    case Errc::permission_denied: return EACCES;
    case Errc::failed_precondition: return EBUSY;
    case Errc::unavailable: return ENOTCONN;
    case Errc::timeout: return ETIMEDOUT;
    case Errc::io_error: return EIO;
    case Errc::protocol_error: return EPROTO;
    case Errc::resource_exhausted: return ENOSPC;
    case Errc::cancelled: return ECANCELED;
    case Errc::unimplemented: return ENOSYS;
    case Errc::internal: return EFAULT;
    }
    return EIO;
}

std::string Status::toString() const
{
    if (ok()) {
        return "ok";
    }
    std::string text(errcName(m_code));
    text += ": ";
    text += m_message;
    return text;
}

Status Status::withContext(std::string_view context) const
{
    if (ok()) {
        return *this;
    }
    std::string message(context);
    message += ": ";
    message += m_message;
    return {m_code, std::move(message)};
}

} // namespace lutra
