#pragma once
// The definitions of lutra's parameters, named and shaped as in Lustre so that admins' habits
// and scripts carry over. Components bind these specs to their live state and register them;
// everyone else (CLI, console, profiles) learns them from the registry.

#include "core/params/counters.h"
#include "core/params/spec.h"

#include <array>
#include <string_view>
#include <vector>

namespace lutra::params::catalog {

// llite.<fs>.read_ahead_stats, with Lustre 2.17's 18 counter names in their order.
enum ReadAheadStat : std::size_t {
    ra_hits,
    ra_misses,
    ra_readpage_not_consecutive,
    ra_miss_inside_window,
    ra_failed_grab_cache_page,
    ra_failed_lock_match,
    ra_read_but_discarded,
    ra_zero_length_file,
    ra_zero_size_window,
    ra_readahead_to_eof,
    ra_hit_max_readahead_issue,
    ra_wrong_page_from_grab_cache_page,
    ra_failed_to_reach_end,
    ra_async_readahead,
    ra_failed_to_fast_read,
    ra_mmap_range_read,
    ra_readahead_pages,
    ra_forceread_pages,
    ra_stat_count,
};

inline constexpr std::array<std::string_view, ra_stat_count> kReadAheadStatNames{
    "hits",
    "misses",
    "readpage_not_consecutive",
    "miss_inside_window",
    "failed_grab_cache_page",
    "failed_lock_match",
    "read_but_discarded",
    "zero_length_file",
    "zero_size_window",
    "readahead_to_eof",
    "hit_max_readahead_issue",
    "wrong_page_from_grab_cache_page",
    "failed_to_reach_end",
    "async_readahead",
    "failed_to_fast_read",
    "mmap_range_read",
    "readahead_pages",
    "forceread_pages",
};

// Counter definitions of read_ahead_stats (unit [pages]).
std::vector<CounterDef> readAheadStatDefs();

// Tunables of one object-storage client (osc.<target>.*), without the rpc_stats block.
std::vector<Spec> oscSpecs(std::string_view target);
// Tunables of one mounted file system (llite.<fs>.*), without read_ahead_stats.
std::vector<Spec> lliteSpecs(std::string_view fs);
// Lock namespace of one target (ldlm.namespaces.<ns>.*).
std::vector<Spec> ldlmSpecs(std::string_view ns);
// Process-wide job identification (jobid_var, jobid_name).
std::vector<Spec> jobidSpecs();

// Help texts of the counter blocks, for registration with Registry::addStats.
inline constexpr std::string_view kReadAheadStatsHelp =
    "readahead decisions and their outcomes, in pages (write 'clear' to reset)";
inline constexpr std::string_view kRpcStatsHelp =
    "pages-per-RPC and RPCs-in-flight histograms, read | write (write 'clear' to reset)";

} // namespace lutra::params::catalog
