#pragma once
// What the soak's kinds share: child processes with captured output, parameters read straight
// from a datapath process's control socket (independent of lutra-ctld), polling with a deadline.

#include <lutra/status.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace lutra::tools {

struct ProcessOutput {
    int exitCode = -1; // 128 + signal when killed
    std::string out;   // stdout
};
// Runs argv[0] (a path, or a name looked up in PATH) with stderr discarded; kills it after
// `timeout`.
Result<ProcessOutput> runCaptured(const std::vector<std::string> &argv,
                                  std::chrono::milliseconds timeout);

// name -> canonical value, read through the datapath process's own control socket.
Result<std::map<std::string, std::string>>
readParamsDirect(const std::string &socket, const std::vector<std::string> &patterns);

// Polls `done` every 20 ms until it returns true or `timeout` passes.
bool waitUntil(std::chrono::milliseconds timeout, const std::function<bool()> &done);

// The run's random source for one kind: reproducible from the printed seed.
inline std::mt19937_64 soakRandom(std::uint64_t seed, std::uint64_t kind)
{
    return std::mt19937_64(seed ^ (kind * 0x9e3779b97f4a7c15ull));
}
inline unsigned uniform(std::mt19937_64 &random, unsigned low, unsigned high)
{
    return std::uniform_int_distribution<unsigned>(low, high)(random);
}

} // namespace lutra::tools
