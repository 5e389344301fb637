// Mounting, and the namespace operations applied across every target of the mount.
#include <lutra/client.h>

#include "client/jobid.h"
#include "client/layout.h"
#include "client/rpc_session.h"
#include "core/log.h"
#include "core/params/registry.h"
#include "transport/loader.h"

#include <unistd.h>

#include <map>

namespace lutra::client {

namespace {

FileAttr toAttr(const protocol::ObjectAttr &attr)
{
    FileAttr out;
    out.kind = attr.kind == protocol::ObjectKind::directory ? FileKind::directory : FileKind::file;
    out.mode = attr.mode;
    out.size = attr.size;
    out.mtime = std::chrono::system_clock::time_point(
        std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(attr.mtimeNs)));
    return out;
}

std::string defaultClientId()
{
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    std::string name(host);
    name = name.substr(0, name.find('.'));
    return (name.empty() ? std::string("client") : name) + "-" + std::to_string(::getpid());
}

} // namespace

struct Mount::Impl {
    MountOptions options;
    std::unique_ptr<params::Registry> ownRegistry;
    params::Registry *registry = nullptr;
    std::unique_ptr<transport::PluginLoader> loader;
    std::map<std::string, std::unique_ptr<transport::Transport>, std::less<>> transports;
    std::vector<std::unique_ptr<RpcSession>> sessions; // index = stripe target
    StripeLayout layout;
    JobIds jobs;
    std::unique_ptr<params::ParamGroup> paramGroup; // destroyed first: bindings point here
    std::string category;

    transport::Deadline deadline() const { return transport::deadlineIn(options.rpcTimeout); }
    std::string where(std::size_t target) const
    {
        return "target " + sessions[target]->negotiated().targetName + " (" +
               sessions[target]->uri() + ")";
    }

    // Kind, mode and mtime from target 0; a file's size from all its stripe objects.
    Result<FileAttr> statPath(std::string_view path)
    {
        const std::string job(jobs.current());
        protocol::StatRequest request;
        request.path = path;
        FileAttr attr;
        for (std::size_t t = 0; t < sessions.size(); ++t) {
            auto reply = sessions[t]->call(request, job, deadline());
            if (!reply) {
                return reply.status().withContext("stat " + std::string(path) + " on " + where(t));
            }
            if (t == 0) {
                attr = toAttr(reply->attr);
                attr.size = 0;
                if (attr.kind == FileKind::directory) {
                    attr.size = reply->attr.size;
                    return attr; // directories carry no striped data
                }
            }
            attr.size = std::max(
                attr.size, layout.fileSizeFrom(static_cast<std::uint32_t>(t), reply->attr.size));
            attr.mtime = std::max(attr.mtime, toAttr(reply->attr).mtime);
        }
        return attr;
    }

    // Calls `request` on every target in order; on the first failure, `undo` is called for the
    // targets already done (in reverse) and the failure is returned with its target named.
    template <typename Request, typename Undo>
    Status onEveryTarget(const Request &request, std::string_view what, std::string_view path,
                         Undo undo)
    {
        const std::string job(jobs.current());
        for (std::size_t t = 0; t < sessions.size(); ++t) {
            auto reply = sessions[t]->call(request, job, deadline());
            if (!reply) {
                for (std::size_t done = t; done-- > 0;) {
                    undo(done);
                }
                return reply.status().withContext(std::string(what) + " " + std::string(path) +
                                                  " on " + where(t));
            }
        }
        return {};
    }
};

struct File::Impl {
    Mount::Impl *mount = nullptr;
    std::string path;
    std::vector<std::uint64_t> handles; // per target
    bool closed = false;
};

Result<std::unique_ptr<Mount>> Mount::mount(MountOptions options)
{
    if (options.targets.empty()) {
        return Status(Errc::invalid_argument, "mount: give at least one target URI");
    }
    if (options.stripeSize == 0 || options.stripeSize % 4096 != 0) {
        return Status(Errc::invalid_argument, "mount: stripe size " +
                                                  std::to_string(options.stripeSize) +
                                                  " is not a positive multiple of 4096");
    }
    if (options.clientId.empty()) {
        options.clientId = defaultClientId();
    }
    auto impl = std::make_unique<Impl>();
    impl->options = options;
    impl->category = "llite." + options.fsName;
    if (options.registry == nullptr) {
        impl->ownRegistry = std::make_unique<params::Registry>();
        impl->registry = impl->ownRegistry.get();
    } else {
        impl->registry = options.registry;
    }
    static const std::string transportCategory = "transport";
    impl->loader =
        std::make_unique<transport::PluginLoader>(transport::processLogSink(transportCategory));
    for (const auto &uri : options.targets) {
        const auto scheme = uri.find("://");
        if (scheme == std::string::npos || scheme == 0) {
            return Status(Errc::invalid_argument,
                          "mount: '" + uri + "' is not a URI such as tcp://host:port");
        }
        const std::string name = uri.substr(0, scheme);
        if (!impl->transports.contains(name)) {
            transport::TransportOptions transportOptions;
            transportOptions.log = transport::processLogSink(transportCategory);
            transportOptions.proposed.maxBulkSize = std::uint64_t{16} << 20;
            auto created = impl->loader->create(name, transportOptions);
            if (!created) {
                return created.status().withContext("mount");
            }
            impl->transports.emplace(name, std::move(created).value());
        }
        RpcSession::Options sessionOptions;
        sessionOptions.clientId = options.clientId;
        sessionOptions.log = transport::processLogSink(transportCategory);
        auto session =
            RpcSession::connect(*impl->transports.find(name)->second, uri, sessionOptions);
        if (!session) {
            return session.status().withContext("mount " + options.fsName);
        }
        impl->sessions.push_back(std::move(session).value());
    }
    impl->layout =
        StripeLayout{static_cast<std::uint32_t>(impl->sessions.size()), options.stripeSize};
    impl->paramGroup = std::make_unique<params::ParamGroup>(*impl->registry);
    if (auto status = impl->jobs.publish(*impl->paramGroup); !status) {
        return status.withContext("mount " + options.fsName);
    }
    log::info(impl->category, "mounted " + std::to_string(impl->sessions.size()) +
                                  " targets, stripe size " + std::to_string(options.stripeSize));
    return std::unique_ptr<Mount>(new Mount(std::move(impl)));
}

Mount::Mount(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Mount::~Mount()
{
    m_impl->paramGroup.reset();
    m_impl->sessions.clear(); // before the transports they use
}

std::size_t Mount::targetCount() const noexcept
{
    return m_impl->sessions.size();
}

params::Registry &Mount::registry() noexcept
{
    return *m_impl->registry;
}

std::string Mount::jobId()
{
    return std::string(m_impl->jobs.current());
}

void Mount::setThreadJobId(std::string_view jobId)
{
    JobIds::setThreadJobId(jobId);
}

Status Mount::mkdir(std::string_view path, std::uint32_t mode)
{
    protocol::MkdirRequest request;
    request.path = path;
    request.mode = mode;
    Impl &impl = *m_impl;
    return impl.onEveryTarget(request, "mkdir", path, [&impl, path](std::size_t t) {
        protocol::RmdirRequest undo;
        undo.path = path;
        (void)impl.sessions[t]->call(undo, "lutra.undo", impl.deadline());
    });
}

Status Mount::rmdir(std::string_view path)
{
    protocol::RmdirRequest request;
    request.path = path;
    Impl &impl = *m_impl;
    const std::string job(impl.jobs.current());
    // Target 0 decides (not empty, missing); the others follow, already-gone is fine there.
    for (std::size_t t = 0; t < impl.sessions.size(); ++t) {
        auto reply = impl.sessions[t]->call(request, job, impl.deadline());
        if (!reply && (t == 0 || reply.status().code() != Errc::not_found)) {
            return reply.status().withContext("rmdir " + std::string(path) + " on " +
                                              impl.where(t));
        }
    }
    return {};
}

Status Mount::unlink(std::string_view path)
{
    protocol::UnlinkRequest request;
    request.path = path;
    Impl &impl = *m_impl;
    const std::string job(impl.jobs.current());
    for (std::size_t t = 0; t < impl.sessions.size(); ++t) {
        auto reply = impl.sessions[t]->call(request, job, impl.deadline());
        if (!reply && (t == 0 || reply.status().code() != Errc::not_found)) {
            return reply.status().withContext("unlink " + std::string(path) + " on " +
                                              impl.where(t));
        }
    }
    return {};
}

Result<FileAttr> Mount::stat(std::string_view path)
{
    return m_impl->statPath(path);
}

Result<std::vector<DirEntryInfo>> Mount::readdir(std::string_view path)
{
    Impl &impl = *m_impl;
    const std::string job(impl.jobs.current());
    std::vector<DirEntryInfo> entries;
    protocol::ReaddirRequest request;
    request.path = path;
    for (;;) {
        auto reply = impl.sessions[0]->call(request, job, impl.deadline());
        if (!reply) {
            return reply.status().withContext("readdir " + std::string(path));
        }
        for (const auto &entry : reply->entries) {
            entries.push_back({std::string(entry.name),
                               entry.kind == protocol::ObjectKind::directory ? FileKind::directory
                                                                             : FileKind::file});
        }
        if (reply->eof) {
            return entries;
        }
        request.cookie = reply->nextCookie;
    }
}

Result<std::unique_ptr<File>> Mount::open(std::string_view path, unsigned flags, std::uint32_t mode)
{
    Impl &impl = *m_impl;
    if ((flags & (kOpenRead | kOpenWrite)) == 0) {
        return Status(Errc::invalid_argument,
                      "open " + std::string(path) + ": ask for reading, writing or both");
    }
    const std::string job(impl.jobs.current());
    auto file = std::make_unique<File::Impl>();
    file->mount = &impl;
    file->path = std::string(path);
    const auto closeOpened = [&] {
        for (std::size_t t = 0; t < file->handles.size(); ++t) {
            protocol::CloseRequest close;
            close.handle = file->handles[t];
            (void)impl.sessions[t]->call(close, "lutra.undo", impl.deadline());
        }
    };
    for (std::size_t t = 0; t < impl.sessions.size(); ++t) {
        std::uint64_t handle = 0;
        if ((flags & kOpenCreate) != 0) {
            protocol::CreateRequest create;
            create.path = path;
            create.mode = mode;
            // Only target 0 decides whether the name already existed.
            create.flags = t == 0 && (flags & kOpenExclusive) != 0 ? protocol::kCreateExclusive : 0;
            auto reply = impl.sessions[t]->call(create, job, impl.deadline());
            if (!reply) {
                closeOpened();
                return reply.status().withContext("create " + std::string(path) + " on " +
                                                  impl.where(t));
            }
            handle = reply->handle;
        } else {
            protocol::OpenRequest open;
            open.path = path;
            open.flags = ((flags & kOpenRead) != 0 ? protocol::kOpenRead : 0) |
                         ((flags & kOpenWrite) != 0 ? protocol::kOpenWrite : 0);
            auto reply = impl.sessions[t]->call(open, job, impl.deadline());
            if (!reply) {
                closeOpened();
                return reply.status().withContext("open " + std::string(path) + " on " +
                                                  impl.where(t));
            }
            if (reply->attr.kind == protocol::ObjectKind::directory) {
                closeOpened();
                return Status(Errc::invalid_argument,
                              "open " + std::string(path) + ": is a directory");
            }
            handle = reply->handle;
        }
        file->handles.push_back(handle);
    }
    return std::make_unique<File>(std::move(file));
}

File::File(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

File::~File()
{
    if (!m_impl->closed) {
        if (auto status = close(); !status) {
            log::warning(m_impl->mount->category, status.message());
        }
    }
}

const std::string &File::path() const noexcept
{
    return m_impl->path;
}

Status File::close()
{
    if (m_impl->closed) {
        return {};
    }
    m_impl->closed = true;
    Mount::Impl &mount = *m_impl->mount;
    Status first;
    for (std::size_t t = 0; t < m_impl->handles.size(); ++t) {
        protocol::CloseRequest close;
        close.handle = m_impl->handles[t];
        auto reply = mount.sessions[t]->call(close, mount.jobs.current(), mount.deadline());
        if (!reply && first.ok()) {
            first = reply.status().withContext("close " + m_impl->path + " on " + mount.where(t));
        }
    }
    return first;
}

Result<FileAttr> File::stat()
{
    return m_impl->mount->statPath(m_impl->path);
}

Status File::truncate(std::uint64_t size)
{
    Mount::Impl &mount = *m_impl->mount;
    const std::string job(mount.jobs.current());
    for (std::size_t t = 0; t < mount.sessions.size(); ++t) {
        protocol::TruncateRequest request;
        request.handle = m_impl->handles[t];
        request.size = mount.layout.objectSizeFor(static_cast<std::uint32_t>(t), size);
        auto reply = mount.sessions[t]->call(request, job, mount.deadline());
        if (!reply) {
            return reply.status().withContext("truncate " + m_impl->path + " on " + mount.where(t));
        }
    }
    return {};
}

} // namespace lutra::client
