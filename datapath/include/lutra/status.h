#pragma once
// Status and Result<T>: how errors cross lutra's module boundaries (exceptions never do).

#include <cassert>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace lutra {

// Error categories. They map one-to-one onto errno values (toErrno) for the client API and onto
// gRPC status codes at the edges, so a failure keeps its meaning all the way to the admin.
enum class Errc : int {
    ok = 0,
    invalid_argument,    // malformed input: syntax, wrong type
    out_of_range,        // well-formed but outside the allowed range
    not_found,           // unknown name, missing object
    already_exists,      // duplicate registration, object exists
    permission_denied,   // read-only parameter, role too weak, path escape
    failed_precondition, // the system is not in a state that allows this now
    unavailable,         // peer gone, connection refused; retrying may help
    timeout,             // a deadline passed
    io_error,            // the operating system reported an I/O failure
    protocol_error,      // a peer sent something that breaks the wire protocol
    resource_exhausted,  // a bounded resource (queue, memory budget) is full
    cancelled,           // the operation was cancelled by request
    unimplemented,       // not supported by this build or plugin
    internal,            // a lutra bug
};

std::string_view errcName(Errc code) noexcept;
int toErrno(Errc code) noexcept;

class [[nodiscard]] Status {
public:
    Status() noexcept = default;
    Status(Errc code, std::string message) : m_code(code), m_message(std::move(message)) {}

    static Status success() noexcept { return {}; }

    bool ok() const noexcept { return m_code == Errc::ok; }
    explicit operator bool() const noexcept { return ok(); }
    Errc code() const noexcept { return m_code; }
    const std::string &message() const noexcept { return m_message; }

    // "out_of_range: osc.ost0.max_pages_per_rpc: ..." — for logs and CLIs.
    std::string toString() const;

    // Prefixes the message with where the error happened ("file.yaml:3:5: ...").
    Status withContext(std::string_view context) const;

    friend bool operator==(const Status &, const Status &) = default;

private:
    Errc m_code = Errc::ok;
    std::string m_message;
};

// Either a value or a non-ok Status.
template <typename T> class [[nodiscard]] Result {
    static_assert(!std::is_same_v<std::remove_cvref_t<T>, Status>, "Result<Status> is meaningless");

public:
    Result(T value) : m_data(std::in_place_index<0>, std::move(value)) {}
    Result(Status status) : m_data(std::in_place_index<1>, std::move(status))
    {
        assert(!std::get<1>(m_data).ok() && "a Result built from a Status must carry an error");
    }
    Result(Errc code, std::string message) : Result(Status(code, std::move(message))) {}

    bool ok() const noexcept { return m_data.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    const T &value() const & { return std::get<0>(m_data); }
    T &value() & { return std::get<0>(m_data); }
    T &&value() && { return std::get<0>(std::move(m_data)); }
    const T &operator*() const & { return value(); }
    T &operator*() & { return value(); }
    const T *operator->() const { return &value(); }
    T *operator->() { return &value(); }

    Status status() const { return ok() ? Status{} : std::get<1>(m_data); }

private:
    std::variant<T, Status> m_data;
};

} // namespace lutra
