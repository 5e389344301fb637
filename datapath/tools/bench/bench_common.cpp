#include "bench_common.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>

namespace lutra::tools {

int finishBench(std::string_view program, const Result<Report> &report, bool json)
{
    if (!report) {
        std::fprintf(stderr, "%.*s: %s\n", int(program.size()), program.data(),
                     report.status().message().c_str());
        return 1;
    }
    report->print(json);
    return report->mode == "soak" && report->results.value("violations", 0u) > 0 ? 1 : 0;
}

void Report::print(bool json) const
{
    if (json) {
        nlohmann::json out{
            {"mode", mode}, {"params", params}, {"results", results}, {"ratios", ratios}};
        if (!notes.empty()) {
            out["notes"] = notes;
        }
        std::cout << out.dump() << std::endl;
        return;
    }
    std::printf("lutra-bench %s\n", mode.c_str());
    for (const auto &[key, value] : params.items()) {
        std::printf("  %-32s %s\n", key.c_str(), value.dump().c_str());
    }
    std::printf("results\n");
    for (const auto &[key, value] : results.items()) {
        std::printf("  %-32s %s\n", key.c_str(), value.dump().c_str());
    }
    std::printf("ratios (lutra / baseline, same run)\n");
    for (const auto &[key, value] : ratios.items()) {
        std::printf("  %-32s %s\n", key.c_str(), value.dump().c_str());
    }
    for (const auto &note : notes) {
        std::printf("note: %s\n", note.c_str());
    }
}

Result<TransportHandle> openTransport(const std::string &uri, std::uint64_t maxBulkBytes,
                                      std::uint32_t ioThreads)
{
    const auto scheme = uri.find("://");
    if (scheme == std::string::npos || scheme == 0) {
        return Status(Errc::invalid_argument, "'" + uri + "' is not a URI such as tcp://host:port");
    }
    TransportHandle handle;
    handle.name = uri.substr(0, scheme);
    static const std::string category = "transport";
    handle.loader = std::make_unique<transport::PluginLoader>(transport::processLogSink(category));
    transport::TransportOptions options;
    options.log = transport::processLogSink(category);
    options.proposed.maxBulkSize = maxBulkBytes;
    options.ioThreads = ioThreads;
    auto created = handle.loader->create(handle.name, options);
    if (!created) {
        return created.status();
    }
    handle.transport = std::move(created).value();
    return handle;
}

Measurement measure(unsigned threads, double seconds,
                    const std::function<Result<std::uint64_t>(unsigned)> &operation)
{
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> operations{0};
    std::atomic<std::uint64_t> bytes{0};
    std::mutex errorMutex;
    Status firstError;
    std::vector<std::thread> workers;
    const auto start = std::chrono::steady_clock::now();
    for (unsigned t = 0; t < threads; ++t) {
        workers.emplace_back([&, t] {
            std::uint64_t ops = 0;
            std::uint64_t moved = 0;
            while (!stop.load(std::memory_order_relaxed)) {
                auto done = operation(t);
                if (!done) {
                    std::lock_guard lock(errorMutex);
                    if (firstError.ok()) {
                        firstError = done.status();
                    }
                    break;
                }
                ++ops;
                moved += *done;
            }
            operations += ops;
            bytes += moved;
        });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto &worker : workers) {
        worker.join();
    }
    Measurement result;
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.operations = operations;
    result.bytes = bytes;
    result.firstError = firstError;
    return result;
}

double median(std::vector<double> values)
{
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const std::size_t mid = values.size() / 2;
    return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

double rounded(double value)
{
    if (value == 0 || !std::isfinite(value)) {
        return value;
    }
    const double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(value))));
    return std::round(value * scale) / scale;
}

} // namespace lutra::tools
