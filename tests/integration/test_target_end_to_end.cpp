// lutra-target as a real process, reached by real clients over the real tcp plugin: namespace
// operations, checksummed bulk data, durability across a kill, locks with blocking callbacks
// and eviction, bad input, clean shutdown, and its parameters over the control socket.
#include "client/rpc_session.h"
#include "lutra/datapath/v1/control.grpc.pb.h"
#include "object_rpc.h"
#include "target_process.h"
#include "transport/loader.h"

#include <QScopeGuard>
#include <QTest>

#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

using namespace lutra;
using namespace std::chrono_literals;
using client::RpcSession;
using tools::TargetProcess;
using tools::TempDir;

namespace {

transport::Deadline soon()
{
    return transport::deadlineIn(10s);
}

std::vector<std::byte> pattern(std::size_t size, unsigned seed)
{
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) {
        bytes[i] = static_cast<std::byte>((i * 7 + seed * 13) & 0xff);
    }
    return bytes;
}

template <typename Predicate> bool eventually(Predicate predicate, std::chrono::milliseconds limit)
{
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (predicate()) {
            return true;
        }
        std::this_thread::sleep_for(5ms);
    }
    return predicate();
}

} // namespace

class TestTargetEndToEnd : public QObject {
    Q_OBJECT

    std::optional<TempDir> m_dir;
    std::string m_root;
    std::string m_runDir;
    std::unique_ptr<TargetProcess> m_target;
    std::unique_ptr<transport::PluginLoader> m_loader;
    std::unique_ptr<transport::Transport> m_transport;

    void startTarget(std::vector<std::string> extraArgs = {})
    {
        TargetProcess::Options options;
        options.binary = LUTRA_TARGET_BIN;
        options.extraArgs = std::move(extraArgs);
        options.root = m_root;
        options.runDir = m_runDir;
        auto process = TargetProcess::spawn(options);
        QVERIFY2(process.ok(), process.status().toString().c_str());
        m_target = std::move(process).value();
    }

    std::unique_ptr<RpcSession> connect(const std::string &clientId)
    {
        RpcSession::Options options;
        options.clientId = clientId;
        auto session = RpcSession::connect(*m_transport, m_target->uri(), options);
        if (!session) {
            qWarning("%s", session.status().toString().c_str());
            return nullptr;
        }
        return std::move(session).value();
    }

    std::uint64_t create(RpcSession &session, std::string_view path)
    {
        return testing::createObject(session, path, "e2e", soon());
    }

    Result<std::uint32_t> write(RpcSession &session, std::uint64_t handle, std::uint64_t offset,
                                std::span<const std::byte> data)
    {
        return testing::writeObject(session, handle, offset, data, "e2e", soon());
    }

    Result<std::vector<std::byte>> read(RpcSession &session, std::uint64_t handle,
                                        std::uint64_t offset, std::size_t size,
                                        bool checksums = true)
    {
        return testing::readObject(session, handle, offset, size, checksums, "e2e", soon());
    }

    std::unique_ptr<datapath::v1::DatapathControl::Stub> control()
    {
        return datapath::v1::DatapathControl::NewStub(grpc::CreateChannel(
            "unix:" + m_target->controlSocket(), grpc::InsecureChannelCredentials()));
    }

    std::string getParam(const std::string &name)
    {
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        datapath::v1::GetParamsRequest get;
        get.add_patterns(name);
        datapath::v1::GetParamsReply values;
        if (!control()->GetParams(&context, get, &values).ok() || values.values_size() != 1) {
            return "?";
        }
        return values.values(0).value();
    }

    // The samples and the sum of job e2e's read_bytes in obdfilter.ost0.job_stats ({0, 0} when
    // the job has none).
    std::pair<std::uint64_t, std::uint64_t> readTally()
    {
        const std::string text = getParam("obdfilter.ost0.job_stats");
        const auto entry = text.find("job_id:          e2e\n");
        if (entry == std::string::npos) {
            return {0, 0};
        }
        const auto reads = text.find("read_bytes:", entry);
        if (reads == std::string::npos) {
            return {0, 0};
        }
        const auto field = [&](const char *name) {
            return std::stoull(text.substr(text.find(name, reads) + std::strlen(name)));
        };
        return {field("samples:"), field("sum:")};
    }

    // Forks a client process reading 4 MiB bulks in 8 threads without end, lets its reads get
    // going, then stops it (SIGSTOP: the target's sends fill its socket); its pid.
    pid_t stalledBulkReader()
    {
        {
            auto writer = connect("writer");
            const std::uint64_t handle = writer ? create(*writer, "big") : 0;
            if (handle == 0) {
                return -1;
            }
            const auto chunk = pattern(writer->negotiated().maxBulkBytes, 3);
            for (std::uint64_t i = 0; i < 4; ++i) {
                if (!write(*writer, handle, i * chunk.size(), chunk).ok()) {
                    return -1;
                }
            }
        }
        int ready[2];
        if (::pipe(ready) != 0) {
            return -1;
        }
        const std::string uri = m_target->uri();
        const pid_t child = ::fork();
        if (child < 0) {
            return -1;
        }
        if (child == 0) {
            // The vanishing client: its own transport and session, readers that never stop.
            ::close(ready[0]);
            transport::PluginLoader loader;
            auto created = loader.create("tcp", {});
            if (!created) {
                ::_exit(2);
            }
            RpcSession::Options options;
            options.clientId = "vanishing";
            auto session = RpcSession::connect(**created, uri, options);
            if (!session) {
                ::_exit(3);
            }
            protocol::OpenRequest open;
            open.path = "big";
            auto opened = (*session)->call(open, "e2e", soon());
            if (!opened) {
                ::_exit(4);
            }
            const std::size_t bulk = (*session)->negotiated().maxBulkBytes;
            std::vector<std::thread> readers;
            for (unsigned r = 0; r < 8; ++r) {
                readers.emplace_back([&, r] {
                    for (;;) {
                        (void)read(**session, opened->handle, (r % 4) * bulk, bulk);
                    }
                });
            }
            (void)::write(ready[1], "r", 1);
            for (;;) {
                ::pause();
            }
        }
        ::close(ready[1]);
        char byte = 0;
        const bool reading = ::read(ready[0], &byte, 1) == 1; // EOF: the child failed early
        ::close(ready[0]);
        std::this_thread::sleep_for(100ms); // bulk reads in flight
        ::kill(child, SIGSTOP);
        std::this_thread::sleep_for(200ms); // the target's sends fill the socket
        if (!reading) {
            ::kill(child, SIGKILL);
            (void)::waitpid(child, nullptr, 0);
            return -1;
        }
        return child;
    }

private slots:
    void init()
    {
        auto dir = TempDir::create("lutra-e2e");
        QVERIFY(dir.ok());
        m_dir.emplace(std::move(dir).value());
        m_root = m_dir->path() + "/objects";
        m_runDir = m_dir->path() + "/run";
        std::filesystem::create_directories(m_root);
        m_loader = std::make_unique<transport::PluginLoader>();
        auto created = m_loader->create("tcp", {});
        QVERIFY2(created.ok(), created.status().toString().c_str());
        m_transport = std::move(created).value();
        startTarget();
    }

    void cleanup()
    {
        m_target.reset();
        m_transport.reset();
        m_loader.reset();
        m_dir.reset();
    }

    void namespaceOperations()
    {
        auto session = connect("ns");
        QVERIFY(session);
        QCOMPARE(session->negotiated().targetName, std::string("ost0"));
        protocol::MkdirRequest mkdir;
        mkdir.path = "dir";
        QVERIFY(session->call(mkdir, "e2e", soon()).ok());
        QVERIFY(create(*session, "dir/a") != 0);

        protocol::CreateRequest exclusive;
        exclusive.path = "dir/a";
        exclusive.flags = protocol::kCreateExclusive;
        auto again = session->call(exclusive, "e2e", soon());
        QCOMPARE(again.status().code(), Errc::already_exists);

        protocol::ReaddirRequest readdir;
        readdir.path = "dir";
        auto listing = session->call(readdir, "e2e", soon());
        QVERIFY(listing.ok());
        QCOMPARE(listing->entries.size(), std::size_t(1));
        QCOMPARE((*listing->entries.begin()).name, std::string_view("a"));
        QVERIFY(listing->eof);

        protocol::StatRequest stat;
        stat.path = "dir";
        auto attr = session->call(stat, "e2e", soon());
        QVERIFY(attr.ok());
        QCOMPARE(attr->attr.kind, protocol::ObjectKind::directory);

        protocol::RmdirRequest rmdir;
        rmdir.path = "dir";
        QCOMPARE(session->call(rmdir, "e2e", soon()).status().code(), Errc::failed_precondition);
        protocol::UnlinkRequest unlink;
        unlink.path = "dir/a";
        QVERIFY(session->call(unlink, "e2e", soon()).ok());
        QVERIFY(session->call(rmdir, "e2e", soon()).ok());
        QVERIFY(!std::filesystem::exists(m_root + "/dir"));
    }

    void namesCannotEscape()
    {
        auto session = connect("escape");
        QVERIFY(session);
        std::filesystem::create_symlink("/etc", m_root + "/outside");
        for (const char *name : {"../x", "/etc/passwd", "outside/passwd", "a/../../x"}) {
            protocol::OpenRequest open;
            open.path = name;
            auto reply = session->call(open, "e2e", soon());
            QVERIFY2(!reply.ok(), name);
            // The protocol refuses ".." and absolute paths itself; the target refuses symlinks.
            const auto code = reply.status().code();
            QVERIFY2(code == Errc::permission_denied || code == Errc::invalid_argument ||
                         code == Errc::protocol_error,
                     reply.status().toString().c_str());
        }
        protocol::CreateRequest create;
        create.path = "outside/evil";
        auto reply = session->call(create, "e2e", soon());
        QCOMPARE(reply.status().code(), Errc::permission_denied);
        QVERIFY2(reply.status().message().find("escapes the backing directory") !=
                     std::string::npos,
                 reply.status().message().c_str());
        QVERIFY(!std::filesystem::exists("/etc/evil"));
        QVERIFY(session->ping("e2e", soon()).ok()); // the connection stays usable
    }

    void bulkDataRoundTrip()
    {
        auto session = connect("data");
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "file");
        QVERIFY(handle != 0);
        const auto data = pattern(2 * 4096 + 100, 1);
        auto written = write(*session, handle, 0, data);
        QVERIFY2(written.ok(), written.status().toString().c_str());
        QCOMPARE(*written, std::uint32_t(data.size()));
        auto back = read(*session, handle, 0, 3 * 4096);
        QVERIFY2(back.ok(), back.status().toString().c_str());
        QCOMPARE(back->size(), data.size()); // short read at the end of the object
        QVERIFY(*back == data);
        auto past = read(*session, handle, 4 * 4096, 4096);
        QVERIFY(past.ok());
        QCOMPARE(past->size(), std::size_t(0));

        // Largest bulk the session negotiated, in one RPC.
        const auto big = pattern(session->negotiated().maxBulkBytes, 2);
        QVERIFY(write(*session, handle, 1 << 20, big).ok());
        auto bigBack = read(*session, handle, 1 << 20, big.size());
        QVERIFY(bigBack.ok());
        QVERIFY(*bigBack == big);
        // The bytes really are in the backing file.
        std::ifstream file(m_root + "/file", std::ios::binary);
        std::vector<char> head(data.size());
        file.read(head.data(), static_cast<std::streamsize>(head.size()));
        QVERIFY(std::memcmp(head.data(), data.data(), data.size()) == 0);
    }

    // Reads go from the object's page cache to the transport (tcp: sendfile), with checksums
    // summed by the target meanwhile; with obdfilter.*.read_zero_copy=0 through the buffer. The
    // client gets the same bytes (and checksums that match them) and the same short read at the
    // end of the object either way.
    void zeroCopyAndBufferedReadsAgree()
    {
        auto session = connect("zero-copy");
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "sent");
        QVERIFY(handle != 0);
        const std::size_t bulk = session->negotiated().maxBulkBytes;
        const auto data = pattern(bulk + 3 * 4096 + 100, 5);
        QVERIFY(write(*session, handle, 0, {data.data(), bulk}).ok());
        QVERIFY(write(*session, handle, bulk, {data.data() + bulk, data.size() - bulk}).ok());
        const auto readAll = [&](bool checksums) {
            std::vector<std::byte> all;
            for (std::uint64_t offset = 0;; offset += bulk) {
                auto got = read(*session, handle, offset, bulk, checksums);
                if (!got) {
                    qWarning("%s", got.status().toString().c_str());
                    return std::vector<std::byte>{};
                }
                all.insert(all.end(), got->begin(), got->end());
                if (got->size() < bulk) {
                    return all; // the short read at the end of the object
                }
            }
        };
        QCOMPARE(getParam("obdfilter.ost0.zero_copy_reads"), std::string("0"));
        QVERIFY(readAll(false) == data);
        QCOMPARE(getParam("obdfilter.ost0.zero_copy_reads"), std::string("2"));
        auto past = read(*session, handle, bulk + 8 * 4096, 4096, false);
        QVERIFY2(past.ok(), past.status().toString().c_str());
        QCOMPARE(past->size(), std::size_t(0));
        // With checksums too: the target sums the pages while the transport sends them.
        QVERIFY(readAll(true) == data);
        QCOMPARE(getParam("obdfilter.ost0.zero_copy_reads"), std::string("4"));

        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        datapath::v1::SetParamsRequest set;
        set.set_principal("e2e");
        auto *assignment = set.add_assignments();
        assignment->set_pattern("obdfilter.ost0.read_zero_copy");
        assignment->set_value("0");
        datapath::v1::SetParamsReply applied;
        QVERIFY(control()->SetParams(&context, set, &applied).ok());
        QVERIFY(applied.result().applied());
        QVERIFY(readAll(false) == data);
        QVERIFY(readAll(true) == data);
        QCOMPARE(getParam("obdfilter.ost0.zero_copy_reads"), std::string("4"));
        // Every read in job_stats once, whichever way it went (inline, a service thread's
        // zero-copy or buffered; the read past the end a sample of 0 bytes), and as soon as the
        // client has its reply: the target tallies before it sends.
        using Tally = std::pair<std::uint64_t, std::uint64_t>;
        QCOMPARE(readTally(), Tally(9, 4 * data.size()));
    }

    // A zero-copy read of an object the page cache no longer holds (dropped with
    // POSIX_FADV_DONTNEED) is read in by the service thread before the send, so tcp's I/O thread
    // never waits for the disk: counted in cold_zero_copy_reads, the bytes (and checksums) right;
    // the next read of the same range finds it cached.
    void coldReadsAreReadInBeforeTheSend()
    {
        auto session = connect("cold");
        QVERIFY(session);
        const std::size_t bulk = session->negotiated().maxBulkBytes;
        for (const bool checksums : {false, true}) {
            const std::string name = checksums ? "cold-summed" : "cold";
            const std::uint64_t handle = create(*session, name);
            QVERIFY(handle != 0);
            const auto data = pattern(bulk, checksums ? 8 : 7);
            QVERIFY(write(*session, handle, 0, data).ok()); // durable: its pages are clean
            const int fd = ::open((m_root + "/" + name).c_str(), O_RDONLY);
            QVERIFY(fd >= 0);
            QCOMPARE(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
            ::close(fd);
            const std::string before = checksums ? "1" : "0";
            QCOMPARE(getParam("obdfilter.ost0.cold_zero_copy_reads"), before);
            auto got = read(*session, handle, 0, bulk, checksums);
            QVERIFY2(got.ok(), got.status().toString().c_str());
            QVERIFY(*got == data);
            const std::string after = checksums ? "2" : "1";
            QCOMPARE(getParam("obdfilter.ost0.cold_zero_copy_reads"), after);
            got = read(*session, handle, 0, bulk, checksums);
            QVERIFY(got.ok() && *got == data);
            QCOMPARE(getParam("obdfilter.ost0.cold_zero_copy_reads"), after);
        }
    }

    // A checksummed zero-copy read sums its pages through a mapping of the object: a truncate
    // racing it (here: of the backing file, as fast as it goes, extended again after each) leaves
    // the pages it was summing beyond the file's end. Every read then ends in an error reply (the
    // object shrank, or a checksum mismatch) or in bytes the file held, never in a dead target
    // (without the guard, the mapping's SIGBUS kills it: test_mapped_crcs shows that
    // deterministically; here the race lands in some of the reads).
    void readsRacingATruncateFailOrAgree()
    {
        auto session = connect("shrinking");
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "shrinking");
        QVERIFY(handle != 0);
        const std::size_t bulk = session->negotiated().maxBulkBytes;
        const auto data = pattern(bulk, 6);
        QVERIFY(write(*session, handle, 0, data).ok());
        const int fd = ::open((m_root + "/shrinking").c_str(), O_WRONLY);
        QVERIFY(fd >= 0);
        std::atomic<bool> stop{false};
        std::atomic<unsigned> truncates{0};
        // Down to a page and back up (the rest reads as zeros), again and again.
        std::thread truncater([&] {
            while (!stop.load()) {
                if (::ftruncate(fd, 4096) != 0 ||
                    ::ftruncate(fd, static_cast<off_t>(data.size())) != 0) {
                    return;
                }
                truncates.fetch_add(1);
                std::this_thread::sleep_for(1ms); // the target's faults wait for each truncate
            }
        });
        unsigned agreed = 0;
        unsigned failed = 0;
        std::string firstError;
        unsigned shrank = 0;
        for (int i = 0; i < 100; ++i) {
            auto got = read(*session, handle, 0, bulk);
            if (!got) {
                QCOMPARE(got.status().code(), Errc::io_error); // not unavailable: it is alive
                firstError = firstError.empty() ? got.status().message() : firstError;
                shrank += got.status().message().find("shrank") != std::string::npos ? 1 : 0;
                ++failed;
                continue;
            }
            // What the file held at some moment of the read: per page (the file's ends are at
            // page boundaries), the data or zeros past an end.
            static const std::array<std::byte, 4096> zeros{};
            for (std::size_t at = 0; at < got->size(); at += 4096) {
                const std::size_t size = std::min<std::size_t>(4096, got->size() - at);
                QVERIFY2(std::memcmp(got->data() + at, data.data() + at, size) == 0 ||
                             std::memcmp(got->data() + at, zeros.data(), size) == 0,
                         ("the page at " + std::to_string(at) + " is neither").c_str());
            }
            ++agreed;
        }
        stop = true;
        truncater.join();
        ::close(fd);
        qInfo("%u reads agreed, %u failed (%u: the object shrank; first: %s), %u truncates", agreed,
              failed, shrank, firstError.c_str(), truncates.load());
        QVERIFY(truncates.load() > 0);
        QVERIFY(session->ping("e2e", soon()).ok());
        QVERIFY(write(*session, handle, 0, data).ok());
        auto after = read(*session, handle, 0, bulk);
        QVERIFY2(after.ok(), after.status().toString().c_str());
        QVERIFY(*after == data);
    }

    // The target keeps the page CRCs of what it read or was written (PageCrcCache) until the
    // pages change: checksummed reads after an overwrite of part of a page (whose CRC no write
    // supplies), a truncate down and up again, and a change behind the target's back must
    // carry the CRCs of the new bytes. Without the invalidation each read below fails with a
    // checksum mismatch.
    void keptPageCrcsFollowWritesAndTruncates()
    {
        auto session = connect("kept");
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "kept");
        QVERIFY(handle != 0);
        auto expected = pattern(4 * 4096, 7);
        QVERIFY(write(*session, handle, 0, expected).ok());
        const auto readBack = [&]() -> bool {
            for (int i = 0; i < 2; ++i) { // the second read is served from the kept CRCs
                auto got = read(*session, handle, 0, 4 * 4096);
                if (!got) {
                    qWarning("%s", got.status().toString().c_str());
                    return false;
                }
                if (*got != expected) {
                    qWarning("the bytes read differ");
                    return false;
                }
            }
            return true;
        };
        QVERIFY(readBack());
        // The head of a page: no CRC of the whole page comes with the write.
        const auto patch = pattern(50, 8);
        QVERIFY(write(*session, handle, 2 * 4096, patch).ok());
        std::copy(patch.begin(), patch.end(), expected.begin() + 2 * 4096);
        QVERIFY(readBack());
        // Down into page 1 and up again: its tail and the pages after it read as zeros.
        for (const std::uint64_t size : {std::uint64_t{4096 + 10}, std::uint64_t{4 * 4096}}) {
            protocol::TruncateRequest truncate;
            truncate.handle = handle;
            truncate.size = size;
            auto truncated = session->call(truncate, "e2e", soon());
            QVERIFY2(truncated.ok(), truncated.status().toString().c_str());
        }
        std::fill(expected.begin() + 4096 + 10, expected.end(), std::byte{0});
        QVERIFY(readBack());
        // Behind the target's back (the file's mtime tells): after a pause longer than a
        // timestamp tick, so the change shows in mtime.
        std::this_thread::sleep_for(50ms);
        const auto outside = pattern(4096, 9);
        {
            std::fstream file(m_root + "/kept", std::ios::in | std::ios::out | std::ios::binary);
            file.seekp(3 * 4096);
            file.write(reinterpret_cast<const char *>(outside.data()),
                       static_cast<std::streamsize>(outside.size()));
        }
        std::copy(outside.begin(), outside.end(), expected.begin() + 3 * 4096);
        QVERIFY(readBack());
    }

    // A read whose pages are cached (and, with checksums, whose page CRCs are kept) is served on
    // the transport's I/O thread: it completes while the target's only service thread is stuck
    // in a lock enqueue that waits for an unresponsive holder, and a stat (which needs that
    // thread) does not. Without the inline path the read times out like the stat.
    void cachedReadsNeedNoServiceThread()
    {
        m_target.reset();
        startTarget({"--threads", "1"});
        auto reader = connect("reader");
        auto holder = connect("holder");
        auto waiter = connect("waiter");
        QVERIFY(reader && holder && waiter);
        const std::uint64_t handle = create(*reader, "hot");
        QVERIFY(handle != 0);
        const auto data = pattern(8 * 4096, 4);
        QVERIFY(write(*reader, handle, 0, data).ok()); // checksummed: its page CRCs are kept
        protocol::OpenRequest open;
        open.path = "hot";
        auto holderOpen = holder->call(open, "e2e", soon());
        auto waiterOpen = waiter->call(open, "e2e", soon());
        QVERIFY(holderOpen.ok() && waiterOpen.ok());
        protocol::LockEnqueueRequest pw;
        pw.handle = holderOpen->handle;
        pw.mode = protocol::LockMode::pw;
        QVERIFY(holder->call(pw, "e2e", soon()).ok()); // and never cancels
        pw.handle = waiterOpen->handle;
        std::thread stuck([&] { (void)waiter->call(pw, "e2e", transport::deadlineIn(3s)); });
        const auto joinStuck = qScopeGuard([&] { stuck.join(); });
        std::this_thread::sleep_for(200ms); // the service thread takes the enqueue and waits

        protocol::StatRequest stat;
        stat.path = "hot";
        QCOMPARE(reader->call(stat, "e2e", transport::deadlineIn(300ms)).status().code(),
                 Errc::timeout);
        for (const bool checksums : {false, true}) {
            auto got = testing::readObject(*reader, handle, 0, data.size(), checksums, "e2e",
                                           transport::deadlineIn(2s));
            QVERIFY2(got.ok(), got.status().toString().c_str());
            QVERIFY(*got == data);
        }
        // Tallied by the I/O thread, with the only service thread still stuck.
        using Tally = std::pair<std::uint64_t, std::uint64_t>;
        QCOMPARE(readTally(), Tally(2, 2 * data.size()));
    }

    void acknowledgedWritesSurviveAKill()
    {
        {
            auto session = connect("durable");
            QVERIFY(session);
            const std::uint64_t handle = create(*session, "precious");
            QVERIFY(write(*session, handle, 0, pattern(64 * 1024, 3)).ok());
        }
        auto killed = m_target->stop(SIGKILL);
        QVERIFY(killed.ok());
        QCOMPARE(*killed, 128 + SIGKILL);
        m_target.reset();
        startTarget(); // same backing directory; the stale control socket is replaced
        auto session = connect("after");
        QVERIFY(session);
        protocol::OpenRequest open;
        open.path = "precious";
        auto opened = session->call(open, "e2e", soon());
        QVERIFY(opened.ok());
        QCOMPARE(opened->attr.size, std::uint64_t(64 * 1024));
        auto back = read(*session, opened->handle, 0, 64 * 1024);
        QVERIFY(back.ok());
        QVERIFY(*back == pattern(64 * 1024, 3));
        const auto log = std::filesystem::file_size(m_root + "/.lutra/commit.log");
        QVERIFY(log > 0 && log % 32 == 0); // one fixed-size record per committed batch
    }

    void conflictingLockSendsBlockingCallback()
    {
        auto holder = connect("holder");
        auto other = connect("other");
        QVERIFY(holder && other);
        const std::uint64_t holderHandle = create(*holder, "locked");
        protocol::OpenRequest open;
        open.path = "locked";
        auto otherOpen = other->call(open, "e2e", soon());
        QVERIFY(otherOpen.ok());

        protocol::LockEnqueueRequest pw;
        pw.handle = holderHandle;
        pw.mode = protocol::LockMode::pw;
        auto granted = holder->call(pw, "e2e", soon());
        QVERIFY(granted.ok());
        const std::uint64_t lock = granted->lockHandle;

        // The holder cancels from its own thread when asked, as the engine will.
        std::promise<std::uint64_t> asked;
        holder->setBlockingCallbackHandler(
            [&asked](std::uint64_t handle, protocol::LockMode) { asked.set_value(handle); });
        auto askedFuture = asked.get_future();
        std::thread canceller([&] {
            if (askedFuture.wait_for(10s) != std::future_status::ready) {
                return;
            }
            protocol::LockCancelRequest cancel;
            cancel.lockHandle = askedFuture.get();
            (void)holder->call(cancel, "e2e", soon());
        });
        protocol::LockEnqueueRequest pr;
        pr.handle = otherOpen->handle;
        pr.mode = protocol::LockMode::pr;
        auto second = other->call(pr, "e2e", transport::deadlineIn(20s));
        canceller.join();
        QVERIFY2(second.ok(), second.status().toString().c_str());
        QVERIFY(second->lockHandle != lock);
        QVERIFY(holder->connected()); // it cooperated: not evicted
    }

    void unresponsiveHolderIsEvicted()
    {
        // Shorten the blocking timeout through the control socket, as ctld would.
        auto stub = control();
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        datapath::v1::SetParamsRequest set;
        set.set_principal("test");
        auto *assignment = set.add_assignments();
        assignment->set_pattern("ldlm.namespaces.ost0.blocking_timeout");
        assignment->set_value("200ms");
        datapath::v1::SetParamsReply reply;
        QVERIFY(stub->SetParams(&context, set, &reply).ok());
        QVERIFY2(reply.result().applied(), reply.DebugString().c_str());

        auto holder = connect("sleepy");
        auto other = connect("eager");
        QVERIFY(holder && other);
        holder->setBlockingCallbackHandler([](std::uint64_t, protocol::LockMode) {}); // ignores it
        const std::uint64_t handle = create(*holder, "contended");
        protocol::LockEnqueueRequest pw;
        pw.handle = handle;
        pw.mode = protocol::LockMode::pw;
        QVERIFY(holder->call(pw, "e2e", soon()).ok());
        protocol::OpenRequest open;
        open.path = "contended";
        auto opened = other->call(open, "e2e", soon());
        QVERIFY(opened.ok());
        pw.handle = opened->handle;
        auto granted = other->call(pw, "e2e", soon());
        QVERIFY2(granted.ok(), granted.status().toString().c_str());
        QVERIFY(eventually([&] { return !holder->connected(); }, 5s)); // evicted
        QVERIFY(other->connected());
    }

    void garbageDropsOnlyThatConnection()
    {
        auto session = connect("bystander");
        QVERIFY(session);
        const auto uri = m_target->uri();
        const auto port = static_cast<std::uint16_t>(std::stoi(uri.substr(uri.rfind(':') + 1)));
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        QCOMPARE(::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address), 0);
        const std::string garbage(4096, 'Z');
        QVERIFY(::send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL) > 0);
        char byte = 0;
        QVERIFY(eventually([&] { return ::recv(fd, &byte, 1, MSG_DONTWAIT) == 0; }, 5s));
        ::close(fd);
        QVERIFY(session->ping("e2e", soon()).ok());
        auto fresh = connect("newcomer");
        QVERIFY(fresh && fresh->ping("e2e", soon()).ok());
    }

    void sigtermFinishesInFlightWrites()
    {
        auto session = connect("writer");
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "inflight");
        constexpr unsigned kWriters = 8;
        std::vector<std::vector<std::uint64_t>> acked(kWriters);
        std::atomic<bool> stop{false};
        std::vector<std::thread> writers;
        for (unsigned w = 0; w < kWriters; ++w) {
            writers.emplace_back([&, w] {
                for (std::uint64_t k = 0; !stop; ++k) {
                    const std::uint64_t block = k * kWriters + w;
                    if (!write(*session, handle, block * 4096, pattern(4096, unsigned(block)))
                             .ok()) {
                        return;
                    }
                    acked[w].push_back(block);
                }
            });
        }
        QVERIFY(eventually([&] { return acked[0].size() >= 5; }, 10s));
        auto exited = m_target->stop(SIGTERM);
        stop = true;
        for (auto &writer : writers) {
            writer.join();
        }
        QVERIFY(exited.ok());
        QCOMPARE(*exited, 0);
        session.reset();
        m_target.reset();
        startTarget();
        auto reader = connect("checker");
        QVERIFY(reader);
        protocol::OpenRequest open;
        open.path = "inflight";
        auto opened = reader->call(open, "e2e", soon());
        QVERIFY(opened.ok());
        std::size_t checked = 0;
        for (const auto &blocks : acked) {
            for (const std::uint64_t block : blocks) {
                auto back = read(*reader, opened->handle, block * 4096, 4096);
                QVERIFY(back.ok());
                QVERIFY2(*back == pattern(4096, unsigned(block)), "an acknowledged write was lost");
                ++checked;
            }
        }
        QVERIFY(checked >= 5);
    }

    // A client process that dies in the middle of bulk reads leaves nothing that keeps a
    // SIGTERMed target from exiting: its requests and bulk operations end with the connection.
    void sigtermAfterAClientVanishedMidBulkExits()
    {
        const pid_t child = stalledBulkReader();
        QVERIFY2(child > 0, "the reading client did not start");
        ::kill(child, SIGKILL);
        QCOMPARE(::waitpid(child, nullptr, 0), child);
        auto exited = m_target->stop(SIGTERM);
        QVERIFY2(exited.ok(), exited.status().toString().c_str());
        QCOMPARE(*exited, 0);
    }

    // A client that stays connected but takes none of its data must not hold a SIGTERMed target
    // past its drain deadline (systemd's stop timeout follows with SIGKILL).
    void sigtermWithAStalledClientExits()
    {
        m_target.reset();
        startTarget({"--drain-timeout", "1"});
        const pid_t child = stalledBulkReader();
        QVERIFY2(child > 0, "the reading client did not start");
        auto exited = m_target->stop(SIGTERM, 20s);
        ::kill(child, SIGKILL);
        QCOMPARE(::waitpid(child, nullptr, 0), child);
        QVERIFY2(exited.ok(), exited.status().toString().c_str());
        QCOMPARE(*exited, 0);
    }

    void parametersOverTheControlSocket()
    {
        auto session = connect("jobs");
        QVERIFY(session);
        const std::uint64_t handle = create(*session, "accounted");
        QVERIFY(write(*session, handle, 0, pattern(8192, 4)).ok());
        auto stub = control();
        grpc::ClientContext context;
        context.set_deadline(std::chrono::system_clock::now() + 10s);
        datapath::v1::GetParamsRequest get;
        get.add_patterns("obdfilter.ost0.job_stats");
        get.add_patterns("obdfilter.ost0.num_exports");
        datapath::v1::GetParamsReply values;
        QVERIFY(stub->GetParams(&context, get, &values).ok());
        QCOMPARE(values.values_size(), 2);
        const std::string &jobStats = values.values(0).value();
        QVERIFY2(jobStats.find("- job_id:          e2e") != std::string::npos, jobStats.c_str());
        QVERIFY2(
            jobStats.find("write_bytes:     { samples:           1, unit: bytes, min:     8192") !=
                std::string::npos,
            jobStats.c_str());
        QCOMPARE(values.values(1).value(), std::string("1"));
    }
};

QTEST_GUILESS_MAIN(TestTargetEndToEnd)
#include "test_target_end_to_end.moc"
