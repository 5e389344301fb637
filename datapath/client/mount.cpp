// Mounting, and the namespace operations applied across every target of the mount.
#include <lutra/client.h>

#include "client/engine.h"
#include "client/fast_read.h"
#include "client/jobid.h"
#include "client/layout.h"
#include "client/rpc_session.h"
#include "core/log.h"
#include "core/params/catalog.h"
#include "core/params/registry.h"
#include "transport/loader.h"

#include <unistd.h>

#include <algorithm>
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
    std::unique_ptr<Engine> engine;
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

    // A removal: target 0 decides (not empty, missing); the others follow, and a name already
    // gone there is fine (an earlier removal that failed half-way).
    template <typename Request>
    Status removeEverywhere(const Request &request, std::string_view what, std::string_view path)
    {
        const std::string job(jobs.current());
        for (std::size_t t = 0; t < sessions.size(); ++t) {
            auto reply = sessions[t]->call(request, job, deadline());
            if (!reply && (t == 0 || reply.status().code() != Errc::not_found)) {
                return reply.status().withContext(std::string(what) + " " + std::string(path) +
                                                  " on " + where(t));
            }
        }
        return {};
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
    explicit Impl(readahead::ReadaheadMount &readahead) : data(readahead) {}

    Mount::Impl *mount = nullptr;
    Engine *engine = nullptr; // mount->engine: the cached read's chain is one load shorter
    std::string path;
    // Per target: the handle this open was opened with; it names the open to TargetContext::closed
    // (the handle itself may since carry another open, see there).
    std::vector<std::uint64_t> handles;
    std::vector<std::uint64_t> objectIds; // per target
    FileData data;
    bool writable = false; // opened with kOpenWrite
    bool readable = false; // opened with kOpenRead
    bool closed = false;

    // A read-only file must refuse a change before it reaches the page cache: write-back would
    // fail on the target's read-only handle long after the write was acknowledged.
    Status checkWritable(std::string_view operation) const
    {
        if (writable) {
            return {};
        }
        return Status(Errc::permission_denied, std::string(operation) + " " + path +
                                                   ": the file was opened read-only "
                                                   "(open it with kOpenWrite to change it)");
    }

    // As open(2) with O_WRONLY: reading is refused, so a program that reads back what it wrote
    // must say so when it opens.
    Status checkReadable() const
    {
        return Status(Errc::permission_denied,
                      "read " + path +
                          ": the file was opened write-only (open it with kOpenRead to read it)");
    }

    // The file size as this client knows it: the largest implied by any stripe object.
    std::uint64_t knownSize() const { return knownFileSize(data, mount->layout); }
    // A lock on one of the objects was cancelled since its size was last known for sure.
    bool sizeStale() const
    {
        return std::ranges::any_of(data.objects,
                                   [](const auto &object) { return object->sizeStale.load(); });
    }
    // Asks the targets for their object sizes (another client may have written). Read locks
    // are taken first, as Lustre's glimpse does: a writer caching dirty pages under a PW lock
    // gets its blocking callback, writes back, and only then is the size on the target true.
    // An object whose size went stale takes the target's answer (or where this client's own
    // writes end, if further); the others only grow.
    Status refreshSizes()
    {
        const std::string job(mount->jobs.current());
        const core::JobTag tag = mount->jobs.tag(job);
        std::vector<std::uint8_t> stale(data.objects.size());
        for (std::size_t t = 0; t < data.objects.size(); ++t) {
            stale[t] = data.objects[t]->sizeStale.exchange(false) ? 1 : 0;
        }
        const auto failed = [&](Status status, std::size_t t) {
            for (std::size_t o = 0; o < data.objects.size(); ++o) {
                if (stale[o] != 0) {
                    data.objects[o]->sizeStale.store(true); // asked again by the next read
                }
            }
            return status.withContext("stat " + path + " on " + mount->where(t));
        };
        std::vector<locks::LockRef> held;
        for (std::size_t t = 0; t < data.keys.size(); ++t) {
            auto lock =
                mount->engine->targets[t]->locks->acquire(data.keys[t], locks::LockMode::PR, tag);
            if (!lock) {
                return failed(lock.status(), t);
            }
            held.push_back(std::move(lock).value());
        }
        protocol::StatRequest request;
        request.path = path;
        for (std::size_t t = 0; t < mount->sessions.size(); ++t) {
            auto reply = mount->sessions[t]->call(request, job, mount->deadline());
            if (!reply) {
                return failed(reply.status(), t);
            }
            ObjectState &object = *data.objects[t];
            const std::uint64_t target = reply->attr.size;
            bool changed = false;
            if (stale[t] != 0) {
                std::uint64_t known = object.size.load();
                std::uint64_t want = std::max(target, object.writtenEnd.load());
                while (known != want && !object.size.compare_exchange_weak(known, want)) {
                    want = std::max(target, object.writtenEnd.load());
                }
                changed = known != want;
            } else {
                changed = raiseTo(object.size, target);
            }
            if (changed) {
                mount->engine->fastEpoch.fetch_add(1, std::memory_order_acq_rel);
            }
        }
        return {};
    }
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
    if (options.maxProtocolVersion != 0 && (options.maxProtocolVersion < protocol::kMinVersion ||
                                            options.maxProtocolVersion > protocol::kMaxVersion)) {
        return Status(Errc::invalid_argument, "mount: protocol version " +
                                                  std::to_string(options.maxProtocolVersion) +
                                                  " is not one this client speaks (" +
                                                  std::to_string(protocol::kMinVersion) + ".." +
                                                  std::to_string(protocol::kMaxVersion) + ")");
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
            // 0: one per CPU, 1 to 2 (a client's rule, not the loader's one per two CPUs). The
            // targets' connections (one each) spread over the threads, so a striped read's
            // receive copies do.
            transportOptions.ioThreads = options.transportIoThreads != 0
                                             ? options.transportIoThreads
                                             : transport::automaticClientIoThreads();
            auto created = impl->loader->create(name, transportOptions);
            if (!created) {
                return created.status().withContext("mount");
            }
            impl->transports.emplace(name, std::move(created).value());
        }
        RpcSession::Options sessionOptions;
        sessionOptions.clientId = options.clientId;
        if (options.maxProtocolVersion != 0) {
            sessionOptions.maxVersion = options.maxProtocolVersion;
        }
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
    std::vector<RpcSession *> sessions;
    for (auto &session : impl->sessions) {
        sessions.push_back(session.get());
    }
    Engine::Options engineOptions;
    engineOptions.fsName = options.fsName;
    engineOptions.layout = impl->layout;
    engineOptions.rpcTimeout = options.rpcTimeout;
    auto engine = Engine::create(engineOptions, std::move(sessions), impl->jobs,
                                 *impl->transports.begin()->second, *impl->paramGroup);
    if (!engine) {
        impl->paramGroup.reset();
        return engine.status().withContext("mount " + options.fsName);
    }
    impl->engine = std::move(engine).value();
    log::info(impl->category, "mounted " + std::to_string(impl->sessions.size()) +
                                  " targets, stripe size " + std::to_string(options.stripeSize));
    return std::unique_ptr<Mount>(new Mount(std::move(impl)));
}

Mount::Mount(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

Mount::~Mount()
{
    m_impl->paramGroup.reset();
    m_impl->engine.reset();   // cancels cached locks, dropping their pages
    m_impl->sessions.clear(); // before the transports they use
}

Result<FlushReport> Mount::flushJob(std::string_view jobId, std::chrono::milliseconds timeout)
{
    const auto start = std::chrono::steady_clock::now();
    auto cleaned = m_impl->engine->cleanup(jobId, start + timeout);
    if (!cleaned) {
        return cleaned.status();
    }
    FlushReport report;
    report.jobId = std::string(jobId);
    report.locksCancelled = cleaned->locksCancelled;
    report.pagesDropped = cleaned->pagesDropped;
    report.bytesWrittenBack = cleaned->bytesWrittenBack;
    report.errors = std::move(cleaned->errors);
    for (const std::string &error : report.errors) {
        log::warning(m_impl->category, "flush of job '" + report.jobId + "': " + error);
    }
    report.duration = std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - start);
    if (report.duration > timeout) {
        log::warning(m_impl->category, "flush of job '" + report.jobId + "' took " +
                                           std::to_string(report.duration.count() / 1000) +
                                           " ms, longer than its " +
                                           std::to_string(timeout.count()) + " ms timeout");
    }
    return report;
}

std::size_t Mount::targetCount() const noexcept
{
    return m_impl->sessions.size();
}

Result<std::vector<ParamValue>> Mount::getParams(std::string_view pattern)
{
    auto readings = m_impl->registry->get(pattern);
    if (!readings) {
        return readings.status();
    }
    std::vector<ParamValue> values;
    for (auto &reading : *readings) {
        values.push_back({std::move(reading.name), std::move(reading.value)});
    }
    return values;
}

Status Mount::setParams(std::span<const ParamAssignment> assignments)
{
    std::vector<params::Assignment> batch;
    for (const auto &assignment : assignments) {
        batch.push_back({assignment.pattern, assignment.value});
    }
    return m_impl->registry->set(batch, "client:" + std::to_string(::getpid())).status;
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
    return m_impl->removeEverywhere(request, "rmdir", path);
}

Status Mount::unlink(std::string_view path)
{
    protocol::UnlinkRequest request;
    request.path = path;
    return m_impl->removeEverywhere(request, "unlink", path);
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
    auto file = std::make_unique<File::Impl>(impl.engine->readahead);
    file->mount = &impl;
    file->engine = impl.engine.get();
    file->path = std::string(path);
    file->writable = (flags & kOpenWrite) != 0;
    file->readable = (flags & kOpenRead) != 0;
    const auto closeOpened = [&] {
        for (std::size_t t = 0; t < file->handles.size(); ++t) {
            protocol::CloseRequest close;
            close.handle = impl.engine->targets[t]->closed(file->objectIds[t], file->handles[t]);
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
            file->objectIds.push_back(reply->attr.objectId);
            file->data.objects.push_back(impl.engine->targets[t]->opened(
                reply->attr.objectId, reply->handle, reply->attr.size, true));
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
            file->objectIds.push_back(reply->attr.objectId);
            file->data.objects.push_back(impl.engine->targets[t]->opened(
                reply->attr.objectId, reply->handle, reply->attr.size, file->writable));
        }
        file->handles.push_back(handle);
        file->data.keys.push_back({static_cast<std::uint32_t>(t), file->objectIds.back()});
    }
    file->data.objects[0]->readers.add(file->data.prevPos);
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
    // A later open may get this FileData's address: no thread's fast-read context may match it.
    mount.engine->fastEpoch.fetch_add(1, std::memory_order_acq_rel);
    FileData &data = m_impl->data;
    data.objects[0]->readers.remove(data.prevPos);
    const std::string job(mount.jobs.current());
    Status first;
    for (std::size_t t = 0; t < m_impl->handles.size(); ++t) {
        // Write-back on close: nothing written is lost.
        auto written =
            mount.engine->writeBack(*mount.engine->targets[t], data.keys[t], *data.objects[t], job);
        if (!written) {
            // Its dirty pages and lock stay, and so does this handle, which their later
            // write-back needs: the engine tries again (lock aging, flushJob, callbacks).
            if (first.ok()) {
                first =
                    written.status().withContext("close " + m_impl->path + " on " + mount.where(t));
            }
            log::warning(mount.category, "close " + m_impl->path + " on " + mount.where(t) + ": " +
                                             written.status().toString() +
                                             "; kept open until its data is written");
            continue;
        }
        // The handle to close may be another open's (TargetContext::closed).
        protocol::CloseRequest close;
        close.handle = mount.engine->targets[t]->closed(m_impl->objectIds[t], m_impl->handles[t]);
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
    if (auto status = m_impl->checkWritable("truncate"); !status) {
        return status;
    }
    Mount::Impl &mount = *m_impl->mount;
    // No write of this client is half done while the size changes (ObjectState::resizeGuard).
    std::unique_lock resize(m_impl->data.objects[0]->resizeGuard);
    // Write back first, so nothing dirty lands past the new end afterwards.
    if (auto status = fsync(); !status) {
        return status;
    }
    const std::string job(mount.jobs.current());
    for (std::size_t t = 0; t < mount.sessions.size(); ++t) {
        protocol::TruncateRequest request;
        // The object's RPC handle, writable as this open is: its own may have been handed to
        // another open's close (TargetContext::closed).
        request.handle = m_impl->data.objects[t]->handle.load();
        request.size = mount.layout.objectSizeFor(static_cast<std::uint32_t>(t), size);
        auto reply = mount.sessions[t]->call(request, job, mount.deadline());
        if (!reply) {
            return reply.status().withContext("truncate " + m_impl->path + " on " + mount.where(t));
        }
        ObjectState &object = *m_impl->data.objects[t];
        object.size = request.size;
        std::uint64_t written = object.writtenEnd.load();
        while (written > request.size &&
               !object.writtenEnd.compare_exchange_weak(written, request.size)) {
        }
        mount.engine->fastEpoch.fetch_add(1, std::memory_order_acq_rel); // sizes cached per thread
        (void)mount.engine->cache.releaseObject(m_impl->data.keys[t]);   // stale tail pages
    }
    return {};
}

Result<std::size_t> File::pread(std::span<std::byte> out, std::uint64_t offset)
{
    Impl &file = *m_impl;
    if (!file.readable) [[unlikely]] {
        return file.checkReadable();
    }
    if (fastRead(*file.engine, file.data, offset, out)) {
        return out.size(); // a cached hit through this thread's context
    }
    Mount::Impl &mount = *file.mount;
    std::uint64_t size = file.knownSize();
    if (offset + out.size() > size || file.sizeStale()) {
        if (auto status = file.refreshSizes(); !status) {
            return status;
        }
        size = file.knownSize();
    }
    if (offset >= size) {
        return std::size_t{0};
    }
    const std::uint64_t length = std::min<std::uint64_t>(out.size(), size - offset);
    if (length == 0) {
        return std::size_t{0};
    }
    if (auto status = mount.engine->readFile(file.data, offset, out.first(length), size); !status) {
        return status.withContext(file.path);
    }
    mount.engine->jobStats.sample(mount.jobs.current(), jobs::JobStats::read_bytes,
                                  static_cast<std::int64_t>(length));
    return static_cast<std::size_t>(length);
}

Result<std::size_t> File::pwrite(std::span<const std::byte> in, std::uint64_t offset)
{
    Impl &file = *m_impl;
    if (auto status = file.checkWritable("write"); !status) {
        return status;
    }
    Mount::Impl &mount = *file.mount;
    std::shared_lock resize(file.data.objects[0]->resizeGuard);
    std::uint64_t done = 0;
    while (done < in.size()) {
        const auto piece = mount.layout.pieceAt(offset + done, in.size() - done);
        auto wrote = mount.engine->writeObject(file.data, piece.target, piece.objectOffset,
                                               in.subspan(done, piece.length));
        if (!wrote) {
            return wrote.status().withContext(file.path);
        }
        done += piece.length;
    }
    mount.engine->jobStats.sample(mount.jobs.current(), jobs::JobStats::write_bytes,
                                  static_cast<std::int64_t>(in.size()));
    return in.size();
}

Result<std::size_t> File::read(std::span<std::byte> out)
{
    auto got = pread(out, m_impl->data.position.load());
    if (got) {
        m_impl->data.position += *got;
    }
    return got;
}

Result<std::size_t> File::write(std::span<const std::byte> in)
{
    auto wrote = pwrite(in, m_impl->data.position.load());
    if (wrote) {
        m_impl->data.position += *wrote;
    }
    return wrote;
}

Status File::fsync()
{
    Impl &file = *m_impl;
    Mount::Impl &mount = *file.mount;
    const std::string job(mount.jobs.current());
    for (std::size_t t = 0; t < file.data.objects.size(); ++t) {
        auto written = mount.engine->writeBack(*mount.engine->targets[t], file.data.keys[t],
                                               *file.data.objects[t], job);
        if (!written) {
            return written.status().withContext("fsync " + file.path + " on " + mount.where(t));
        }
    }
    return {};
}

} // namespace lutra::client
