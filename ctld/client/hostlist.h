#pragma once
// Slurm-style hostlists: "node[01-64]:7370,login[1,3]:7370" -> every host:port it names.

#include <lutra/status.h>

#include <string>
#include <string_view>
#include <vector>

namespace lutra::ctld {

inline constexpr std::size_t kMaxHostlistHosts = 100'000;

// Brackets hold comma-separated numbers and ranges; a range keeps the zero padding of its lower
// bound (node[08-10] -> node08 node09 node10). Several brackets multiply. Errors say what is
// wrong and at which column.
Result<std::vector<std::string>> expandHostlist(std::string_view hostlist);

} // namespace lutra::ctld
