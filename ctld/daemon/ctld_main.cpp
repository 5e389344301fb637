// lutra-ctld: the node control daemon. See ctld/README.md.

#include "api/ctl_service.h"
#include "core/log.h"
#include "daemon/config.h"
#include "daemon/instances.h"
#include "daemon/metrics_server.h"
#include "daemon/node_metrics.h"
#include "daemon/node_ops.h"
#include "daemon/profile_ops.h"
#include "daemon/protobuf_log.h"
#include "daemon/telemetry.h"
#include "daemon/work_pool.h"
#include "store/store.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <signal.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

namespace {

using namespace lutra;
using namespace lutra::ctld;

constexpr std::string_view kLog = "ctld";

std::string readFile(const std::filesystem::path &path, bool *ok)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    *ok = static_cast<bool>(in) || in.eof();
    return text.str();
}

std::shared_ptr<grpc::ServerCredentials> tcpCredentials(const Config &config, std::string *error)
{
    if (!config.tls.enabled()) {
        return grpc::InsecureServerCredentials(); // loopback only: checkListenSecurity
    }
    bool ok = true;
    grpc::SslServerCredentialsOptions options(
        config.tls.clientCa.empty()
            ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
            : (config.tls.requireClientCert
                   ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                   : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY));
    grpc::SslServerCredentialsOptions::PemKeyCertPair pair;
    pair.cert_chain = readFile(config.tls.cert, &ok);
    pair.private_key = readFile(config.tls.key, &ok);
    if (!config.tls.clientCa.empty()) {
        options.pem_root_certs = readFile(config.tls.clientCa, &ok);
    }
    if (!ok) {
        *error = "cannot read the TLS files named in " + config.file.native();
        return nullptr;
    }
    options.pem_key_cert_pairs.push_back(std::move(pair));
    return grpc::SslServerCredentials(options);
}

// Flattens a counters update into "<block>.<counter>" samples (and sums for blocks with
// min/max/sum) plus numeric gauges, for the store's history.
void recordSnapshot(Store &store, const InstanceSnapshot &snapshot)
{
    std::vector<std::string> names;
    std::vector<std::int64_t> values;
    for (const auto &block : snapshot.counters->blocks()) {
        for (const auto &counter : block.counters()) {
            names.push_back(block.name() + "." + counter.name());
            values.push_back(static_cast<std::int64_t>(counter.samples()));
            if (counter.with_min_max_sum()) {
                names.push_back(block.name() + "." + counter.name() + ".sum");
                values.push_back(counter.sum());
            }
        }
    }
    for (const auto &gauge : snapshot.counters->gauges()) {
        char *end = nullptr;
        const long long value = std::strtoll(gauge.value().c_str(), &end, 10);
        if (end != gauge.value().c_str() && *end == '\0') {
            names.push_back(gauge.name());
            values.push_back(value);
        }
    }
    std::vector<CounterValue> samples;
    samples.reserve(names.size());
    for (std::size_t i = 0; i < names.size(); ++i) {
        samples.push_back({names[i], values[i]});
    }
    const TimePoint time{
        std::chrono::duration_cast<TimePoint::duration>(std::chrono::nanoseconds(snapshot.timeNs))};
    if (auto recorded = store.recordSamples(snapshot.instance, time, samples); !recorded) {
        lutra::log::warning(kLog, "counter history: " + recorded.message());
    }
}

int run(Config config)
{
    // Signals are taken by this thread only (sigtimedwait); every thread started below inherits
    // the mask.
    sigset_t signals;
    sigemptyset(&signals);
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
        sigaddset(&signals, signal);
    }
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    if (auto secure = checkListenSecurity(config); !secure) {
        std::cerr << "lutra-ctld: " << secure.message() << "\n";
        return 2;
    }
    routeProtobufLog();
    std::error_code ec;
    std::filesystem::create_directories(config.db.parent_path(), ec);
    StoreOptions storeOptions;
    storeOptions.retention =
        std::chrono::duration_cast<std::chrono::seconds>(config.historyRetention);
    auto store = Store::open(config.db.native(), storeOptions);
    if (!store) {
        std::cerr << "lutra-ctld: " << store.status().message() << "\n";
        return 1;
    }

    Instances instances(config.runDir, config.pollInterval);
    if (auto started = instances.start(); !started) {
        std::cerr << "lutra-ctld: " << started.message() << "\n";
        return 1;
    }
    NodeOps node(config, instances, store->get());
#ifdef LUTRA_CTLD_FAULT_HOOKS
    // Only in lutra-ctld-faults, the test build: crash points for the recovery tests and soak.
    if (const char *text = std::getenv("LUTRA_FAULT_KILL_AFTER_INSTANCES")) {
        node.setFaultHooks({static_cast<std::size_t>(std::strtoull(text, nullptr, 10))});
    }
#endif
    if (auto recovered = node.recoverInterruptedApplies(); !recovered) {
        lutra::log::error(kLog, "recovering interrupted applies: " + recovered.message());
    }
    for (const auto &connection : instances.connected()) {
        node.reconcile(connection, false);
    }
    instances.onAppeared([&node](const std::shared_ptr<const Connection> &connection,
                                 bool restarted) { node.reconcile(connection, restarted); });

    Telemetry telemetry(instances, config.pollInterval, [&store](const InstanceSnapshot &snapshot) {
        recordSnapshot(**store, snapshot);
    });
    telemetry.start();

    ProfileOps profiles(config, node, instances, **store);
    HistoryOps history(node, **store);
    Authenticator auth(config);
    WorkPool pool(4, 256);
    const auto startTimeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    CtlService service(
        {&config, &auth, &node, &profiles, &history, &telemetry, &instances, &pool, startTimeNs});

    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    std::string credentialError;
    auto credentials = tcpCredentials(config, &credentialError);
    if (!credentials) {
        std::cerr << "lutra-ctld: " << credentialError << "\n";
        return 1;
    }
    std::vector<int> ports(config.listen.size(), 0);
    for (std::size_t i = 0; i < config.listen.size(); ++i) {
        builder.AddListeningPort(config.listen[i], credentials, &ports[i]);
    }
    std::filesystem::create_directories(config.localSocket.parent_path(), ec);
    std::filesystem::remove(config.localSocket, ec);
    builder.AddListeningPort("unix:" + config.localSocket.native(),
                             grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    auto server = builder.BuildAndStart();
    if (!server) {
        std::cerr << "lutra-ctld: cannot serve gRPC on the configured addresses\n";
        return 1;
    }
    for (std::size_t i = 0; i < ports.size(); ++i) {
        if (ports[i] == 0) {
            std::cerr << "lutra-ctld: cannot listen on " << config.listen[i]
                      << " (address in use?)\n";
            return 1;
        }
    }
    // Root and the run dir's group only: the local socket skips token checks.
    ::chmod(config.localSocket.c_str(), 0660);

    std::unique_ptr<MetricsServer> metrics;
    if (!config.metricsListen.empty()) {
        auto started = MetricsServer::start(config.metricsListen, [&] {
            return renderNodeMetrics(config, instances, telemetry, node.flushDurations());
        });
        if (!started) {
            std::cerr << "lutra-ctld: " << started.status().message() << "\n";
            return 1;
        }
        metrics = std::move(*started);
    }

    std::string addresses;
    for (std::size_t i = 0; i < ports.size(); ++i) {
        const auto &address = config.listen[i];
        addresses +=
            " grpc=" + address.substr(0, address.rfind(':')) + ":" + std::to_string(ports[i]);
    }
    // One line scripts and tests wait for: everything is listening.
    std::cout << "lutra-ctld: ready node=" << config.node << addresses
              << " unix=" << config.localSocket.native()
              << (metrics ? " metrics=" +
                                config.metricsListen.substr(0, config.metricsListen.rfind(':')) +
                                ":" + std::to_string(metrics->port())
                          : std::string())
              << " db=" << config.db.native() << std::endl;
    sd_notify(0, "READY=1");

    for (;;) {
        timespec timeout{};
        const auto interval =
            std::chrono::duration_cast<std::chrono::seconds>(config.sampleInterval);
        timeout.tv_sec = std::max<std::int64_t>(1, interval.count());
        const int signal = sigtimedwait(&signals, nullptr, &timeout);
        if (signal == SIGHUP) {
            auto reloaded = loadConfig(config.file);
            if (!reloaded) {
                lutra::log::error(kLog,
                                  "SIGHUP: config not reloaded: " + reloaded.status().message());
                continue;
            }
            auth.reload(*reloaded);
            lutra::log::info(kLog, "SIGHUP: reloaded tokens and roles from " +
                                       config.file.native() +
                                       " (listen addresses, db and run dir need a restart)");
            continue;
        }
        if (signal == SIGTERM || signal == SIGINT) {
            break;
        }
        if (auto flushed = (*store)->flushSamples(); !flushed) {
            lutra::log::warning(kLog, "counter history not written yet: " + flushed.message());
        }
        // Off the request path: batches of points, each its own short transaction.
        const HistoryRetention retention{config.auditMaxPoints, config.auditMaxAge, 1000};
        if (auto pruned = (*store)->pruneHistory(retention); !pruned.ok()) {
            lutra::log::warning(kLog, "history retention: " + pruned.status().message());
        } else if (pruned->pointsDeleted > 0) {
            lutra::log::info(kLog,
                             "history retention: deleted " + std::to_string(pruned->pointsDeleted) +
                                 " points, the newest " + std::to_string(pruned->prunedThrough));
        }
    }

    sd_notify(0, "STOPPING=1");
    lutra::log::info(kLog, "stopping: finishing calls in flight");
    metrics.reset();
    // Calls in flight finish (streams are cancelled after the deadline), then the pool drains.
    server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    pool.stop();
    server->Wait();
    telemetry.stop();
    instances.stop();
    if (auto closed = (*store)->close(); !closed) {
        std::cerr << "lutra-ctld: " << closed.message() << "\n";
        return 1;
    }
    std::filesystem::remove(config.localSocket, ec);
    lutra::log::info(kLog, "stopped");
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    CLI::App app{"lutra-ctld: the node control daemon of lutra. Finds the node's datapath "
                 "processes in the run dir, keeps their tunables in the desired state, records "
                 "every change, and serves lutra.ctl.v1 (gRPC) and /metrics.",
                 "lutra-ctld"};
    std::string configPath = "/etc/lutra/ctld.yaml";
    bool checkOnly = false;
    app.add_option("-c,--config", configPath, "ctld.yaml to read")->capture_default_str();
    app.add_flag("--check-config", checkOnly,
                 "check the config (syntax, files, listen security), print a summary and exit");
    CLI11_PARSE(app, argc, argv);

    auto config = lutra::ctld::loadConfig(configPath);
    if (!config) {
        std::cerr << "lutra-ctld: " << config.status().message() << "\n";
        return 1;
    }
    if (checkOnly) {
        if (auto secure = lutra::ctld::checkListenSecurity(*config); !secure) {
            std::cerr << "lutra-ctld: " << secure.message() << "\n";
            return 2;
        }
        std::cout << configPath << ": ok (node " << config->node << ", " << config->listen.size()
                  << " listen address(es), "
                  << (config->tls.enabled() ? "TLS" : "no TLS, loopback only") << ", "
                  << config->tokens.size() << " token(s), db " << config->db.native()
                  << ", run dir " << config->runDir.native() << ")\n";
        return 0;
    }
    return run(std::move(*config));
}
