#include "daemon/daemon.h"

#include "api/ctl_service.h"
#include "core/log.h"
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
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace lutra::ctld {

namespace {

constexpr std::string_view kLog = "ctld";

std::string readFile(const std::filesystem::path &path, bool *ok)
{
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    *ok = *ok && (static_cast<bool>(in) || in.eof());
    return text.str();
}

Result<std::shared_ptr<grpc::ServerCredentials>> tcpCredentials(const Config &config)
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
        return Status(Errc::invalid_argument,
                      "cannot read the TLS files named in " + config.file.native());
    }
    options.pem_key_cert_pairs.push_back(std::move(pair));
    return grpc::SslServerCredentials(options);
}

// Flattens a counters update into "<block>.<counter>" samples (and sums for blocks with
// min/max/sum) plus numeric gauges, for the store's history.
void recordSnapshot(Store &store, const InstanceSnapshot &snapshot)
{
    std::vector<std::string> names; // CounterValue names are views: the strings live here
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
        log::warning(kLog, "counter history: " + recorded.message());
    }
}

} // namespace

// Declared in the order they start; they stop in reverse (stop()).
struct Daemon::Parts {
    Config config;
    std::unique_ptr<Store> store;
    std::unique_ptr<Instances> instances;
    std::unique_ptr<NodeOps> node;
    std::unique_ptr<Telemetry> telemetry;
    std::unique_ptr<ProfileOps> profiles;
    std::unique_ptr<HistoryOps> history;
    std::unique_ptr<Authenticator> auth;
    std::unique_ptr<WorkPool> pool;
    std::unique_ptr<CtlService> service;
    std::unique_ptr<grpc::Server> server;
    std::unique_ptr<MetricsServer> metrics;
    std::vector<int> ports;
    bool stopped = false;
};

Result<std::unique_ptr<Daemon>> Daemon::start(Config config, FaultHooks faults)
{
    if (auto secure = checkListenSecurity(config); !secure) {
        return secure;
    }
    auto credentials = tcpCredentials(config);
    if (!credentials) {
        return credentials.status();
    }
    routeProtobufLog();
    auto parts = std::make_unique<Parts>();
    parts->config = std::move(config);
    const Config &cfg = parts->config;
    std::error_code ec;
    std::filesystem::create_directories(cfg.db.parent_path(), ec);
    StoreOptions storeOptions;
    storeOptions.retention = std::chrono::duration_cast<std::chrono::seconds>(cfg.historyRetention);
    auto store = Store::open(cfg.db.native(), storeOptions);
    if (!store) {
        return store.status();
    }
    parts->store = std::move(*store);

    parts->instances = std::make_unique<Instances>(cfg.runDir, cfg.pollInterval);
    if (auto started = parts->instances->start(); !started) {
        return started;
    }
    parts->node = std::make_unique<NodeOps>(cfg, *parts->instances, parts->store.get());
    parts->node->setFaultHooks(faults);
    NodeOps &node = *parts->node;
    if (auto recovered = node.recoverInterruptedApplies(); !recovered) {
        log::error(kLog, "recovering interrupted applies: " + recovered.message());
    }
    for (const auto &connection : parts->instances->connected()) {
        node.reconcile(connection, false);
    }
    parts->instances->onAppeared(
        [&node](const std::shared_ptr<const Connection> &connection, bool restarted) {
            node.reconcile(connection, restarted);
        });

    Store &storeRef = *parts->store;
    parts->telemetry = std::make_unique<Telemetry>(
        *parts->instances, cfg.pollInterval,
        [&storeRef](const InstanceSnapshot &snapshot) { recordSnapshot(storeRef, snapshot); });
    parts->telemetry->start();

    parts->profiles = std::make_unique<ProfileOps>(cfg, node, *parts->instances, storeRef);
    parts->history = std::make_unique<HistoryOps>(node, storeRef);
    parts->auth = std::make_unique<Authenticator>(cfg);
    parts->pool = std::make_unique<WorkPool>(4, 256);
    const auto startTimeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count();
    parts->service = std::make_unique<CtlService>(ServiceParts{
        &cfg, parts->auth.get(), &node, parts->profiles.get(), parts->history.get(),
        parts->telemetry.get(), parts->instances.get(), parts->pool.get(), startTimeNs});

    grpc::EnableDefaultHealthCheckService(true);
    grpc::reflection::InitProtoReflectionServerBuilderPlugin();
    grpc::ServerBuilder builder;
    // gRPC binds with SO_REUSEPORT by default: a second ctld on a taken port would start and
    // share its connections with the first. An address in use is an error instead.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    parts->ports.assign(cfg.listen.size(), 0);
    for (std::size_t i = 0; i < cfg.listen.size(); ++i) {
        builder.AddListeningPort(cfg.listen[i], *credentials, &parts->ports[i]);
    }
    std::filesystem::create_directories(cfg.localSocket.parent_path(), ec);
    std::filesystem::remove(cfg.localSocket, ec);
    builder.AddListeningPort("unix:" + cfg.localSocket.native(), grpc::InsecureServerCredentials());
    builder.RegisterService(parts->service.get());
    parts->server = builder.BuildAndStart();
    std::unique_ptr<Daemon> daemon(new Daemon(std::move(parts)));
    Parts &started = *daemon->m_parts;
    if (!started.server) {
        std::string addresses;
        for (const auto &address : cfg.listen) {
            addresses += address + ", ";
        }
        return Status(Errc::unavailable, "cannot listen on " + addresses + "unix:" +
                                             cfg.localSocket.native() + " (address in use?)");
    }
    for (std::size_t i = 0; i < started.ports.size(); ++i) {
        if (started.ports[i] == 0) {
            return Status(Errc::unavailable,
                          "cannot listen on " + cfg.listen[i] + " (address in use?)");
        }
    }
    // Root and the run dir's group only: the local socket skips token checks.
    ::chmod(cfg.localSocket.c_str(), 0660);

    if (!cfg.metricsListen.empty()) {
        Daemon *self = daemon.get();
        auto metrics = MetricsServer::start(cfg.metricsListen, [self] {
            const Parts &p = *self->m_parts;
            return renderNodeMetrics(p.config, *p.instances, *p.telemetry,
                                     p.node->flushDurations());
        });
        if (!metrics) {
            return metrics.status();
        }
        started.metrics = std::move(*metrics);
    }
    return daemon;
}

Daemon::Daemon(std::unique_ptr<Parts> parts) : m_parts(std::move(parts)) {}

Daemon::~Daemon()
{
    (void)stop();
}

const Config &Daemon::config() const noexcept
{
    return m_parts->config;
}

const std::vector<int> &Daemon::grpcPorts() const noexcept
{
    return m_parts->ports;
}

int Daemon::metricsPort() const noexcept
{
    return m_parts->metrics ? m_parts->metrics->port() : 0;
}

std::string Daemon::readyLine() const
{
    const Config &cfg = m_parts->config;
    std::string line = "ready node=" + cfg.node;
    for (std::size_t i = 0; i < m_parts->ports.size(); ++i) {
        const auto &address = cfg.listen[i];
        line += " grpc=" + address.substr(0, address.rfind(':')) + ":" +
                std::to_string(m_parts->ports[i]);
    }
    line += " unix=" + cfg.localSocket.native();
    if (m_parts->metrics) {
        line += " metrics=" + cfg.metricsListen.substr(0, cfg.metricsListen.rfind(':')) + ":" +
                std::to_string(m_parts->metrics->port());
    }
    return line + " db=" + cfg.db.native();
}

void Daemon::tick()
{
    Store &store = *m_parts->store;
    if (auto flushed = store.flushSamples(); !flushed) {
        log::warning(kLog, "counter history not written yet: " + flushed.message());
    }
    // Off the request path: batches of points, each its own short transaction.
    const Config &cfg = m_parts->config;
    const HistoryRetention retention{cfg.auditMaxPoints, cfg.auditMaxAge, 1000};
    if (auto pruned = store.pruneHistory(retention); !pruned.ok()) {
        log::warning(kLog, "history retention: " + pruned.status().message());
    } else if (pruned->pointsDeleted > 0) {
        log::info(kLog, "history retention: deleted " + std::to_string(pruned->pointsDeleted) +
                            " points, the newest " + std::to_string(pruned->prunedThrough));
    }
}

Status Daemon::reloadAuth()
{
    const Config &cfg = m_parts->config;
    auto reloaded = loadConfig(cfg.file);
    if (!reloaded) {
        return reloaded.status();
    }
    m_parts->auth->reload(*reloaded);
    log::info(kLog, "reloaded tokens and roles from " + cfg.file.native() +
                        " (listen addresses, db and run dir need a restart)");
    return {};
}

Status Daemon::stop()
{
    Parts &p = *m_parts;
    if (p.stopped) {
        return {};
    }
    p.stopped = true;
    p.metrics.reset();
    if (p.server) {
        // Calls in flight finish (streams are cancelled after the deadline), then the pool
        // drains.
        p.server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
    }
    if (p.pool) {
        p.pool->stop();
    }
    if (p.server) {
        p.server->Wait();
    }
    if (p.telemetry) {
        p.telemetry->stop();
    }
    if (p.instances) {
        p.instances->stop();
    }
    Status closed;
    if (p.store) {
        closed = p.store->close();
    }
    if (p.server) {
        std::error_code ec;
        std::filesystem::remove(p.config.localSocket, ec);
    }
    return closed;
}

} // namespace lutra::ctld
