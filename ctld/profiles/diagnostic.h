#pragma once
// Where something was written in a profile, and what is wrong there.

#include <lutra/status.h>

#include <span>
#include <string>
#include <vector>

namespace lutra::ctld::profiles {

struct Location {
    std::string file; // a file path, or "profile:<name>" for a stored profile
    int line = 0;     // 1-based; 0 when the problem is the whole file
    int column = 0;   // 1-based

    // "base.yaml:7:5", or "base.yaml" when there is no line.
    std::string toString() const;
    friend bool operator==(const Location &, const Location &) = default;
};

// One problem found in a profile, reported the way compilers do: "base.yaml:7:5: message".
struct Diagnostic {
    Location location;
    std::string message;
    Errc code = Errc::invalid_argument;

    std::string toString() const;
    friend bool operator==(const Diagnostic &, const Diagnostic &) = default;
};

using Diagnostics = std::vector<Diagnostic>;

// All diagnostics as one Status (one per line, the first one's code), for callers that cross a
// module boundary with a single error. Ok when the list is empty.
Status toStatus(std::span<const Diagnostic> diagnostics);

} // namespace lutra::ctld::profiles
