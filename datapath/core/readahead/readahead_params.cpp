#include "core/params/registry.h"
#include "core/readahead/readahead.h"

#include <string>
#include <variant>

namespace lutra::readahead {

Status bindReadaheadParams(ReadaheadMount &mount, params::ParamGroup &group, std::string_view fs)
{
    using Getter = std::uint64_t (ReadaheadMount::*)() const noexcept;
    using Setter = void (ReadaheadMount::*)(std::uint64_t) noexcept;
    struct Knob {
        std::string_view leaf;
        Getter get;
        Setter set;
    };
    static constexpr Knob kKnobs[] = {
        {"max_read_ahead_mb", &ReadaheadMount::maxReadAheadMb, &ReadaheadMount::setMaxReadAheadMb},
        {"max_read_ahead_per_file_mb", &ReadaheadMount::maxReadAheadPerFileMb,
         &ReadaheadMount::setMaxReadAheadPerFileMb},
        {"max_read_ahead_whole_mb", &ReadaheadMount::maxReadAheadWholeMb,
         &ReadaheadMount::setMaxReadAheadWholeMb},
    };
    for (auto &spec : params::catalog::lliteSpecs(fs)) {
        for (const auto &knob : kKnobs) {
            if (params::leafName(spec.name) != knob.leaf) {
                continue;
            }
            params::Binding binding;
            binding.read = [&mount, get = knob.get] {
                return params::Value(static_cast<std::int64_t>((mount.*get)()));
            };
            // The registry validated type and range already.
            binding.apply = [&mount, set = knob.set](const params::Value &value) -> Status {
                (mount.*set)(static_cast<std::uint64_t>(std::get<std::int64_t>(value)));
                return {};
            };
            if (auto status = group.add(std::move(spec), std::move(binding)); !status.ok()) {
                return status;
            }
            break;
        }
    }
    std::string name = "llite.";
    name += fs;
    name += ".read_ahead_stats";
    return group.addStats(std::move(name), std::string(params::catalog::kReadAheadStatsHelp),
                          mount.stats());
}

} // namespace lutra::readahead
