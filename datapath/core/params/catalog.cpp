#include "core/params/catalog.h"

#include <string>

namespace lutra::params::catalog {

namespace {

std::string join(std::string_view prefix, std::string_view instance, std::string_view leaf)
{
    std::string name(prefix);
    name += '.';
    name += instance;
    name += '.';
    name += leaf;
    return name;
}

Spec number(std::string name, Type type, Unit unit, std::int64_t min, std::int64_t max,
            std::int64_t defaultValue, std::string help)
{
    Spec spec;
    spec.name = std::move(name);
    spec.type = type;
    spec.unit = unit;
    spec.min = min;
    spec.max = max;
    spec.defaultValue = defaultValue;
    spec.help = std::move(help);
    return spec;
}

Spec readOnly(std::string name, std::string help)
{
    Spec spec = number(std::move(name), Type::integer, Unit::none, 0,
                       std::numeric_limits<std::int64_t>::max(), 0, std::move(help));
    spec.writable = false;
    return spec;
}

} // namespace

std::vector<CounterDef> readAheadStatDefs()
{
    std::vector<CounterDef> defs;
    defs.reserve(kReadAheadStatNames.size());
    for (const auto name : kReadAheadStatNames) {
        defs.push_back({std::string(name), "pages", false});
    }
    return defs;
}

std::vector<Spec> oscSpecs(std::string_view target)
{
    std::vector<Spec> specs;
    specs.push_back(number(join("osc", target, "max_pages_per_rpc"), Type::size, Unit::pages, 1,
                           4096, 1024, "pages in one bulk RPC (a size such as 4M is converted)"));
    specs.push_back(number(join("osc", target, "max_rpcs_in_flight"), Type::integer, Unit::none, 1,
                           256, 8, "bulk RPCs in flight to this target at once"));
    specs.push_back(number(join("osc", target, "max_dirty_mb"), Type::size, Unit::mib, 1, 65536,
                           512, "dirty cache allowed for this target before writers wait"));
    Spec checksums = number(join("osc", target, "checksums"), Type::boolean, Unit::none, 0, 1, 1,
                            "verify bulk data with per-page checksums");
    specs.push_back(std::move(checksums));
    Spec checksumType = number(join("osc", target, "checksum_type"), Type::enumeration, Unit::none,
                               0, 0, 0, "bulk checksum algorithm (ISA-L)");
    checksumType.enumValues = {"crc32c"};
    specs.push_back(std::move(checksumType));
    return specs;
}

std::vector<Spec> lliteSpecs(std::string_view fs)
{
    std::vector<Spec> specs;
    specs.push_back(number(join("llite", fs, "max_cached_mb"), Type::size, Unit::mib, 1, 1 << 20,
                           1024, "page cache size; reclaim starts above it"));
    specs.push_back(number(join("llite", fs, "max_read_ahead_mb"), Type::size, Unit::mib, 0,
                           1 << 20, 64, "readahead budget of this mount (0 disables readahead)"));
    specs.push_back(number(join("llite", fs, "max_read_ahead_per_file_mb"), Type::size, Unit::mib,
                           0, 1 << 20, 64, "largest readahead window of one file"));
    specs.push_back(number(join("llite", fs, "max_read_ahead_whole_mb"), Type::size, Unit::mib, 0,
                           1 << 20, 2, "files up to this size are read ahead whole"));
    specs.push_back(number(join("llite", fs, "fast_read"), Type::boolean, Unit::none, 0, 1, 1,
                           "serve cached reads through the lock-free fast path"));
    return specs;
}

std::vector<Spec> ldlmSpecs(std::string_view ns)
{
    std::vector<Spec> specs;
    Spec lruSize = number(join("ldlm.namespaces", ns, "lru_size"), Type::integer, Unit::none, 0,
                          1 << 24, 0, "unused locks kept cached (0 = sized dynamically)");
    lruSize.specialValues = {{"clear", "cancel every unused lock now"}};
    specs.push_back(std::move(lruSize));
    specs.push_back(number(join("ldlm.namespaces", ns, "lru_max_age"), Type::duration,
                           Unit::seconds, 1, 7 * 24 * 3600, 3900,
                           "unused locks older than this are cancelled"));
    specs.push_back(readOnly(join("ldlm.namespaces", ns, "lock_count"), "locks held or cached"));
    specs.push_back(readOnly(join("ldlm.namespaces", ns, "lock_unused_count"),
                             "cached locks no one is using (the LRU)"));
    return specs;
}

std::vector<Spec> jobidSpecs()
{
    Spec var;
    var.name = "jobid_var";
    var.type = Type::string;
    var.defaultValue = std::string("procname_uid");
    var.help = "environment variable holding the job id (e.g. SLURM_JOB_ID), procname_uid or "
               "disable";
    Spec name;
    name.name = "jobid_name";
    name.type = Type::string;
    name.defaultValue = std::string("%e.%u");
    name.help = "job id used when jobid_var gives none (%e = program name, %u = uid)";
    return {std::move(var), std::move(name)};
}

} // namespace lutra::params::catalog
