// The wire codec: every message round-trips, the layout is the documented little-endian one
// (golden bytes written by hand), every truncation and every broken field is a clean
// protocol_error naming what and where, encode never writes past the buffer, and neither
// direction allocates. Also keeps the fuzzer's seed corpus in step with the format.
#include "allocation_counter.h"
#include "protocol/codec.h"
#include "protocol/little_endian.h"
#include "test_protocol_samples.h"

#include <QTest>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <set>
#include <vector>

using namespace lutra;
using namespace lutra::protocol;
using lutra::protocol::testing::samples;

namespace {

using Bytes = std::vector<std::byte>;

const Message &sampleNamed(std::string_view name)
{
    for (const auto &sample : samples()) {
        if (sample.name == name) {
            return sample.message;
        }
    }
    qFatal("no sample %s", std::string(name).c_str());
}

Bytes encodeOrDie(const Message &message)
{
    Bytes out(encodedSize(message));
    auto size = encode(message, out);
    if (!size || *size != out.size()) {
        qFatal("encode failed: %s", size.status().toString().c_str());
    }
    return out;
}

// An independent little-endian builder for hand-made (often broken) messages.
class Raw {
public:
    Raw &u8(std::uint64_t v) { return put(v, 1); }
    Raw &u16(std::uint64_t v) { return put(v, 2); }
    Raw &u32(std::uint64_t v) { return put(v, 4); }
    Raw &u64(std::uint64_t v) { return put(v, 8); }
    Raw &text(std::string_view s)
    {
        for (const char c : s) {
            m_bytes.push_back(static_cast<std::byte>(c));
        }
        return *this;
    }
    Raw &str8(std::string_view s) { return u8(s.size()).text(s); }
    Raw &str16(std::string_view s) { return u16(s.size()).text(s); }
    const Bytes &bytes() const { return m_bytes; }

private:
    Raw &put(std::uint64_t v, int n)
    {
        for (int i = 0; i < n; ++i) {
            m_bytes.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xff));
        }
        return *this;
    }
    Bytes m_bytes;
};

// Header + job id + body, with a correct body length.
QByteArray frame(Opcode opcode, std::uint16_t flags, std::string_view jobId, const Raw &body)
{
    Raw raw;
    raw.u32(kMagic).u16(1).u16(static_cast<std::uint16_t>(opcode)).u16(flags);
    raw.u8(jobId.size()).u8(0).u32(jobId.size() + body.bytes().size()).u64(1).text(jobId);
    QByteArray out(reinterpret_cast<const char *>(raw.bytes().data()),
                   static_cast<qsizetype>(raw.bytes().size()));
    out.append(reinterpret_cast<const char *>(body.bytes().data()),
               static_cast<qsizetype>(body.bytes().size()));
    return out;
}
QByteArray request(Opcode opcode, const Raw &body)
{
    return frame(opcode, 0, "job", body);
}
QByteArray reply(Opcode opcode, const Raw &body)
{
    return frame(opcode, kFlagReply, {}, body);
}

std::span<const std::byte> view(const QByteArray &bytes)
{
    return std::as_bytes(std::span(bytes.constData(), static_cast<std::size_t>(bytes.size())));
}

// A valid bulk description: handle, offset, page count, last page bytes, flags, descriptor.
Raw &bulk(Raw &raw, std::uint32_t pages = 2, std::uint32_t flags = 0)
{
    return raw.u64(1).u64(0).u32(pages).u16(4096).u32(flags).str8("d");
}

Raw entry(std::uint64_t id, std::uint8_t kind, std::string_view name)
{
    Raw raw;
    raw.u64(id).u8(kind).str16(name);
    return raw;
}

} // namespace

class TestProtocolCodec : public QObject {
    Q_OBJECT
private slots:
    void samplesCoverEveryBodyType()
    {
        std::set<std::size_t> seen;
        for (const auto &sample : samples()) {
            seen.insert(sample.message.body.index());
        }
        QCOMPARE(seen.size(), std::variant_size_v<Body>);
    }

    // The export cookie travels exactly with the multi-connection bit: encode refuses a cookie
    // without it, decode a reply that has the bit but names no export.
    void exportCookieNeedsTheMultiConnectionBit()
    {
        ConnectRequest join;
        join.clientId = "client-7f3a";
        join.exportCookie = 42;
        Bytes out(kMaxMessageSize);
        auto size = encode(Message{1, "job", join, kMinVersion}, out);
        QVERIFY(!size.ok());
        QCOMPARE(size.status().code(), Errc::invalid_argument);
        QVERIFY2(size.status().message().find("export cookie") != std::string::npos,
                 size.status().toString().c_str());

        ConnectReply reply;
        reply.targetName = "ost0";
        reply.features = kFeatureMultiConnection;
        reply.exportCookie = 7;
        Bytes bytes = encodeOrDie(Message{1, {}, reply, kMinVersion});
        bytes[bytes.size() - 8] = std::byte{0}; // the cookie, little-endian: 7 -> 0
        auto decoded = decode(bytes);
        QVERIFY(!decoded.ok());
        QCOMPARE(decoded.status().code(), Errc::protocol_error);
        QVERIFY2(decoded.status().message().find("export cookie") != std::string::npos,
                 decoded.status().toString().c_str());
    }

    void roundTrip_data()
    {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < samples().size(); ++i) {
            QTest::newRow(samples()[i].name.c_str()) << int(i);
        }
    }

    void roundTrip()
    {
        QFETCH(int, index);
        const Message &original = samples()[std::size_t(index)].message;
        const Bytes bytes = encodeOrDie(original);
        auto decoded = decode(bytes);
        QVERIFY2(decoded.ok(), decoded.status().toString().c_str());
        QVERIFY(*decoded == original);
        QCOMPARE(decoded->opcode(), original.opcode());
        QCOMPARE(decoded->isReply(), original.isReply());
        // The decoded form (views into `bytes`) encodes to the very same bytes.
        QVERIFY(encodeOrDie(*decoded) == bytes);

        auto header = decodeHeader(std::span(bytes).first(kHeaderSize));
        QVERIFY2(header.ok(), header.status().toString().c_str());
        QCOMPARE(header->messageSize(), bytes.size());
        QCOMPARE(header->xid, original.xid);
        QCOMPARE(header->opcode, original.opcode());
    }

    void decodedViewsPointIntoTheBuffer()
    {
        const Bytes bytes = encodeOrDie(sampleNamed("readdir-reply"));
        auto decoded = decode(bytes);
        QVERIFY(decoded.ok());
        const auto &entries = std::get<ReaddirReply>(decoded->body).entries;
        QCOMPARE(entries.size(), std::size_t(3));
        std::vector<std::string> names;
        for (const DirEntry e : entries) {
            const auto *at = reinterpret_cast<const std::byte *>(e.name.data());
            QVERIFY(at >= bytes.data() && at + e.name.size() <= bytes.data() + bytes.size());
            names.emplace_back(e.name);
        }
        QCOMPARE(names, (std::vector<std::string>{"a", "sub dir", "data.bin"}));
    }

    void goldenLockEnqueueRequest()
    {
        const Message message{
            0x0102030405060708, "job1",
            LockEnqueueRequest{0x1122334455667788, LockMode::pw, kLockNonBlocking}};
        // clang-format off
        const std::vector<std::uint8_t> golden{
            0x4c, 0x54, 0x52, 0x41,                         // magic "LTRA"
            0x02, 0x00,                                     // version 2
            0x0f, 0x00,                                     // opcode 15 lock_enqueue
            0x00, 0x00,                                     // flags: request
            0x04,                                           // job id length
            0x00,                                           // reserved
            0x11, 0x00, 0x00, 0x00,                         // body length 17
            0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, // xid
            'j', 'o', 'b', '1',                             // job id
            0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // object handle
            0x02,                                           // mode PW
            0x01, 0x00, 0x00, 0x00,                         // flags: non-blocking
        };
        // clang-format on
        const Bytes bytes = encodeOrDie(message);
        QCOMPARE(bytes.size(), golden.size());
        for (std::size_t i = 0; i < golden.size(); ++i) {
            QVERIFY2(std::to_integer<std::uint8_t>(bytes[i]) == golden[i],
                     ("byte " + std::to_string(i)).c_str());
        }
        auto decoded = decode(std::as_bytes(std::span(golden)));
        QVERIFY(decoded.ok());
        QVERIFY(*decoded == message);
    }

    // Version 2 added the object's size to a lock grant; a version 1 grant has none, and
    // decodes as "size unknown" (the client then reads every page it writes in part).
    void goldenLockEnqueueReplyByVersion()
    {
        // clang-format off
        const std::vector<std::uint8_t> header{
            0x4c, 0x54, 0x52, 0x41,                         // magic "LTRA"
            0x00, 0x00,                                     // version, patched below
            0x0f, 0x00,                                     // opcode 15 lock_enqueue
            0x01, 0x00,                                     // flags: reply
            0x00, 0x00,                                     // no job id, reserved
            0x00, 0x00, 0x00, 0x00,                         // body length, patched below
            0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // xid 5
            0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, // lock handle
            0x02,                                           // granted PW
        };
        const std::vector<std::uint8_t> size{0x00, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
        // clang-format on
        for (const std::uint16_t version : {1, 2}) {
            std::vector<std::uint8_t> golden = header;
            golden[4] = static_cast<std::uint8_t>(version);
            if (version == 2) {
                golden.insert(golden.end(), size.begin(), size.end()); // 4096 bytes
            }
            golden[12] = static_cast<std::uint8_t>(golden.size() - kHeaderSize);
            const Message message{
                5,
                {},
                LockEnqueueReply{0x1122334455667788, LockMode::pw,
                                 version == 2 ? 4096 : LockEnqueueReply::kSizeUnknown},
                version};
            QVERIFY2(std::ranges::equal(encodeOrDie(message), std::as_bytes(std::span(golden))),
                     ("version " + std::to_string(version)).c_str());
            auto decoded = decode(std::as_bytes(std::span(golden)));
            QVERIFY(decoded.ok());
            QVERIFY(*decoded == message);
        }
        // Encoded as version 1, a known size is not sent: it decodes as unknown.
        const Message known{5, {}, LockEnqueueReply{7, LockMode::pr, 4096}, 1};
        auto back = decode(encodeOrDie(known));
        QVERIFY(back.ok());
        QCOMPARE(std::get<LockEnqueueReply>(back->body).objectSize, LockEnqueueReply::kSizeUnknown);
    }

    // Connect is framed as version 1 whatever the versions it negotiates, so that any target
    // reads it; encode refuses another framing and decode rejects it, as it does a version this
    // build does not speak.
    void connectIsFramedAsVersionOne()
    {
        ConnectRequest connect;
        connect.clientId = "client-7f3a";
        Bytes out(kMaxMessageSize);
        auto size = encode(Message{1, "job", connect, 2}, out);
        QVERIFY(!size.ok());
        QCOMPARE(size.status().code(), Errc::invalid_argument);
        QVERIFY2(size.status().message().find("connect is framed as version 1, not 2") !=
                     std::string::npos,
                 size.status().toString().c_str());
        Bytes bytes = encodeOrDie(Message{1, "job", connect, 1});
        bytes[4] = std::byte{2};
        auto decoded = decode(bytes);
        QVERIFY(!decoded.ok());
        QCOMPARE(QString::fromStdString(decoded.status().message()),
                 QString("header: connect is framed as version 1, not 2"));
        auto unknown = encode(Message{2, "job", PingRequest{}, 3}, out);
        QVERIFY(!unknown.ok());
        QCOMPARE(unknown.status().code(), Errc::invalid_argument);
    }

    void goldenErrorReply()
    {
        const Message message{9, {}, ErrorReply{Opcode::stat, Errc::not_found, "nope"}};
        // clang-format off
        const std::vector<std::uint8_t> golden{
            0x4c, 0x54, 0x52, 0x41, 0x02, 0x00,
            0x07, 0x00,                                     // opcode of the failed stat
            0x03, 0x00,                                     // flags: reply | error
            0x00, 0x00,                                     // no job id, reserved
            0x08, 0x00, 0x00, 0x00,                         // body length 8
            0x09, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // xid 9
            0x03, 0x00,                                     // Errc::not_found
            0x04, 0x00, 'n', 'o', 'p', 'e',                 // message
        };
        // clang-format on
        const Bytes bytes = encodeOrDie(message);
        QVERIFY(std::ranges::equal(bytes, std::as_bytes(std::span(golden))));
    }

    void goldenReaddirReply()
    {
        const std::array<DirEntry, 1> entries{{{0x0a, ObjectKind::directory, "ab"}}};
        const Message message{2, {}, ReaddirReply{0x30, true, DirEntryList(entries)}};
        // clang-format off
        const std::vector<std::uint8_t> golden{
            0x4c, 0x54, 0x52, 0x41, 0x02, 0x00, 0x0c, 0x00, 0x01, 0x00, 0x00, 0x00,
            0x1a, 0x00, 0x00, 0x00,                         // body length 26
            0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // xid 2
            0x30, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // next cookie
            0x01,                                           // eof
            0x01, 0x00, 0x00, 0x00,                         // one entry
            0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // object id
            0x02,                                           // directory
            0x02, 0x00, 'a', 'b',                           // name
        };
        // clang-format on
        QVERIFY(std::ranges::equal(encodeOrDie(message), std::as_bytes(std::span(golden))));
        QCOMPARE(dirEntryWireSize(entries[0]), std::size_t(13));
    }

    // Cut every message at every length: the header's length check catches it. Then also fix the
    // length field up, so the body decoder itself must find each cut.
    void truncationAtEveryOffset()
    {
        for (const auto &sample : samples()) {
            const Bytes bytes = encodeOrDie(sample.message);
            for (std::size_t length = 0; length < bytes.size(); ++length) {
                const auto cut = std::span(bytes).first(length);
                auto decoded = decode(cut);
                QVERIFY2(!decoded.ok(),
                         (sample.name + " cut at " + std::to_string(length)).c_str());
                QCOMPARE(decoded.status().code(), Errc::protocol_error);
                if (length < kHeaderSize) {
                    continue;
                }
                Bytes fixed(cut.begin(), cut.end());
                storeLe(fixed.data() + 12, static_cast<std::uint32_t>(length - kHeaderSize));
                decoded = decode(fixed);
                QVERIFY2(!decoded.ok(),
                         (sample.name + " cut and fixed at " + std::to_string(length)).c_str());
                QCOMPARE(decoded.status().code(), Errc::protocol_error);
                QVERIFY(!decoded.status().message().empty());
            }
        }
    }

    void rejectsBrokenHeader_data()
    {
        QTest::addColumn<int>("offset");
        QTest::addColumn<int>("size");
        QTest::addColumn<qulonglong>("value");
        QTest::addColumn<QString>("error");
        // Patches one header field of a valid "ping" request (job id "slurm.4242", 10 bytes).
        QTest::newRow("magic") << 0 << 4 << 0x12345678ull
                               << "header: bad magic 0x12345678 (expected 0x4152544c)";
        QTest::newRow("version 0")
            << 4 << 2 << 0ull << "header: unsupported protocol version 0 (this build speaks 1..2)";
        QTest::newRow("version 3")
            << 4 << 2 << 3ull << "header: unsupported protocol version 3 (this build speaks 1..2)";
        QTest::newRow("opcode 0") << 6 << 2 << 0ull << "header: unknown opcode 0";
        QTest::newRow("opcode 18") << 6 << 2 << 18ull << "header: unknown opcode 18";
        QTest::newRow("opcode 0xffff") << 6 << 2 << 0xffffull << "header: unknown opcode 65535";
        QTest::newRow("reserved flag")
            << 8 << 2 << 0x8000ull << "header: reserved flag bits 0x8000 set in flags 0x8000";
        QTest::newRow("error on request")
            << 8 << 2 << 2ull << "header: error flag set on a request";
        QTest::newRow("reserved byte")
            << 11 << 1 << 7ull << "header: reserved byte at offset 11 is 0x7, must be 0";
        QTest::newRow("reply with job id")
            << 8 << 2 << 1ull << "header: reply carries a job id of 10 bytes";
        QTest::newRow("no job id") << 10 << 1 << 0ull << "header: request without a job id";
        QTest::newRow("job id too long")
            << 10 << 1 << 65ull << "header: job id length 65 exceeds the maximum 64";
        QTest::newRow("body too long")
            << 12 << 4 << 0xffffffffull
            << "header: body length 4294967295 exceeds the maximum 65512";
        QTest::newRow("body shorter than job id")
            << 12 << 4 << 9ull << "header: body length 9 is shorter than the 10-byte job id";
        QTest::newRow("body length disagrees")
            << 12 << 4 << 11ull
            << "header: body length 11 disagrees with the 10 bytes after the header";
    }

    void rejectsBrokenHeader()
    {
        QFETCH(int, offset);
        QFETCH(int, size);
        QFETCH(qulonglong, value);
        QFETCH(QString, error);
        Bytes bytes = encodeOrDie(sampleNamed("ping-request"));
        for (int i = 0; i < size; ++i) {
            bytes[std::size_t(offset + i)] = static_cast<std::byte>((value >> (8 * i)) & 0xff);
        }
        auto decoded = decode(bytes);
        QVERIFY(!decoded.ok());
        QCOMPARE(decoded.status().code(), Errc::protocol_error);
        QCOMPARE(QString::fromStdString(decoded.status().message()), error);
    }

    void rejectsBrokenBody_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("error");

        // The example from the issue: three good entries, then a name longer than what is left.
        {
            Raw body;
            body.u64(5).u8(0).u32(4);
            for (const auto &e : {entry(1, 1, "x"), entry(2, 2, "yy"), entry(3, 1, "zzz")}) {
                body.text(std::string_view(reinterpret_cast<const char *>(e.bytes().data()),
                                           e.bytes().size()));
            }
            body.u64(4).u8(1).u16(300).text("twelve bytes");
            QTest::newRow("readdir name length")
                << reply(Opcode::readdir, body)
                << "readdir reply: entry 3: name length 300 exceeds the 12 bytes left";
        }
        QTest::newRow("readdir entry count")
            << reply(Opcode::readdir, Raw().u64(0).u8(1).u32(1000000).u64(1))
            << "readdir reply: entry count 1000000 needs at least 12000000 bytes, only 8 left";
        QTest::newRow("readdir eof flag")
            << reply(Opcode::readdir, Raw().u64(0).u8(2).u32(0))
            << "readdir reply: eof flag at offset 32 is 2, not 0 or 1";
        {
            Raw body;
            body.u64(0).u8(0).u32(2).u64(1).u8(1).str16("ok").u64(2).u8(3).str16("bad");
            QTest::newRow("readdir entry kind")
                << reply(Opcode::readdir, body)
                << "readdir reply: entry 1: object kind 3 is not 1 (file) or 2 (directory)";
        }
        QTest::newRow("readdir name with slash")
            << reply(Opcode::readdir, Raw().u64(0).u8(0).u32(1).u64(1).u8(1).str16("a/b"))
            << "readdir reply: entry 0: name: byte 1 is '/', not allowed in a name";
        QTest::newRow("readdir name dotdot")
            << reply(Opcode::readdir, Raw().u64(0).u8(0).u32(1).u64(1).u8(1).str16(".."))
            << "readdir reply: entry 0: name '..' is not allowed";
        QTest::newRow("readdir name empty")
            << reply(Opcode::readdir,
                     Raw().u64(0).u8(0).u32(2).u64(1).u8(1).str16("").u64(2).u8(1).str16("ab"))
            << "readdir reply: entry 0: name is empty";
        QTest::newRow("readdir max entries 0")
            << request(Opcode::readdir, Raw().str16("d").u64(0).u32(0))
            << "readdir request: max entries is 0";
        QTest::newRow("trailing garbage")
            << request(Opcode::close, Raw().u64(1).u8(0xee))
            << "close request: 1 bytes of trailing garbage after the body at offset 35";
        QTest::newRow("short fixed field")
            << request(Opcode::truncate, Raw().u64(1).u32(0))
            << "truncate request: size at offset 35 needs 8 bytes, only 4 left";
        QTest::newRow("string past the end")
            << request(Opcode::stat, Raw().u16(5).text("abc"))
            << "stat request: path length 5 exceeds the 3 bytes left";
        QTest::newRow("empty path")
            << request(Opcode::stat, Raw().str16("")) << "stat request: path is empty";
        QTest::newRow("absolute path")
            << request(Opcode::unlink, Raw().str16("/etc/passwd"))
            << "unlink request: path is absolute; paths are relative to the target's root";
        QTest::newRow("parent component")
            << request(Opcode::rmdir, Raw().str16("a/../../etc"))
            << "rmdir request: path component at byte 2 '..' is not allowed";
        QTest::newRow("empty component") << request(Opcode::stat, Raw().str16("a//b"))
                                         << "stat request: path component at byte 2 is empty";
        QTest::newRow("trailing slash") << request(Opcode::stat, Raw().str16("a/"))
                                        << "stat request: path component at byte 2 is empty";
        QTest::newRow("NUL in path")
            << request(Opcode::stat, Raw().str16(std::string_view("a\0b", 3)))
            << "stat request: path component at byte 0: byte 1 is NUL, not allowed in a name";
        QTest::newRow("path too long") << request(Opcode::stat, Raw().str16(std::string(4097, 'a')))
                                       << "stat request: path length 4097 exceeds the maximum 4096";
        QTest::newRow("component too long")
            << request(Opcode::stat, Raw().str16(std::string(256, 'a')))
            << "stat request: path component at byte 0 length 256 exceeds the maximum 255";
        QTest::newRow("job id not printable")
            << frame(Opcode::ping, 0, "job 1", Raw())
            << "ping request: job id: byte 3 is 0x20, not a printable character";
        QTest::newRow("mode bits") << request(Opcode::mkdir, Raw().str16("d").u32(010000))
                                   << "mkdir request: mode 010000 has bits outside 07777";
        QTest::newRow("create flags") << request(Opcode::create, Raw().str16("f").u32(0644).u32(6))
                                      << "create request: create flags 0x6 has unknown bits 0x6";
        QTest::newRow("open flags none")
            << request(Opcode::open, Raw().str16("f").u32(0))
            << "open request: open flags ask for neither reading nor writing";
        QTest::newRow("attr kind")
            << reply(Opcode::stat, Raw().u64(1).u8(0).u32(0644).u64(0).u64(0))
            << "stat reply: object kind 0 is not 1 (file) or 2 (directory)";
        QTest::newRow("lock mode") << request(Opcode::lock_enqueue, Raw().u64(1).u8(3).u32(0))
                                   << "lock_enqueue request: lock mode 3 is not 1 (PR) or 2 (PW)";
        QTest::newRow("lock flags")
            << request(Opcode::lock_enqueue, Raw().u64(1).u8(1).u32(0x80000000))
            << "lock_enqueue request: lock flags 0x80000000 has unknown bits 0x80000000";
        QTest::newRow("callback mode")
            << request(Opcode::blocking_callback, Raw().u64(1).u8(0))
            << "blocking_callback request: conflicting lock mode 0 is not 1 (PR) or 2 (PW)";
        {
            Raw body;
            bulk(body, 0);
            QTest::newRow("page count 0")
                << request(Opcode::read, body) << "read request: page count 0 is outside 1..4096";
        }
        {
            Raw body;
            bulk(body, 4097);
            QTest::newRow("page count 4097") << request(Opcode::read, body)
                                             << "read request: page count 4097 is outside 1..4096";
        }
        QTest::newRow("unaligned offset")
            << request(Opcode::read, Raw().u64(1).u64(100).u32(1).u16(4096).u32(0).str8(""))
            << "read request: offset 100 is not a multiple of 4096";
        QTest::newRow("last page bytes")
            << request(Opcode::read, Raw().u64(1).u64(0).u32(1).u16(4097).u32(0).str8(""))
            << "read request: last page bytes 4097 is outside 1..4096";
        QTest::newRow("offset overflow")
            << request(Opcode::read,
                       Raw().u64(1).u64(0xfffffffffffff000).u32(2).u16(4096).u32(0).str8(""))
            << "read request: offset 18446744073709547520 + 8192 bytes overflows";
        QTest::newRow("descriptor too long")
            << request(Opcode::read,
                       Raw().u64(1).u64(0).u32(1).u16(1).u32(0).str8(std::string(129, 'd')))
            << "read request: bulk descriptor length 129 exceeds the maximum 128";
        {
            Raw body;
            bulk(body, 1, 2);
            QTest::newRow("bulk flags") << request(Opcode::read, body)
                                        << "read request: bulk flags 0x2 has unknown bits 0x2";
        }
        {
            Raw body;
            bulk(body, 3, kBulkChecksums).u32(1).u32(2);
            QTest::newRow("write crcs missing")
                << request(Opcode::write, body)
                << "write request: page crcs: 3 values need 12 bytes, only 8 left";
        }
        {
            Raw body;
            bulk(body, 4096, kBulkChecksums);
            QTest::newRow("write crcs for max pages missing")
                << request(Opcode::write, body)
                << "write request: page crcs: 4096 values need 16384 bytes, only 0 left";
        }
        QTest::newRow("read reply crcs extra")
            << reply(Opcode::read, Raw().u32(4096).u32(kBulkChecksums).u32(1).u32(2))
            << "read reply: 4 bytes of trailing garbage after the body at offset 36";
        QTest::newRow("read reply too big")
            << reply(Opcode::read, Raw().u32(kMaxBulkBytes + 1).u32(0))
            << "read reply: bytes read 16777217 exceeds the maximum 16777216";
        QTest::newRow("connect versions")
            << request(Opcode::connect, Raw().u16(3).u16(2).u32(4096).u32(8192).u64(0).str8("c"))
            << "connect request: version range 3..2 is empty or starts below 1";
        QTest::newRow("connect bulk size")
            << request(Opcode::connect, Raw().u16(1).u16(1).u32(5000).u32(8192).u64(0).str8("c"))
            << "connect request: max bulk size 5000 is not a multiple of 4096 in 4096..16777216";
        QTest::newRow("connect message size")
            << request(Opcode::connect, Raw().u16(1).u16(1).u32(4096).u32(100).u64(0).str8("c"))
            << "connect request: max message size 100 is outside 8192..65536";
        QTest::newRow("connect client id")
            << request(Opcode::connect, Raw().u16(1).u16(1).u32(4096).u32(8192).u64(0).str8(""))
            << "connect request: client id is empty";
        QTest::newRow("connect reply version")
            << reply(Opcode::connect, Raw().u16(3).u32(4096).u32(8192).u64(0).str8("ost0"))
            << "connect reply: chosen version 3 is outside 1..2";
        QTest::newRow("error code ok")
            << frame(Opcode::stat, kFlagReply | kFlagError, {}, Raw().u16(0).str16("x"))
            << "stat error reply: status code 0 is not an error code";
        QTest::newRow("error code unknown")
            << frame(Opcode::stat, kFlagReply | kFlagError, {}, Raw().u16(99).str16("x"))
            << "stat error reply: status code 99 is not an error code";
        QTest::newRow("error message control")
            << frame(Opcode::stat, kFlagReply | kFlagError, {}, Raw().u16(3).str16("a\x1b[2J"))
            << "stat error reply: message: byte 1 is the control character 0x1b";
    }

    void rejectsBrokenBody()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, error);
        auto decoded = decode(view(bytes));
        QVERIFY(!decoded.ok());
        QCOMPARE(decoded.status().code(), Errc::protocol_error);
        QCOMPARE(QString::fromStdString(decoded.status().message()), error);
    }

    // Every smaller buffer is refused without a byte written past it.
    void encodeBufferTooSmall()
    {
        for (const auto &sample : samples()) {
            const std::size_t need = encodedSize(sample.message);
            Bytes buffer(need + 8, std::byte{0xaa});
            for (std::size_t room = 0; room < need; ++room) {
                auto size = encode(sample.message, std::span(buffer).first(room));
                QVERIFY(!size.ok());
                QCOMPARE(size.status().code(), Errc::resource_exhausted);
                for (std::size_t i = room; i < buffer.size(); ++i) {
                    QVERIFY2(buffer[i] == std::byte{0xaa}, sample.name.c_str());
                }
            }
            const auto expected = "needs " + std::to_string(need) + " bytes, the buffer has 3";
            const auto small = encode(sample.message, std::span(buffer).first(3));
            QVERIFY(small.status().message().ends_with(expected));
            auto size = encode(sample.message, std::span(buffer).first(need));
            QVERIFY(size.ok());
            QCOMPARE(*size, need);
        }
    }

    void encodeRejectsInvalid_data()
    {
        QTest::addColumn<int>("which");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("error");
        QTest::newRow("no job id")
            << 0 << int(Errc::invalid_argument) << "ping request: job id is empty";
        QTest::newRow("long job id") << 1 << int(Errc::invalid_argument)
                                     << "ping request: job id length 65 exceeds the maximum 64";
        QTest::newRow("reply with job id")
            << 2 << int(Errc::invalid_argument) << "ping reply: replies carry no job id";
        QTest::newRow("bad path") << 3 << int(Errc::invalid_argument)
                                  << "open request: path component at byte 0 '..' is not allowed";
        QTest::newRow("crc count") << 4 << int(Errc::invalid_argument)
                                   << "write request: 0 page crcs, expected 2 (one per page)";
        QTest::newRow("error ok") << 5 << int(Errc::invalid_argument)
                                  << "stat error reply: status code 0 is not an error code";
        QTest::newRow("too big")
            << 6 << int(Errc::out_of_range)
            << "readdir reply: encodes to 68133 bytes, more than the maximum 65536";
    }

    void encodeRejectsInvalid()
    {
        QFETCH(int, which);
        QFETCH(int, code);
        QFETCH(QString, error);
        static const std::vector<DirEntry> many(
            256, DirEntry{1, ObjectKind::file, std::string_view(kLongName)});
        BulkIo io;
        io.pageCount = 2;
        io.flags = kBulkChecksums;
        const std::vector<Message> messages{
            {1, "", PingRequest{}},
            {1, kLongJobId, PingRequest{}},
            {1, "job", PingReply{}},
            {1, "job", OpenRequest{"../x", kOpenRead}},
            {1, "job", WriteRequest{io, {}}},
            {1, {}, ErrorReply{Opcode::stat, Errc::ok, ""}},
            {1, {}, ReaddirReply{1, false, DirEntryList(many)}},
        };
        Bytes buffer(1 << 17);
        auto size = encode(messages[std::size_t(which)], buffer);
        QVERIFY(!size.ok());
        QCOMPARE(int(size.status().code()), code);
        QCOMPARE(QString::fromStdString(size.status().message()), error);
    }

    void streamFraming()
    {
        // A stream transport reads the header, then exactly messageSize() - kHeaderSize bytes.
        Bytes stream;
        for (const auto &sample : samples()) {
            const Bytes one = encodeOrDie(sample.message);
            stream.insert(stream.end(), one.begin(), one.end());
        }
        std::size_t at = 0;
        std::size_t count = 0;
        while (at < stream.size()) {
            auto header = decodeHeader(std::span(stream).subspan(at));
            QVERIFY(header.ok());
            auto message = decode(std::span(stream).subspan(at, header->messageSize()));
            QVERIFY2(message.ok(), message.status().toString().c_str());
            QVERIFY(*message == samples()[count].message);
            at += header->messageSize();
            ++count;
        }
        QCOMPARE(count, samples().size());
        QVERIFY(!decodeHeader(std::span(stream).first(kHeaderSize - 1)).ok());
    }

    void noHeapAllocation()
    {
        std::vector<Bytes> encoded;
        for (const auto &sample : samples()) {
            encoded.push_back(Bytes(encodedSize(sample.message)));
        }
        QVERIFY(allocationCounterWorks());
        g_allocations = 0;
        g_countAllocations = true;
        bool allOk = true;
        for (std::size_t i = 0; i < samples().size(); ++i) {
            auto size = encode(samples()[i].message, encoded[i]);
            auto decoded = decode(encoded[i]);
            allOk = allOk && size.ok() && decoded.ok() && *decoded == samples()[i].message;
        }
        g_countAllocations = false;
        QVERIFY(allOk);
        QCOMPARE(g_allocations.load(), 0L);
    }

    // The fuzzer's seeds are these samples plus a few broken messages. With
    // LUTRA_WRITE_PROTOCOL_CORPUS=1 this test (re)writes them; otherwise it checks they are
    // current, so a format change cannot leave stale seeds behind.
    void seedCorpusIsCurrent()
    {
        namespace fs = std::filesystem;
        const fs::path dir = LUTRA_PROTOCOL_CORPUS_DIR;
        const bool write = qEnvironmentVariableIntValue("LUTRA_WRITE_PROTOCOL_CORPUS") == 1;
        std::vector<std::pair<std::string, Bytes>> seeds;
        for (const auto &sample : samples()) {
            seeds.emplace_back(sample.name, encodeOrDie(sample.message));
        }
        Bytes badMagic = encodeOrDie(sampleNamed("connect-request"));
        badMagic[0] = std::byte{'X'};
        seeds.emplace_back("broken-magic", badMagic);
        Bytes truncated = encodeOrDie(sampleNamed("readdir-reply"));
        truncated.resize(truncated.size() - 3);
        seeds.emplace_back("broken-truncated", truncated);
        Bytes trailing = encodeOrDie(sampleNamed("close-request"));
        trailing.push_back(std::byte{0});
        storeLe(trailing.data() + 12, static_cast<std::uint32_t>(trailing.size() - kHeaderSize));
        seeds.emplace_back("broken-trailing", trailing);
        Bytes badCount = encodeOrDie(sampleNamed("readdir-reply"));
        storeLe(badCount.data() + kHeaderSize + 9, std::uint32_t{4});
        seeds.emplace_back("broken-entry-count", badCount);

        for (const auto &[name, bytes] : seeds) {
            const fs::path file = dir / (name + ".bin");
            if (write) {
                std::ofstream out(file, std::ios::binary | std::ios::trunc);
                out.write(reinterpret_cast<const char *>(bytes.data()),
                          static_cast<std::streamsize>(bytes.size()));
                QVERIFY(out.good());
            }
            std::ifstream in(file, std::ios::binary);
            QVERIFY2(in.good(), ("missing seed " + file.string()).c_str());
            const std::vector<char> stored{std::istreambuf_iterator<char>(in), {}};
            QVERIFY2(std::ranges::equal(std::as_bytes(std::span(stored)), bytes),
                     ("stale seed " + file.string() + ": rerun with LUTRA_WRITE_PROTOCOL_CORPUS=1")
                         .c_str());
            QCOMPARE(decode(bytes).ok(), !name.starts_with("broken-"));
        }
    }

private:
    static inline const std::string kLongName = std::string(255, 'n');
    static inline const std::string kLongJobId = std::string(65, 'j');
};

QTEST_GUILESS_MAIN(TestProtocolCodec)
#include "test_protocol_codec.moc"
