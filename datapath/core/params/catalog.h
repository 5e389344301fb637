#pragma once
// The definitions of lutra's parameters, named and shaped as in Lustre so that admins' habits
// and scripts carry over. Each component binds one group (bindGroup, bind.h) and registers it;
// everyone else (CLI, console, profiles) learns them from the registry. Defaults and limits live
// here only: components' Config/Options read them with defaultOf/maxOf.

#include "core/params/counters.h"
#include "core/params/spec.h"

#include <array>
#include <cstdint>
#include <limits>
#include <span>
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

// Help texts of the counter blocks, for registration with Registry::addStats.
inline constexpr std::string_view kReadAheadStatsHelp =
    "readahead decisions and their outcomes, in pages (write 'clear' to reset)";
inline constexpr std::string_view kRpcStatsHelp =
    "pages-per-RPC and RPCs-in-flight histograms, read | write (write 'clear' to reset)";

// ---- counter blocks -------------------------------------------------------------------------
// Every counter block's name, help and counters live here, as the parameters' do: a component
// builds its CounterBlock from its group (counterDefs) in the order of its own enum, which it
// checks against the group at compile time (counterIndex).

// One counter of a block (Lustre's stats format: "name N samples [unit]" and min/max/sum).
struct CounterDefinition {
    std::string_view name;
    std::string_view unit; // "pages", "bytes", "reqs", "locks", ...
    bool withMinMaxSum = false;
    // A level the component reads at each snapshot and appends after the counters (clear
    // leaves it): not in the CounterBlock.
    bool gauge = false;
};

// One counter block: "<prefix>.<instance>.<leaf>", read and cleared as a whole.
struct CounterGroup {
    std::string_view leaf; // "page_cache_stats"
    std::string_view help;
    std::span<const CounterDefinition> counters;
};

// llite.<fs>.page_cache_stats (core/cache: PageCache::Counter).
inline constexpr std::array kPageCacheStatDefinitions{
    CounterDefinition{"cache_hit", "pages"},
    CounterDefinition{"cache_miss", "reqs"},
    CounterDefinition{"grab_hit", "pages"},
    CounterDefinition{"grab_new", "pages"},
    CounterDefinition{"failed_grab", "reqs"},
    CounterDefinition{"reclaimed", "pages"},
    CounterDefinition{"reclaim_batch", "pages", true},
    CounterDefinition{"promoted", "pages"},
    CounterDefinition{"released", "pages"},
    CounterDefinition{"release_batch", "pages", true},
    CounterDefinition{"writeback_pages", "pages"},
    CounterDefinition{"reclaim_busy", "pages"},
    CounterDefinition{"reclaim_waits", "reqs"},
};
inline constexpr CounterGroup kPageCacheStats{
    "page_cache_stats", "page cache hits, misses, reclaim and release (write 'clear' to reset)",
    kPageCacheStatDefinitions};

// ldlm.namespaces.<target>.lock_stats on a client (core/locks: LockNamespace::Counter).
inline constexpr std::array kClientLockStatDefinitions{
    CounterDefinition{"enqueues", "reqs"},
    CounterDefinition{"enqueue_errors", "reqs"},
    CounterDefinition{"hits", "locks"},
    CounterDefinition{"blocking_callbacks", "reqs"},
    CounterDefinition{"cancel_callback", "locks"},
    CounterDefinition{"cancel_lru", "locks"},
    CounterDefinition{"cancel_age", "locks"},
    CounterDefinition{"cancel_clear", "locks"},
    CounterDefinition{"cancel_job", "locks"},
    CounterDefinition{"cancel_upgrade", "locks"},
    CounterDefinition{"cancel_shutdown", "locks"},
    CounterDefinition{"cancel_errors", "locks"},
    CounterDefinition{"lock_count", "locks", false, true},
    CounterDefinition{"lock_unused_count", "locks", false, true},
};
inline constexpr CounterGroup kClientLockStats{
    "lock_stats",
    "client lock enqueues, cache hits, cancels by reason, lock_count and lock_unused_count "
    "(write 'clear' to reset the counters)",
    kClientLockStatDefinitions};

// ldlm.namespaces.<target>.lock_stats on a target (target/lock_manager: LockManager::Counter).
inline constexpr std::array kTargetLockStatDefinitions{
    CounterDefinition{"granted", "locks"},
    CounterDefinition{"cancelled", "locks"},
    CounterDefinition{"blocking_callbacks", "reqs"},
    CounterDefinition{"evictions", "clients"},
};
inline constexpr CounterGroup kTargetLockStats{
    "lock_stats",
    "locks granted and cancelled, blocking callbacks sent, clients evicted (write 'clear' to "
    "reset)",
    kTargetLockStatDefinitions};

// obdfilter.<target>.commit_stats (target/group_commit).
inline constexpr std::array kCommitStatDefinitions{
    CounterDefinition{"batches", "batches"},
    CounterDefinition{"writes", "reqs"},
    CounterDefinition{"syncs", "syncs"},
    CounterDefinition{"batch_writes", "reqs", true},
    CounterDefinition{"failed_batches", "batches"},
};
inline constexpr CounterGroup kCommitStats{
    "commit_stats", "group commit batches, writes and syncs (write 'clear' to reset)",
    kCommitStatDefinitions};

// osc.<target>.stats (client/osc: Osc::Counter), after Lustre's osc stats: each bulk RPC's time
// from its send to its reply (or error), all of them and by opcode.
inline constexpr std::array kOscStatDefinitions{
    CounterDefinition{"req_waittime", "usec", true},
    CounterDefinition{"ost_read", "usec", true},
    CounterDefinition{"ost_write", "usec", true},
};
inline constexpr CounterGroup kOscStats{
    "stats", "bulk RPC times from send to reply: all, reads, writes (write 'clear' to reset)",
    kOscStatDefinitions};

// Every counter group above (for tests and documentation).
inline constexpr std::array kCounterGroups{&kPageCacheStats, &kClientLockStats, &kTargetLockStats,
                                           &kCommitStats, &kOscStats};

// The index of counter `name` in `group`; a name the group lacks does not compile. Components
// check their enum against it: static_assert(counterIndex(kCommitStats, "syncs") == syncs).
consteval std::size_t counterIndex(const CounterGroup &group, std::string_view name)
{
    for (std::size_t i = 0; i < group.counters.size(); ++i) {
        if (group.counters[i].name == name) {
            return i;
        }
    }
    throw "no such counter in this catalog group";
}

// The CounterBlock definitions of a group, in its order, without its gauges.
std::vector<CounterDef> counterDefs(const CounterGroup &group);

struct SpecialDefinition {
    std::string_view word;
    std::string_view help;
};

// One parameter of a group without its instance; spec() makes it "<prefix>.<instance>.<leaf>".
struct Definition {
    std::string_view leaf;
    Type type = Type::integer;
    Unit unit = Unit::none;
    std::int64_t min = 0;
    std::int64_t max = std::numeric_limits<std::int64_t>::max();
    std::int64_t defaultValue = 0;  // numbers, in the base unit
    std::string_view defaultText{}; // Type::string
    bool writable = true;
    std::string_view help;
    std::span<const std::string_view> enumValues{};
    std::span<const SpecialDefinition> specialValues{};
};

// The parameters one component binds, all of them (bindGroup checks that).
struct Group {
    std::string_view name;   // for messages: "osc", "llite page cache", ...
    std::string_view prefix; // "osc", "ldlm.namespaces"; empty for process-wide names
    std::span<const Definition> definitions;
};

// A read-only number (a gauge such as lock_count).
consteval Definition gauge(std::string_view leaf, std::string_view help, Unit unit = Unit::none)
{
    return {.leaf = leaf, .unit = unit, .writable = false, .help = help};
}

inline constexpr std::array<std::string_view, 1> kChecksumTypes{"crc32c"};

// osc.<target>.*: one Osc (client/osc.cpp), without the rpc_stats block.
inline constexpr std::array kOscDefinitions{
    Definition{.leaf = "max_pages_per_rpc",
               .type = Type::size,
               .unit = Unit::pages,
               .min = 1,
               .max = 4096,
               .defaultValue = 1024,
               .help = "pages in one bulk RPC (a size such as 4M is converted)"},
    Definition{.leaf = "max_rpcs_in_flight",
               .min = 1,
               .max = 256,
               .defaultValue = 8,
               .help = "bulk RPCs in flight to this target at once"},
    Definition{.leaf = "max_dirty_mb",
               .type = Type::size,
               .unit = Unit::mib,
               .min = 1,
               .max = 65536,
               .defaultValue = 512,
               .help = "dirty cache allowed for this target before writers wait"},
    Definition{.leaf = "checksums",
               .type = Type::boolean,
               .min = 0,
               .max = 1,
               .defaultValue = 1,
               .help = "verify bulk data with per-page checksums"},
    Definition{.leaf = "checksum_type",
               .type = Type::enumeration,
               .min = 0,
               .max = 0,
               .help = "bulk checksum algorithm (ISA-L)",
               .enumValues = kChecksumTypes},
    // Like Lustre socklnd's conns_per_peer; the maximum is RpcSession::kMaxConnections. One a
    // target: the targets' connections spread over the client's transport I/O threads (client
    // README, "How many connections").
    Definition{.leaf = "conns_per_target",
               .min = 1,
               .max = 8,
               .defaultValue = 1,
               .help = "connections to this target that bulk RPCs are spread over, each on the "
                       "least busy transport I/O thread (raising it connects more; lowering it "
                       "closes the rest once their RPCs are done)"},
    gauge("protocol_version", "wire protocol version agreed with the target at connect (a "
                              "version 1 target's lock grants carry no object size)"),
};
inline constexpr Group kOsc{"osc", "osc", kOscDefinitions};

// llite.<fs>.*: the mount's page cache (core/cache), without page_cache_stats.
inline constexpr std::array kPageCacheDefinitions{
    Definition{.leaf = "max_cached_mb",
               .type = Type::size,
               .unit = Unit::mib,
               .min = 1,
               .max = 1 << 20,
               .defaultValue = 1024,
               .help = "page cache size; reclaim starts above it"},
    gauge("cached_pages", "pages in the page cache", Unit::pages),
    gauge("dirty_pages", "dirty pages waiting for write-back", Unit::pages),
};
inline constexpr Group kPageCache{"llite page cache", "llite", kPageCacheDefinitions};

// llite.<fs>.*: the mount's readahead (core/readahead), without read_ahead_stats.
inline constexpr std::array kReadaheadDefinitions{
    Definition{.leaf = "max_read_ahead_mb",
               .type = Type::size,
               .unit = Unit::mib,
               .min = 0,
               .max = 1 << 20,
               .defaultValue = 64,
               .help = "readahead budget of this mount (0 disables readahead)"},
    Definition{.leaf = "max_read_ahead_per_file_mb",
               .type = Type::size,
               .unit = Unit::mib,
               .min = 0,
               .max = 1 << 20,
               .defaultValue = 64,
               .help = "largest readahead window of one file"},
    Definition{.leaf = "max_read_ahead_whole_mb",
               .type = Type::size,
               .unit = Unit::mib,
               .min = 0,
               .max = 1 << 20,
               .defaultValue = 2,
               .help = "files up to this size are read ahead whole"},
};
inline constexpr Group kReadahead{"llite readahead", "llite", kReadaheadDefinitions};

// llite.<fs>.*: the client engine's own switches (client/engine.cpp), without job_stats.
inline constexpr std::array kLliteEngineDefinitions{
    Definition{.leaf = "fast_read",
               .type = Type::boolean,
               .min = 0,
               .max = 1,
               .defaultValue = 1,
               .help = "serve cached reads through the lock-free fast path"},
    // Ranks of one file on one client, run apart by the scheduler further than the cache holds,
    // evict the pages between them before the trailing ones read them (client README, "Readers
    // of one file wait for the trailing one").
    Definition{.leaf = "trailing_reader_wait_ms",
               .type = Type::duration,
               .unit = Unit::milliseconds,
               .min = 0,
               .max = 60'000,
               .defaultValue = 10,
               .help = "how long a read a third of the cache ahead of the slowest reader of its "
                       "file on this client waits for it (0 = never)"},
    gauge("trailing_reader_waits", "reads that waited for a trailing reader of their file"),
    gauge("trailing_reader_wait_timeouts",
          "of those, waits that ran out (after four in a row, that open waits no more)"),
    gauge("slow_reads", "reads that missed a page, reached the readahead marker or were an "
                        "open's first (fast_read off: only marker reads)"),
    gauge("slow_read_us", "microseconds readers spent in those reads, waits for their pages, "
                          "locks and a trailing reader included"),
};
inline constexpr Group kLliteEngine{"llite engine", "llite", kLliteEngineDefinitions};

inline constexpr std::array<SpecialDefinition, 1> kLruSizeSpecials{
    SpecialDefinition{"clear", "cancel every unused lock now"}};

// ldlm.namespaces.<target>.*: a client's lock namespace of one target (core/locks), without
// lock_stats.
inline constexpr std::array kLockNamespaceDefinitions{
    Definition{.leaf = "lru_size",
               .min = 0,
               .max = 1 << 24,
               .defaultValue = 0,
               .help = "unused locks kept cached (0 = sized dynamically)",
               .specialValues = kLruSizeSpecials},
    Definition{.leaf = "lru_max_age",
               .type = Type::duration,
               .unit = Unit::seconds,
               .min = 1,
               .max = 7 * 24 * 3600,
               .defaultValue = 3900,
               .help = "unused locks older than this are cancelled"},
    gauge("lock_count", "locks held or cached"),
    gauge("lock_unused_count", "cached locks no one is using (the LRU)"),
};
inline constexpr Group kLockNamespace{"client ldlm namespace", "ldlm.namespaces",
                                      kLockNamespaceDefinitions};

// jobid_var, jobid_name: process-wide job identification (client/jobid.cpp).
inline constexpr std::array kJobIdDefinitions{
    Definition{.leaf = "jobid_var",
               .type = Type::string,
               .defaultText = "procname_uid",
               .help = "environment variable holding the job id (e.g. SLURM_JOB_ID), procname_uid "
                       "or disable"},
    Definition{.leaf = "jobid_name",
               .type = Type::string,
               .defaultText = "%e.%u",
               .help = "job id used when jobid_var gives none (%e = program name, %u = uid)"},
};
inline constexpr Group kJobIds{"job ids", "", kJobIdDefinitions};

// obdfilter.<target>.*: the object server (target/target_server.cpp), without job_stats.
inline constexpr std::array kObdfilterDefinitions{
    Definition{.leaf = "brw_size",
               .type = Type::size,
               .unit = Unit::mib,
               .min = 1,
               .max = 16, // protocol::kMaxBulkBytes >> 20, checked where it is bound
               .defaultValue = 4,
               .help = "largest bulk RPC offered to clients that connect from now on"},
    Definition{.leaf = "read_zero_copy",
               .type = Type::boolean,
               .defaultValue = 1,
               .help = "serve reads without checksums from the file straight to the transport "
                       "(tcp: sendfile) instead of reading them into a buffer first"},
    gauge("zero_copy_reads", "reads served from the file straight to the transport "
                             "(read_zero_copy)"),
    gauge("cold_zero_copy_reads",
          "zero-copy reads whose range was not all in the page cache: read in by a service "
          "thread before the send, so the transport's I/O thread never waits for the disk"),
    gauge("num_exports", "clients connected to this target"),
};
inline constexpr Group kObdfilter{"obdfilter", "obdfilter", kObdfilterDefinitions};

// obdfilter.<target>.*: the target's group commit (target/group_commit.cpp), without
// commit_stats. Milliseconds: the registry's finest duration unit. A window only pays off when it
// is comparable to a sync (ms on disks); below that, window 0 already batches whatever queued
// during the previous sync. Capped at 1 s because every writer waits for it.
inline constexpr std::array kGroupCommitDefinitions{
    Definition{.leaf = "commit_interval",
               .type = Type::duration,
               .unit = Unit::milliseconds,
               .min = 0,
               .max = 1000,
               .defaultValue = 0,
               .help = "how long a group commit waits for more writers before syncing (0 = sync "
                       "as soon as the previous batch is durable)"},
};
inline constexpr Group kGroupCommit{"obdfilter group commit", "obdfilter", kGroupCommitDefinitions};

// ldlm.namespaces.<target>.*: the target's lock manager (target/lock_manager.cpp), without
// lock_stats. Milliseconds so tests and impatient sites can go below a second; Lustre's own lock
// callback timeouts are tens of seconds, hence the 100 s default (obd_timeout).
inline constexpr std::array kLockManagerDefinitions{
    Definition{.leaf = "blocking_timeout",
               .type = Type::duration,
               .unit = Unit::milliseconds,
               .min = 1,
               .max = 3'600'000,
               .defaultValue = 100'000,
               .help = "how long a holder may take to cancel a lock after a blocking callback "
                       "before it is evicted"},
    gauge("lock_count", "locks granted in this namespace"),
};
inline constexpr Group kLockManager{"target ldlm namespace", "ldlm.namespaces",
                                    kLockManagerDefinitions};

// The definition of `leaf` in `group`; a leaf the group lacks does not compile.
consteval const Definition &definition(const Group &group, std::string_view leaf)
{
    for (const Definition &candidate : group.definitions) {
        if (candidate.leaf == leaf) {
            return candidate;
        }
    }
    throw "no such leaf in this catalog group";
}

// Defaults and limits for components' Config/Options, so no literal is written twice.
consteval std::int64_t defaultOf(const Group &group, std::string_view leaf)
{
    return definition(group, leaf).defaultValue;
}
consteval std::int64_t minOf(const Group &group, std::string_view leaf)
{
    return definition(group, leaf).min;
}
consteval std::int64_t maxOf(const Group &group, std::string_view leaf)
{
    return definition(group, leaf).max;
}
consteval std::string_view defaultTextOf(const Group &group, std::string_view leaf)
{
    return definition(group, leaf).defaultText;
}

// The full name of one parameter of a group instance: "osc.ost0.max_dirty_mb", "jobid_var".
std::string paramName(const Group &group, std::string_view instance, std::string_view leaf);
// The specs of one instance of a group, in the group's order.
std::vector<Spec> specs(const Group &group, std::string_view instance);

// Tunables of one object-storage client (osc.<target>.*), without the rpc_stats block.
std::vector<Spec> oscSpecs(std::string_view target);
// Writable tunables of one mounted file system (llite.<fs>.*: page cache, readahead, engine),
// without read-only gauges and counter blocks.
std::vector<Spec> lliteSpecs(std::string_view fs);
// Lock namespace of one target on a client (ldlm.namespaces.<ns>.*).
std::vector<Spec> ldlmSpecs(std::string_view ns);
// Process-wide job identification (jobid_var, jobid_name).
std::vector<Spec> jobidSpecs();

} // namespace lutra::params::catalog
