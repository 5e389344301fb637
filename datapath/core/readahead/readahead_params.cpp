#include "core/params/bind.h"
#include "core/params/registry.h"
#include "core/readahead/readahead.h"

#include <string>
#include <variant>
#include <vector>

namespace lutra::readahead {

Status bindReadaheadParams(ReadaheadMount &mount, params::ParamGroup &group, std::string_view fs)
{
    using Getter = std::uint64_t (ReadaheadMount::*)() const noexcept;
    using Setter = void (ReadaheadMount::*)(std::uint64_t) noexcept;
    auto knob = [&mount](std::string_view leaf, Getter get, Setter set) {
        params::Binding binding;
        binding.read = [&mount, get] {
            return params::Value(static_cast<std::int64_t>((mount.*get)()));
        };
        // The registry validated type and range already.
        binding.apply = [&mount, set](const params::Value &value) -> Status {
            (mount.*set)(static_cast<std::uint64_t>(std::get<std::int64_t>(value)));
            return {};
        };
        return params::BindRow{leaf, std::move(binding), {}};
    };
    std::vector<params::BindRow> rows;
    rows.push_back(knob("max_read_ahead_mb", &ReadaheadMount::maxReadAheadMb,
                        &ReadaheadMount::setMaxReadAheadMb));
    rows.push_back(knob("max_read_ahead_per_file_mb", &ReadaheadMount::maxReadAheadPerFileMb,
                        &ReadaheadMount::setMaxReadAheadPerFileMb));
    rows.push_back(knob("max_read_ahead_whole_mb", &ReadaheadMount::maxReadAheadWholeMb,
                        &ReadaheadMount::setMaxReadAheadWholeMb));
    if (auto status = params::bindGroup(group, params::catalog::kReadahead, fs, std::move(rows));
        !status.ok()) {
        return status;
    }
    std::string name = "llite.";
    name += fs;
    name += ".read_ahead_stats";
    return group.addStats(std::move(name), std::string(params::catalog::kReadAheadStatsHelp),
                          mount.stats());
}

} // namespace lutra::readahead
