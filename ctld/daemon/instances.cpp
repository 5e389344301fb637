#include "daemon/instances.h"

#include "control/params_wire.h"
#include "core/log.h"
#include "core/params/glob.h"

#include <grpcpp/grpcpp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

namespace lutra::ctld {

namespace {

constexpr std::string_view kLog = "ctld.instances";

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

} // namespace

bool parseSocketName(std::string_view fileName, std::string *kind, std::string *name)
{
    if (!fileName.ends_with(".sock")) {
        return false;
    }
    const auto stem = fileName.substr(0, fileName.size() - 5);
    const auto dash = stem.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash + 1 == stem.size()) {
        return false; // ctld.sock and strangers
    }
    *kind = std::string(stem.substr(0, dash));
    *name = std::string(stem.substr(dash + 1));
    return true;
}

Instances::Instances(std::filesystem::path runDir, std::chrono::milliseconds rescanInterval)
    : m_runDir(std::move(runDir)), m_rescanInterval(rescanInterval)
{
}

Instances::~Instances()
{
    stop();
}

void Instances::onAppeared(AppearedHandler handler)
{
    m_handler = std::move(handler);
}

Status Instances::start()
{
    std::error_code ec;
    std::filesystem::create_directories(m_runDir, ec);
    if (ec) {
        return {Errc::io_error, "cannot create run dir " + m_runDir.native() + ": " + ec.message()};
    }
    m_inotify = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    m_wakeup = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_inotify < 0 || m_wakeup < 0) {
        return {Errc::io_error, std::string("inotify/eventfd: ") + std::strerror(errno)};
    }
    if (::inotify_add_watch(m_inotify, m_runDir.c_str(),
                            IN_CREATE | IN_DELETE | IN_MOVED_TO | IN_MOVED_FROM | IN_ATTRIB) < 0) {
        return {Errc::io_error,
                "cannot watch run dir " + m_runDir.native() + ": " + std::strerror(errno)};
    }
    scan(false);
    m_thread = std::thread([this] { watch(); });
    return {};
}

void Instances::stop()
{
    if (m_thread.joinable()) {
        const std::uint64_t one = 1;
        (void)!::write(m_wakeup, &one, sizeof(one));
        m_thread.join();
    }
    for (int *fd : {&m_inotify, &m_wakeup}) {
        if (*fd >= 0) {
            ::close(*fd);
            *fd = -1;
        }
    }
}

void Instances::watch()
{
    alignas(inotify_event) char buffer[4096];
    for (;;) {
        pollfd fds[2] = {{m_inotify, POLLIN, 0}, {m_wakeup, POLLIN, 0}};
        const int ready = ::poll(fds, 2, static_cast<int>(m_rescanInterval.count()));
        if (ready < 0 && errno != EINTR) {
            log::error(kLog, std::string("poll: ") + std::strerror(errno));
            return;
        }
        if (fds[1].revents != 0) {
            return;
        }
        if (fds[0].revents != 0) {
            // The events only say "look again"; scan() compares the dir with what is known,
            // which also covers events lost to an overflowing queue.
            while (::read(m_inotify, buffer, sizeof(buffer)) > 0) {
            }
        }
        scan(true);
    }
}

std::shared_ptr<Connection> Instances::connect(const std::string &id, std::string *error) const
{
    auto connection = std::make_shared<Connection>();
    parseSocketName(id + ".sock", &connection->info.kind, &connection->info.name);
    connection->info.id = id;
    const auto socket = m_runDir / (id + ".sock");
    grpc::ChannelArguments args;
    // Each instance gets its own channel: a local subchannel is cheap and isolates failures.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    connection->channel = grpc::CreateCustomChannel("unix:" + socket.native(),
                                                    grpc::InsecureChannelCredentials(), args);
    connection->stub = datapath::v1::DatapathControl::NewStub(connection->channel);

    datapath::v1::DescribeReply describe;
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kConnectTimeout);
        const auto status = connection->stub->Describe(&context, {}, &describe);
        if (!status.ok()) {
            *error = "cannot reach " + socket.native() + ": " + status.error_message();
            return nullptr;
        }
    }
    datapath::v1::ListParamsReply list;
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kConnectTimeout);
        const auto status = connection->stub->ListParams(&context, {}, &list);
        if (!status.ok()) {
            *error = "cannot list parameters of " + id + ": " + status.error_message();
            return nullptr;
        }
    }
    for (const auto &wire : list.specs()) {
        auto spec = control::fromWire(wire);
        if (!spec) {
            *error = id + " sent a bad schema: " + spec.status().message();
            return nullptr;
        }
        connection->specs.push_back(std::move(*spec));
    }
    connection->info.pid = describe.pid();
    connection->info.version = describe.version();
    connection->info.startTimeNs = describe.start_time_ns();
    connection->info.connected = true;
    connection->info.seenSinceNs = nowNs();
    connection->info.schemaGeneration = describe.schema_generation();
    return connection;
}

void Instances::scan(bool notify)
{
    std::set<std::string> present;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(m_runDir, ec)) {
        std::string kind;
        std::string name;
        const auto file = entry.path().filename().native();
        if (entry.is_socket(ec) && parseSocketName(file, &kind, &name)) {
            present.insert(file.substr(0, file.size() - 5));
        }
    }

    std::vector<std::string> toConnect;
    {
        std::lock_guard lock(m_mutex);
        for (auto it = m_connected.begin(); it != m_connected.end();) {
            if (present.count(it->first) == 0) {
                log::info(kLog, it->first + " went away (socket removed)");
                m_known[it->first].connected = false;
                it = m_connected.erase(it);
            } else {
                ++it;
            }
        }
        for (const auto &id : present) {
            if (m_connected.count(id) == 0) {
                toConnect.push_back(id);
            }
        }
    }
    // Connected ones are checked too: a process that restarted between two scans has the same
    // socket path but a new pid or start time.
    std::vector<std::shared_ptr<const Connection>> check;
    {
        std::lock_guard lock(m_mutex);
        for (const auto &[id, connection] : m_connected) {
            check.push_back(connection);
        }
    }
    for (const auto &connection : check) {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + kConnectTimeout);
        datapath::v1::DescribeReply describe;
        const auto status = connection->stub->Describe(&context, {}, &describe);
        if (!status.ok() || describe.pid() != connection->info.pid ||
            describe.start_time_ns() != connection->info.startTimeNs ||
            describe.schema_generation() != connection->info.schemaGeneration) {
            std::lock_guard lock(m_mutex);
            m_connected.erase(connection->info.id);
            m_known[connection->info.id].connected = false;
            toConnect.push_back(connection->info.id);
        }
    }

    for (const auto &id : toConnect) {
        std::string error;
        auto connection = connect(id, &error);
        bool restarted = false;
        bool fresh = false;
        {
            std::lock_guard lock(m_mutex);
            if (!connection) {
                auto &last = m_lastError[id];
                if (last != error) {
                    log::warning(kLog, error);
                    last = error;
                }
                continue;
            }
            m_lastError.erase(id);
            auto known = m_known.find(id);
            if (known != m_known.end()) {
                restarted = known->second.pid != connection->info.pid ||
                            known->second.startTimeNs != connection->info.startTimeNs;
                connection->info.restarts = known->second.restarts + (restarted ? 1 : 0);
                fresh = restarted ||
                        known->second.schemaGeneration != connection->info.schemaGeneration;
            } else {
                fresh = true;
            }
            m_known[id] = connection->info;
            m_connected[id] = connection;
            m_lastConnection[id] = connection;
        }
        if (!fresh) {
            continue; // the same incarnation, reconnected
        }
        log::info(kLog, id + (restarted ? " restarted" : " appeared") + " (pid " +
                            std::to_string(connection->info.pid) + ", " +
                            std::to_string(connection->specs.size()) + " parameters)");
        if (notify && m_handler) {
            m_handler(connection, restarted);
        }
    }
}

std::vector<InstanceInfo> Instances::list() const
{
    std::lock_guard lock(m_mutex);
    std::vector<InstanceInfo> out;
    for (const auto &[id, info] : m_known) {
        out.push_back(info);
    }
    return out;
}

std::vector<std::shared_ptr<const Connection>> Instances::connected(std::string_view idGlob) const
{
    std::lock_guard lock(m_mutex);
    std::vector<std::shared_ptr<const Connection>> out;
    for (const auto &[id, connection] : m_connected) {
        if (idGlob.empty() || params::matchComponent(idGlob, id)) {
            out.push_back(connection);
        }
    }
    return out;
}

std::vector<std::shared_ptr<const Connection>>
Instances::disconnected(std::string_view idGlob) const
{
    std::lock_guard lock(m_mutex);
    std::vector<std::shared_ptr<const Connection>> out;
    for (const auto &[id, connection] : m_lastConnection) {
        if (m_connected.count(id) == 0 && (idGlob.empty() || params::matchComponent(idGlob, id))) {
            out.push_back(connection);
        }
    }
    return out;
}

void Instances::lost(const std::string &id)
{
    std::lock_guard lock(m_mutex);
    if (m_connected.erase(id) != 0) {
        m_known[id].connected = false;
        log::warning(kLog, id + " stopped answering; reconnecting on the next scan");
    }
}

void Instances::refresh(const std::string &id)
{
    lost(id);
}

} // namespace lutra::ctld
