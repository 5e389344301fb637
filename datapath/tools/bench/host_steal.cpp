#include "host_steal.h"

#include <fstream>
#include <sstream>
#include <string>

namespace lutra::tools {

std::optional<CpuTimes> readCpuTimes()
{
    std::ifstream stat("/proc/stat");
    std::string line;
    if (!std::getline(stat, line) || line.rfind("cpu ", 0) != 0) {
        return std::nullopt;
    }
    // cpu user nice system idle iowait irq softirq steal guest guest_nice; guest time is also
    // counted in user and nice, so it is left out of the total.
    std::istringstream fields(line.substr(4));
    CpuTimes times;
    for (int column = 0; column < 8; ++column) {
        std::uint64_t ticks = 0;
        if (!(fields >> ticks)) {
            return std::nullopt; // a kernel without the steal column (before 2.6.11)
        }
        times.total += ticks;
        if (column == 7) {
            times.steal = ticks;
        }
    }
    return times;
}

double stealPercent(const CpuTimes &before, const CpuTimes &after)
{
    if (after.total <= before.total || after.steal < before.steal) {
        return 0;
    }
    return 100.0 * static_cast<double>(after.steal - before.steal) /
           static_cast<double>(after.total - before.total);
}

} // namespace lutra::tools
